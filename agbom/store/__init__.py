"""Store layer: skill approvals, audit chains, sessions and AgBOM versions.

Open one with :func:`open_store` (a SQLite file by default, or a PostgreSQL URL); code that
uses a store takes the :class:`Store` protocol.
"""

from __future__ import annotations

from agbom.store._migrations import SCHEMA_VERSION
from agbom.store.factory import open_store, redact_location
from agbom.store.interface import (
    ApprovalStore,
    ChainAppend,
    ChainConflict,
    ChainStore,
    Digest,
    DuplicateRequest,
    InventoryStore,
    SessionStore,
    SkillRecord,
    SkillStatus,
    Store,
    StoreError,
    StoreLifecycle,
    Verdict,
    format_timestamp,
    parse_timestamp,
)
from agbom.store.sqlite import SqliteStore

__all__ = [
    "SCHEMA_VERSION",
    "ApprovalStore",
    "ChainAppend",
    "ChainConflict",
    "ChainStore",
    "Digest",
    "DuplicateRequest",
    "InventoryStore",
    "SessionStore",
    "SkillRecord",
    "SkillStatus",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreLifecycle",
    "Verdict",
    "format_timestamp",
    "open_store",
    "parse_timestamp",
    "redact_location",
]
