"""The embedded store: one SQLite file, opened with the standard library's ``sqlite3``.

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
import functools
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, Self, TypeVar

from agbom._ownership import store_path_problem
from agbom.store._migrations import MIGRATIONS, SCHEMA_VERSION
from agbom.store.sqlite.gate import gate_for

if TYPE_CHECKING:
    import sqlite_utils

    from agbom.store.sqlite.versions import Manifest
from agbom.store._shared import (
    _stamp,
)
from agbom.store.interface import (
    StoreError,
    UntrustedStoreError,
)

P = ParamSpec("P")
R = TypeVar("R")

BUSY_TIMEOUT_S = 30.0
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


def _guarded(method: Callable[P, R]) -> Callable[P, R]:
    """Hold the store lock and turn sqlite3 failures into one clear :class:`StoreError`."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        assert isinstance(self, SqliteBase)
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


class SqliteBase:
    """The connection of a :class:`~agbom.store.sqlite.SqliteStore`: opening, migrating,
    the write transaction, checkpoints, write health and recovery."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        """Use :meth:`open`; this wraps an already configured and migrated connection."""
        self.path = path
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.RLock()
        self._checkpointer: tuple[threading.Thread, threading.Event] | None = None
        self._wal_restart_due = False  # set by the checkpointer thread, acted on by the writer
        self._busy_timeout = BUSY_TIMEOUT_S
        # This process's writers of the file take turns here rather than in SQLite's busy
        # handler (agbom/store/sqlite/gate.py).
        self._gate = gate_for(path)
        self._write_failure: str | None = None
        self._reconnect_due = False
        self._checkpoint_settings: tuple[float, int] = (0.25, WAL_LIMIT_BYTES)
        # Per session, the components of the last accepted AgBOM version this handle stored
        # (agbom/store/sqlite/versions.py), most recently used last.
        self._manifests: OrderedDict[str, Manifest] = OrderedDict()
        # Per session, (seq, entry_hash) of the last entry this handle appended: what the next
        # append may chain on without looking the head up (agbom/store/sqlite/chains.py).
        self._known_heads: dict[str, tuple[int, str]] = {}

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S, create: bool = True
    ) -> Self:
        """Open (creating if missing, unless ``create`` is false) and upgrade the store at
        ``path``.

        Raises :class:`StoreError` when the file is missing and ``create`` is false, is not an
        agbom store, was written by a newer agbom, or cannot be opened or upgraded.
        """
        path = Path(path)
        problem = store_path_problem(path)
        if problem is not None:
            raise UntrustedStoreError(f"store {path}: {problem}")
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
    def db(self) -> sqlite_utils.Database:
        """The connection as a ``sqlite_utils.Database`` (imported on first use only)."""
        import sqlite_utils

        return sqlite_utils.Database(self._require(), execute_plugins=False)

    @property
    def location(self) -> str:
        """The store file's path, as text."""
        return str(self.path)

    def reopen(self) -> Self:
        """Another handle on this file with a connection of its own (for another thread)."""
        return self.open(self.path, busy_timeout=self._busy_timeout, create=False)

    def _configure(self, busy_timeout: float) -> None:
        conn = self._require()
        # Switching to WAL needs a moment without other writers; the busy handler does not
        # cover every path of that switch, so retry briefly while a sibling creates the file.
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                # As sqlite-utils' enable_wal() did (not imported: ~0.1 s, with click, of
                # every standalone hook process). isolation_level=None: no transaction is open.
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode=wal")
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
                    for step in MIGRATIONS[target - 1]:
                        if isinstance(step, str):
                            conn.execute(step)
                        else:
                            step(conn)
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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"store {self.path} is closed")
        return self._conn

    @contextmanager
    def _write(
        self, *, busy_timeout: float | None = None, background: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: take the write lock before reading.

        ``busy_timeout``: wait this long for another writer's lock, instead of the store's
        own timeout. ``background``: work no one waits on (prestored bodies), which lets
        this process's other writers go first (agbom/store/sqlite/gate.py)."""
        self._reconnect_if_due()
        conn = self._require()
        if busy_timeout is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        wait = self._busy_timeout if busy_timeout is None else busy_timeout
        try:
            with self._gate.turn(timeout_s=wait, background=background):
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
        # Still due: this one may be read-only too, if the file still is. A commit clears it.
        if checkpoints is not None:
            self.start_background_checkpoints(*checkpoints)

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
