"""Opening old, new, foreign and broken store files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from store_helpers import make_digest

from agbom.store import SCHEMA_VERSION, DuplicateRequest, SqliteStore, StoreError

# The version-1 schema exactly as agbom 0.1 wrote it, spelled out here (not imported from
# the migrations module) so that an accidental edit of migration 1 makes this test fail.
V1_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
CREATE TABLE skills (
    skill_id TEXT NOT NULL, digest_alg TEXT NOT NULL, digest_value TEXT NOT NULL,
    ref TEXT, declared_capabilities TEXT NOT NULL DEFAULT '[]',
    composition TEXT NOT NULL DEFAULT '{}', provenance TEXT,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'revoked')),
    decided_by TEXT, decided_at TEXT, reason TEXT, expires_at TEXT,
    first_seen TEXT, last_seen TEXT, registered_by_agent TEXT, registered_by_tenant TEXT,
    PRIMARY KEY (skill_id, digest_alg, digest_value)
) WITHOUT ROWID;
CREATE INDEX skills_by_status ON skills (status, skill_id);
CREATE TABLE skill_history (
    id INTEGER PRIMARY KEY, skill_id TEXT NOT NULL, digest_alg TEXT NOT NULL,
    digest_value TEXT NOT NULL, from_status TEXT, to_status TEXT NOT NULL, actor TEXT NOT NULL,
    reason TEXT, expires_at TEXT, at TEXT NOT NULL, source TEXT NOT NULL
);
CREATE INDEX skill_history_by_pair ON skill_history (skill_id, digest_alg, digest_value, id);
CREATE TRIGGER skill_history_no_update BEFORE UPDATE ON skill_history
    BEGIN SELECT RAISE(ABORT, 'skill_history is append-only'); END;
CREATE TRIGGER skill_history_no_delete BEFORE DELETE ON skill_history
    BEGIN SELECT RAISE(ABORT, 'skill_history is append-only'); END;
INSERT INTO schema_version VALUES (1, '2025-01-01T00:00:00Z');
"""


def make_v1_store(path: Path, *, extra_sql: str = "") -> None:
    digest = make_digest("legacy")
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA + extra_sql)
    conn.execute(
        "INSERT INTO skills (skill_id, digest_alg, digest_value, ref, status, decided_by, "
        "decided_at, first_seen, last_seen) VALUES (?, 'sha256', ?, 'file://legacy', "
        "'approved', 'alice', '2025-01-02T00:00:00Z', '2025-01-01T00:00:00Z', "
        "'2025-01-01T00:00:00Z')",
        ("legacy", digest.value),
    )
    conn.execute(
        "INSERT INTO skill_history (skill_id, digest_alg, digest_value, from_status, to_status, "
        "actor, at, source) VALUES ('legacy', 'sha256', ?, 'pending', 'approved', 'alice', "
        "'2025-01-02T00:00:00Z', 'cli')",
        (digest.value,),
    )
    conn.commit()
    conn.close()


def stored_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    finally:
        conn.close()


def test_fresh_store_is_current_and_wal(db_path: Path) -> None:
    with SqliteStore.open(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # Reopening an up-to-date store changes nothing.
    with SqliteStore.open(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION


def test_v1_store_is_upgraded_with_its_data(db_path: Path) -> None:
    make_v1_store(db_path)
    digest = make_digest("legacy")
    with SqliteStore.open(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        record = store.get_skill("legacy", digest)
        assert record is not None
        assert record.decided_by == "alice" and record.ref == "file://legacy"
        assert record.scope_agents == () and record.scope_tenants == ()
        # An old unscoped approval keeps applying to every agent.
        assert store.verdict("legacy", digest, agent_id="any", tenant_id="t").approved
        assert [h["to_status"] for h in store.history("legacy")] == ["approved"]
        # Features of later versions work on the upgraded file.
        store.set_status("legacy", digest, "approved", actor="bob", scope_agents=["ci-*"])
        assert store.verdict("legacy", digest, agent_id="ci-1", tenant_id=None).approved
        store.append_entry("s1", entry={"a": 1}, entry_hash="h1", previous_hash=None,
                           request_id="r1", nonce=None)  # fmt: skip
    assert stored_version(db_path) == SCHEMA_VERSION


def test_failed_upgrade_keeps_old_version(db_path: Path) -> None:
    # A v1 file that someone hand-edited: a table migration 3 needs to create already exists.
    make_v1_store(db_path, extra_sql="CREATE TABLE sessions (x TEXT);")
    with pytest.raises(StoreError, match=r"cannot upgrade the store from schema version 1 to"):
        SqliteStore.open(db_path)
    assert stored_version(db_path) == 1
    conn = sqlite3.connect(db_path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(skills)")]
    conn.close()
    assert "scope_agents" not in columns  # migration 2 was rolled back with the rest


def test_newer_store_is_refused(db_path: Path) -> None:
    with SqliteStore.open(db_path):
        pass
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO schema_version VALUES (?, 'later')", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1} is newer"):
        SqliteStore.open(db_path)


def test_foreign_sqlite_file_is_refused(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an agbom store"):
        SqliteStore.open(db_path)


def test_non_sqlite_file_is_refused(db_path: Path) -> None:
    db_path.write_bytes(b"this is a text file, not a database\n" * 200)
    with pytest.raises(StoreError, match="not an agbom store"):
        SqliteStore.open(db_path)


def test_missing_folder_and_directory_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        SqliteStore.open(tmp_path / "nope" / "agbom.db")
    with pytest.raises(StoreError, match="is a directory"):
        SqliteStore.open(tmp_path)


def test_v6_keeps_old_history_unknown_and_indexes_only_nonces(db_path: Path) -> None:
    make_v1_store(db_path)
    with SqliteStore.open(db_path) as store:
        (legacy,) = store.history("legacy")
        assert legacy["capabilities"] is None  # not recorded before v6: unknown, not "none"
        for n, nonce in enumerate(["n" * 16, None, None]):
            store.append_entry(
                "s", entry={"n": n}, entry_hash=f"h{n}", previous_hash=f"h{n - 1}" if n else None,
                request_id=f"r{n}", nonce=nonce,
            )  # fmt: skip
        with pytest.raises(DuplicateRequest, match="nonce"):
            store.append_entry(
                "s", entry={"n": 3}, entry_hash="h3", previous_hash="h2", request_id="r3",
                nonce="n" * 16,
            )  # fmt: skip
    conn = sqlite3.connect(db_path)
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chain_by_nonce'").fetchone()
    conn.close()
    assert "WHERE nonce IS NOT NULL" in sql
