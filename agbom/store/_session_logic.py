"""Session records both backends share, free of any database driver: the checked values of
an upsert, its statement, and how a stored row reads back.

Both dialects accept the same ``INSERT ... ON CONFLICT ... DO UPDATE`` here, so the statement
is written once with ``?`` placeholders; the PostgreSQL store converts it once, at import
(:func:`agbom.store._shared.pyformat_sql`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from agbom.store._shared import _check_id, _dumps, _stamp
from agbom.store.interface import StoreValueError, check_text, format_timestamp

SESSION_COLUMNS = (
    "session_id, agent_id, tenant_id, parent_session_id, status, started_at, ended_at, "
    "negotiated, updated_at, sealed_head"
)
"""The columns of a session row, in the order :func:`session_dict` reads them."""

UPSERT_SESSION_SQL = (
    "INSERT INTO sessions (session_id, agent_id, tenant_id, parent_session_id, "
    "status, started_at, ended_at, negotiated, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
    "agent_id = excluded.agent_id, "
    "tenant_id = COALESCE(excluded.tenant_id, sessions.tenant_id), "
    "parent_session_id = COALESCE(excluded.parent_session_id, "
    "sessions.parent_session_id), status = excluded.status, "
    "ended_at = COALESCE(excluded.ended_at, sessions.ended_at), "
    "negotiated = COALESCE(excluded.negotiated, sessions.negotiated), "
    "updated_at = excluded.updated_at"
)
"""Create or update a session: ``None`` keeps what is stored, ``started_at`` its first value."""

SEAL_SESSION_SQL = (
    "UPDATE sessions SET sealed_head = COALESCE(sealed_head, ?), updated_at = ? "
    "WHERE session_id = ?"
)
"""Record the head a session ended with, once (a seal is final)."""

SAVE_SIGNED_HEAD_SQL = (
    "INSERT INTO signed_heads (session_id, key_id, statement, sealed_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (session_id) DO NOTHING"
)
"""Keep a session's signed head statement, once: the first seal stands (as ``sealed_head``)."""
SIGNED_HEAD_SQL = "SELECT statement FROM signed_heads WHERE session_id = ?"
REPLACE_SIGNED_HEAD_SQL = (
    "UPDATE signed_heads SET key_id = ?, statement = ?, sealed_at = ? "
    "WHERE session_id = ? AND statement = ?"
)
"""Put a later head of the same chain in place of the one the caller read (compare and set:
nothing changes when another seal was stored meanwhile). Only a head of an open session
(``agbom audit seal``) is ever replaced, by one that extends it (agbom/evidence/head.py)."""

SAVE_RESPONSE_KEY_SQL = (
    "INSERT INTO response_keys (session_id, key_id, negotiated_at) VALUES (?, ?, ?) "
    "ON CONFLICT (session_id) DO UPDATE SET key_id = excluded.key_id, "
    "negotiated_at = excluded.negotiated_at"
)
"""The asymmetric key a session's answers are signed with (its handshake accepted
acs-crypto), so another replica or a restarted Guardian signs them with the same one."""
RESPONSE_KEY_SQL = "SELECT key_id FROM response_keys WHERE session_id = ?"


def response_key_params(session_id: str, key_id: str) -> tuple[Any, ...]:
    return (
        _check_id(session_id, "session_id"),
        _check_id(key_id, "key_id"),
        format_timestamp(datetime.now(UTC)),
    )


def signed_head_params(session_id: str, statement: Mapping[str, Any]) -> tuple[Any, ...]:
    """The row of a signed head statement (``agbom.evidence.sign_head``), stored as its JSON."""
    signature = statement.get("signature")
    key_id = signature.get("key_id") if isinstance(signature, Mapping) else None
    sealed_at = statement.get("sealed_at")
    if (
        not isinstance(key_id, str)
        or not isinstance(sealed_at, str)
        or statement.get("session_id") != session_id
    ):
        raise StoreValueError("not a signed head statement of this session")
    return (
        _check_id(session_id, "session_id"),
        key_id,
        _dumps(dict(statement), "signed head"),
        sealed_at,
    )


def replace_signed_head_params(
    session_id: str, statement: Mapping[str, Any], previous: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The parameters of :data:`REPLACE_SIGNED_HEAD_SQL`: the new head's row, then the
    previous head as it is stored (sorted-key JSON, as :func:`signed_head_params` wrote it)."""
    sid, key_id, text, sealed_at = signed_head_params(session_id, statement)
    return (key_id, text, sealed_at, sid, _dumps(dict(previous), "signed head"))


def signed_head_of(text: str | None) -> dict[str, Any] | None:
    return None if text is None else dict(orjson.loads(text))


def upsert_session_params(
    session_id: str,
    *,
    agent_id: str,
    tenant_id: str | None,
    parent_session_id: str | None,
    status: str,
    started_at: datetime | None,
    ended_at: datetime | None,
    negotiated: Mapping[str, Any] | None,
) -> tuple[Any, ...]:
    """The checked parameters of :data:`UPSERT_SESSION_SQL` (``started_at`` defaults to now)."""
    _check_id(session_id, "session_id")
    _check_id(agent_id, "agent_id")
    _check_id(tenant_id, "tenant_id", optional=True)
    _check_id(parent_session_id, "parent_session_id", optional=True)
    check_text(status, "session status", 64)
    neg = None if negotiated is None else _dumps(dict(negotiated), "negotiated")
    now = _stamp(None)
    started = format_timestamp(started_at) or now
    return (
        session_id,
        agent_id,
        tenant_id,
        parent_session_id,
        status,
        started,
        format_timestamp(ended_at),
        neg,
        now,
    )


def seal_session_params(session_id: str, head: str | None) -> tuple[Any, ...]:
    """The checked parameters of :data:`SEAL_SESSION_SQL`."""
    _check_id(session_id, "session_id")
    check_text(head, "head", 256, optional=True)
    return (head, _stamp(None), session_id)


def session_dict(row: Sequence[Any]) -> dict[str, Any]:
    """A session as the store interface returns it, from a row of :data:`SESSION_COLUMNS`."""
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
