"""AgBOM versions and the fleet inventory in SQLite (stored as pieces: see :mod:`.versions`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
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
from agbom.store._shared import (
    _stamp,
)
from agbom.store.documents import AgbomDocument
from agbom.store.sqlite.connection import SqliteBase, _guarded
from agbom.store.sqlite.fleet import FLEET as _FLEET
from agbom.store.sqlite.versions import (
    PRESTORE_CHUNK,
    Manifest,
    chunk_rows,
    fresh_rows,
    prestore_chunk,
    read_document,
    save_version,
    stored_forms,
)

MAX_REMEMBERED_SESSIONS = 256
MAX_REMEMBERED_COMPONENTS = 500_000
"""Bounds of what a handle remembers of its sessions' latest versions (about 250 bytes per
component, besides the AgBOMs, which the Guardian holds anyway): past them, the least
recently saved sessions are forgotten, and their next version is compared with the
database's copy instead."""


class InventoryMixin(FleetReads, SqliteBase):
    """AgBOM versions and the fleet index (:class:`~agbom.store.interface.InventoryStore`)."""

    def release_session(self, session_id: str) -> None:
        self._manifests.pop(session_id, None)

    @_guarded
    def prepare_document(self, document: Mapping[str, Any]) -> None:
        """Serialize and hash an :class:`~agbom.store.AgbomDocument`'s components, and write
        their content-addressed bodies, ahead of :meth:`save_agbom_version` (a chunk per
        transaction); that call then only diffs and indexes. For the bulk thread of the
        decision process, on a handle of its own. Anything else is left as it is."""
        if not isinstance(document, AgbomDocument) or document.forms is not None:
            return
        forms = stored_forms(document)
        values = list(forms.values())
        for start in range(0, len(values), PRESTORE_CHUNK):
            rows = chunk_rows(values[start : start + PRESTORE_CHUNK])  # before the lock
            with self._write(background=True) as conn:
                prestore_chunk(conn, rows)
        document.forms = forms
        document.fresh = fresh_rows(forms)
        document.prestored_in = self.location

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

        Only what differs from the session's previous version is written: the components it
        does not hold yet (each distinct one stored once), and one index row closed or opened
        per changed component (see :mod:`agbom.store.sqlite.versions`). Pass an
        :class:`~agbom.store.AgbomDocument` to let unchanged components be recognized
        without serializing them.
        """
        check_version(session_id, agent_id, agbom_hash, document)
        change_json = change_text(change)
        ts = _stamp(now)
        # Forgotten first: if the transaction does not commit, nothing stale is remembered.
        remembered = self._manifests.pop(session_id, None)
        with self._write() as conn:
            row = conn.execute(
                "SELECT MAX(version) FROM agbom_versions WHERE session_id = ?", (session_id,)
            ).fetchone()
            version = int(row[0] or 0) + 1
            manifest = save_version(
                conn,
                session_id=session_id,
                version=version,
                agent_id=agent_id,
                document=document,
                agbom_hash=agbom_hash,
                change_text=change_json,
                created_at=ts,
                accepted=accepted,
                remembered=remembered,
                where=self.location,
            )
            if accepted:
                summary.refresh_agent(conn.execute, _FLEET, agent_id)
        if manifest is not None:
            self._remember(session_id, manifest)
        return version

    def _remember(self, session_id: str, manifest: Manifest) -> None:
        """Keep ``manifest`` for the session's next version, but only while the Guardian
        holds the AgBOM it was stored from (so a session the Guardian let go of, to bound its
        memory, is let go of here too), and within the cache's bounds."""
        cache = self._manifests
        for sid in [sid for sid, m in cache.items() if m.components() is None]:
            del cache[sid]
        if manifest.components() is None:
            return
        cache[session_id] = manifest
        total = sum(len(m.members) for m in cache.values())
        while cache and (len(cache) > MAX_REMEMBERED_SESSIONS or total > MAX_REMEMBERED_COMPONENTS):
            _, dropped = cache.popitem(last=False)
            total -= len(dropped.members)

    def _version_dict(self, conn: sqlite3.Connection, row: Sequence[Any]) -> dict[str, Any]:
        session_id, version = row[0], int(row[1])
        return {
            "session_id": session_id,
            "version": version,
            "agent_id": row[2],
            "document": read_document(
                conn, session_id, version, row[3], row[4], row[5], bool(row[9])
            ),
            "agbom_hash": row[6],
            "change": None if row[7] is None else orjson.loads(row[7]),
            "created_at": row[8],
            "accepted": bool(row[9]),
        }

    _VERSION_COLUMNS = (
        "session_id, version, agent_id, header, document, base_version, agbom_hash, change, "
        "created_at, accepted"
    )

    @_guarded
    def agbom_version(self, session_id: str, version: int | None = None) -> dict[str, Any] | None:
        """One stored AgBOM version with its metadata, its document as it was given.

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
        return None if row is None else self._version_dict(conn, row)

    @_guarded
    def agbom_version_number(self, session_id: str) -> int:
        """The number of the session's latest accepted AgBOM version; 0 when it has none."""
        row = (
            self._require()
            .execute(
                "SELECT MAX(version) FROM agbom_versions WHERE session_id = ? AND accepted = 1",
                (session_id,),
            )
            .fetchone()
        )
        return 0 if row is None or row[0] is None else int(row[0])

    @_guarded
    def latest_agbom_for_agent(
        self, agent_id: str, *, include_refused: bool = False
    ) -> dict[str, Any] | None:
        """The most recently stored accepted AgBOM version of any session of ``agent_id``;
        with ``include_refused``, the most recent one received, accepted or refused (its
        ``accepted`` says which)."""
        conn = self._require()
        row = conn.execute(
            f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions WHERE agent_id = ? "
            "AND (accepted = 1 OR ?) ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (agent_id, 1 if include_refused else 0),
        ).fetchone()
        return None if row is None else self._version_dict(conn, row)

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
        return [agent_entry(r) for r in rows]

    @_guarded
    def list_components(
        self, type: str | None = None, name: str | None = None
    ) -> list[dict[str, Any]]:
        """Which agents use which components, since when.

        ``type`` filters exactly; ``name`` is a case-sensitive glob (an exact name matches
        itself). One row per (type, component id, name, version).
        """
        # last_seen: when the latest accepted version holding the component was stored. A row
        # still open is held by its session's current version; a closed one says when the
        # last version holding it was stored (set when it was closed).
        rows = self._require().execute(
            "SELECT m.type, m.component_id, m.name, m.version_str, "
            "group_concat(DISTINCT m.agent_id), COUNT(DISTINCT m.session_id), "
            "MIN(m.first_seen), MAX(COALESCE(m.last_seen, (SELECT v.created_at "
            "FROM agbom_versions v WHERE v.session_id = m.session_id AND v.accepted = 1 "
            "ORDER BY v.version DESC LIMIT 1))) FROM agbom_members m "
            "WHERE (?1 IS NULL OR m.type = ?1) AND (?2 IS NULL OR m.name GLOB ?2) "
            "GROUP BY m.type, m.component_id, m.name, m.version_str "
            "ORDER BY m.type, m.name, m.component_id, m.version_str",
            (type, name),
        )
        return [component_entry(r) for r in rows]

    @_guarded
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
            self._fleet_rows, _FLEET, _stamp(None), **filters, limit=limit, offset=offset
        )

    @_guarded
    def _fleet_rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return self._require().execute(sql, params).fetchall()

    @_guarded
    def fleet_charts(self, now: datetime | None = None) -> dict[str, Any]:
        """The overview's charts (see :func:`.._fleet_logic.charts`)."""
        return fleet.charts(self._fleet_rows, _FLEET, now or datetime.now(UTC))

    @_guarded
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
        return fleet.list_agents(self._fleet_rows, _FLEET, _stamp(None), component, limit, offset)

    _fleet_sql = _FLEET

    def _fleet_now(self) -> str:
        return _stamp(None)
