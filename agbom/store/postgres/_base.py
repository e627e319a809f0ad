"""The connection side of the PostgreSQL store: the pool, transactions, errors, migrations.

Every call borrows a connection from a psycopg_pool pool (autocommit; writes open an explicit
transaction) and gives it back, so one store is safe to share between threads and several
replicas share one database. Each borrowed connection is checked first, so after a database
restart a stale connection is replaced instead of failing the call.

No driver exception leaves this package: every psycopg or pool failure becomes a one-line
:class:`~agbom.store.interface.StoreError` naming the store by its URL without the password.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeAlias

import psycopg
import psycopg.conninfo
import psycopg.errors
import psycopg_pool

from agbom.store.interface import StoreError
from agbom.store.postgres._migrations import MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION
from agbom.store.postgres._values import stamp

Connection: TypeAlias = "psycopg.Connection[tuple[Any, ...]]"

# The pool logs each failed reconnection attempt as a multi-line warning; with no logging
# set up, Python would print every one on stderr. The store reports an outage itself, once,
# as one line (write_failure, /healthz): keep the pool quiet unless the application
# configures logging (records still propagate to its handlers).
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

APPROVALS_CHANNEL = "agbom_approvals"
"""Every approval change NOTIFYs this channel with the skill id as payload, in its
transaction: listeners hear of a change exactly when it is visible."""

DEFAULT_POOL_SIZE = 8
CONNECT_TIMEOUT_S = 10
POOL_TIMEOUT_S = 10.0
"""How long a call waits for a free (or new) connection before it fails (closed)."""
PROBE_TIMEOUT_S = 2.0
"""How long :meth:`PostgresBase.check_writable` waits for a connection."""

# Failures that say the database cannot take writes now, as opposed to a refused row.
_UNAVAILABLE = (
    psycopg.OperationalError,
    psycopg.errors.ReadOnlySqlTransaction,
    psycopg.errors.AdminShutdown,
    psycopg.errors.CannotConnectNow,
    psycopg.errors.DiskFull,
    psycopg_pool.PoolTimeout,
)


def display_url(url: str) -> str:
    """``postgresql://user@host:port/dbname``: what names the store in messages (never the
    password, nor any other parameter of the URL)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable URL)"
    user = f"{info['user']}@" if info.get("user") else ""
    host = str(info.get("host") or "localhost")
    port = f":{info['port']}" if info.get("port") else ""
    return f"postgresql://{user}{host}{port}/{info.get('dbname') or ''}"


def _first_line(exc: BaseException, secret: str | None) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if secret:
        text = text.replace(secret, "***")
    return text[:500]


class PostgresBase:
    """Pool, transactions, error mapping, lifecycle and schema of a PostgreSQL store."""

    def __init__(
        self, url: str, make_pool: Callable[[], psycopg_pool.ConnectionPool[Connection]]
    ) -> None:
        """Use :meth:`PostgresStore.open`; ``make_pool`` opens a pool on the migrated
        database (again, when the health probe finds the old one stuck, see
        :meth:`check_writable`)."""
        self._url = url
        self._make_pool = make_pool
        self._display = display_url(url)
        self._secret = _password_of(url)
        self._pool: psycopg_pool.ConnectionPool[Connection] | None = make_pool()
        self._write_failure: str | None = None
        self._state_lock = threading.Lock()

    # -- errors ----------------------------------------------------------------------------

    def _describe(self, exc: BaseException) -> str:
        reason = _first_line(exc, self._secret)
        if isinstance(exc, psycopg_pool.PoolTimeout):
            return f"store {self._display} is unreachable (no database connection): {reason}"
        if isinstance(exc, psycopg.OperationalError):
            return f"store {self._display} is unreachable: {reason}"
        return f"store {self._display}: {reason}"

    def _failed(self, exc: BaseException) -> StoreError:
        message = self._describe(exc)
        if isinstance(exc, _UNAVAILABLE):
            self._write_failure = message
        return StoreError(message)

    # -- connections -----------------------------------------------------------------------

    def _require_pool(self) -> psycopg_pool.ConnectionPool[Connection]:
        if self._pool is None:
            raise StoreError(f"store {self._display} is closed")
        return self._pool

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A connection for reads (autocommit: each statement sees the latest commits)."""
        pool = self._require_pool()
        try:
            with pool.connection() as conn:
                yield conn
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise self._failed(exc) from exc

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A connection inside one transaction, committed when the block ends."""
        pool = self._require_pool()
        try:
            with pool.connection() as conn, conn.transaction():
                yield conn
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise self._failed(exc) from exc
        self._write_failure = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def location(self) -> str:
        """The store's URL without its password (nor any parameter)."""
        return self._display

    @property
    def url(self) -> str:
        """The URL the store was opened with, password included: pass it on, never print it."""
        return self._url

    @property
    def schema_version(self) -> int:
        """The schema version of the open store."""
        with self._read() as conn:
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0) if row else 0

    @property
    def write_failure(self) -> str | None:
        """Why the last call could not reach or write the database, or ``None``.

        Set by a failure that says the database is unavailable (unreachable, shutting down,
        read-only, disk full), not by a refused row; cleared by the next write that commits,
        or by :meth:`check_writable`."""
        return self._write_failure

    def check_writable(self) -> str | None:
        """Commit one write that changes nothing; return why it failed, or ``None``.

        An UPDATE matching no row still needs a read-write transaction, so it fails on a
        read-only database or standby as a real write would. Waits at most
        :data:`PROBE_TIMEOUT_S` for a connection.

        After an outage the pool retries its connections with a growing back-off, so it can
        lag behind a database that is back. When the pool fails but a direct connection
        works, the pool is replaced by a new one, and the store takes calls again at once.
        """
        problem = self._probe()
        if problem is None:
            return None
        try:
            connect_once(self._url).close()
        except StoreError:
            return problem  # the database itself is still unreachable
        with self._state_lock:
            old, self._pool = self._pool, self._make_pool() if self._pool is not None else None
        if old is not None:
            # Its threads may still be backing off: close without waiting for them.
            threading.Thread(target=old.close, name="agbom-pool-close", daemon=True).start()
        return self._probe()

    def _probe(self) -> str | None:
        pool = self._require_pool()
        try:
            with pool.connection(timeout=PROBE_TIMEOUT_S) as conn, conn.transaction():
                conn.execute("UPDATE schema_version SET version = version WHERE FALSE")
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            return str(self._failed(exc))
        self._write_failure = None
        return None

    def checkpoint(self, wal_limit_bytes: int = 0) -> int:
        """Nothing to do: PostgreSQL checkpoints its own WAL. Returns 0."""
        return 0

    def start_background_checkpoints(
        self, interval_s: float = 0.25, wal_limit_bytes: int = 0
    ) -> None:
        """Nothing to do: PostgreSQL checkpoints its own WAL."""

    def close(self) -> None:
        """Close every pooled connection; later calls raise :class:`StoreError`."""
        with self._state_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _password_of(url: str) -> str | None:
    try:
        value = psycopg.conninfo.conninfo_to_dict(url).get("password")
    except psycopg.ProgrammingError:
        return None
    return str(value) if value else None


