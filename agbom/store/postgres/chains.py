"""Audit chains on PostgreSQL: appends serialized in the database, replay protection in it.

One ``INSERT ... SELECT`` computes the next ``seq`` and checks that ``previous_hash`` is the
session's head, from one snapshot. Two replicas that both read head N race for the primary
key ``(session_id, seq = N+1)``: the second waits for the first to commit, then fails with a
unique violation, which is a :class:`ChainConflict` (its head is stale: reload and retry).
The unique indexes on ``(session_id, request_id)`` and ``(session_id, nonce)`` make a replay
a :class:`DuplicateRequest` whichever replica saw the first copy. The chain never forks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import psycopg
import psycopg.errors

from agbom.store import ChainAppend
from agbom.store.interface import ChainConflict, DuplicateRequest, StoreError
from agbom.store.postgres._base import Connection, PostgresBase
from agbom.store.postgres._values import append_row

_APPEND_SQL = (
    "INSERT INTO chain_entries (session_id, seq, entry, entry_hash, previous_hash, "
    "request_id, nonce, recorded_at) "
    "SELECT %(sid)s, COALESCE(tip.seq, 0) + 1, %(entry)s, %(hash)s, %(prev)s, %(rid)s, "
    "%(nonce)s, %(at)s "
    "FROM (SELECT NULL) AS one LEFT JOIN LATERAL (SELECT seq, entry_hash FROM chain_entries "
    "WHERE session_id = %(sid)s ORDER BY seq DESC LIMIT 1) AS tip ON TRUE "
    "WHERE tip.entry_hash IS NOT DISTINCT FROM %(prev)s::text "
    "RETURNING seq"
)


# A whole batch in one statement, the rows given as parallel arrays. Each session's first row
# must chain on the stored head, or nothing at all is inserted; later rows chain on the row
# before them (append_entries checks that first). Any refusal (a replay, a lost race, a value
# PostgreSQL cannot hold) fails the statement, and the batch goes in entry by entry instead.
_BATCH_SQL = """
WITH batch AS (
    SELECT b.*, row_number() OVER (PARTITION BY b.sid ORDER BY b.k) AS n
    FROM unnest(%(sid)s::text[], %(entry)s::text[], %(hash)s::text[], %(prev)s::text[],
                %(rid)s::text[], %(nonce)s::text[], %(at)s::text[])
         WITH ORDINALITY AS b(sid, entry, hash, prev, rid, nonce, at, k)
),
tips AS (
    SELECT s.sid, t.seq, t.entry_hash
    FROM (SELECT DISTINCT sid FROM batch) AS s
    LEFT JOIN LATERAL (SELECT seq, entry_hash FROM chain_entries
                       WHERE session_id = s.sid ORDER BY seq DESC LIMIT 1) AS t ON TRUE
)
INSERT INTO chain_entries (session_id, seq, entry, entry_hash, previous_hash, request_id,
                           nonce, recorded_at)
SELECT b.sid, COALESCE(tips.seq, 0) + b.n, b.entry, b.hash, b.prev, b.rid, b.nonce, b.at
FROM batch AS b JOIN tips ON tips.sid = b.sid
WHERE NOT EXISTS (SELECT 1 FROM batch AS f JOIN tips AS ft ON ft.sid = f.sid
                  WHERE f.n = 1 AND ft.entry_hash IS DISTINCT FROM f.prev)
ORDER BY b.k
RETURNING session_id, entry_hash, seq
"""


class _NotWhole(Exception):
    """The batch statement did not store every row: roll it back, go entry by entry."""


def _linked_in_order(rows: list[tuple[Any, ...]]) -> bool:
    """True when each session's rows of the batch chain on one another."""
    last: dict[str, str] = {}
    for session_id, _entry, entry_hash, previous_hash, *_rest in rows:
        if session_id in last and last[session_id] != previous_hash:
            return False
        last[session_id] = entry_hash
    return True


def _append_batch(conn: Connection, rows: list[tuple[Any, ...]]) -> list[int] | None:
    """Every row in one statement, inside a savepoint; ``None`` when the batch must go in
    entry by entry (nothing of it was stored)."""
    columns = list(zip(*rows, strict=True))
    params = dict(zip(("sid", "entry", "hash", "prev", "rid", "nonce", "at"), columns, strict=True))
    try:
        with conn.transaction():
            stored = conn.execute(_BATCH_SQL, {k: list(v) for k, v in params.items()}).fetchall()
            seqs = {(sid, digest): int(seq) for sid, digest, seq in stored}
            if len(stored) != len(rows) or len(seqs) != len(rows):
                raise _NotWhole
    except (_NotWhole, psycopg.errors.UniqueViolation, psycopg.DataError):
        return None
    return [seqs[(row[0], row[2])] for row in rows]


def _params(row: tuple[Any, ...]) -> dict[str, Any]:
    sid, entry, entry_hash, prev, rid, nonce, at = row
    return {
        "sid": sid,
        "entry": entry,
        "hash": entry_hash,
        "prev": prev,
        "rid": rid,
        "nonce": nonce,
        "at": at,
    }


