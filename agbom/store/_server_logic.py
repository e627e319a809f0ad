"""Server approvals (tool-set pins) written once for both backends: the checks of what an
approval or revocation is given, its rows, and a row read back as a :class:`ServerPin`.

The statements are written with ``?`` placeholders (sqlite3); the PostgreSQL store converts
them with :func:`agbom.store._shared.pyformat_sql` at import. Each backend keeps its own
transaction and locking around them (agbom/store/sqlite/servers.py, postgres/servers.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._shared import _check_id, _dumps, _stamp, _ts
from agbom.store.interface import MAX_ACTOR, MAX_REASON, ServerPin, StoreError, StoreValueError

MAX_PIN_BYTES = 16 * 1024 * 1024
"""The largest stored pin (its canonical definitions included): a ``tools/list`` snapshot's
bound (agbom.scan.lock.MAX_SNAPSHOT_BYTES)."""
MAX_LOOKUP = 500
"""Names looked up in one statement; more are looked up in several."""

PIN_COLUMNS = "server, status, pin, purl, version, decided_by, decided_at, reason, server_key"
HISTORY_COLUMNS = "server, purl, version, pin, from_status, to_status, actor, reason, at"

UPSERT_PIN_SQL = (
    "INSERT INTO server_pins (server_key, server, purl, version, pin_value, pin, status, "
    "decided_by, decided_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (server_key) DO UPDATE SET server = excluded.server, purl = excluded.purl, "
    "version = excluded.version, pin_value = excluded.pin_value, pin = excluded.pin, "
    "status = excluded.status, decided_by = excluded.decided_by, "
    "decided_at = excluded.decided_at, reason = excluded.reason"
)
HISTORY_SQL = (
    "INSERT INTO server_pin_history (server_key, server, purl, version, pin_value, pin, "
    "from_status, to_status, actor, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def server_key(server: Any) -> str:
    """The stored key of a server name: checked, trimmed, casefolded (names match without
    regard to case, as ``--tools-from`` snapshots match servers)."""
    text = _check_id(server, "server")
    assert text is not None
    key = text.strip().casefold()
    if not key:
        raise StoreValueError("server must be a non-empty name or id")
    return key


def lookup_keys(names: Sequence[str]) -> list[str]:
    """The distinct keys of ``names`` (those that cannot be a key are skipped: nothing is
    approved under them)."""
    keys: dict[str, None] = {}
    for name in names:
        try:
            keys[server_key(name)] = None
        except StoreError:
            continue
    return list(keys)


def _text(value: Any, what: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        raise StoreValueError(f"{what} must be text of at most {limit} characters")
    return value


def checked_pin(pin: Any) -> tuple[str, str]:
    """``(pin value, stored JSON)`` of a tool-set pin with its definitions, recomputed from
    the definitions so that a pin and the definitions it claims to cover cannot disagree."""
    from agbom.scan.lock import LockError, canonical_tool, tool_set_pin

    if not isinstance(pin, Mapping) or not isinstance(pin.get("definitions"), list):
        raise StoreValueError("a server pin must carry its tool definitions")
    try:
        tools = [
            canonical_tool(t if isinstance(t, Mapping) else {}, f"definitions[{i}]")
            for i, t in enumerate(pin["definitions"])
        ]
        computed = tool_set_pin(tools)
    except LockError as exc:
        raise StoreValueError(f"server pin: {exc}") from None
    if pin.get("value") is not None and pin.get("value") != computed["value"]:
        raise StoreValueError("server pin: its value is not the pin of its definitions")
    computed["definitions"] = sorted(tools, key=lambda t: str(t["name"]))
    return computed["value"], _dumps(computed, "server pin", MAX_PIN_BYTES)


def approval_row(
    server: str,
    *,
    pin: Mapping[str, Any],
    actor: str,
    reason: str | None,
    purl: str | None,
    version: str | None,
    now: datetime | None,
) -> dict[str, Any]:
    """The checked values of an approval (raises :class:`StoreError` on a bad one)."""
    key = server_key(server)
    value, pin_text = checked_pin(pin)
    return {
        "server_key": key,
        "server": server.strip(),
        "purl": _text(purl, "purl", 4096),
        "version": _text(version, "version", 512),
        "pin_value": value,
        "pin": pin_text,
        "status": "approved",
        "decided_by": _actor(actor),
        "decided_at": _stamp(now),
        "reason": _text(reason, "reason", MAX_REASON),
    }


def _actor(actor: Any) -> str:
    text = _text(actor, "actor", MAX_ACTOR)
    if not text or not text.strip():
        raise StoreValueError("actor must be a non-empty name")
    return text


def revocation_row(
    current: ServerPin, *, actor: str, reason: str | None, now: datetime | None
) -> dict[str, Any]:
    """The row of ``current`` revoked."""
    return {
        "server_key": server_key(current.server),
        "server": current.server,
        "purl": current.purl,
        "version": current.version,
        "pin_value": current.value,
        "pin": _dumps(dict(current.pin), "server pin", MAX_PIN_BYTES),
        "status": "revoked",
        "decided_by": _actor(actor),
        "decided_at": _stamp(now),
        "reason": _text(reason, "reason", MAX_REASON),
    }


def upsert_params(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        row["server_key"], row["server"], row["purl"], row["version"], row["pin_value"],
        row["pin"], row["status"], row["decided_by"], row["decided_at"], row["reason"],
    )  # fmt: skip


def history_params(row: Mapping[str, Any], from_status: str | None) -> tuple[Any, ...]:
    return (
        row["server_key"], row["server"], row["purl"], row["version"], row["pin_value"],
        row["pin"], from_status, row["status"], row["decided_by"], row["reason"],
        row["decided_at"],
    )  # fmt: skip


def pin_from_row(row: Sequence[Any]) -> ServerPin:
    """A ``PIN_COLUMNS`` row as a :class:`ServerPin`."""
    server, status, pin, purl, version, decided_by, decided_at, reason = row[:8]
    decided = _ts(decided_at)
    assert decided is not None
    return ServerPin(
        server=server,
        status=status,
        pin=orjson.loads(pin),
        purl=purl,
        version=version,
        decided_by=decided_by,
        decided_at=decided,
        reason=reason,
    )


def history_from_row(row: Sequence[Any]) -> dict[str, Any]:
    """A ``HISTORY_COLUMNS`` row as a dict (the pin's value and tool count, not its
    definitions: the history says which set was decided, the pin row holds it)."""
    server, purl, version, pin, from_status, to_status, actor, reason, at = row
    decoded = orjson.loads(pin)
    return {
        "server": server,
        "purl": purl,
        "version": version,
        "pin": {k: decoded.get(k) for k in ("algorithm", "value", "count")},
        "from_status": from_status,
        "to_status": to_status,
        "actor": actor,
        "reason": reason,
        "at": at,
    }
