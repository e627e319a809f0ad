"""``PostgresStore``: the whole store on one PostgreSQL database, for one or many replicas."""

from __future__ import annotations

import time
import weakref

import psycopg_pool

from agbom.store.interface import StoreError
from agbom.store.postgres._base import (
    CONNECT_TIMEOUT_S,
    POOL_TIMEOUT_S,
    Connection,
    connect_once,
    display_url,
    migrate,
    pool_size_from_env,
)
from agbom.store.postgres.approvals import ApprovalsMixin
from agbom.store.postgres.chains import ChainsMixin
from agbom.store.postgres.inventory import InventoryMixin
from agbom.store.postgres.servers import ServersMixin
from agbom.store.postgres.sessions import SessionsMixin

RECENTLY_USED_S = 1.0
"""A pooled connection given back less than this ago is lent again without a check."""


def _liveness_checks() -> tuple[psycopg_pool.abc.ConnectionCB[Connection], ...]:
    """The pool's ``check`` and ``reset`` callbacks: a connection idle for a while is tested
    with a round trip before it is lent (after a database restart it is replaced, not lent
    broken); one given back just now is not, since that round trip would double the cost of
    a primary-key read. A connection that broke within that moment fails its call (closed:
    an error, never a wrong answer), and the pool drops it when it comes back."""
    returned: weakref.WeakKeyDictionary[Connection, float] = weakref.WeakKeyDictionary()

    def check(conn: Connection) -> None:
        at = returned.get(conn)
        if at is None or time.monotonic() - at >= RECENTLY_USED_S:
            psycopg_pool.ConnectionPool.check_connection(conn)

    def reset(conn: Connection) -> None:
        returned[conn] = time.monotonic()

    return check, reset


class PostgresStore(ApprovalsMixin, ChainsMixin, SessionsMixin, InventoryMixin, ServersMixin):
    """Skill approvals, audit chains, sessions and AgBOM versions in one PostgreSQL database.

    Open it with :meth:`open` (or :func:`agbom.store.open_store` on a ``postgresql://`` URL).
    One instance is safe to share between threads: each call borrows a pooled connection.
    """

    @classmethod
    def open(
        cls,
        url: str,
        *,
        create: bool = True,
        pool_size: int | None = None,
        timeout: float = POOL_TIMEOUT_S,
    ) -> PostgresStore:
        """Connect to the database at ``url`` and bring its schema up to date.

        ``create``: set up the schema in an empty database; when false, an empty database is
        refused. ``pool_size``: most connections this store holds (default
        ``$AGBOM_PG_POOL_SIZE``, else 8). ``timeout``: how long a call waits for a connection
        (while the database is unreachable; it then fails closed with an error). Raises
        :class:`StoreError` (one line, no password) when the database cannot be reached or
        logged into, holds something else than an agbom store, or was written by a newer
        agbom.
        """
        if not isinstance(url, str):
            raise StoreError("a PostgreSQL store location must be a postgresql:// URL")
        size = pool_size_from_env() if pool_size is None else pool_size
        if not 1 <= int(size) <= 1000:
            raise StoreError("pool size must be a whole number from 1 to 1000")
        display = display_url(url)
        with connect_once(url) as conn:
            migrate(conn, display, create=create)

        def make_pool() -> psycopg_pool.ConnectionPool[Connection]:
            check, reset = _liveness_checks()
            pool: psycopg_pool.ConnectionPool[Connection] = psycopg_pool.ConnectionPool(
                url,
                min_size=1,
                max_size=size,
                kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
                timeout=timeout,
                check=check,
                reset=reset,
                name="agbom-store",
                open=False,
            )
            # wait=False: connections open in the background; a call waits for one if needed.
            pool.open(wait=False)
            return pool

        return cls(url, make_pool)

    def reopen(self) -> PostgresStore:
        """Another store on the same database with a pool of its own; never creates one."""
        pool = self._require_pool()
        return PostgresStore.open(
            self._url, create=False, pool_size=pool.max_size, timeout=pool.timeout
        )

    def __enter__(self) -> PostgresStore:
        return self
