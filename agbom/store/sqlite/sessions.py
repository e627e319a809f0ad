"""Session records in SQLite."""

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
            conn.execute(UPSERT_SESSION_SQL, params)

    @_guarded
    def seal_session(self, session_id: str, head: str | None) -> None:
        """Record the chain head a session ended with (kept once set: a seal is final)."""
        params = seal_session_params(session_id, head)
        with self._write() as conn:
            conn.execute(SEAL_SESSION_SQL, params)

    @_guarded
    def save_signed_head(self, session_id: str, statement: Mapping[str, Any]) -> None:
        """Keep the session's signed head statement (agbom.evidence); the first one stands."""
        params = signed_head_params(session_id, statement)
        with self._write() as conn:
            conn.execute(SAVE_SIGNED_HEAD_SQL, params)

    @_guarded
    def signed_head(self, session_id: str) -> dict[str, Any] | None:
        """The session's stored signed head statement, or ``None``."""
        row = self._require().execute(SIGNED_HEAD_SQL, (session_id,)).fetchone()
        return signed_head_of(None if row is None else row[0])

    @_guarded
    def replace_signed_head(
        self, session_id: str, statement: Mapping[str, Any], previous: Mapping[str, Any]
    ) -> bool:
        """Put ``statement`` in place of ``previous`` if that is still the stored head."""
        params = replace_signed_head_params(session_id, statement, previous)
        with self._write() as conn:
            return bool(conn.execute(REPLACE_SIGNED_HEAD_SQL, params).rowcount == 1)

    @_guarded
    def save_response_key(self, session_id: str, key_id: str) -> None:
        """Record the key that signs the session's answers (its handshake accepted acs-crypto)."""
        with self._write() as conn:
            conn.execute(SAVE_RESPONSE_KEY_SQL, response_key_params(session_id, key_id))

    @_guarded
    def response_key(self, session_id: str) -> str | None:
        """The key id :meth:`save_response_key` recorded for the session, or ``None``."""
        row = self._require().execute(RESPONSE_KEY_SQL, (session_id,)).fetchone()
        return None if row is None else str(row[0])

    @_guarded
    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """One session as a dict, or ``None``."""
        row = (
            self._require()
            .execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE session_id = ?",
                (session_id,),
            )
            .fetchone()
        )
        return None if row is None else session_dict(row)

    @_guarded
    def list_sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions (of one agent, or all), oldest first."""
        sql = f"SELECT {SESSION_COLUMNS} FROM sessions"
        params: tuple[Any, ...] = ()
        if agent_id is not None:
            sql += " WHERE agent_id = ?"
            params = (agent_id,)
        rows = self._require().execute(sql + " ORDER BY started_at, session_id", params)
        return [session_dict(row) for row in rows]
