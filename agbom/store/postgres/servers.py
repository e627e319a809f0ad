"""Approved MCP servers and their tool-set pins on PostgreSQL (the shared checks and
statements are in agbom/store/_server_logic.py). Every read goes to the database, so an
approval or revocation made through any replica is what every replica decides with next."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agbom.store._server_logic import (
    HISTORY_COLUMNS,
    HISTORY_SQL,
    PIN_COLUMNS,
    UPSERT_PIN_SQL,
    approval_row,
    history_from_row,
    history_params,
    lookup_keys,
    pin_from_row,
    revocation_row,
    server_key,
    upsert_params,
)
from agbom.store._shared import pyformat_sql
from agbom.store.interface import ServerPin, StoreError
from agbom.store.postgres._base import PostgresBase

_UPSERT_PIN = pyformat_sql(UPSERT_PIN_SQL)
_HISTORY = pyformat_sql(HISTORY_SQL)
_PIN_BY_KEY = f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key = %s"
# Serializes the decisions on one server (a row lock cannot hold a server not yet approved).
_LOCK_KEY = "SELECT pg_advisory_xact_lock(hashtextextended('agbom-server:' || %s, 0))"


class ServersMixin(PostgresBase):
    """The :class:`~agbom.store.interface.ServerApprovalStore` part of the PostgreSQL store."""

    def approve_server(
        self,
        server: str,
        *,
        pin: Mapping[str, Any],
        actor: str,
        reason: str | None = None,
        purl: str | None = None,
        version: str | None = None,
        now: datetime | None = None,
    ) -> ServerPin:
        """Approve ``server`` with the tool set ``pin`` covers (its ``definitions``; the pin
        is recomputed from them). A second approval replaces the pin; each is in the history."""
        row = approval_row(
            server, pin=pin, actor=actor, reason=reason, purl=purl, version=version, now=now
        )
        with self._write() as conn:
            conn.execute(_LOCK_KEY, (row["server_key"],))
            was = conn.execute(
                "SELECT status FROM server_pins WHERE server_key = %s", (row["server_key"],)
            ).fetchone()
            conn.execute(_UPSERT_PIN, upsert_params(row))
            conn.execute(_HISTORY, history_params(row, was[0] if was else None))
            stored = conn.execute(_PIN_BY_KEY, (row["server_key"],)).fetchone()
        assert stored is not None  # written in this transaction
        return pin_from_row(stored)

    def revoke_server(
        self, server: str, *, actor: str, reason: str | None = None, now: datetime | None = None
    ) -> ServerPin:
        """Revoke ``server``'s approval: its pin no longer pins. Only an approved server can be
        revoked."""
        key = server_key(server)
        with self._write() as conn:
            conn.execute(_LOCK_KEY, (key,))
            found = conn.execute(_PIN_BY_KEY, (key,)).fetchone()
            current = pin_from_row(found) if found is not None else None
            if current is None or not current.approved:
                raise StoreError(f"server {server!r} is not approved")
            row = revocation_row(current, actor=actor, reason=reason, now=now)
            conn.execute(_UPSERT_PIN, upsert_params(row))
            conn.execute(_HISTORY, history_params(row, current.status))
            stored = conn.execute(_PIN_BY_KEY, (key,)).fetchone()
        assert stored is not None  # written in this transaction
        return pin_from_row(stored)

    def server_pin(self, server: str) -> ServerPin | None:
        """The approval row of ``server`` (approved or revoked), or ``None``."""
        key = server_key(server)
        with self._read() as conn:
            row = conn.execute(_PIN_BY_KEY, (key,)).fetchone()
        return None if row is None else pin_from_row(row)

    def server_pins_for(self, names: Sequence[str]) -> list[ServerPin]:
        """The approval rows (approved or revoked) of any of ``names`` (ids or names, any
        case): one index lookup, none when ``names`` is empty."""
        keys = lookup_keys(names)
        if not keys:
            return []
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key = ANY(%s)", (keys,)
            ).fetchall()
        return [pin_from_row(row) for row in rows]

    def list_server_pins(self) -> list[ServerPin]:
        """Every server approval row, by name."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins ORDER BY server_key"
            ).fetchall()
        return [pin_from_row(row) for row in rows]

    def server_history(self, server: str | None = None) -> list[dict[str, Any]]:
        """Every approval and revocation (of one server, or all), oldest first."""
        key = None if server is None else server_key(server)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {HISTORY_COLUMNS} FROM server_pin_history "
                "WHERE (%(k)s::text IS NULL OR server_key = %(k)s) ORDER BY id",
                {"k": key},
            ).fetchall()
        return [history_from_row(row) for row in rows]
