"""The PostgreSQL store: the same :class:`~agbom.store.interface.Store` as the SQLite file,
on a database that several Guardian replicas share (psycopg 3 and psycopg_pool).

Imported only when a ``postgresql://`` location is opened, so SQLite users never load the
driver.
"""

from __future__ import annotations

from agbom.store.postgres._base import APPROVALS_CHANNEL, display_url
from agbom.store.postgres._migrations import SCHEMA_VERSION
from agbom.store.postgres.store import PostgresStore

__all__ = ["APPROVALS_CHANNEL", "SCHEMA_VERSION", "PostgresStore", "display_url"]
