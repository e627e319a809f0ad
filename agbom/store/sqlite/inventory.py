"""AgBOM versions and the fleet inventory in SQLite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._shared import (
    MAX_ENTRY_BYTES,
    _check_id,
    _component_rows,
    _dumps,
    _stamp,
)
from agbom.store.interface import (
    StoreError,
    check_text,
)
from agbom.store.sqlite.connection import SqliteBase, _guarded


class InventoryMixin(SqliteBase):
    """AgBOM versions and the fleet index (:class:`~agbom.store.interface.InventoryStore`)."""

    @_guarded
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
        """Store the session's next AgBOM version (1, 2, 3...) and index its components.

        A refused AgBOM (``accepted=False``) gets a version number too, so audits and
        ``agbom explain`` can show what was sent, but its components are not indexed as in use
        and the latest-version lookups skip it.
        """
        _check_id(session_id, "session_id")
        _check_id(agent_id, "agent_id")
        check_text(agbom_hash, "agbom_hash", 256)
        if not isinstance(document, Mapping):
            raise StoreError("AgBOM document must be an object")
        text = _dumps(dict(document), "AgBOM document", MAX_ENTRY_BYTES)
        change_text = None if change is None else _dumps(dict(change), "AgBOM change")
        ts = _stamp(now)
        components = _component_rows(document)
        with self._write() as conn:
            row = conn.execute(
                "SELECT MAX(version) FROM agbom_versions WHERE session_id = ?", (session_id,)
            ).fetchone()
            version = int(row[0] or 0) + 1
            conn.execute(
                "INSERT INTO agbom_versions (session_id, version, agent_id, document, agbom_hash, "
                "change, created_at, accepted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, version, agent_id, text, agbom_hash, change_text, ts, int(accepted)),
            )
            if not accepted:
                return version
            # When did this session first show each component (same id, type, name, version)?
            first_seen = {
                (r[0], r[1], r[2], r[3]): r[4]
                for r in conn.execute(
                    "SELECT component_id, type, name, version_str, MIN(first_seen) FROM components "
                    "WHERE session_id = ? GROUP BY component_id, type, name, version_str",
                    (session_id,),
                )
            }
            conn.executemany(
                "INSERT INTO components (session_id, version, agent_id, component_id, type, name, "
                "version_str, first_seen, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (session_id, version, agent_id, *key, first_seen.get(key, ts), ts)
                    for key in components
                ],
            )
        return version

    @staticmethod
    def _version_dict(row: Sequence[Any]) -> dict[str, Any]:
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

    _VERSION_COLUMNS = (
        "session_id, version, agent_id, document, agbom_hash, change, created_at, accepted"
    )

    @_guarded
    def agbom_version(self, session_id: str, version: int | None = None) -> dict[str, Any] | None:
        """One stored AgBOM version with its metadata.

        ``version=None`` is the session's current AgBOM: the latest accepted one.
        """
        conn = self._require()
        if version is None:
            row = conn.execute(
                f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions WHERE session_id = ? "
                "AND accepted = 1 ORDER BY version DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        else:
            row = conn.execute(
                f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions "
                "WHERE session_id = ? AND version = ?",
                (session_id, int(version)),
            ).fetchone()
        return None if row is None else self._version_dict(row)

    @_guarded
    def latest_agbom_for_agent(self, agent_id: str) -> dict[str, Any] | None:
        """The most recently stored AgBOM version of any session of ``agent_id``."""
        row = (
            self._require()
            .execute(
                f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions WHERE agent_id = ? "
                "AND accepted = 1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (agent_id,),
            )
            .fetchone()
        )
        return None if row is None else self._version_dict(row)

    @_guarded
    def list_agents(self) -> list[dict[str, Any]]:
        """Every agent seen in a session or an AgBOM: session count, first and last seen."""
        rows = self._require().execute(
            "SELECT agent_id, COUNT(DISTINCT session_id), MIN(at), MAX(at) FROM ("
            " SELECT agent_id, session_id, started_at AS at FROM sessions"
            " UNION ALL SELECT agent_id, session_id, updated_at FROM sessions"
            " UNION ALL SELECT agent_id, session_id, created_at FROM agbom_versions"
            ") GROUP BY agent_id ORDER BY agent_id"
        )
        return [
            {"agent_id": r[0], "sessions": r[1], "first_seen": r[2], "last_seen": r[3]}
            for r in rows
        ]

    @_guarded
    def list_components(
        self, type: str | None = None, name: str | None = None
    ) -> list[dict[str, Any]]:
        """Which agents use which components, since when.

        ``type`` filters exactly; ``name`` is a case-sensitive glob (an exact name matches
        itself). One row per (type, component id, name, version).
        """
        rows = self._require().execute(
            "SELECT type, component_id, name, version_str, group_concat(DISTINCT agent_id), "
            "COUNT(DISTINCT session_id), MIN(first_seen), MAX(seen_at) FROM components "
            "WHERE (?1 IS NULL OR type = ?1) AND (?2 IS NULL OR name GLOB ?2) "
            "GROUP BY type, component_id, name, version_str "
            "ORDER BY type, name, component_id, version_str",
            (type, name),
        )
        return [
            {
                "component_id": r[1],
                "type": r[0],
                "name": r[2],
                "version": r[3],
                "agents": sorted(r[4].split(",")) if r[4] else [],
                "sessions": r[5],
                "first_seen": r[6],
                "last_seen": r[7],
            }
            for r in rows
        ]
