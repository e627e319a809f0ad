"""Store layer: skill approvals, audit chains, sessions and AgBOM versions.

Open one with :func:`open_store` (a SQLite file by default, or a PostgreSQL URL); code that
uses a store takes the :class:`Store` protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agbom.store._migrations import SCHEMA_VERSION
from agbom.store.documents import AgbomDocument
from agbom.store.factory import open_store, redact_location
from agbom.store.interface import (
    ApprovalStore,
    ChainAppend,
    ChainConflict,
    ChainStore,
    Digest,
    DuplicateRequest,
    InventoryStore,
    ServerApprovalStore,
    ServerPin,
    SessionStore,
    SkillRecord,
    SkillStatus,
    Store,
    StoreError,
    StoreLifecycle,
    StoreValueError,
    UntrustedStoreError,
    Verdict,
    format_timestamp,
    parse_timestamp,
)

if TYPE_CHECKING:
    from agbom.store.sqlite import SqliteStore


def __getattr__(name: str) -> Any:
    # SqliteStore brings sqlite-utils (about 60 ms of imports): only when it is asked for,
    # not for every command that merely names a SkillStatus (agbom --help, agbom hook).
    if name == "SqliteStore":
        from agbom.store.sqlite import SqliteStore

        return SqliteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SCHEMA_VERSION",
    "AgbomDocument",
    "ApprovalStore",
    "ChainAppend",
    "ChainConflict",
    "ChainStore",
    "Digest",
    "DuplicateRequest",
    "InventoryStore",
    "ServerApprovalStore",
    "ServerPin",
    "SessionStore",
    "SkillRecord",
    "SkillStatus",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreValueError",
    "UntrustedStoreError",
    "StoreLifecycle",
    "Verdict",
    "format_timestamp",
    "open_store",
    "parse_timestamp",
    "redact_location",
]
