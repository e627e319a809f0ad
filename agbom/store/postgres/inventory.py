"""AgBOM versions and the fleet inventory on PostgreSQL.

A session's next version number is taken under a transaction-scoped advisory lock on the
session, so two replicas saving an AgBOM for one session at once number them 1 and 2 rather
than one of them failing on the primary key.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from agbom.store import _fleet_logic as fleet
from agbom.store import _fleet_summary as summary
from agbom.store._fleet_agents import FleetReads
from agbom.store._inventory_logic import (
    agent_entry,
    change_text,
    check_version,
    component_entry,
)
from agbom.store.postgres._base import Connection, PostgresBase
from agbom.store.postgres._values import MAX_ENTRY_BYTES, component_rows, dumps, stamp
from agbom.store.postgres.fleet import FLEET as _FLEET
from agbom.store.postgres.fleet import REFRESH_LOCK

_VERSION_COLUMNS = (
    "session_id, version, agent_id, document, agbom_hash, change, created_at, accepted"
)


def _version_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    return {
        "session_id": row[0],
        "version": row[1],
        "agent_id": row[2],
        "document": orjson.loads(row[3]),
        "agbom_hash": row[4],
        "change": None if row[5] is None else orjson.loads(row[5]),
        "created_at": row[6],
        "accepted": bool(row[7]),
    }


def index_components(
    conn: Connection,
    session_id: str,
    version: int,
    agent_id: str,
    components: list[tuple[str, str, str, str | None]],
    ts: str,
) -> None:
    """Index the components of an accepted version: each keeps the time this session first
    showed it (same id, type, name and version), else ``ts``."""
    if not components:
        return
    first_seen = {
        (r[0], r[1], r[2], r[3]): r[4]
        for r in conn.execute(
            "SELECT component_id, type, name, version_str, MIN(first_seen) FROM components "
            "WHERE session_id = %s GROUP BY component_id, type, name, version_str",
            (session_id,),
        ).fetchall()
    }
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO components (session_id, version, agent_id, component_id, type, name, "
            "version_str, first_seen, seen_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (session_id, version, agent_id, *key, first_seen.get(key, ts), ts)
                for key in components
            ],
        )


def refresh_fleet(conn: Connection, agent_id: str | None) -> None:
    """Bring the fleet summary up to ``agent_id``'s latest AgBOM (``None``: rebuild it
    whole), in the caller's transaction. The lock orders refreshes across replicas: each
    recomputes a component from its holders as the last one committed them, so two saves at
    once sharing a component cannot both count without the other."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (REFRESH_LOCK,))
    if agent_id is None:
        summary.rebuild(conn.execute, _FLEET)
    else:
        summary.refresh_agent(conn.execute, _FLEET, agent_id)


