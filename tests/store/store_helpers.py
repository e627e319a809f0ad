"""Helpers shared by the store tests."""

from __future__ import annotations

import hashlib

from agbom.store import Digest


def make_digest(seed: str) -> Digest:
    """A valid sha256 digest derived from ``seed`` (distinct seeds give distinct digests)."""
    return Digest("sha256", hashlib.sha256(seed.encode()).hexdigest())


def register(store, skill_id: str, digest: Digest, *, agent_id: str = "agent-1", **extra):
    """Register a pair the way the Guardian does on steps/skillRegister."""
    fields = {
        "ref": f"file://skills/{skill_id}",
        "declared_capabilities": ["fs.read"],
        "composition": {"tools": ["read_file"]},
        "provenance": {"origin": "system", "source_id": "marketplace"},
        "tenant_id": None,
    }
    fields.update(extra)
    return store.record_registration(skill_id=skill_id, digest=digest, agent_id=agent_id, **fields)


def store_at_version(location: str, version: int) -> None:
    """A new store at ``location`` (a SQLite path or a PostgreSQL URL of an empty database)
    at schema ``version``: the store's own migrations up to it, as an older agbom left it."""
    if location.startswith("postgresql"):
        import psycopg

        from agbom.store.postgres._migrations import MIGRATIONS as PG_MIGRATIONS

        with psycopg.connect(location) as conn:
            for target in range(1, version + 1):
                for statement in PG_MIGRATIONS[target - 1]:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version VALUES (%s, 'then')", (target,))
        return
    import sqlite3

    from agbom.store._migrations import MIGRATIONS

    conn = sqlite3.connect(location, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for target in range(1, version + 1):
            for step in MIGRATIONS[target - 1]:
                conn.execute(step) if isinstance(step, str) else step(conn)
            conn.execute("INSERT INTO schema_version VALUES (?, 'then')", (target,))
        conn.execute("COMMIT")
    finally:
        conn.close()
