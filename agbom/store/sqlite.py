"""The embedded store: one SQLite file, opened through sqlite-utils.

Concurrency model (measured, see the library notes): WAL journal, ``synchronous=NORMAL``, a
busy timeout, and every read-modify-write inside ``BEGIN IMMEDIATE`` so that concurrent
writers queue on the busy timeout instead of failing with "database is locked". Open one
:class:`SqliteStore` per thread or process; a store shared between threads is still safe
because each call holds the store's lock, but its calls are then serialized.

Nothing is cached in process: every :meth:`SqliteStore.verdict` reads the row from SQLite (a
primary-key lookup), so an approval committed by ``agbom skills approve`` in another process
is seen by a running Guardian on its very next decision.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import orjson
import sqlite_utils

from agbom.store._migrations import MIGRATIONS, SCHEMA_VERSION
from agbom.store.interface import (
    MAX_ACTOR,
    MAX_REASON,
    MAX_SKILL_ID,
    ChainAppend,
    ChainConflict,
    Digest,
    DuplicateRequest,
    SkillRecord,
    SkillStatus,
    StoreError,
    Verdict,
    as_utc,
    check_patterns,
    check_text,
    format_timestamp,
    parse_timestamp,
    utc_now,
    utc_timestamp,
)

__all__ = ["ChainAppend", "SqliteStore"]

P = ParamSpec("P")
R = TypeVar("R")

BUSY_TIMEOUT_S = 30.0
MAX_REF = 4096
MAX_CAPABILITIES = 1024
MAX_JSON_BYTES = 1 << 20  # composition, provenance, negotiated, change
MAX_ENTRY_BYTES = 32 << 20  # one audit entry or one AgBOM document
MAX_ID = 512
WAL_LIMIT_BYTES = 64 << 20
"""WAL size at which the background checkpointer makes SQLite start the WAL over."""
PROBE_BUSY_TIMEOUT_S = 0.5
"""How long :meth:`SqliteStore.check_writable` waits for another writer's lock."""
_RECONNECT_CODES = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN}
)
"""Failures after which a connection may be stuck in a state the file has since left. SQLite
opens a file it may not write (chmod, ``chattr +i``, a read-only remount) read-only and keeps
it so for the connection's life, so only a new connection sees that it is writable again."""
_UNWRITABLE_CODES = _RECONNECT_CODES | {
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_PROTOCOL,
}
"""Failures that say the store cannot take writes now (as opposed to a refused row)."""

IMPORT_FORMAT = "agbom-skill-approvals"
IMPORT_VERSION = 1
_DECIDED = (SkillStatus.APPROVED, SkillStatus.DENIED, SkillStatus.REVOKED)
_IMPORT_KEYS = frozenset(
    {"skill_id", "digest", "status", "decided_by", "decided_at", "reason", "expires_at"}
    | {"scope", "ref", "capabilities"}
)

_SKILL_COLUMNS = (
    "skill_id, digest_alg, digest_value, ref, declared_capabilities, composition, provenance, "
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, "
    "first_seen, last_seen, registered_by_agent, registered_by_tenant"
)
_PAIR = "skill_id = ? AND digest_alg = ? AND digest_value = ?"


def _guarded(method: Callable[P, R]) -> Callable[P, R]:
    """Hold the store lock and turn sqlite3 failures into one clear :class:`StoreError`."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        assert isinstance(self, SqliteStore)
        with self._lock:
            if self._conn is None:
                raise StoreError(f"store {self.path} is closed")
            try:
                return method(*args, **kwargs)
            except sqlite3.Error as exc:
                raise StoreError(self._failed(exc)) from exc

    return wrapper


def _describe(exc: sqlite3.Error, path: Path | str) -> str:
    text = str(exc)
    if "file is not a database" in text or "file is encrypted" in text:
        return f"{path}: not an agbom store (not a SQLite database)"
    if "locked" in text or "busy" in text:
        return f"store {path} is busy (another process holds a write lock too long): {text}"
    if "readonly" in text:
        return f"store {path} is read-only: {text}"
    return f"store {path}: {text}"


def _dumps(value: Any, what: str, limit: int = MAX_JSON_BYTES) -> str:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise StoreError(f"{what} is not JSON-serializable: {exc}") from None
    if len(data) > limit:
        raise StoreError(f"{what} is larger than {limit} bytes")
    return data.decode("utf-8")


def _ts(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _now(now: datetime | None) -> datetime:
    return utc_now() if now is None else as_utc(now)


def _stamp(now: datetime | None) -> str:
    """The stored text form of ``now`` (the current time when None)."""
    return format_timestamp(_now(now)) or ""


def _check_id(value: Any, what: str, *, optional: bool = False) -> str | None:
    return check_text(value, what, MAX_ID, optional=optional)


def _capabilities_text(value: Any, what: str) -> str:
    """A checked capability list (strings, at most MAX_CAPABILITIES) as stored JSON text."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise StoreError(f"{what} must be a list of strings")
    if not all(isinstance(c, str) for c in value):
        raise StoreError(f"{what} must be a list of strings")
    if len(value) > MAX_CAPABILITIES:
        raise StoreError(f"{what}: more than {MAX_CAPABILITIES} entries")
    return _dumps(list(value), what)


def _in_scope(patterns: tuple[str, ...], value: str | None) -> bool:
    if not patterns:
        return True
    if value is None:
        # A scoped approval cannot be matched by a caller that does not say who it is.
        return False
    return any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


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


def _append_row(append: ChainAppend) -> tuple[Any, ...]:
    """Checked parameters of :data:`_APPEND_SQL` for one entry."""
    _check_id(append.session_id, "session_id")
    check_text(append.entry_hash, "entry_hash", 256)
    check_text(append.previous_hash, "previous_hash", 256, optional=True)
    _check_id(append.request_id, "request_id", optional=True)
    _check_id(append.nonce, "nonce", optional=True)
    return (
        append.session_id,
        _entry_text(append.entry),
        append.entry_hash,
        append.previous_hash,
        append.request_id,
        append.nonce,
        utc_timestamp(),
    )


def _duplicate_request(
    exc: sqlite3.IntegrityError, session_id: str, request_id: str | None, nonce: str | None
) -> DuplicateRequest:
    # SQLite names the index's columns: "UNIQUE constraint failed: …chain_entries.nonce".
    field, value = ("nonce", nonce) if "nonce" in str(exc) else ("request_id", request_id)
    return DuplicateRequest(
        f"{field} {value!r} was already seen in session {session_id!r}", field=field
    )


