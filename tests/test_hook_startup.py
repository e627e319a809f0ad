"""What the standalone hook relies on instead of importing the scan layer and sqlite-utils."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agbom.rules import load_rules
from agbom.rules.matchers import MatchSpecError
from agbom.rules.signal_matchers import CONTENT_CHECKS, ContentIs
from agbom.scan.content import CHECKS
from agbom.store import open_store


def test_the_content_check_names_are_the_scan_layers() -> None:
    # ``content:`` is compiled in every standalone hook process without the scan layer: both
    # take the names from agbom.inventory.signals.
    assert CONTENT_CHECKS == CHECKS


def test_every_content_check_compiles_and_an_unknown_one_is_refused() -> None:
    assert ContentIs(list(CHECKS)).checks == frozenset(CHECKS)
    with pytest.raises(MatchSpecError, match="unknown content check 'no-such-check'"):
        ContentIs(["no-such-check"])


def test_the_default_pack_compiles() -> None:
    assert load_rules(None, with_default=True).rules


def test_a_store_is_opened_in_wal_mode_without_sqlite_utils(tmp_path: Path) -> None:
    # The store switches the file to WAL itself (sqlite-utils' enable_wal() did it before).
    path = tmp_path / "store.db"
    with open_store(path) as store:
        store.upsert_session("s1", agent_id="agent", status="open")
        other = sqlite3.connect(path)
        try:
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            other.close()
    with open_store(path, create=False) as store:  # an existing WAL file opens as it is
        assert store.get_session("s1") is not None
