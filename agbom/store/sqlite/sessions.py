"""Session records in SQLite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._shared import (
    _check_id,
    _dumps,
    _stamp,
)
from agbom.store.interface import (
    check_text,
    format_timestamp,
)
from agbom.store.sqlite.connection import SqliteBase, _guarded


class SessionsMixin(SqliteBase):
    """Sessions (:class:`~agbom.store.interface.SessionStore`)."""

    @_guarded
    def upsert_session(
        self,
        session_id: str,
        *,
        agent_id: str,
        tenant_id: str | None = None,
        parent_session_id: str | None = None,
        status: str,
        started_at: datetime | None = None,
        ended_at: datetime | None = None,
        negotiated: Mapping[str, Any] | None = None,
    ) -> None:
        """Create or update a session. ``None`` arguments keep what is stored; ``started_at``
        keeps its first value (defaults to now on creation)."""
        _check_id(session_id, "session_id")
        _check_id(agent_id, "agent_id")
        _check_id(tenant_id, "tenant_id", optional=True)
        _check_id(parent_session_id, "parent_session_id", optional=True)
        check_text(status, "session status", 64)
        neg = None if negotiated is None else _dumps(dict(negotiated), "negotiated")
        now = _stamp(None)
        started = format_timestamp(started_at) or now
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (session_id, agent_id, tenant_id, parent_session_id, "
                "status, started_at, ended_at, negotiated, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "agent_id = excluded.agent_id, "
                "tenant_id = COALESCE(excluded.tenant_id, sessions.tenant_id), "
                "parent_session_id = COALESCE(excluded.parent_session_id, "
                "sessions.parent_session_id), status = excluded.status, "
                "ended_at = COALESCE(excluded.ended_at, sessions.ended_at), "
                "negotiated = COALESCE(excluded.negotiated, sessions.negotiated), "
                "updated_at = excluded.updated_at",
                (
                    session_id,
                    agent_id,
                    tenant_id,
                    parent_session_id,
                    status,
                    started,
                    format_timestamp(ended_at),
                    neg,
                    now,
                ),
            )

    _SESSION_COLUMNS = (
        "session_id, agent_id, tenant_id, parent_session_id, status, started_at, ended_at, "
        "negotiated, updated_at, sealed_head"
    )

    @staticmethod
    def _session_dict(row: Sequence[Any]) -> dict[str, Any]:
        return {
            "session_id": row[0],
            "agent_id": row[1],
            "tenant_id": row[2],
            "parent_session_id": row[3],
            "status": row[4],
            "started_at": row[5],
            "ended_at": row[6],
            "negotiated": None if row[7] is None else orjson.loads(row[7]),
            "updated_at": row[8],
            "sealed_head": row[9],
        }

    @_guarded
    def seal_session(self, session_id: str, head: str | None) -> None:
        """Record the chain head a session ended with (kept once set: a seal is final)."""
        _check_id(session_id, "session_id")
        check_text(head, "head", 256, optional=True)
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET sealed_head = COALESCE(sealed_head, ?), updated_at = ? "
                "WHERE session_id = ?",
                (head, _stamp(None), session_id),
            )

    @_guarded
    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """One session as a dict, or ``None``."""
        row = (
            self._require()
            .execute(
                f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE session_id = ?",
                (session_id,),
            )
            .fetchone()
        )
        return None if row is None else self._session_dict(row)

    @_guarded
    def list_sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions (of one agent, or all), oldest first."""
        sql = f"SELECT {self._SESSION_COLUMNS} FROM sessions"
        params: tuple[Any, ...] = ()
        if agent_id is not None:
            sql += " WHERE agent_id = ?"
            params = (agent_id,)
        rows = self._require().execute(sql + " ORDER BY started_at, session_id", params)
        return [self._session_dict(row) for row in rows]
