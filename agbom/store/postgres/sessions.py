"""Sessions on PostgreSQL: who, when, what was negotiated, and the head a session ended with.

A seal is written once (``COALESCE``) in the database, so a ``sessionEnd`` sealed by one
replica is what every replica reads afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agbom.store._session_logic import (
    REPLACE_SIGNED_HEAD_SQL,
    RESPONSE_KEY_SQL,
    SAVE_RESPONSE_KEY_SQL,
    SAVE_SIGNED_HEAD_SQL,
    SEAL_SESSION_SQL,
    SESSION_COLUMNS,
    SIGNED_HEAD_SQL,
    UPSERT_SESSION_SQL,
    replace_signed_head_params,
    response_key_params,
    seal_session_params,
    session_dict,
    signed_head_of,
    signed_head_params,
    upsert_session_params,
)
from agbom.store._shared import pyformat_sql
from agbom.store.postgres._base import PostgresBase

_UPSERT_SESSION = pyformat_sql(UPSERT_SESSION_SQL)
_SEAL_SESSION = pyformat_sql(SEAL_SESSION_SQL)
_SAVE_SIGNED_HEAD = pyformat_sql(SAVE_SIGNED_HEAD_SQL)
_SIGNED_HEAD = pyformat_sql(SIGNED_HEAD_SQL)
_REPLACE_SIGNED_HEAD = pyformat_sql(REPLACE_SIGNED_HEAD_SQL)
_SAVE_RESPONSE_KEY = pyformat_sql(SAVE_RESPONSE_KEY_SQL)
_RESPONSE_KEY = pyformat_sql(RESPONSE_KEY_SQL)


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
        params = upsert_session_params(
            session_id,
            agent_id=agent_id,
            tenant_id=tenant_id,
            parent_session_id=parent_session_id,
            status=status,
            started_at=started_at,
            ended_at=ended_at,
            negotiated=negotiated,
        )
        with self._write() as conn:
            conn.execute(_UPSERT_SESSION, params)

    def seal_session(self, session_id: str, head: str | None) -> None:
        """Record the chain head a session ended with (kept once set: a seal is final)."""
        params = seal_session_params(session_id, head)
        with self._write() as conn:
            conn.execute(_SEAL_SESSION, params)

    def save_signed_head(self, session_id: str, statement: Mapping[str, Any]) -> None:
        """Keep the session's signed head statement (agbom.evidence); the first one stands,
        whichever replica wrote it."""
        params = signed_head_params(session_id, statement)
        with self._write() as conn:
            conn.execute(_SAVE_SIGNED_HEAD, params)

    def signed_head(self, session_id: str) -> dict[str, Any] | None:
        """The session's stored signed head statement, or ``None``."""
        with self._read() as conn:
            row = conn.execute(_SIGNED_HEAD, (session_id,)).fetchone()
        return signed_head_of(None if row is None else row[0])

    def replace_signed_head(
        self, session_id: str, statement: Mapping[str, Any], previous: Mapping[str, Any]
    ) -> bool:
        """Put ``statement`` in place of ``previous`` if that is still the stored head, in one
        statement, so that of two replicas sealing at once one wins and the other is told."""
        params = replace_signed_head_params(session_id, statement, previous)
        with self._write() as conn:
            return bool(conn.execute(_REPLACE_SIGNED_HEAD, params).rowcount == 1)

    def save_response_key(self, session_id: str, key_id: str) -> None:
        """Record the key that signs the session's answers (its handshake accepted acs-crypto)."""
        with self._write() as conn:
            conn.execute(_SAVE_RESPONSE_KEY, response_key_params(session_id, key_id))

    def response_key(self, session_id: str) -> str | None:
        """The key id :meth:`save_response_key` recorded for the session, or ``None``."""
        with self._read() as conn:
            row = conn.execute(_RESPONSE_KEY, (session_id,)).fetchone()
        return None if row is None else str(row[0])

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """One session as a dict, or ``None``."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE session_id = %s", (session_id,)
            ).fetchone()
        return None if row is None else session_dict(row)

    def list_sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions (of one agent, or all), oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions "
                "WHERE (%(a)s::text IS NULL OR agent_id = %(a)s) "
                "ORDER BY started_at, session_id",
                {"a": agent_id},
            ).fetchall()
        return [session_dict(row) for row in rows]
