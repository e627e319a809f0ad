"""The embedded store: one SQLite file, opened with the standard library's ``sqlite3``.

One class, :class:`SqliteStore`, put together from one piece per concern: the connection
(:mod:`.connection`), approvals (:mod:`.approvals`), the GitOps file (:mod:`.gitops`), audit
chains (:mod:`.chains`), sessions (:mod:`.sessions`), the inventory (:mod:`.inventory`) and
server approvals (:mod:`.servers`).

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

from agbom.store._shared import (
    IMPORT_FORMAT,
    IMPORT_VERSION,
    MAX_CAPABILITIES,
    MAX_ENTRY_BYTES,
    MAX_ID,
    MAX_JSON_BYTES,
    MAX_REF,
    _append_row,
    _capabilities_text,
    _check_id,
    _component_rows,
    _dumps,
    _entry_text,
    _in_scope,
    _now,
    _stamp,
    _ts,
    _validate_import,
)
from agbom.store.interface import ChainAppend
from agbom.store.sqlite.chains import ChainsMixin
from agbom.store.sqlite.connection import (
    BUSY_TIMEOUT_S,
    PROBE_BUSY_TIMEOUT_S,
    WAL_LIMIT_BYTES,
    SqliteBase,
)
from agbom.store.sqlite.gitops import GitopsMixin
from agbom.store.sqlite.inventory import InventoryMixin
from agbom.store.sqlite.servers import ServersMixin
from agbom.store.sqlite.sessions import SessionsMixin

# The private helpers stay importable from here for the other backend (agbom.store.postgres).
__all__ = [
    "BUSY_TIMEOUT_S",
    "IMPORT_FORMAT",
    "IMPORT_VERSION",
    "MAX_CAPABILITIES",
    "MAX_ENTRY_BYTES",
    "MAX_ID",
    "MAX_JSON_BYTES",
    "MAX_REF",
    "PROBE_BUSY_TIMEOUT_S",
    "WAL_LIMIT_BYTES",
    "ChainAppend",
    "SqliteBase",
    "SqliteStore",
    "_append_row",
    "_capabilities_text",
    "_check_id",
    "_component_rows",
    "_dumps",
    "_entry_text",
    "_in_scope",
    "_now",
    "_stamp",
    "_ts",
    "_validate_import",
]


class SqliteStore(GitopsMixin, ChainsMixin, SessionsMixin, InventoryMixin, ServersMixin):
    """Skill approvals, audit chains, sessions and AgBOM versions in one SQLite file."""
