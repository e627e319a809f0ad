"""Input checks and value forms the PostgreSQL store shares with the SQLite one.

Both backends must refuse the same inputs with the same messages and store the same text, so
these come from one place (:mod:`agbom.store._shared`); this module gives them public names
inside the package.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from agbom.store._shared import (
    IMPORT_FORMAT,
    IMPORT_VERSION,
    MAX_ENTRY_BYTES,
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
    _validate_import,
)
from agbom.store.interface import SkillRecord, SkillStatus

__all__ = [
    "IMPORT_FORMAT",
    "IMPORT_VERSION",
    "MAX_ENTRY_BYTES",
    "MAX_REF",
    "append_row",
    "capabilities_text",
    "check_id",
    "component_rows",
    "dumps",
    "entry_text",
    "in_scope",
    "now_or",
    "record_from_row",
    "stamp",
    "validate_import",
]

append_row = _append_row
capabilities_text = _capabilities_text
check_id = _check_id
component_rows = _component_rows
dumps = _dumps
entry_text = _entry_text
in_scope = _in_scope
now_or = _now
validate_import = _validate_import
stamp = _stamp

SKILL_COLUMNS = (
    "skill_id, digest_alg, digest_value, ref, declared_capabilities, composition, provenance, "
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, "
    "first_seen, last_seen, registered_by_agent, registered_by_tenant"
)
PAIR = "skill_id = %s AND digest_alg = %s AND digest_value = %s"


def _ts(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def record_from_row(row: tuple[Any, ...]) -> SkillRecord:
    """A :class:`SkillRecord` from a row of :data:`SKILL_COLUMNS`."""
    from agbom.store.interface import Digest

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