class InventoryMixin(FleetReads, PostgresBase):
    """The :class:`~agbom.store.interface.InventoryStore` part of the PostgreSQL store."""

    def release_session(self, session_id: str) -> None:
        """Nothing is cached per session."""

    def prepare_document(self, document: Mapping[str, Any]) -> None:
        """Nothing to do ahead: this store writes the document whole, in one statement, and
        a database server's write lock is per row, not per database as SQLite's."""

    def save_agbom_version(
        self,
        session_id: str,
        *,
        agent_id: str,
        document: Mapping[str, Any],
        agbom_hash: str,
        change: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        accepted: bool = True,
    ) -> int:
        """Store the session's next AgBOM version (1, 2, 3...) and index its components
        (see SqliteStore)."""
        check_version(session_id, agent_id, agbom_hash, document)
        text = dumps(dict(document), "AgBOM document", MAX_ENTRY_BYTES)
        change_json = change_text(change)
        ts = stamp(now)
        components = component_rows(document)
        with self._write() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", ("agbom:" + session_id,)
            )
            row = conn.execute(
                "SELECT MAX(version) FROM agbom_versions WHERE session_id = %s", (session_id,)
            ).fetchone()
            version = int((row[0] if row else None) or 0) + 1
            conn.execute(
                "INSERT INTO agbom_versions (session_id, version, agent_id, document, "
                "agbom_hash, change, created_at, accepted) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (session_id, version, agent_id, text, agbom_hash, change_json, ts, accepted),
            )
            if not accepted:
                return version
            index_components(conn, session_id, version, agent_id, components, ts)
            refresh_fleet(conn, agent_id)
        return version

    def agbom_version_number(self, session_id: str) -> int:
        """The number of the session's latest accepted AgBOM version; 0 when it has none."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT MAX(version) FROM agbom_versions WHERE session_id = %s AND accepted",
                (session_id,),
            ).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    def agbom_version(self, session_id: str, version: int | None = None) -> dict[str, Any] | None:
        """One stored AgBOM version; ``version=None`` is the latest accepted one."""
        with self._read() as conn:
            if version is None:
                row = conn.execute(
                    f"SELECT {_VERSION_COLUMNS} FROM agbom_versions WHERE session_id = %s "
                    "AND accepted ORDER BY version DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
            else:
                row = conn.execute(
                    f"SELECT {_VERSION_COLUMNS} FROM agbom_versions "
                    "WHERE session_id = %s AND version = %s",
                    (session_id, int(version)),
                ).fetchone()
        return None if row is None else _version_dict(row)

    def latest_agbom_for_agent(
        self, agent_id: str, *, include_refused: bool = False
    ) -> dict[str, Any] | None:
        """The most recently stored accepted AgBOM version of any session of ``agent_id``;
        with ``include_refused``, the most recent one received, accepted or refused."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM agbom_versions WHERE agent_id = %s "
                "AND (accepted OR %s) ORDER BY created_at DESC, id DESC LIMIT 1",
                (agent_id, include_refused),
            ).fetchone()
        return None if row is None else _version_dict(row)

    def list_agents(self) -> list[dict[str, Any]]:
        """Every agent seen in a session or an AgBOM: session count, first and last seen."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT agent_id, COUNT(DISTINCT session_id), MIN(at), MAX(at) FROM ("
                " SELECT agent_id, session_id, started_at AS at FROM sessions"
                " UNION ALL SELECT agent_id, session_id, updated_at FROM sessions"
                " UNION ALL SELECT agent_id, session_id, created_at FROM agbom_versions"
                ") AS seen GROUP BY agent_id ORDER BY agent_id"
            ).fetchall()
        return [agent_entry(r) for r in rows]

    def list_components(
        self, type: str | None = None, name: str | None = None
    ) -> list[dict[str, Any]]:
        """Which agents use which components, since when (see SqliteStore).

        ``name`` is a case-sensitive glob, matched here with :func:`fnmatch.fnmatchcase`
        (PostgreSQL has no GLOB); an exact name is looked up in the index."""
        exact = None if name is None or any(c in name for c in "*?[") else name
        with self._read() as conn:
            rows = conn.execute(
                "SELECT type, component_id, name, version_str, "
                "string_agg(DISTINCT agent_id, ','), COUNT(DISTINCT session_id), "
                "MIN(first_seen), MAX(seen_at) FROM components "
                "WHERE (%(t)s::text IS NULL OR type = %(t)s) "
                "AND (%(n)s::text IS NULL OR name = %(n)s) "
                "GROUP BY type, component_id, name, version_str "
                "ORDER BY type, name, component_id, version_str NULLS FIRST",
                {"t": type, "n": exact},
            ).fetchall()
        if name is not None and exact is None:
            rows = [r for r in rows if fnmatch.fnmatchcase(r[2], name)]
        return [component_entry(r) for r in rows]

    def fleet_components(
        self,
        *,
        type: str | None = None,
        status: str | None = None,
        search: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
        host: str | None = None,
        severity: str | None = None,
    ) -> dict[str, Any]:
        """Distinct components of the agents' latest AgBOMs (see :mod:`.._fleet_logic`)."""
        filters = {"type": type, "status": status, "search": search, "host": host}
        filters["severity"] = severity
        return fleet.list_components(
            self._fleet_rows, _FLEET, stamp(None), **filters, limit=limit, offset=offset
        )

    def _fleet_rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        # Without JIT: the planner prices the per-row judgments (subplans) of a large
        # summary over jit_above_cost, and compiling them took seconds at 100,000
        # components (3.4 s of the Overview's counts) for a run of milliseconds.
        with self._read() as conn, conn.transaction():
            conn.execute("SET LOCAL jit = off")
            return conn.execute(sql, params).fetchall()

    def fleet_charts(self, now: datetime | None = None) -> dict[str, Any]:
        """The overview's charts (see :func:`.._fleet_logic.charts`)."""
        return fleet.charts(self._fleet_rows, _FLEET, now or datetime.now(UTC))

    def fleet_component_agents(
        self,
        type: str,
        ref: str,
        version: str | None,
        *,
        limit: int | None = None,
        offset: int | None = None,
    ) -> dict[str, Any]:
        """The agents whose latest AgBOM holds one fleet component."""
        component = (type, ref, version)
        return fleet.list_agents(self._fleet_rows, _FLEET, stamp(None), component, limit, offset)

    _fleet_sql = _FLEET

    def _fleet_now(self) -> str:
        return stamp(None)