# A whole batch of entries in one autocommitted statement, the rows given as one JSON array of
# _APPEND_SQL parameter lists. Each session's first row must chain on the stored head, or the
# WHERE clause inserts nothing at all; later rows chain on the row before them, which
# append_entries checks before it gets here. SQLite evaluates the SELECT before inserting (it
# reads the table it writes), so every row sees the heads as they were.
_BATCH_SQL = """
WITH batch AS (
    SELECT key AS k, value ->> 0 AS sid, value ->> 1 AS entry, value ->> 2 AS hash,
           value ->> 3 AS prev, value ->> 4 AS rid, value ->> 5 AS nonce, value ->> 6 AS at
    FROM json_each(?1)
),
numbered AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY sid ORDER BY k) AS n FROM batch
)
INSERT INTO chain_entries (session_id, seq, entry, entry_hash, previous_hash, request_id, nonce,
                           recorded_at)
SELECT sid,
       COALESCE((SELECT seq FROM chain_entries c WHERE c.session_id = sid
                 ORDER BY seq DESC LIMIT 1), 0) + n,
       entry, hash, prev, rid, nonce, at
FROM numbered
WHERE NOT EXISTS (
    SELECT 1 FROM numbered f
    WHERE f.n = 1 AND (SELECT entry_hash FROM chain_entries c WHERE c.session_id = f.sid
                       ORDER BY seq DESC LIMIT 1) IS NOT f.prev
)
ORDER BY k
RETURNING session_id, entry_hash, seq
"""


def _linked_in_order(rows: list[tuple[Any, ...]]) -> bool:
    """True when each session's rows chain on one another and no text holds a NUL (SQLite's
    JSON functions would cut it short)."""
    last: dict[str, str] = {}
    for session_id, _entry, entry_hash, previous_hash, request_id, nonce, _at in rows:
        if session_id in last and last[session_id] != previous_hash:
            return False
        last[session_id] = entry_hash
        for text in (session_id, entry_hash, previous_hash, request_id, nonce):
            if text is not None and "\x00" in text:
                return False
    return True


