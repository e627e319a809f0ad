"""Approved MCP servers and their tool-set pins in SQLite (the shared checks and statements
are in agbom/store/_server_logic.py). Nothing is cached: the Guardian reads a pin at the
decision that needs it, so an approval or revocation is seen by the next decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agbom.store._server_logic import (
    HISTORY_COLUMNS,
    HISTORY_SQL,
    MAX_LOOKUP,
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
from agbom.store.interface import ServerPin, StoreError
from agbom.store.sqlite.connection import SqliteBase, _guarded


class ServersMixin(SqliteBase):
    """Server approvals (:class:`~agbom.store.interface.ServerApprovalStore`)."""

    @_guarded
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
            was = conn.execute(
                "SELECT status FROM server_pins WHERE server_key = ?", (row["server_key"],)
            ).fetchone()
            conn.execute(UPSERT_PIN_SQL, upsert_params(row))
            conn.execute(HISTORY_SQL, history_params(row, was[0] if was else None))
            stored = conn.execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key = ?",
                (row["server_key"],),
            ).fetchone()
        return pin_from_row(stored)

    @_guarded
    def revoke_server(
        self, server: str, *, actor: str, reason: str | None = None, now: datetime | None = None
    ) -> ServerPin:
        """Revoke ``server``'s approval: its pin no longer pins. Only an approved server can be
        revoked."""
        key = server_key(server)
        with self._write() as conn:
            found = conn.execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key = ?", (key,)
            ).fetchone()
            current = pin_from_row(found) if found is not None else None
            if current is None or not current.approved:
                raise StoreError(f"server {server!r} is not approved")
            row = revocation_row(current, actor=actor, reason=reason, now=now)
            conn.execute(UPSERT_PIN_SQL, upsert_params(row))
            conn.execute(HISTORY_SQL, history_params(row, current.status))
            stored = conn.execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key = ?", (key,)
            ).fetchone()
        return pin_from_row(stored)

    @_guarded
    def server_pin(self, server: str) -> ServerPin | None:
        """The approval row of ``server`` (approved or revoked), or ``None``."""
        row = (
            self._require()
            .execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key = ?",
                (server_key(server),),
            )
            .fetchone()
        )
        return None if row is None else pin_from_row(row)

    @_guarded
    def server_pins_for(self, names: Sequence[str]) -> list[ServerPin]:
        """The approval rows (approved or revoked) of any of ``names`` (ids or names, any
        case): primary-key lookups, none when ``names`` is empty."""
        keys = lookup_keys(names)
        conn = self._require()
        pins: list[ServerPin] = []
        for start in range(0, len(keys), MAX_LOOKUP):
            part = keys[start : start + MAX_LOOKUP]
            marks = ", ".join("?" for _ in part)
            rows = conn.execute(
                f"SELECT {PIN_COLUMNS} FROM server_pins WHERE server_key IN ({marks})", part
            )
            pins.extend(pin_from_row(row) for row in rows)
        return pins

    @_guarded
    def list_server_pins(self) -> list[ServerPin]:
        """Every server approval row, by name."""
        rows = self._require().execute(f"SELECT {PIN_COLUMNS} FROM server_pins ORDER BY server_key")
        return [pin_from_row(row) for row in rows]

    @_guarded
    def server_history(self, server: str | None = None) -> list[dict[str, Any]]:
        """Every approval and revocation (of one server, or all), oldest first."""
        sql = f"SELECT {HISTORY_COLUMNS} FROM server_pin_history"
        params: tuple[Any, ...] = ()
        if server is not None:
            sql += " WHERE server_key = ?"
            params = (server_key(server),)
        rows = self._require().execute(sql + " ORDER BY id", params)
        return [history_from_row(row) for row in rows]