def pool_size_from_env() -> int:
    """``$AGBOM_PG_POOL_SIZE`` (1 to 1000), else :data:`DEFAULT_POOL_SIZE`."""
    raw = os.environ.get("AGBOM_PG_POOL_SIZE", "").strip()
    if not raw:
        return DEFAULT_POOL_SIZE
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise StoreError("AGBOM_PG_POOL_SIZE must be a whole number from 1 to 1000")
    return int(raw)


def connect_once(url: str) -> Connection:
    """One direct connection (not pooled), with a one-line error naming why it failed."""
    display = display_url(url)
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        raise StoreError(
            f"{display}: not a valid PostgreSQL URL (postgresql://USER:PASSWORD@HOST:PORT/DB)"
        ) from None
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot open store {display}: {_first_line(exc, _password_of(url))}"
        ) from None


def migrate(conn: Connection, display: str, *, create: bool) -> int:
    """Bring the schema of ``conn``'s database to :data:`SCHEMA_VERSION`; return the version
    it had. Refuses a newer schema, a database holding other tables, and (unless ``create``)
    a database without a store."""
    try:
        version = _schema_version(conn, display)
        if version > SCHEMA_VERSION:
            raise _too_new(display, version)
        if version == SCHEMA_VERSION:
            return version
        if version == 0 and not create:
            raise StoreError(
                f"{display}: no agbom store in this database (check --db or $AGBOM_DB)"
            )
        with conn.transaction():
            # One replica migrates; the others wait here, then find the work done.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            start = _schema_version(conn, display)
            if start > SCHEMA_VERSION:
                raise _too_new(display, start)
            try:
                for target in range(start + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[target - 1]:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_version (version, applied_at) VALUES (%s, %s)",
                        (target, stamp(None)),
                    )
            except psycopg.Error as exc:
                raise StoreError(
                    f"{display}: cannot upgrade the store from schema version {start} to "
                    f"{SCHEMA_VERSION}: {_first_line(exc, None)} (the store was left at "
                    f"version {start})"
                ) from None
        return start
    except psycopg.Error as exc:
        raise StoreError(f"store {display}: {_first_line(exc, None)}") from None


def _too_new(display: str, version: int) -> StoreError:
    return StoreError(
        f"{display}: store schema version {version} is newer than this agbom supports "
        f"({SCHEMA_VERSION}); upgrade agbom to use this store"
    )


def _schema_version(conn: Connection, display: str) -> int:
    tables = {
        row[0]
        for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    }
    if "schema_version" not in tables:
        if tables:
            raise StoreError(
                f"{display}: not an agbom store (the schema holds other tables and no "
                "schema_version); use an empty database, or another schema with "
                "?options=-csearch_path%3DNAME"
            )
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0) if row else 0
