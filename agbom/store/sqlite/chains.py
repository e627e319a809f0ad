"""Audit chains in SQLite: one append-only chain per session, one statement per entry (a batch
of them in one transaction), with replay protection by unique indexes."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agbom.store._decision_counts import SQLITE_COUNT, counted
from agbom.store._shared import (
    _append_row,
)
from agbom.store.interface import (
    ChainAppend,
    ChainConflict,
    DuplicateRequest,
    StoreError,
)
from agbom.store.sqlite.connection import SqliteBase, _guarded

# One INSERT ... SELECT, autocommitted: SQLite takes the write lock for the whole statement,
# so computing the next seq and checking the head cannot race another writer; duplicates are
# caught by the unique indexes. Both subqueries are index seeks on (session_id, seq). It returns
# no row when ?4 (previous_hash) is not the session's head.
_APPEND_SQL = (
    "INSERT INTO chain_entries (session_id, seq, entry, entry_hash, previous_hash, "
    "request_id, nonce, recorded_at) "
    "SELECT ?1, COALESCE((SELECT seq FROM chain_entries WHERE session_id = ?1 "
    "ORDER BY seq DESC LIMIT 1), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 "
    "WHERE (SELECT entry_hash FROM chain_entries WHERE session_id = ?1 "
    "ORDER BY seq DESC LIMIT 1) IS ?4 "
    "RETURNING seq"
)

# The same append when this handle knows the head (it committed the session's last entry):
# the entry takes seq ?8 if the row before it is the head the caller chains on. The primary
# key refuses a seq another writer took meanwhile, so a remembered head that went stale is
# refused as a ChainConflict like any stale head; the knowledge only saves looking the head
# up (two index seeks and RETURNING: 8 us of 29 per entry in batches of 16, SQLite 3.40).
_APPEND_AT_SQL = (
    "INSERT INTO chain_entries (session_id, seq, entry, entry_hash, previous_hash, "
    "request_id, nonce, recorded_at) "
    "SELECT ?1, ?8, ?2, ?3, ?4, ?5, ?6, ?7 "
    "WHERE (SELECT entry_hash FROM chain_entries WHERE session_id = ?1 AND seq = ?8 - 1) IS ?4"
)

MAX_KNOWN_HEADS = 4096
"""Sessions whose head a store handle remembers; past that it starts over."""


def _conflict(session_id: str, previous_hash: str | None) -> ChainConflict:
    return ChainConflict(
        f"session {session_id!r}: previous_hash {previous_hash!r} is not the chain head"
    )


def _refusal(
    conn: sqlite3.Connection, exc: sqlite3.IntegrityError, row: tuple[Any, ...], seq: int | None
) -> StoreError:
    """What a refused append means: a lost race for the seq, or a replayed id or nonce.

    With ``seq`` (the entry was to take it, :data:`_APPEND_AT_SQL`), a stale head wins over a
    replay, as with :data:`_APPEND_SQL`, whose head check refuses before any index is looked
    at: the caller then reloads the session and decides again, and learns it is a replay from
    what it reloads."""
    if seq is not None and (
        getattr(exc, "sqlite_errorname", "") == "SQLITE_CONSTRAINT_PRIMARYKEY"
        or conn.execute(
            "SELECT 1 FROM chain_entries WHERE session_id = ? AND seq = ?", (row[0], seq)
        ).fetchone()
        is not None
    ):
        return _conflict(row[0], row[3])
    return _duplicate_request(exc, row[0], row[4], row[5])


def _duplicate_request(
    exc: sqlite3.IntegrityError, session_id: str, request_id: str | None, nonce: str | None
) -> DuplicateRequest:
    # SQLite names the index's columns: "UNIQUE constraint failed: …chain_entries.nonce".
    field, value = ("nonce", nonce) if "nonce" in str(exc) else ("request_id", request_id)
    return DuplicateRequest(
        f"{field} {value!r} was already seen in session {session_id!r}", field=field
    )


class ChainsMixin(SqliteBase):
    """Audit chains (:class:`~agbom.store.interface.ChainStore`)."""

    @_guarded
    def append_entry(
        self,
        session_id: str,
        *,
        entry: Mapping[str, Any] | bytes | str,
        entry_hash: str,
        previous_hash: str | None,
        request_id: str | None,
        nonce: str | None,
    ) -> int:
        """Append one audit entry to ``session_id``'s chain and return its sequence number.

        ``entry`` is stored as JSON text: a mapping is serialized with orjson; bytes or str are
        kept exactly as given (they must be one JSON object). Hashing is the caller's job.
        Raises :class:`DuplicateRequest` when the request id or nonce was already recorded in
        this session, :class:`ChainConflict` when ``previous_hash`` is not the current head.
        """
        row_values = _append_row(
            ChainAppend(session_id, entry, entry_hash, previous_hash, request_id, nonce)
        )
        keys = counted(entry, row_values[6])
        self._reconnect_if_due()
        conn = self._require()
        if keys:  # a decision: the entry and its counts in one transaction
            outcome = self._append_counted(conn, row_values, keys)
        else:
            outcome = self._append_one(conn, row_values)
        if isinstance(outcome, ChainConflict):
            head = self.chain_head(session_id)
            raise ChainConflict(
                f"session {session_id!r}: previous_hash {previous_hash!r} is not the chain "
                f"head {head!r}"
            )
        if isinstance(outcome, StoreError):
            raise outcome
        self._wrote()
        self._restart_wal_if_due(self._require())
        return outcome

    def _append_one(self, conn: sqlite3.Connection, row: tuple[Any, ...]) -> int | StoreError:
        """One append statement (autocommitted outside a transaction); its seq or refusal.

        Remembers the head it wrote, and the next entry chaining on it takes
        :data:`_APPEND_AT_SQL`. A refusal forgets the session's head; so does the caller when
        the transaction around it fails (:meth:`_append_one_by_one`)."""
        session_id, previous_hash = row[0], row[3]
        heads = self._known_heads
        known = heads.get(session_id)
        at = known[0] + 1 if known is not None and known[1] == previous_hash else None
        try:
            if at is not None:
                stored = conn.execute(_APPEND_AT_SQL, (*row, at)).rowcount == 1
                seq = at
            else:
                returned = conn.execute(_APPEND_SQL, row).fetchall()
                stored = bool(returned)
                seq = int(returned[0][0]) if returned else 0
        except sqlite3.IntegrityError as exc:
            heads.pop(session_id, None)
            return _refusal(conn, exc, row, at)
        if not stored:
            heads.pop(session_id, None)
            return _conflict(session_id, previous_hash)
        if len(heads) >= MAX_KNOWN_HEADS and session_id not in heads:
            heads.clear()
        heads[session_id] = (seq, row[2])
        return seq

    def _append_counted(
        self, conn: sqlite3.Connection, row: tuple[Any, ...], keys: list[tuple[str, str, str]]
    ) -> int | StoreError:
        """One entry and the decision counts it adds (:mod:`agbom.store._decision_counts`),
        in one transaction: a BEGIN and a statement a counter more than the append alone
        (no writer gate: the append alone took SQLite's lock without it too)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            outcome = self._append_one(conn, row)
            if isinstance(outcome, int):
                for key in keys:
                    conn.execute(SQLITE_COUNT, (*key, 1))
            conn.execute("COMMIT")
        except sqlite3.Error:
            self._known_heads.pop(row[0], None)  # what this transaction wrote is gone
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        return outcome

    def append_entries(self, appends: Sequence[ChainAppend]) -> list[int | StoreError]:
        """Append many entries, in order, committed together; one outcome per entry.

        An outcome is the entry's ``seq``, or the :class:`StoreError` that kept it out:
        :class:`DuplicateRequest`, :class:`ChainConflict` (also for every later entry of that
        session, which chained on it), or a failure that stored nothing of the batch. All the
        entries go in in one transaction (one WAL commit): that is what lets a server commit a
        burst of decisions for the price of one. Raises :class:`StoreError` only for invalid
        arguments, before anything is written.
        """
        rows = [_append_row(append) for append in appends]
        if not rows:
            return []
        keys = [counted(a.entry, row[6]) for a, row in zip(appends, rows, strict=True)]
        with self._lock:
            self._require()
            self._reconnect_if_due()
            conn = self._require()
            try:
                outcomes = self._append_one_by_one(conn, rows, keys)
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                return [StoreError(self._failed(exc))] * len(rows)
            self._restart_wal_if_due(conn)
            return outcomes

    def _append_one_by_one(
        self,
        conn: sqlite3.Connection,
        rows: list[tuple[Any, ...]],
        keys: list[list[tuple[str, str, str]]],
    ) -> list[int | StoreError]:
        """Each entry on its own statement inside one transaction: a refused entry does not
        take the others down. Cheaper than one INSERT ... SELECT over ``json_each`` for the
        whole batch as well: on SQLite 3.40, 26.7 against 32.9 µs of CPU per entry in batches
        of 24, 25.7 against 34.6 in batches of 8 (docs/performance.md, "HTTP decisions").
        The decisions stored are counted (``keys``: each row's counters,
        :func:`~agbom.store._decision_counts.counted`) in one statement before the commit."""
        with self._gate.turn(timeout_s=self._busy_timeout):
            conn.execute("BEGIN IMMEDIATE")
            try:
                outcomes = [self._append_one(conn, row) for row in rows]
                added: dict[tuple[str, str, str], int] = {}
                for outcome, counters in zip(outcomes, keys, strict=True):
                    if isinstance(outcome, int):
                        for key in counters:
                            added[key] = added.get(key, 0) + 1
                if added:
                    conn.executemany(SQLITE_COUNT, [(*k, n) for k, n in added.items()])
                conn.execute("COMMIT")
            except sqlite3.Error:
                self._known_heads.clear()  # what this transaction wrote is gone
                raise
        self._wrote()
        return outcomes

    @_guarded
    def chain_head(self, session_id: str) -> str | None:
        """The ``entry_hash`` of the last entry of the session's chain, or ``None``."""
        row = (
            self._require()
            .execute(
                "SELECT entry_hash FROM chain_entries WHERE session_id = ? "
                "ORDER BY seq DESC LIMIT 1",
                (session_id,),
            )
            .fetchone()
        )
        return None if row is None else row[0]

    @_guarded
    def chain_tip(self, session_id: str) -> tuple[int, str] | None:
        """``(seq, entry_hash)`` of the session's last entry, or ``None`` for an empty chain."""
        row = (
            self._require()
            .execute(
                "SELECT seq, entry_hash FROM chain_entries WHERE session_id = ? "
                "ORDER BY seq DESC LIMIT 1",
                (session_id,),
            )
            .fetchone()
        )
        return None if row is None else (int(row[0]), row[1])

    @_guarded
    def chain_entries(self, session_id: str, *, after: int = 0) -> list[dict[str, Any]]:
        """The session's entries in order: entry fields plus previous_hash, entry_hash, seq.
        ``after``: only those with a greater seq (what was appended since)."""
        out = []
        for seq, text, entry_hash, previous_hash in self._require().execute(
            "SELECT seq, entry, entry_hash, previous_hash FROM chain_entries "
            "WHERE session_id = ? AND seq > ? ORDER BY seq",
            (session_id, int(after)),
        ):
            item = orjson.loads(text)
            item["previous_hash"] = previous_hash
            item["entry_hash"] = entry_hash
            item["seq"] = seq
            out.append(item)
        return out

    @_guarded
    def chain_entry_text(self, session_id: str, seq: int) -> str | None:
        """The exact stored JSON text of one entry (for byte-for-byte re-verification)."""
        row = (
            self._require()
            .execute(
                "SELECT entry FROM chain_entries WHERE session_id = ? AND seq = ?",
                (session_id, seq),
            )
            .fetchone()
        )
        return None if row is None else row[0]

    @_guarded
    def chain_session_ids(self) -> list[str]:
        """Every session that has at least one audit entry, sorted."""
        rows = self._require().execute(
            "SELECT DISTINCT session_id FROM chain_entries ORDER BY session_id"
        )
        return [row[0] for row in rows]