def _conflict(session_id: str, previous_hash: str | None, head: str | None) -> ChainConflict:
    return ChainConflict(
        f"session {session_id!r}: previous_hash {previous_hash!r} is not the chain head {head!r}"
    )


def _refused(
    exc: psycopg.errors.UniqueViolation, row: tuple[Any, ...], conn: Connection
) -> StoreError:
    """What a unique violation on an append means: a replay, or a lost race for ``seq``."""
    constraint = exc.diag.constraint_name or ""
    sid, _entry, _hash, prev, rid, nonce, _at = row
    if constraint == "chain_by_nonce":
        return DuplicateRequest(
            f"nonce {nonce!r} was already seen in session {sid!r}", field="nonce"
        )
    if constraint == "chain_by_request":
        return DuplicateRequest(
            f"request_id {rid!r} was already seen in session {sid!r}", field="request_id"
        )
    return _conflict(sid, prev, _head(conn, sid))


def _head(conn: Connection, session_id: str) -> str | None:
    row = conn.execute(
        "SELECT entry_hash FROM chain_entries WHERE session_id = %s ORDER BY seq DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else str(row[0])


def _append_in(conn: Connection, row: tuple[Any, ...]) -> int | StoreError:
    """One append inside a savepoint of ``conn``'s transaction: a refused entry rolls back
    alone."""
    try:
        with conn.transaction():
            returned = conn.execute(_APPEND_SQL, _params(row)).fetchone()
    except psycopg.errors.UniqueViolation as exc:
        return _refused(exc, row, conn)
    except psycopg.DataError as exc:
        # A value PostgreSQL cannot hold (a NUL character in an id): this entry only.
        return StoreError(f"session {row[0]!r}: entry refused: {' '.join(str(exc).split())}")
    if returned is None:
        return _conflict(row[0], row[3], _head(conn, row[0]))
    return int(returned[0])


class ChainsMixin(PostgresBase):
    """The :class:`~agbom.store.interface.ChainStore` part of the PostgreSQL store."""

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
        """Append one audit entry and return its ``seq`` (see SqliteStore).

        Raises :class:`DuplicateRequest` for a request id or nonce already recorded in the
        session (by any replica), :class:`ChainConflict` when ``previous_hash`` is not the
        head, including when another replica appended first.
        """
        row = append_row(
            ChainAppend(session_id, entry, entry_hash, previous_hash, request_id, nonce)
        )
        with self._write() as conn:
            outcome = _append_in(conn, row)
        if isinstance(outcome, StoreError):
            raise outcome
        return outcome

    def append_entries(self, appends: Sequence[ChainAppend]) -> list[int | StoreError]:
        """Append many entries, in order, committed together; one outcome per entry (see
        SqliteStore). A failure of the database stores nothing of the batch and is every
        entry's outcome."""
        rows = [append_row(append) for append in appends]
        if not rows:
            return []
        try:
            with self._write() as conn:
                if len(rows) > 1 and _linked_in_order(rows):
                    seqs = _append_batch(conn, rows)
                    if seqs is not None:
                        return list(seqs)
                return [_append_in(conn, row) for row in rows]
        except StoreError as exc:
            return [exc] * len(rows)

    def chain_head(self, session_id: str) -> str | None:
        """The ``entry_hash`` of the last entry of the session's chain, or ``None``."""
        with self._read() as conn:
            return _head(conn, session_id)

    def chain_tip(self, session_id: str) -> tuple[int, str] | None:
        """``(seq, entry_hash)`` of the session's last entry, or ``None`` for an empty chain."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT seq, entry_hash FROM chain_entries WHERE session_id = %s "
                "ORDER BY seq DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def chain_entries(self, session_id: str, *, after: int = 0) -> list[dict[str, Any]]:
        """The session's entries in order: entry fields plus previous_hash, entry_hash, seq.
        ``after``: only those with a greater seq (what was appended since)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT seq, entry, entry_hash, previous_hash FROM chain_entries "
                "WHERE session_id = %s AND seq > %s ORDER BY seq",
                (session_id, int(after)),
            ).fetchall()
        out = []
        for seq, text, entry_hash, previous_hash in rows:
            item = orjson.loads(text)
            item["previous_hash"] = previous_hash
            item["entry_hash"] = entry_hash
            item["seq"] = seq
            out.append(item)
        return out

    def chain_entry_text(self, session_id: str, seq: int) -> str | None:
        """The exact stored JSON text of one entry (for byte-for-byte re-verification)."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT entry FROM chain_entries WHERE session_id = %s AND seq = %s",
                (session_id, seq),
            ).fetchone()
        return None if row is None else str(row[0])

    def chain_session_ids(self) -> list[str]:
        """Every session that has at least one audit entry, sorted."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT session_id FROM chain_entries ORDER BY session_id"
            ).fetchall()
        return [str(row[0]) for row in rows]
