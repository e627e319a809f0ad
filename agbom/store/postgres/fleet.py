"""The fleet statements in PostgreSQL's dialect (:mod:`agbom.store._fleet_logic`), for the
store's reads, its saves and the v7 migration that builds the summary."""

from __future__ import annotations

from agbom.store import _fleet_logic as fleet

# The latest version's document, one row per component, beside its index row (first_seen).
# Each join is LATERAL, so the planner goes from each latest version to its document and its
# index rows by primary key, whatever its estimates of a fresh table.
FLEET = fleet.fleet_sql(
    held="SELECT l.agent_id, l.session_id, l.version AS agbom_version, l.created_at AS seen_at, "
    "x.first_seen, x.component_id, x.type, x.name, x.version_str AS version, e.value AS body "
    "FROM latest l CROSS JOIN LATERAL (SELECT v.document::jsonb -> 'components' AS list "
    "FROM agbom_versions v WHERE v.session_id = l.session_id AND v.version = l.version) d "
    "CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(d.list) = 'array' "
    "THEN d.list ELSE '[]'::jsonb END) AS e(value) "
    "CROSS JOIN LATERAL (SELECT c.first_seen, c.component_id, c.type, c.name, c.version_str "
    "FROM components c WHERE c.session_id = l.session_id AND c.version = l.version "
    "AND c.component_id = (e.value ->> 'id') LIMIT 1) x",
    # The findings kept with each latest version, one row per component a finding names
    # (read as jsonb with a \u0000 escape made a space first: jsonb holds no NUL).
    found="SELECT l.agent_id, (c.value #>> '{}') COLLATE \"C\" AS component_id, "
    "MAX(CASE f.value ->> 'severity' {severity_case} END) AS severity, "
    "string_agg(DISTINCT f.value ->> 'rule_id', ',') AS rules "
    "FROM latest l JOIN agbom_versions v ON v.session_id = l.session_id "
    "AND v.version = l.version "
    "CROSS JOIN LATERAL (SELECT replace(v.change, '\\u0000', '\\u0020')::jsonb "
    "-> 'findings' AS list) d "
    "CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(d.list) = 'array' "
    "THEN d.list ELSE '[]'::jsonb END) AS f(value) "
    "CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(f.value -> 'components') "
    "= 'array' THEN f.value -> 'components' ELSE '[]'::jsonb END) AS c(value) "
    "WHERE jsonb_typeof(c.value) = 'string' AND jsonb_typeof(f.value -> 'rule_id') = 'string' "
    "GROUP BY l.agent_id, 2",
    json_rows="SELECT value AS k FROM jsonb_array_elements(CAST(:keys AS jsonb))",
    list_agg="string_agg(DISTINCT rules, ',')",
    tiebreak="id",
    collate=' COLLATE "C"',
    pyformat=True,
    position="strpos",
)

REFRESH_LOCK = "agbom:fleet-summary"
"""The transaction-scoped advisory lock every refresh of the summary takes (see
:mod:`.inventory`): replicas saving at once recompute a shared component one after the other,
each seeing the rows the other committed."""
