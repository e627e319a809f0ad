"""The fleet statements in SQLite's dialect (:mod:`agbom.store._fleet_logic`), for the
store's reads, its saves and the v13 migration that builds the summary."""

from __future__ import annotations

import sqlite3

from agbom.store import _fleet_logic as fleet
from agbom.store import _fleet_summary as summary

# An agent's latest accepted version holds the members whose interval covers it. CROSS JOIN
# and the unary + keep SQLite's planner on the primary key from each latest version, not on
# the (type, name) index over every version's members.
FLEET = fleet.fleet_sql(
    held="SELECT l.agent_id, l.session_id, l.version AS agbom_version, l.created_at AS seen_at, "
    "m.first_seen, m.component_id, +m.type AS type, m.name, m.version_str AS version, "
    "c.body AS body FROM latest l CROSS JOIN agbom_members m ON m.session_id = l.session_id "
    "AND m.agent_id = l.agent_id AND m.since_version <= l.version "
    "AND (m.until_version IS NULL OR m.until_version > l.version) "
    "LEFT JOIN agbom_components c ON c.key = m.key",
    # The findings kept with each latest version, one row per component a finding names
    # (a finding, its components, or the change that is no JSON object is passed over).
    found="SELECT l.agent_id, c.value AS component_id, "
    "MAX(CASE json_extract(f.value, '$.severity') {severity_case} END) AS severity, "
    "group_concat(DISTINCT json_extract(f.value, '$.rule_id')) AS rules "
    "FROM latest l JOIN agbom_versions v ON v.session_id = l.session_id "
    "AND v.version = l.version "
    "CROSS JOIN json_each(CASE WHEN json_valid(v.change) THEN v.change ELSE '{}' END, "
    "'$.findings') f "
    "CROSS JOIN json_each(CASE WHEN f.type = 'object' THEN f.value ELSE '{}' END, "
    "'$.components') c "
    "WHERE c.type = 'text' AND json_type(CASE WHEN f.type = 'object' THEN f.value "
    "ELSE '{}' END, '$.rule_id') = 'text' "
    "GROUP BY l.agent_id, c.value",
    json_rows="SELECT value AS k FROM json_each(:keys)",
    tiebreak="rowid",
)


def rebuild_summary(conn: sqlite3.Connection) -> None:
    """The v13 migration's data step: the summary of the versions already stored."""
    summary.rebuild(conn.execute, FLEET)
