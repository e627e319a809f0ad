"""``open_store``: which backend a location names, and how a bad location is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import make_digest, register

from agbom.store import SqliteStore, Store, StoreError, open_store, redact_location


def test_a_path_opens_the_sqlite_store_and_satisfies_the_protocol(db_path: Path) -> None:
    with open_store(str(db_path)) as store:
        assert isinstance(store, SqliteStore)
        assert isinstance(store, Store)
        assert store.location == str(db_path)
        register(store, "pdf", make_digest("pdf"))
    with open_store(db_path, create=False) as again:
        assert [r.skill_id for r in again.list_skills()] == ["pdf"]


def test_sqlite_urls_are_relative_with_three_slashes_absolute_with_four(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("sqlite:///relative.db") as store:
        assert Path(store.location) == Path("relative.db")
    assert (tmp_path / "relative.db").is_file()
    absolute = tmp_path / "absolute.db"
    with open_store(f"sqlite:///{absolute}") as store:
        assert store.location == str(absolute)
    assert absolute.is_file()


@pytest.mark.parametrize("location", ["", "   ", "sqlite://", "sqlite:///", "a\x00b"])
def test_unusable_locations_are_refused_with_one_line(location: str) -> None:
    with pytest.raises(StoreError) as caught:
        open_store(location)
    assert "\n" not in str(caught.value)


def test_create_false_refuses_a_missing_file(db_path: Path) -> None:
    with pytest.raises(StoreError, match="no store there"):
        open_store(db_path, create=False)
    assert not db_path.exists()


def test_an_unknown_scheme_is_refused_without_its_password() -> None:
    with pytest.raises(StoreError, match="unknown scheme 'mysql'") as caught:
        open_store("mysql://admin:hunter2@127.0.0.1/agbom")
    assert "hunter2" not in str(caught.value)


def test_a_postgres_url_that_cannot_connect_fails_closed_without_its_password() -> None:
    # Port 1 on the loopback: nothing listens there. Whether or not this agbom has the
    # PostgreSQL backend, the answer is a StoreError that does not repeat the password.
    with pytest.raises(StoreError) as caught:
        open_store("postgresql://agbom:hunter2@127.0.0.1:1/agbom?connect_timeout=2")
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("postgresql://u:pw@db.example:5432/agbom", "postgresql://u:***@db.example:5432/agbom"),
        ("postgres://u@db/agbom", "postgres://u@db/agbom"),
        (
            "postgresql://db/agbom?password=pw&sslmode=require",
            "postgresql://db/agbom?password=***&sslmode=require",
        ),
        ("/var/lib/agbom/agbom.db", "/var/lib/agbom/agbom.db"),
    ],
)
def test_redact_location_hides_passwords_only(location: str, shown: str) -> None:
    assert redact_location(location) == shown


def test_reopen_is_an_independent_handle(db_path: Path) -> None:
    with open_store(db_path) as store:
        other = store.reopen()
        try:
            register(other, "pdf", make_digest("pdf"))
            assert store.get_skill("pdf", make_digest("pdf")) is not None
        finally:
            other.close()
        assert store.list_skills()[0].skill_id == "pdf"  # still open


def test_the_cli_reads_agbom_db_and_never_prints_the_password(tmp_path: Path) -> None:
    env = dict(os.environ, AGBOM_DB="postgresql://agbom:hunter2@127.0.0.1:1/agbom")
    result = subprocess.run(
        [sys.executable, "-m", "agbom", "skills", "pending"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "hunter2" not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
