"""Store layer: skill approvals, audit chains, sessions and AgBOM versions (SQLite default)."""

from __future__ import annotations

from agbom.store._migrations import SCHEMA_VERSION
from agbom.store.interface import (
    ChainConflict,
    Digest,
    DuplicateRequest,
    SkillRecord,
    SkillStatus,
    StoreError,
    Verdict,
    format_timestamp,
    parse_timestamp,
)
from agbom.store.sqlite import ChainAppend, SqliteStore

__all__ = [
    "SCHEMA_VERSION",
    "ChainConflict",
    "ChainAppend",
    "Digest",
    "DuplicateRequest",
    "SkillRecord",
    "SkillStatus",
    "SqliteStore",
    "StoreError",
    "Verdict",
    "format_timestamp",
    "parse_timestamp",
]
