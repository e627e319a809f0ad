"""The PostgreSQL side of the store contract: ``store`` is a PostgresStore on a fresh
database of the throwaway cluster (tests/conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agbom.store.postgres import PostgresStore

# The contract tests and their helpers live in tests/store; they are run here again, on
# PostgreSQL (test_pg_contract.py imports them).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "store"))


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore.open(pg_url) as opened:
        yield opened