class SqliteStore:
    """Skill approvals, audit chains, sessions and AgBOM versions in one SQLite file."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        """Use :meth:`open`; this wraps an already configured and migrated connection."""
        self.path = path
        self._conn: sqlite3.Connection | None = conn
        self.db = sqlite_utils.Database(conn, execute_plugins=False)
        self._lock = threading.RLock()
        self._checkpointer: tuple[threading.Thread, threading.Event] | None = None
        self._wal_restart_due = False  # set by the checkpointer thread, acted on by the writer
        self._busy_timeout = BUSY_TIMEOUT_S
        self._write_failure: str | None = None
        self._reconnect_due = False
        self._checkpoint_settings: tuple[float, int] = (0.25, WAL_LIMIT_BYTES)

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S, create: bool = True
    ) -> SqliteStore:
        """Open (creating if missing, unless ``create`` is false) and upgrade the store at
        ``path``.

        Raises :class:`StoreError` when the file is missing and ``create`` is false, is not an
        agbom store, was written by a newer agbom, or cannot be opened or upgraded.
        """
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"{path}: is a directory, not a store file")
        if not path.parent.is_dir():
            raise StoreError(f"{path}: the folder {path.parent} does not exist")
        if not create and not path.exists():
            raise StoreError(f"{path}: no store there (check --db or $AGBOM_DB)")
        try:
            # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves.
            conn = sqlite3.connect(
                str(path), timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            store = cls(path, conn)
            store._busy_timeout = busy_timeout
            store._configure(busy_timeout)
            store._migrate()
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(_describe(exc, path)) from exc
        except BaseException:
            conn.close()
            raise
        return store

    @property
    def location(self) -> str:
        """The store file's path, as text."""
        return str(self.path)

    def reopen(self) -> SqliteStore:
        """Another handle on this file with a connection of its own (for another thread)."""
        return SqliteStore.open(self.path, busy_timeout=self._busy_timeout, create=False)

    def _configure(self, busy_timeout: float) -> None:
        conn = self._require()
        # Switching to WAL needs a moment without other writers; the busy handler does not
        # cover every path of that switch, so retry briefly while a sibling creates the file.
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                self.db.enable_wal()
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        conn.execute("PRAGMA synchronous = NORMAL")

    def _migrate(self) -> None:
        conn = self._require()
        version = self._schema_version()
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: store schema version {version} is newer than this agbom "
                f"supports ({SCHEMA_VERSION}); upgrade agbom to use this store"
            )
        with self._write():
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = self._schema_version()
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: store schema version {version} is newer than this agbom "
                    f"supports ({SCHEMA_VERSION})"
                )
            start = version
            try:
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[target - 1]:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                        (target, _stamp(None)),
                    )
            except sqlite3.Error as exc:
                raise StoreError(
                    f"{self.path}: cannot upgrade the store from schema version {start} to "
                    f"{SCHEMA_VERSION}: {exc} (the store was left at version {start})"
                ) from exc

    def _schema_version(self) -> int:
        conn = self._require()
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        if "schema_version" not in tables:
            if tables:
                raise StoreError(
                    f"{self.path}: not an agbom store (a SQLite database without a "
                    "schema_version table); pass --db with another file"
                )
            return 0
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    @property
    def schema_version(self) -> int:
        """The schema version of the open store."""
        with self._lock:
            return self._schema_version()

    def start_background_checkpoints(
        self, interval_s: float = 0.25, wal_limit_bytes: int = WAL_LIMIT_BYTES
    ) -> None:
        """Move WAL checkpoints off this connection onto a background thread.

        A long-running writer (the Guardian server) otherwise pays for a checkpoint (copying
        pages back to the database and syncing) inside whichever request crosses the WAL
        threshold: that is most of its p99. Here this connection stops checkpointing and a
        daemon thread with its own connection runs PASSIVE checkpoints, which never block
        readers or the writer. SQLite releases the GIL meanwhile, so the work can use another
        core. Stops when the store is closed.

        Under steady writes a PASSIVE checkpoint never finds the WAL fully copied (new frames
        arrive while it runs), so SQLite never starts the WAL over and the file grows without
        end (700 MB in ten seconds at full speed). Once it holds more than ``wal_limit_bytes``
        of frames, the thread asks the writer to start it over (:meth:`_restart_wal_if_due`).
        """
        with self._lock:
            if self._checkpointer is not None:
                return
            self._require().execute("PRAGMA wal_autocheckpoint = 0")
            self._checkpoint_settings = (interval_s, wal_limit_bytes)
            stop = threading.Event()

            page_size = int(self._require().execute("PRAGMA page_size").fetchone()[0])

            def run() -> None:
                conn = sqlite3.connect(str(self.path), timeout=1.0, isolation_level=None)
                try:
                    while not stop.wait(interval_s):
                        # Busy, locked or failed now: the next round catches up. A connection
                        # left read-only is replaced along with the writer's (_reconnect_if_due).
                        self._checkpoint_round(conn, page_size, wal_limit_bytes)
                finally:
                    conn.close()

            thread = threading.Thread(target=run, name="agbom-wal-checkpoint", daemon=True)
            thread.start()
            self._checkpointer = (thread, stop)

    def checkpoint(self, wal_limit_bytes: int = WAL_LIMIT_BYTES) -> int:
        """Run one round of the background checkpointer now, on this thread; return how many
        frames the WAL holds (-1 if the checkpoint could not run).

        A PASSIVE checkpoint from a connection of its own, as in
        :meth:`start_background_checkpoints`: if the WAL holds more than ``wal_limit_bytes`` of
        frames, the next write starts it over. For maintenance, and to drive that rule step by
        step (the background thread runs it on a timer).
        """
        with self._lock:
            page_size = int(self._require().execute("PRAGMA page_size").fetchone()[0])
        conn = sqlite3.connect(str(self.path), timeout=1.0, isolation_level=None)
        try:
            return self._checkpoint_round(conn, page_size, wal_limit_bytes)
        finally:
            conn.close()

    def _checkpoint_round(
        self, conn: sqlite3.Connection, page_size: int, wal_limit_bytes: int
    ) -> int:
        try:
            _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            return -1
        if frames * page_size > wal_limit_bytes:
            self._wal_restart_due = True
        return int(frames)

    def close(self) -> None:
        """Close the connection; later calls raise :class:`StoreError`."""
        with self._lock:
            self._stop_checkpoints()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _stop_checkpoints(self) -> None:
        if self._checkpointer is not None:
            thread, stop = self._checkpointer
            stop.set()
            thread.join(timeout=5)
            self._checkpointer = None

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"store {self.path} is closed")
        return self._conn

    @contextmanager
    def _write(self, *, busy_timeout: float | None = None) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: take the write lock before reading.

        ``busy_timeout``: wait this long for another writer's lock, instead of the store's
        own timeout."""
        self._reconnect_if_due()
        conn = self._require()
        if busy_timeout is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
                self._wrote()
        finally:
            if busy_timeout is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")

    def _wrote(self) -> None:
        """A write committed: the store takes writes, on this connection."""
        self._write_failure = None
        self._reconnect_due = False

    # -- write health ----------------------------------------------------------------------

    @property
    def write_failure(self) -> str | None:
        """Why the store could not take the last write, or ``None``.

        Set by a failure that says the store cannot write now (read-only, locked past the busy
        timeout, I/O error, disk full), not by a refused row; cleared by the next write that
        commits, or by :meth:`check_writable`. A server answers its health check with an
        error while it is set.
        """
        return self._write_failure

    def check_writable(self) -> str | None:
        """Commit one write that changes nothing; return why it failed, or ``None``.

        The write sets ``user_version`` to the value it has: a real commit of the database
        header through the WAL, which fails wherever a chain entry would. A connection that a
        failure may have left read-only is replaced first, so a store that became writable
        again is writable here, without a restart. Waits at most
        :data:`PROBE_BUSY_TIMEOUT_S` for another writer's lock.
        """
        with self._lock:
            self._require()
            try:
                with self._write(busy_timeout=PROBE_BUSY_TIMEOUT_S) as conn:
                    (version,) = conn.execute("PRAGMA user_version").fetchone()
                    conn.execute(f"PRAGMA user_version = {int(version)}")
            except sqlite3.Error as exc:
                return self._failed(exc)
            return None

    def _failed(self, exc: sqlite3.Error) -> str:
        """Describe a failure, and note it when it says the store cannot take writes now."""
        text = _describe(exc, self.path)
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _UNWRITABLE_CODES:
            self._write_failure = text
            if code & 0xFF in _RECONNECT_CODES:
                self._reconnect_due = True
        return text

    def _reconnect_if_due(self) -> None:
        """Replace a connection that a failure may have left read-only (see _RECONNECT_CODES).

        SQLite shares one shared-memory index (``-shm``) between all the connections of a
        process to a file, opened read-only if the first of them could not write it. So every
        connection of this store closes (the checkpointer's too) before a new one opens; the
        checkpointer then starts again on a connection of its own. If the file cannot be
        opened at all, calls fail with a clear error and the next one tries again.
        """
        old = self._conn
        if not self._reconnect_due or old is None or old.in_transaction:
            return
        checkpoints = self._checkpoint_settings if self._checkpointer is not None else None
        self._stop_checkpoints()
        with contextlib.suppress(sqlite3.Error):
            old.close()
        try:
            conn = sqlite3.connect(
                str(self.path),
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error:
            return  # the closed connection stays: its calls fail until a reconnect works
        self._conn = conn
        self.db = sqlite_utils.Database(conn, execute_plugins=False)
        # Still due: this one may be read-only too, if the file still is. A commit clears it.
        if checkpoints is not None:
            self.start_background_checkpoints(*checkpoints)

    # -- skills ----------------------------------------------------------------------------

    def _row_to_record(self, row: Sequence[Any]) -> SkillRecord:
        return SkillRecord(
            skill_id=row[0],
            digest=Digest(algorithm=row[1], value=row[2]),
            ref=row[3],
            declared_capabilities=tuple(orjson.loads(row[4])),
            composition=orjson.loads(row[5]),
            provenance=None if row[6] is None else orjson.loads(row[6]),
            status=SkillStatus(row[7]),
            decided_by=row[8],
            decided_at=_ts(row[9]),
            reason=row[10],
            expires_at=_ts(row[11]),
            scope_agents=tuple(orjson.loads(row[12])),
            scope_tenants=tuple(orjson.loads(row[13])),
            first_seen=_ts(row[14]),
            last_seen=_ts(row[15]),
            registered_by_agent=row[16],
            registered_by_tenant=row[17],
        )

    def _fetch(self, conn: sqlite3.Connection, skill_id: str, digest: Digest) -> SkillRecord | None:
        row = conn.execute(
            f"SELECT {_SKILL_COLUMNS} FROM skills WHERE {_PAIR}",
            (skill_id, digest.algorithm, digest.value),
        ).fetchone()
        return None if row is None else self._row_to_record(row)

    @staticmethod
    def _check_pair(skill_id: Any, digest: Any) -> None:
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        if not isinstance(digest, Digest):
            raise StoreError("digest must be a Digest (use Digest.parse or Digest.from_wire)")

    def _append_history(
        self,
        conn: sqlite3.Connection,
        skill_id: str,
        digest: Digest,
        *,
        from_status: str | None,
        to_status: str,
        actor: str,
        reason: str | None,
        expires_at: str | None,
        scope_agents: str,
        scope_tenants: str,
        at: str,
        source: str,
        capabilities: str,
    ) -> None:
        conn.execute(
            "INSERT INTO skill_history (skill_id, digest_alg, digest_value, from_status, "
            "to_status, actor, reason, expires_at, at, source, scope_agents, scope_tenants, "
            "capabilities) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                skill_id,
                digest.algorithm,
                digest.value,
                from_status,
                to_status,
                actor,
                reason,
                expires_at,
                at,
                source,
                scope_agents,
                scope_tenants,
                capabilities,
            ),
        )

    @_guarded
    def record_registration(
        self,
        *,
        skill_id: str,
        digest: Digest,
        ref: str | None,
        declared_capabilities: Sequence[str],
        composition: Mapping[str, Any],
        provenance: Mapping[str, Any] | None,
        agent_id: str | None,
        tenant_id: str | None,
        now: datetime | None = None,
    ) -> SkillRecord:
        """Note that an agent registered ``(skill_id, digest)``.

        A pair never seen before becomes ``pending`` (with a history row); a known pair only
        gets its ``last_seen`` moved. A pair decided ahead of its first registration keeps
        its decision and gains the registration facts, except its capabilities: those of a
        decided pair are what the decision covered, and an agent must not be able to widen
        them by declaring more (the Guardian compares the two). A pair put back to pending
        ahead of registration takes the capabilities the agent declares.
        """
        self._check_pair(skill_id, digest)
        check_text(ref, "definition ref", MAX_REF, optional=True)
        _check_id(agent_id, "agent_id", optional=True)
        _check_id(tenant_id, "tenant_id", optional=True)
        caps = _capabilities_text(declared_capabilities, "declared_capabilities")
        comp = _dumps(dict(composition or {}), "composition")
        prov = None if provenance is None else _dumps(dict(provenance), "registration_provenance")
        ts = _stamp(now)
        pair = (skill_id, digest.algorithm, digest.value)
        # The registration facts, in the column order both the INSERT and the UPDATE use:
        # ref, declared_capabilities, composition, provenance, first_seen, last_seen,
        # registered_by_agent, registered_by_tenant.
        facts = (ref, caps, comp, prov, ts, ts, agent_id, tenant_id)
        with self._write() as conn:
            row = conn.execute(
                f"SELECT status, first_seen FROM skills WHERE {_PAIR}", pair
            ).fetchone()
            if row is None:
                conn.execute(
                    f"INSERT INTO skills ({_SKILL_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, NULL, NULL, '[]', '[]', "
                    "?, ?, ?, ?)",
                    (*pair, *facts),
                )
                self._append_history(
                    conn,
                    skill_id,
                    digest,
                    from_status=None,
                    to_status="pending",
                    actor=agent_id or "unknown-agent",
                    reason="registered",
                    expires_at=None,
                    scope_agents="[]",
                    scope_tenants="[]",
                    at=ts,
                    source="registration",
                    capabilities=caps,
                )
            elif row[1] is None:
                # Only an undecided pair takes the declared capabilities (see the docstring).
                conn.execute(
                    "UPDATE skills SET ref = COALESCE(ref, ?), declared_capabilities = "
                    "CASE WHEN status = 'pending' THEN ? ELSE declared_capabilities END, "
                    "composition = ?, provenance = ?, first_seen = ?, last_seen = ?, "
                    f"registered_by_agent = ?, registered_by_tenant = ? WHERE {_PAIR}",
                    (*facts, *pair),
                )
            else:
                conn.execute(f"UPDATE skills SET last_seen = ? WHERE {_PAIR}", (ts, *pair))
            record = self._fetch(conn, skill_id, digest)
        assert record is not None
        return record

    @_guarded
    def get_skill(self, skill_id: str, digest: Digest) -> SkillRecord | None:
        """The record of one pair, or ``None``."""
        self._check_pair(skill_id, digest)
        return self._fetch(self._require(), skill_id, digest)

    @_guarded
    def skill_records(self, skill_id: str) -> list[SkillRecord]:
        """Every digest known for ``skill_id``, ordered by digest."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        rows = self._require().execute(
            f"SELECT {_SKILL_COLUMNS} FROM skills WHERE skill_id = ? "
            "ORDER BY digest_alg, digest_value",
            (skill_id,),
        )
        return [self._row_to_record(row) for row in rows]

    @_guarded
    def verdict(
        self,
        skill_id: str,
        digest: Digest,
        *,
        agent_id: str | None,
        tenant_id: str | None,
        now: datetime | None = None,
    ) -> Verdict:
        """May ``agent_id`` (of ``tenant_id``) use this pair now?

        ``approved`` only when the pair's status is approved, its expiry (if any) is in the
        future, and the agent and tenant match the approval's scope patterns (fnmatch, case
        sensitive; an empty scope matches everyone, a scoped approval never matches a caller
        that gave no id). Otherwise the status says why not.
        """
        self._check_pair(skill_id, digest)
        record = self._fetch(self._require(), skill_id, digest)
        if record is None:
            return Verdict("unknown", None)
        if record.status is not SkillStatus.APPROVED:
            return Verdict(str(record.status), record)
        if record.is_expired(_now(now)):
            return Verdict("expired", record)
        if not (
            _in_scope(record.scope_agents, agent_id) and _in_scope(record.scope_tenants, tenant_id)
        ):
            return Verdict("out_of_scope", record)
        return Verdict("approved", record)

    @_guarded
    def approved_digests(self, skill_id: str, *, now: datetime | None = None) -> list[Digest]:
        """Digests of ``skill_id`` that are approved and unexpired (scope not considered)."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        moment = _now(now)
        out = []
        for alg, value, expires in self._require().execute(
            "SELECT digest_alg, digest_value, expires_at FROM skills "
            "WHERE skill_id = ? AND status = 'approved' ORDER BY digest_alg, digest_value",
            (skill_id,),
        ):
            # Compare as datetimes, not strings: stored stamps may or may not carry microseconds.
            if expires is not None and datetime.fromisoformat(expires) <= moment:
                continue
            out.append(Digest(algorithm=alg, value=value))
        return out

    @_guarded
    def set_status(
        self,
        skill_id: str,
        digest: Digest,
        status: SkillStatus | str,
        *,
        actor: str,
        reason: str | None = None,
        expires_at: datetime | None = None,
        scope_agents: Sequence[str] = (),
        scope_tenants: Sequence[str] = (),
        now: datetime | None = None,
        source: str = "api",
        capabilities: Sequence[str] | None = None,
    ) -> SkillRecord:
        """Decide a pair: approve, deny, revoke (or put back to pending).

        Creates the record when the pair was never registered (approving ahead of
        registration is normal GitOps). The decision and its history row are written in the
        same ``BEGIN IMMEDIATE`` transaction, so the next :meth:`verdict` anywhere sees it.

        ``capabilities`` are what the decision covers: when given, the record's
        ``declared_capabilities`` become exactly that list. When ``None`` the record keeps the
        capabilities it has, so approving a pending registration approves what the agent
        declared (``agbom skills show`` lists them), and a pair approved ahead of any
        registration is approved with none. The Guardian denies a registration that declares
        more than the approved record holds. Each history row records the capabilities the
        record held after its decision.
        """
        self._check_pair(skill_id, digest)
        try:
            status = SkillStatus(status)
        except ValueError:
            known = ", ".join(s.value for s in SkillStatus)
            raise StoreError(f"unknown status {status!r} (known: {known})") from None
        check_text(actor, "actor", MAX_ACTOR)
        check_text(reason, "reason", MAX_REASON, optional=True)
        agents = _dumps(list(check_patterns(scope_agents, "agent scope")), "agent scope")
        tenants = _dumps(list(check_patterns(scope_tenants, "tenant scope")), "tenant scope")
        expires = format_timestamp(None if expires_at is None else as_utc(expires_at))
        caps = None if capabilities is None else _capabilities_text(capabilities, "capabilities")
        decided_at = _stamp(now)
        with self._write() as conn:
            self._apply_decision(
                conn,
                skill_id,
                digest,
                status=status,
                decided_by=actor,
                decided_at=decided_at,
                reason=reason,
                expires=expires,
                agents=agents,
                tenants=tenants,
                ref=None,
                caps=caps,
                history_actor=actor,
                source=source,
            )
            record = self._fetch(conn, skill_id, digest)
        assert record is not None
        return record

    def _apply_decision(
        self,
        conn: sqlite3.Connection,
        skill_id: str,
        digest: Digest,
        *,
        status: SkillStatus,
        decided_by: str,
        decided_at: str,
        reason: str | None,
        expires: str | None,
        agents: str,
        tenants: str,
        ref: str | None,
        caps: str | None,
        history_actor: str,
        source: str,
    ) -> bool:
        """Write one decision and its history row; ``False`` when nothing would change.

        ``caps`` (JSON text) replaces the record's capabilities; ``None`` keeps them.
        """
        key = (skill_id, digest.algorithm, digest.value)
        row = conn.execute(
            "SELECT status, decided_by, decided_at, reason, expires_at, scope_agents, "
            f"scope_tenants, ref, declared_capabilities FROM skills WHERE {_PAIR}",
            key,
        ).fetchone()
        if row is None:
            conn.execute(
                f"INSERT INTO skills ({_SKILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, '{{}}', NULL, "
                "?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL)",
                (
                    *key,
                    ref,
                    "[]" if caps is None else caps,
                    str(status),
                    decided_by,
                    decided_at,
                    reason,
                    expires,
                    agents,
                    tenants,
                ),
            )
            previous = None
        else:
            same = (str(status), decided_by, decided_at, reason, expires, agents, tenants)
            if (
                source == "import"
                and tuple(row[:7]) == same
                and (ref is None or row[7] == ref)
                and (caps is None or row[8] == caps)
            ):
                return False
            conn.execute(
                "UPDATE skills SET status = ?, decided_by = ?, decided_at = ?, reason = ?, "
                f"expires_at = ?, scope_agents = ?, scope_tenants = ?, ref = COALESCE(ref, ?), "
                f"declared_capabilities = COALESCE(?, declared_capabilities) WHERE {_PAIR}",
                (
                    str(status),
                    decided_by,
                    decided_at,
                    reason,
                    expires,
                    agents,
                    tenants,
                    ref,
                    caps,
                    *key,
                ),
            )
            previous = row[0]
        self._append_history(
            conn,
            skill_id,
            digest,
            from_status=previous,
            to_status=str(status),
            actor=history_actor,
            reason=reason,
            expires_at=expires,
            scope_agents=agents,
            scope_tenants=tenants,
            at=decided_at if source != "import" else _stamp(None),
            source=source,
            # what the record covers after this decision
            capabilities=caps if caps is not None else (row[8] if row is not None else "[]"),
        )
        return True

    @_guarded
    def history(self, skill_id: str, digest: Digest | None = None) -> list[dict[str, Any]]:
        """Every status change of ``skill_id`` (or of one pair), oldest first."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        sql = (
            "SELECT id, skill_id, digest_alg, digest_value, from_status, to_status, actor, "
            "reason, expires_at, scope_agents, scope_tenants, at, source, capabilities "
            "FROM skill_history "
            "WHERE skill_id = ?"
        )
        params: tuple[Any, ...] = (skill_id,)
        if digest is not None:
            sql += " AND digest_alg = ? AND digest_value = ?"
            params += (digest.algorithm, digest.value)
        rows = self._require().execute(sql + " ORDER BY id", params)
        return [
            {
                "id": row[0],
                "skill_id": row[1],
                "digest": f"{row[2]}:{row[3]}",
                "from_status": row[4],
                "to_status": row[5],
                "actor": row[6],
                "reason": row[7],
                "expires_at": row[8],
                "scope": {"agents": orjson.loads(row[9]), "tenants": orjson.loads(row[10])},
                "at": row[11],
                "source": row[12],
                # None: decided before agbom recorded capabilities in the history (store v6)
                "capabilities": None if row[13] is None else orjson.loads(row[13]),
            }
            for row in rows
        ]

    @_guarded
    def list_skills(self, status: SkillStatus | str | None = None) -> list[SkillRecord]:
        """All records, or those with ``status``, ordered by skill id and digest."""
        conn = self._require()
        order = " ORDER BY skill_id, digest_alg, digest_value"
        if status is None:
            rows = conn.execute(f"SELECT {_SKILL_COLUMNS} FROM skills{order}")
        else:
            try:
                status = SkillStatus(status)
            except ValueError:
                known = ", ".join(s.value for s in SkillStatus)
                raise StoreError(f"unknown status {status!r} (known: {known})") from None
            rows = conn.execute(
                f"SELECT {_SKILL_COLUMNS} FROM skills WHERE status = ?{order}", (str(status),)
            )
        return [self._row_to_record(row) for row in rows]

    # -- GitOps import / export ------------------------------------------------------------

    @_guarded
    def export_approvals(self) -> dict[str, Any]:
        """Every decided pair (approved, denied, revoked) as a deterministic document.

        Pending pairs are left out: they are undecided. Entries are sorted by skill id and
        digest; absent optional fields are omitted rather than written as null, and so is an
        empty ``capabilities`` list (an entry without it covers no capabilities).
        """
        rows = self._require().execute(
            "SELECT skill_id, digest_alg, digest_value, status, decided_by, decided_at, reason, "
            "expires_at, scope_agents, scope_tenants, ref, declared_capabilities FROM skills "
            "WHERE status IN "
            "('approved', 'denied', 'revoked') ORDER BY skill_id, digest_alg, digest_value"
        )
        approvals = []
        for row in rows:
            entry: dict[str, Any] = {
                "skill_id": row[0],
                "digest": f"{row[1]}:{row[2]}",
                "status": row[3],
                "decided_by": row[4],
                "decided_at": row[5],
            }
            if row[6] is not None:
                entry["reason"] = row[6]
            if row[7] is not None:
                entry["expires_at"] = row[7]
            agents, tenants = orjson.loads(row[8]), orjson.loads(row[9])
            if agents or tenants:
                entry["scope"] = {"agents": agents, "tenants": tenants}
            if row[10] is not None:
                entry["ref"] = row[10]
            capabilities = orjson.loads(row[11])
            if capabilities:
                entry["capabilities"] = capabilities
            approvals.append({k: v for k, v in entry.items() if v is not None})
        return {"format": IMPORT_FORMAT, "version": IMPORT_VERSION, "approvals": approvals}

    @_guarded
    def import_approvals(self, doc: Mapping[str, Any], *, actor: str) -> int:
        """Apply a reviewed approvals document; return how many pairs changed.

        The whole document is validated before anything is written, and applied in one
        transaction: either every entry lands or none does. Entries identical to the stored
        decision are skipped (re-importing the same file is a no-op). Pairs in the store but
        not in the file are left alone.

        Each entry's ``capabilities`` (absent means none) replace the stored ones: the file is
        what was reviewed, so a pair cannot keep capabilities its reviewed entry does not list.
        """
        check_text(actor, "actor", MAX_ACTOR)
        entries = _validate_import(doc)
        changed = 0
        with self._write() as conn:
            for e in entries:
                changed += self._apply_decision(
                    conn,
                    e["skill_id"],
                    e["digest"],
                    status=e["status"],
                    decided_by=e["decided_by"] or actor,
                    decided_at=e["decided_at"] or _stamp(None),
                    reason=e["reason"],
                    expires=e["expires_at"],
                    agents=e["agents"],
                    tenants=e["tenants"],
                    ref=e["ref"],
                    caps=e["capabilities"],
                    history_actor=actor,
                    source="import",
                )
        return changed

    # -- audit chain -----------------------------------------------------------------------

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
        self._reconnect_if_due()
        try:
            # exhaust the cursor so the statement finishes and commits now
            row = self._require().execute(_APPEND_SQL, row_values).fetchall()
        except sqlite3.IntegrityError as exc:
            raise _duplicate_request(exc, session_id, request_id, nonce) from exc
        if not row:
            head = self.chain_head(session_id)
            raise ChainConflict(
                f"session {session_id!r}: previous_hash {previous_hash!r} is not the chain "
                f"head {head!r}"
            )
        self._wrote()
        self._restart_wal_if_due(self._require())
        return int(row[0][0])

    def append_entries(self, appends: Sequence[ChainAppend]) -> list[int | StoreError]:
        """Append many entries, in order, committed together; one outcome per entry.

        An outcome is the entry's ``seq``, or the :class:`StoreError` that kept it out:
        :class:`DuplicateRequest`, :class:`ChainConflict` (also for every later entry of that
        session, which chained on it), or a failure that stored nothing of the batch. Entries
        that chain on one another go in with one statement (one transaction, one WAL commit):
        that is what lets a server commit a burst of decisions for the price of one. Raises
        :class:`StoreError` only for invalid arguments, before anything is written.
        """
        rows = [_append_row(append) for append in appends]
        if not rows:
            return []
        with self._lock:
            self._require()
            self._reconnect_if_due()
            conn = self._require()
            try:
                if _linked_in_order(rows):
                    try:
                        stored = conn.execute(_BATCH_SQL, (orjson.dumps(rows).decode(),))
                        # RETURNING order is unspecified: match rows by (session, entry hash)
                        seqs = {(sid, digest): seq for sid, digest, seq in stored.fetchall()}
                        if len(seqs) == len(rows):
                            self._wrote()
                            self._restart_wal_if_due(conn)
                            return [seqs[(row[0], row[2])] for row in rows]
                    except sqlite3.IntegrityError:
                        pass  # a repeated request id or nonce: nothing went in; find which
                return self._append_one_by_one(conn, rows)
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                return [StoreError(self._failed(exc))] * len(rows)

    def _restart_wal_if_due(self, conn: sqlite3.Connection) -> None:
        """Start the WAL over when the background checkpointer says it has grown too long.

        Runs on the writer's own connection between two commits, so nothing waits on a busy
        handler: a RESTART checkpoint right after the background thread's PASSIVE one copies
        only the last few frames (a few ms). RESTART, not TRUNCATE: shrinking the file costs
        tens of ms, and the next frames are written over it from the start anyway.
        """
        if not self._wal_restart_due:
            return
        self._wal_restart_due = False
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
        except sqlite3.Error:
            pass  # a reader holds an old snapshot: the checkpointer asks again next round
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")

    def _append_one_by_one(
        self, conn: sqlite3.Connection, rows: list[tuple[Any, ...]]
    ) -> list[int | StoreError]:
        """Each entry on its own statement inside one transaction: a refused entry does not
        take the others down."""
        outcomes: list[int | StoreError] = []
        conn.execute("BEGIN IMMEDIATE")
        for row in rows:
            try:
                returned = conn.execute(_APPEND_SQL, row).fetchall()
            except sqlite3.IntegrityError as exc:
                outcomes.append(_duplicate_request(exc, row[0], row[4], row[5]))
                continue
            outcomes.append(
                int(returned[0][0])
                if returned
                else ChainConflict(
                    f"session {row[0]!r}: previous_hash {row[3]!r} is not the chain head"
                )
            )
        conn.execute("COMMIT")
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
    def chain_entries(self, session_id: str) -> list[dict[str, Any]]:
        """The session's entries in order: entry fields plus previous_hash, entry_hash, seq."""
        out = []
        for seq, text, entry_hash, previous_hash in self._require().execute(
            "SELECT seq, entry, entry_hash, previous_hash FROM chain_entries "
            "WHERE session_id = ? ORDER BY seq",
            (session_id,),
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

    # -- sessions --------------------------------------------------------------------------

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
        _check_id(session_id, "session_id")
        _check_id(agent_id, "agent_id")
        _check_id(tenant_id, "tenant_id", optional=True)
        _check_id(parent_session_id, "parent_session_id", optional=True)
        check_text(status, "session status", 64)
        neg = None if negotiated is None else _dumps(dict(negotiated), "negotiated")
        now = _stamp(None)
        started = format_timestamp(started_at) or now
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (session_id, agent_id, tenant_id, parent_session_id, "
                "status, started_at, ended_at, negotiated, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "agent_id = excluded.agent_id, "
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

    _SESSION_COLUMNS = (
        "session_id, agent_id, tenant_id, parent_session_id, status, started_at, ended_at, "
        "negotiated, updated_at, sealed_head"
    )

    @staticmethod
    def _session_dict(row: Sequence[Any]) -> dict[str, Any]:
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

    @_guarded
    def seal_session(self, session_id: str, head: str | None) -> None:
        """Record the chain head a session ended with (kept once set: a seal is final)."""
        _check_id(session_id, "session_id")
        check_text(head, "head", 256, optional=True)
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET sealed_head = COALESCE(sealed_head, ?), updated_at = ? "
                "WHERE session_id = ?",
                (head, _stamp(None), session_id),
            )

    @_guarded
    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """One session as a dict, or ``None``."""
        row = (
            self._require()
            .execute(
                f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE session_id = ?",
                (session_id,),
            )
            .fetchone()
        )
        return None if row is None else self._session_dict(row)

    @_guarded
    def list_sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions (of one agent, or all), oldest first."""
        sql = f"SELECT {self._SESSION_COLUMNS} FROM sessions"
        params: tuple[Any, ...] = ()
        if agent_id is not None:
            sql += " WHERE agent_id = ?"
            params = (agent_id,)
        rows = self._require().execute(sql + " ORDER BY started_at, session_id", params)
        return [self._session_dict(row) for row in rows]

    # -- AgBOM versions and the fleet inventory --------------------------------------------

    @_guarded
    def save_agbom_version(
        self,
        session_id: str,
        *,
        agent_id: str,
        document: Mapping[str, Any],
        agbom_hash: str,
        change: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        accepted: bool = True,
    ) -> int:
        """Store the session's next AgBOM version (1, 2, 3...) and index its components.

        A refused AgBOM (``accepted=False``) gets a version number too, so audits and
        ``agbom explain`` can show what was sent, but its components are not indexed as in use
        and the latest-version lookups skip it.
        """
        _check_id(session_id, "session_id")
        _check_id(agent_id, "agent_id")
        check_text(agbom_hash, "agbom_hash", 256)
        if not isinstance(document, Mapping):
            raise StoreError("AgBOM document must be an object")
        text = _dumps(dict(document), "AgBOM document", MAX_ENTRY_BYTES)
        change_text = None if change is None else _dumps(dict(change), "AgBOM change")
        ts = _stamp(now)
        components = _component_rows(document)
        with self._write() as conn:
            row = conn.execute(
                "SELECT MAX(version) FROM agbom_versions WHERE session_id = ?", (session_id,)
            ).fetchone()
            version = int(row[0] or 0) + 1
            conn.execute(
                "INSERT INTO agbom_versions (session_id, version, agent_id, document, agbom_hash, "
                "change, created_at, accepted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, version, agent_id, text, agbom_hash, change_text, ts, int(accepted)),
            )
            if not accepted:
                return version
            # When did this session first show each component (same id, type, name, version)?
            first_seen = {
                (r[0], r[1], r[2], r[3]): r[4]
                for r in conn.execute(
                    "SELECT component_id, type, name, version_str, MIN(first_seen) FROM components "
                    "WHERE session_id = ? GROUP BY component_id, type, name, version_str",
                    (session_id,),
                )
            }
            conn.executemany(
                "INSERT INTO components (session_id, version, agent_id, component_id, type, name, "
                "version_str, first_seen, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (session_id, version, agent_id, *key, first_seen.get(key, ts), ts)
                    for key in components
                ],
            )
        return version

    @staticmethod
    def _version_dict(row: Sequence[Any]) -> dict[str, Any]:
        return {
            "session_id": row[0],
            "version": row[1],
            "agent_id": row[2],
            "document": orjson.loads(row[3]),
            "agbom_hash": row[4],
            "change": None if row[5] is None else orjson.loads(row[5]),
            "created_at": row[6],
            "accepted": bool(row[7]),
        }

    _VERSION_COLUMNS = (
        "session_id, version, agent_id, document, agbom_hash, change, created_at, accepted"
    )

    @_guarded
    def agbom_version(self, session_id: str, version: int | None = None) -> dict[str, Any] | None:
        """One stored AgBOM version with its metadata.

        ``version=None`` is the session's current AgBOM: the latest accepted one.
        """
        conn = self._require()
        if version is None:
            row = conn.execute(
                f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions WHERE session_id = ? "
                "AND accepted = 1 ORDER BY version DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        else:
            row = conn.execute(
                f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions "
                "WHERE session_id = ? AND version = ?",
                (session_id, int(version)),
            ).fetchone()
        return None if row is None else self._version_dict(row)

    @_guarded
    def latest_agbom_for_agent(self, agent_id: str) -> dict[str, Any] | None:
        """The most recently stored AgBOM version of any session of ``agent_id``."""
        row = (
            self._require()
            .execute(
                f"SELECT {self._VERSION_COLUMNS} FROM agbom_versions WHERE agent_id = ? "
                "AND accepted = 1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (agent_id,),
            )
            .fetchone()
        )
        return None if row is None else self._version_dict(row)

    @_guarded
    def list_agents(self) -> list[dict[str, Any]]:
        """Every agent seen in a session or an AgBOM: session count, first and last seen."""
        rows = self._require().execute(
            "SELECT agent_id, COUNT(DISTINCT session_id), MIN(at), MAX(at) FROM ("
            " SELECT agent_id, session_id, started_at AS at FROM sessions"
            " UNION ALL SELECT agent_id, session_id, updated_at FROM sessions"
            " UNION ALL SELECT agent_id, session_id, created_at FROM agbom_versions"
            ") GROUP BY agent_id ORDER BY agent_id"
        )
        return [
            {"agent_id": r[0], "sessions": r[1], "first_seen": r[2], "last_seen": r[3]}
            for r in rows
        ]

    @_guarded
    def list_components(
        self, type: str | None = None, name: str | None = None
    ) -> list[dict[str, Any]]:
        """Which agents use which components, since when.

        ``type`` filters exactly; ``name`` is a case-sensitive glob (an exact name matches
        itself). One row per (type, component id, name, version).
        """
        rows = self._require().execute(
            "SELECT type, component_id, name, version_str, group_concat(DISTINCT agent_id), "
            "COUNT(DISTINCT session_id), MIN(first_seen), MAX(seen_at) FROM components "
            "WHERE (?1 IS NULL OR type = ?1) AND (?2 IS NULL OR name GLOB ?2) "
            "GROUP BY type, component_id, name, version_str "
            "ORDER BY type, name, component_id, version_str",
            (type, name),
        )
        return [
            {
                "component_id": r[1],
                "type": r[0],
                "name": r[2],
                "version": r[3],
                "agents": sorted(r[4].split(",")) if r[4] else [],
                "sessions": r[5],
                "first_seen": r[6],
                "last_seen": r[7],
            }
            for r in rows
        ]

    # -- skill churn -----------------------------------------------------------------------

    @_guarded
    def record_skill_event(
        self, session_id: str, skill_id: str, event: str, now: datetime | None = None
    ) -> int:
        """Record a load or unload; return how many of that event the skill has in the session."""
        _check_id(session_id, "session_id")
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        if event not in ("load", "unload"):
            raise StoreError(f"skill event must be 'load' or 'unload', not {event!r}")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO skill_events (session_id, skill_id, event, at) VALUES (?, ?, ?, ?)",
                (session_id, skill_id, event, _stamp(now)),
            )
            row = conn.execute(
                "SELECT COUNT(*) FROM skill_events WHERE session_id = ? AND skill_id = ? "
                "AND event = ?",
                (session_id, skill_id, event),
            ).fetchone()
        return int(row[0])

    @_guarded
    def skill_churn(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Load/unload counts per (session, skill), busiest first."""
        rows = self._require().execute(
            "SELECT session_id, skill_id, SUM(event = 'load'), SUM(event = 'unload'), "
            "MIN(at), MAX(at) FROM skill_events WHERE (?1 IS NULL OR session_id = ?1) "
            "GROUP BY session_id, skill_id "
            "ORDER BY COUNT(*) DESC, session_id, skill_id",
            (session_id,),
        )
        return [
            {
                "session_id": r[0],
                "skill_id": r[1],
                "loads": r[2],
                "unloads": r[3],
                "first_at": r[4],
                "last_at": r[5],
            }
            for r in rows
        ]


def _entry_text(entry: Mapping[str, Any] | bytes | str) -> str:
    if isinstance(entry, bytes | str):
        raw = entry.encode("utf-8") if isinstance(entry, str) else entry
        if len(raw) > MAX_ENTRY_BYTES:
            raise StoreError(f"audit entry is larger than {MAX_ENTRY_BYTES} bytes")
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise StoreError(f"audit entry is not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise StoreError("audit entry must be a JSON object")
        return raw.decode("utf-8")
    if not isinstance(entry, Mapping):
        raise StoreError("audit entry must be a mapping or JSON text")
    try:
        data = orjson.dumps(dict(entry))
    except TypeError as exc:
        raise StoreError(f"audit entry is not JSON-serializable: {exc}") from None
    if len(data) > MAX_ENTRY_BYTES:
        raise StoreError(f"audit entry is larger than {MAX_ENTRY_BYTES} bytes")
    return data.decode("utf-8")


def _component_rows(document: Mapping[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """(id, type, name, version) of each well-formed component; others are not indexed."""
    raw = document.get("components")
    if not isinstance(raw, list):
        return []
    seen: dict[str, tuple[str, str, str, str | None]] = {}
    for comp in raw:
        if not isinstance(comp, Mapping):
            continue
        cid, ctype = comp.get("id"), comp.get("type")
        if not isinstance(cid, str) or not isinstance(ctype, str) or cid in seen:
            continue
        name = comp.get("name")
        version = comp.get("version")
        seen[cid] = (
            cid,
            ctype,
            name if isinstance(name, str) and name else cid,
            None if version is None else str(version),
        )
    return list(seen.values())


def _validate_import(doc: Any) -> list[dict[str, Any]]:
    """Check a whole approvals document; raise one StoreError naming every bad entry."""
    if not isinstance(doc, Mapping):
        raise StoreError("approvals file must hold an object with an 'approvals' list")
    unknown = sorted(set(doc) - {"format", "version", "approvals"})
    if unknown:
        raise StoreError(f"approvals file: unknown top-level key {unknown[0]!r}")
    if doc.get("format", IMPORT_FORMAT) != IMPORT_FORMAT:
        raise StoreError(f"approvals file: format must be {IMPORT_FORMAT!r}")
    if doc.get("version", IMPORT_VERSION) != IMPORT_VERSION:
        raise StoreError(
            f"approvals file: version {doc.get('version')!r} is not supported "
            f"(this agbom reads version {IMPORT_VERSION})"
        )
    approvals = doc.get("approvals")
    if not isinstance(approvals, list):
        raise StoreError("approvals file: 'approvals' must be a list")
    problems: list[str] = []
    entries: list[dict[str, Any]] = []
    seen: set[tuple[str, Digest]] = set()
    for index, raw in enumerate(approvals):
        where = f"approvals[{index}]"
        try:
            entry = _validate_import_entry(raw, where)
        except StoreError as exc:
            problems.append(str(exc))
            continue
        key = (entry["skill_id"], entry["digest"])
        if key in seen:
            problems.append(f"{where}: {key[0]} {key[1]} appears more than once")
            continue
        seen.add(key)
        entries.append(entry)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StoreError(f"approvals file not imported: {problems[0]}{more}")
    return entries


def _validate_import_entry(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise StoreError(f"{where}: must be an object")
    unknown = sorted(set(raw) - _IMPORT_KEYS)
    if unknown:
        raise StoreError(f"{where}: unknown key {unknown[0]!r}")
    try:
        skill_id = check_text(raw.get("skill_id"), "skill_id", MAX_SKILL_ID)
        digest_raw = raw.get("digest")
        if digest_raw is None:
            raise StoreError("digest is required (ALG:HEX)")
        digest = (
            Digest.from_wire(digest_raw)
            if isinstance(digest_raw, Mapping)
            else Digest.parse(str(digest_raw))
        )
        status_raw = raw.get("status")
        if status_raw not in {s.value for s in _DECIDED}:
            raise StoreError(f"status must be approved, denied or revoked, not {status_raw!r}")
        decided_by = check_text(raw.get("decided_by"), "decided_by", MAX_ACTOR, optional=True)
        decided_at = raw.get("decided_at")
        if decided_at is not None:
            decided_at = format_timestamp(parse_timestamp(decided_at, what="decided_at"))
        reason = check_text(raw.get("reason"), "reason", MAX_REASON, optional=True)
        expires = raw.get("expires_at")
        if expires is not None:
            expires = format_timestamp(parse_timestamp(expires, what="expires_at"))
        ref = check_text(raw.get("ref"), "ref", MAX_REF, optional=True)
        scope = raw.get("scope") or {}
        if not isinstance(scope, Mapping) or set(scope) - {"agents", "tenants"}:
            raise StoreError("scope must be an object with 'agents' and/or 'tenants' lists")
        agents = check_patterns(scope.get("agents"), "scope.agents")
        tenants = check_patterns(scope.get("tenants"), "scope.tenants")
        capabilities = raw.get("capabilities")
        caps = _capabilities_text([] if capabilities is None else capabilities, "capabilities")
    except StoreError as exc:
        raise StoreError(f"{where}: {exc}") from None
    return {
        "skill_id": skill_id,
        "digest": digest,
        "status": SkillStatus(status_raw),
        "decided_by": decided_by,
        "decided_at": decided_at,
        "reason": reason,
        "expires_at": expires,
        "agents": _dumps(list(agents), "scope"),
        "tenants": _dumps(list(tenants), "scope"),
        "ref": ref,
        "capabilities": caps,
    }
