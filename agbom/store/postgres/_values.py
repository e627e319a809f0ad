"""Input checks and value forms the PostgreSQL store shares with the SQLite one.

Both backends must refuse the same inputs with the same messages and store the same text, so
these come from one place (:mod:`agbom.store._shared`); this module gives them public names
inside the package.
"""

from __future__ import annotations

from agbom.store._approval_logic import SKILL_COLUMNS, record_from_row
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

__all__ = [
    "IMPORT_FORMAT",
    "IMPORT_VERSION",
    "MAX_ENTRY_BYTES",
    "MAX_REF",
    "PAIR",
    "SKILL_COLUMNS",
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

PAIR = "skill_id = %s AND digest_alg = %s AND digest_value = %s"
