"""Copy a SQLite store into a PostgreSQL one: ``agbom store migrate``.

Rows are copied as they are stored (same ids, timestamps and JSON text), so the audit chains
verify byte for byte on the other side and the history keeps its order. The copy is safe to
run again, during a cut-over as often as needed:

- append-only rows (history, chain entries, AgBOM versions, skill events) are inserted when
  missing; a chain entry or AgBOM version already there must be the same row, or the copy
  stops with an error (the two stores have diverged, and nothing is overwritten); a history
  row or event whose id PostgreSQL gave to a row of its own since is appended under a new
  id (unless the same content is there already);
- an approval record already in the target is kept as it is there (a decision made on
  PostgreSQL after a first copy is never undone by a second); those that differ are counted;
- a session already in the target only gains what a session can gain once: its end and the
  head it was sealed with.

Each batch is its own transaction, so an interrupted copy keeps what it did and the next run
goes on from there. The SQLite file is read through a read-only connection, after
:class:`~agbom.store.sqlite.SqliteStore` has checked it (and brought an older one up to date).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson
import psycopg

from agbom.store.interface import StoreError
from agbom.store.postgres._values import component_rows
from agbom.store.postgres.inventory import index_components, refresh_fleet
from agbom.store.postgres.store import PostgresStore
from agbom.store.sqlite import SqliteStore

BATCH_ROWS = 500
T = TypeVar("T")

Progress = Callable[[str, int, int], None]
"""Called as ``progress(table, done, total)`` after each batch."""


@dataclass
class CopyReport:
    """What one run copied, per table, and what it left as the target had it."""

    copied: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    kept_target: dict[str, int] = field(default_factory=dict)

    @property
    def copied_any(self) -> bool:
        return any(self.copied.values())


_SKILL_COLUMNS = (
    "skill_id, digest_alg, digest_value, ref, declared_capabilities, composition, provenance, "
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, "
    "first_seen, last_seen, registered_by_agent, registered_by_tenant, required_signer"
)
_HISTORY_COLUMNS = (
    "id, skill_id, digest_alg, digest_value, from_status, to_status, actor, reason, expires_at, "
    "at, source, scope_agents, scope_tenants, capabilities, required_signer"
)
_CHAIN_COLUMNS = "session_id, seq, entry, entry_hash, previous_hash, request_id, nonce, recorded_at"
_SESSION_COLUMNS = (
    "session_id, agent_id, tenant_id, parent_session_id, status, started_at, ended_at, "
    "negotiated, updated_at, sealed_head"
)
_EVENT_COLUMNS = "id, session_id, skill_id, event, at"
_SERVER_PIN_COLUMNS = (
    "server_key, server, purl, version, pin_value, pin, status, decided_by, decided_at, reason"
)
_SERVER_HISTORY_COLUMNS = (
    "id, server_key, server, purl, version, pin_value, pin, from_status, to_status, actor, "
    "reason, at"
)


def _placeholders(columns: str) -> str:
    return ", ".join(["%s"] * len(columns.split(",")))


def _each_one(conn: Any, sql: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...] | None]:
    """Run ``sql`` once per row, pipelined (one round trip for the lot, not one per row);
    the first row each run returned, or None."""
    if not rows:
        return []
    out: list[tuple[Any, ...] | None] = []
    with conn.cursor() as cur:
        cur.executemany(sql, rows, returning=True)
        while True:
            out.append(cur.fetchone())
            if not cur.nextset():
                break
    return out


def _batches(rows: Iterable[T]) -> Iterator[list[T]]:
    batch: list[T] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


class _Copier:
    def __init__(self, source: Path, target: PostgresStore, progress: Progress | None) -> None:
        self.source = source
        self.target = target
        self.progress = progress
        self.report = CopyReport()
        self.raw = sqlite3.connect(f"file:{source}?mode=ro", uri=True)

    def close(self) -> None:
        self.raw.close()

    def _count(self, table: str) -> int:
        row = self.raw.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        return int(row[0])

    def _run(
        self,
        name: str,
        select: str,
        copy_batch: Callable[[Any, list[tuple[Any, ...]]], int],
        *,
        total: int,
    ) -> None:
        self.report.total[name] = total
        self.report.copied[name] = 0
        done = 0
        for batch in _batches(tuple(row) for row in self.raw.execute(select)):
            with self.target._write() as conn:
                self.report.copied[name] += copy_batch(conn, batch)
            done += len(batch)
            if self.progress is not None:
                self.progress(name, done, total)

    # -- append-only rows: insert the missing, insist the present are the same ------------

    def _append_only(
        self,
        name: str,
        table: str,
        columns: str,
        key: str,
        order: str,
        *,
        renumber: bool = False,
    ) -> None:
        """Copy the rows of an append-only table. ``renumber`` (tables keyed by a generated
        ``id``): a source row whose id PostgreSQL has given to a row of its own since a first
        copy is appended under a new id, unless a row with the same content is there."""
        names = [c.strip() for c in columns.split(",")]
        key_at = [names.index(k.strip()) for k in key.split(",")]
        rest = [n for n in names if n != "id"]
        same_content = f"SELECT 1 FROM {table} WHERE " + " AND ".join(
            f"{n} IS NOT DISTINCT FROM %s" for n in rest
        )
        append_new = (
            f"INSERT INTO {table} ({', '.join(rest)}) VALUES ({_placeholders(', '.join(rest))})"
        )
        insert = (
            f"INSERT INTO {table} ({columns}) VALUES ({_placeholders(columns)}) "
            f"ON CONFLICT DO NOTHING RETURNING {key}"
        )
        compare = f"SELECT {columns} FROM {table} WHERE ({key}) = ({_placeholders(key)})"

        def copy_batch(conn: Any, batch: list[tuple[Any, ...]]) -> int:
            inserted = _each_one(conn, insert, batch)
            copied = sum(r is not None for r in inserted)
            present = [row for row, r in zip(batch, inserted, strict=True) if r is None]
            keys = [tuple(row[i] for i in key_at) for row in present]
            for row, key_values, there in zip(
                present, keys, _each_one(conn, compare, keys), strict=True
            ):
                if there is not None and tuple(there) == tuple(row):
                    continue  # copied by an earlier run
                if renumber and there is not None:
                    content = tuple(v for n, v in zip(names, row, strict=True) if n != "id")
                    if conn.execute(same_content, content).fetchone() is None:
                        conn.execute(append_new, content)
                        copied += 1
                    continue
                shown = ", ".join(str(v) for v in key_values)
                raise StoreError(
                    f"{name}: the target's row ({shown}) differs from the source's, or "
                    "collides with one of its own: the stores have diverged, nothing of "
                    "it was overwritten"
                )
            return copied

        self._run(
            name,
            f"SELECT {columns} FROM {table} ORDER BY {order}",
            copy_batch,
            total=self._count(table),
        )

    def history(self) -> None:
        self._append_only(
            "approval history", "skill_history", _HISTORY_COLUMNS, "id", "id", renumber=True
        )
        self._bump_identity("skill_history")

    def chains(self) -> None:
        self._append_only(
            "chain entries", "chain_entries", _CHAIN_COLUMNS, "session_id, seq", "session_id, seq"
        )

    def events(self) -> None:
        self._append_only("skill events", "skill_events", _EVENT_COLUMNS, "id", "id", renumber=True)
        self._bump_identity("skill_events")

    def agbom_versions(self, source_store: SqliteStore) -> None:
        """AgBOM documents through the store's reader (whatever its layout on disk), in the
        order they were stored; each accepted one copied is indexed in the fleet inventory
        as the PostgreSQL store indexes a version it saves (the same first-seen times)."""
        pairs = self.raw.execute("SELECT session_id, version FROM agbom_versions ORDER BY rowid")
        total = self._count("agbom_versions")
        columns = (
            "session_id, version, agent_id, document, agbom_hash, change, created_at, accepted"
        )
        insert = (
            f"INSERT INTO agbom_versions ({columns}) VALUES ({_placeholders(columns)}) "
            "ON CONFLICT DO NOTHING RETURNING version"
        )

        def rows() -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
            for session_id, version in pairs:
                stored = source_store.agbom_version(session_id, int(version))
                if stored is None:
                    continue
                yield (
                    (
                        session_id,
                        int(version),
                        stored["agent_id"],
                        orjson.dumps(stored["document"], option=orjson.OPT_SORT_KEYS).decode(),
                        stored["agbom_hash"],
                        None
                        if stored["change"] is None
                        else orjson.dumps(stored["change"], option=orjson.OPT_SORT_KEYS).decode(),
                        stored["created_at"],
                        bool(stored["accepted"]),
                    ),
                    stored["document"],
                )

        self.report.total["AgBOM versions"] = total
        self.report.copied["AgBOM versions"] = 0
        done = 0
        for batch in _batches(rows()):
            with self.target._write() as conn:
                for row, document in batch:
                    if conn.execute(insert, row).fetchone() is not None:
                        self.report.copied["AgBOM versions"] += 1
                        if row[7]:
                            components = component_rows(document)
                            index_components(conn, row[0], row[1], row[2], components, row[6])
                        continue
                    there = conn.execute(
                        "SELECT agbom_hash FROM agbom_versions WHERE session_id = %s "
                        "AND version = %s",
                        row[:2],
                    ).fetchone()
                    if there is None or there[0] != row[4]:
                        raise StoreError(
                            f"AgBOM versions: version {row[1]} of session {row[0]!r} differs "
                            "in the target: the stores have diverged, nothing was overwritten"
                        )
            done += len(batch)
            if self.progress is not None:
                self.progress("AgBOM versions", done, total)
        with self.target._write() as conn:  # the summary of what the target holds now
            refresh_fleet(conn, None)

    def _bump_identity(self, table: str) -> None:
        """Explicit ids went in: move the table's id sequence past them, so rows written on
        PostgreSQL later never take an id the source used."""
        with self.target._write() as conn:
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"GREATEST((SELECT MAX(id) FROM {table}), 1))"
            )

    # -- mutable rows ----------------------------------------------------------------------

    def skills(self) -> None:
        self._keeping_target(
            "approvals",
            "skills",
            _SKILL_COLUMNS,
            ("skill_id", "digest_alg", "digest_value"),
            # Replicas listening for approval changes reload this skill.
            notify="agbom_approvals",
        )

    def server_pins(self) -> None:
        """Approved MCP servers and their tool-set pins; a server PostgreSQL already holds
        keeps the target's row (a decision made there since), as approvals do."""
        self._keeping_target(
            "server approvals", "server_pins", _SERVER_PIN_COLUMNS, ("server_key",)
        )

    def _keeping_target(
        self,
        label: str,
        table: str,
        columns: str,
        key: tuple[str, ...],
        *,
        notify: str | None = None,
    ) -> None:
        """Copy ``table``'s rows (their first columns are ``key``); a row whose key PostgreSQL
        already holds with other values keeps the target's, and is counted in
        ``report.kept_target[label]``. With ``notify``, each copied row is announced on that
        channel with its first key column."""
        insert = (
            f"INSERT INTO {table} ({columns}) VALUES ({_placeholders(columns)}) "
            f"ON CONFLICT DO NOTHING RETURNING {key[0]}"
        )
        compare = f"SELECT {columns} FROM {table} WHERE " + " AND ".join(
            f"{name} = %s" for name in key
        )
        kept = 0

        def copy_batch(conn: Any, batch: list[tuple[Any, ...]]) -> int:
            nonlocal kept
            copied = 0
            for row in batch:
                if conn.execute(insert, row).fetchone() is not None:
                    copied += 1
                    if notify is not None:
                        conn.execute("SELECT pg_notify(%s, %s)", (notify, row[0]))
                    continue
                there = conn.execute(compare, row[: len(key)]).fetchone()
                if there is not None and tuple(there) != tuple(row):
                    kept += 1
            return copied

        self._run(
            label,
            f"SELECT {columns} FROM {table} ORDER BY {', '.join(key)}",
            copy_batch,
            total=self._count(table),
        )
        self.report.kept_target[label] = kept

    def server_history(self) -> None:
        self._append_only(
            "server approval history",
            "server_pin_history",
            _SERVER_HISTORY_COLUMNS,
            "id",
            "id",
            renumber=True,
        )
        self._bump_identity("server_pin_history")

    def definitions(self) -> None:
        """What registrations carried for review (stores of schema 7 and later)."""
        exists = self.raw.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'skill_definitions'"
        ).fetchone()
        if exists is None:
            return
        columns = "skill_id, digest_alg, digest_value, definition, recorded_at"
        insert = (
            f"INSERT INTO skill_definitions ({columns}) VALUES ({_placeholders(columns)}) "
            "ON CONFLICT DO NOTHING RETURNING skill_id"
        )

        def copy_batch(conn: Any, batch: list[tuple[Any, ...]]) -> int:
            return sum(conn.execute(insert, row).fetchone() is not None for row in batch)

        self._run(
            "skill definitions",
            f"SELECT {columns} FROM skill_definitions ORDER BY skill_id, digest_alg, digest_value",
            copy_batch,
            total=self._count("skill_definitions"),
        )

    def sessions(self) -> None:
        upsert = (
            f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES "
            f"({_placeholders(_SESSION_COLUMNS)}) ON CONFLICT (session_id) DO UPDATE SET "
            "ended_at = COALESCE(sessions.ended_at, excluded.ended_at), "
            "status = CASE WHEN sessions.ended_at IS NULL AND excluded.ended_at IS NOT NULL "
            "THEN excluded.status ELSE sessions.status END, "
            "sealed_head = COALESCE(sessions.sealed_head, excluded.sealed_head), "
            "updated_at = excluded.updated_at "
            "WHERE (sessions.ended_at IS NULL AND excluded.ended_at IS NOT NULL) "
            "OR (sessions.sealed_head IS NULL AND excluded.sealed_head IS NOT NULL) "
            "RETURNING session_id"
        )

        def copy_batch(conn: Any, batch: list[tuple[Any, ...]]) -> int:
            return sum(conn.execute(upsert, row).fetchone() is not None for row in batch)

        self._run(
            "sessions",
            f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY started_at, session_id",
            copy_batch,
            total=self._count("sessions"),
        )

    def signed_heads(self) -> None:
        """Heads the Guardian signed at sessionEnd (stores of schema 10 and later); a seal
        the target already holds stands, as a seal does on either store."""
        exists = self.raw.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'signed_heads'"
        ).fetchone()
        if exists is None:
            return
        columns = "session_id, key_id, statement, sealed_at"
        insert = (
            f"INSERT INTO signed_heads ({columns}) VALUES ({_placeholders(columns)}) "
            "ON CONFLICT (session_id) DO NOTHING RETURNING session_id"
        )

        def copy_batch(conn: Any, batch: list[tuple[Any, ...]]) -> int:
            return sum(conn.execute(insert, row).fetchone() is not None for row in batch)

        self._run(
            "signed heads",
            f"SELECT {columns} FROM signed_heads ORDER BY session_id",
            copy_batch,
            total=self._count("signed_heads"),
        )

    def response_keys(self) -> None:
        """The keys of acs-crypto sessions (stores of schema 11 and later); the target's
        record of a session stands."""
        exists = self.raw.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'response_keys'"
        ).fetchone()
        if exists is None:
            return
        columns = "session_id, key_id, negotiated_at"
        insert = (
            f"INSERT INTO response_keys ({columns}) VALUES ({_placeholders(columns)}) "
            "ON CONFLICT (session_id) DO NOTHING RETURNING session_id"
        )

        def copy_batch(conn: Any, batch: list[tuple[Any, ...]]) -> int:
            return sum(conn.execute(insert, row).fetchone() is not None for row in batch)

        self._run(
            "response keys",
            f"SELECT {columns} FROM response_keys ORDER BY session_id",
            copy_batch,
            total=self._count("response_keys"),
        )


def copy_sqlite_store(
    source: Path, target: PostgresStore, *, progress: Progress | None = None
) -> CopyReport:
    """Copy every approval (of skills and of servers), history row, chain, session, AgBOM
    version and skill event of the SQLite store at ``source`` into ``target``; return what
    was copied.

    Raises :class:`StoreError` when the source is not a store, or the two have diverged (see
    the module docstring); what was copied before stays.
    """
    with SqliteStore.open(source, create=False) as source_store:
        copier = _Copier(source, target, progress)
        try:
            copier.skills()
            copier.history()
            copier.definitions()
            copier.server_pins()
            copier.server_history()
            copier.sessions()
            copier.signed_heads()
            copier.response_keys()
            copier.chains()
            copier.agbom_versions(source_store)
            copier.events()
        except sqlite3.Error as exc:
            raise StoreError(f"{source}: cannot read the store: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{target.location}: {' '.join(str(exc).split())}") from exc
        finally:
            copier.close()
    return copier.report
