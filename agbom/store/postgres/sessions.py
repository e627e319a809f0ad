"""Sessions on PostgreSQL: who, when, what was negotiated, and the head a session ended with.

A seal is written once (``COALESCE``) in the database, so a ``sessionEnd`` sealed by one
replica is what every replica reads afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from agbom.store.interface import check_text, format_timestamp
from agbom.store.postgres._base import PostgresBase
from agbom.store.postgres._values import check_id, dumps, stamp

_SESSION_COLUMNS = (
    "session_id, agent_id, tenant_id, parent_session_id, status, started_at, ended_at, "
    "negotiated, updated_at, sealed_head"
)


def _session_dict(row: tuple[Any, ...]) -> dict[str, Any]:
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


class SessionsMixin(PostgresBase):
    """The :class:`~agbom.store.interface.SessionStore` part of the PostgreSQL store."""

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
        check_id(session_id, "session_id")
        check_id(agent_id, "agent_id")
        check_id(tenant_id, "tenant_id", optional=True)
        check_id(parent_session_id, "parent_session_id", optional=True)
        check_text(status, "session status", 64)
        neg = None if negotiated is None else dumps(dict(negotiated), "negotiated")
        now = stamp(None)
        started = format_timestamp(started_at) or now
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (session_id, agent_id, tenant_id, parent_session_id, "
                "status, started_at, ended_at, negotiated, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE "
                "SET agent_id = excluded.agent_id, "
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

    def seal_session(self, session_id: str, head: str | None) -> None:
        """Record the chain head a session ended with (kept once set: a seal is final)."""
        check_id(session_id, "session_id")
        check_text(head, "head", 256, optional=True)
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET sealed_head = COALESCE(sealed_head, %s), updated_at = %s "
                "WHERE session_id = %s",
                (head, stamp(None), session_id),
            )

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """One session as a dict, or ``None``."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = %s", (session_id,)
            ).fetchone()
        return None if row is None else _session_dict(row)

    def list_sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions (of one agent, or all), oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions "
                "WHERE (%(a)s::text IS NULL OR agent_id = %(a)s) "
                "ORDER BY started_at, session_id",
                {"a": agent_id},
            ).fetchall()
        return [_session_dict(row) for row in rows]
