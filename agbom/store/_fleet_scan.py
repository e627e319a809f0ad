"""The fleet's definition, free of any database driver: what a fleet component is, the
statuses it can have, and the scan statements that read them whole from the stored versions.

A fleet component is a distinct thing the agents' latest accepted AgBOMs hold (each agent
counts with the AgBOM it sent last): a skill by ``(id, digest)``, an MCP server by its purl,
else its endpoint, else its name, a model by provider and name, an A2A peer by its endpoint;
each at a version (for a skill, its digest). Its status is the store's word on it: a skill's
approval record, an MCP server's approval pin.

The backends keep versions differently (SQLite as content-addressed pieces, PostgreSQL as
whole documents with a per-version index), so each gives the statements one fragment: the
``held`` relation, one row per component of each agent's latest version with its JSON body.
Everything else (which version is an agent's latest, the identity, the status, grouping,
filters, order and page) is this module's text, run alike on both.

The scan reads every agent's latest AgBOM: seconds in a large fleet. It is kept apart from
the summary the pages read (:mod:`._fleet_summary`, which fills its tables from the scan's
``keyed`` rows) as the definition that summary is kept equal to; the agents list, one
agent's components and its timeline read here. :mod:`._fleet_logic` puts both in a
backend's dialect.
"""

from __future__ import annotations

FLEET_TYPES = ("skill", "mcp_server", "model", "a2a_peer")
"""The component types the fleet view lists (tools, memory and the rest belong to these)."""

STATUSES = ("approved", "expired", "pending", "denied", "revoked", "unreviewed", "unapproved")
"""A skill's status is its approval record's (``expired``: approved, past its expiry;
``unreviewed``: no record); an MCP server's is ``approved`` or ``revoked`` by its approval
pin, else ``unapproved``. Models and A2A peers have none (``None``)."""

RANK = {s: i + 1 for i, s in enumerate(STATUSES)}
"""Each status's rank. When one component is named differently by agents (an MCP server
approved under one agent's id, unknown under another's), the group shows the least approved
of its rows: the greatest rank."""
STATUS_OF_RANK = {r: s for s, r in RANK.items()}

SEVERITIES = ("info", "low", "medium", "high", "critical")
"""A rule finding's severities, least first (``agbom.rules.Severity``)."""
SEVERITY_RANK = {s: i + 1 for i, s in enumerate(SEVERITIES)}
SEVERITY_CASE = " ".join(f"WHEN '{s}' THEN {r}" for s, r in SEVERITY_RANK.items())

TYPES_IN = ", ".join(f"'{t}'" for t in FLEET_TYPES)
RANK_CASE = " ".join(f"WHEN '{s}' THEN {r}" for s, r in RANK.items())

# ``agents`` walks the distinct agents down the index on agbom_versions (agent_id,
# created_at), one seek each, and ``picked`` takes each one's latest accepted version from
# the same index: no pass over the versions themselves.
# {held}: the backend's rows (agent_id, session_id, agbom_version, seen_at, first_seen,
# component_id, type, name, version, body) of the components of each ``latest`` version.
# {found}: the backend's rows (agent_id, component_id, severity, rules) of the rule findings
# kept with each ``latest`` version (its ``change``: those the Guardian found when it took
# that AgBOM), one per component a finding names: the worst severity's rank
# (:data:`SEVERITY_RANK`) and the rule ids joined by commas.
# {tiebreak}: the column that orders versions stored in the same instant. {c}: the collation
# that makes text from JSON compare bytewise, as stored ids do.
EVERY_AGENT = """
WITH RECURSIVE agents(agent_id) AS (
  SELECT MIN(agent_id) FROM agbom_versions
  UNION ALL
  SELECT (SELECT MIN(v.agent_id) FROM agbom_versions v WHERE v.agent_id > a.agent_id)
  FROM agents a WHERE a.agent_id IS NOT NULL),"""
ONE_AGENT = """
WITH RECURSIVE agents(agent_id) AS (SELECT CAST(:agent AS TEXT)),"""

LATEST = """
picked AS MATERIALIZED (
  SELECT (SELECT v.{tiebreak} FROM agbom_versions v WHERE v.agent_id = a.agent_id
    AND v.accepted ORDER BY v.created_at DESC, v.{tiebreak} DESC LIMIT 1) AS pick
  FROM agents a WHERE a.agent_id IS NOT NULL{pick_filter}),
latest AS MATERIALIZED (
  SELECT v.agent_id, v.session_id, v.version, v.created_at
  FROM picked p JOIN agbom_versions v ON v.{tiebreak} = p.pick)"""
"""Each agent's latest accepted version (after :data:`EVERY_AGENT` or :data:`ONE_AGENT`)."""

KEYED = (
    LATEST
    + """,
held AS ({held}),
found AS ({found}),
parts AS (
  SELECT h.agent_id, h.session_id, h.agbom_version, h.seen_at, h.first_seen,
    h.component_id, h.type, h.name, h.version, f.severity, f.rules,
    {platform_h} AS platform, {developer_h} AS developer,
    (h.body ->> 'purl'){c} AS purl,
    CASE WHEN h.type IN ('mcp_server', 'a2a_peer') THEN (h.body ->> 'endpoint'){c} END
      AS endpoint,
    CASE WHEN h.type = 'model' THEN (h.body ->> 'provider'){c} END AS provider,
    CASE WHEN h.type = 'skill' THEN (lower(replace(replace(
      h.body -> 'definition' -> 'digest' ->> 'algorithm', '-', ''), '_', ''))){c} END
      AS digest_alg,
    CASE WHEN h.type = 'skill' THEN (lower(
      h.body -> 'definition' -> 'digest' ->> 'value')){c} END AS digest_value
  FROM held h LEFT JOIN found f ON f.agent_id = h.agent_id AND f.component_id = h.component_id
  WHERE h.type IN ({types}){type_filter}),
keyed AS (
  SELECT p.*,
    CASE p.type WHEN 'skill' THEN p.component_id
      WHEN 'mcp_server' THEN COALESCE(p.purl, p.endpoint, p.name)
      WHEN 'model' THEN COALESCE(p.provider || '/', '') || p.name
      ELSE COALESCE(p.endpoint, p.name) END AS ref,
    CASE p.type WHEN 'skill' THEN p.digest_alg || ':' || p.digest_value
      ELSE p.version END AS release
  FROM parts p)"""
)

# The scan's agents: one (``:agent``), or those of one host platform (``:host``), or all.
AGENT_OR_HOST = """
    AND (CAST(:agent AS TEXT) IS NULL OR a.agent_id = :agent)
    AND (CAST(:host AS TEXT) IS NULL OR a.agent_id = :host
      OR substr(a.agent_id, 1, length(CAST(:host AS TEXT)) + 1) = CAST(:host AS TEXT) || '/')"""

CTES = (
    EVERY_AGENT
    + KEYED.replace(
        "{type_filter}", " AND (CAST(:type AS TEXT) IS NULL OR h.type = :type)"
    ).replace("{pick_filter}", AGENT_OR_HOST)
    + """,
judged AS (
  SELECT k.*,
    CASE k.type
      WHEN 'skill' THEN CASE
        WHEN s.status IS NULL THEN 'unreviewed'
        WHEN s.status = 'approved' AND s.expires_at IS NOT NULL AND s.expires_at <= :now
          THEN 'expired'
        ELSE s.status END
      WHEN 'mcp_server' THEN CASE
        WHEN pi.status = 'approved' OR pn.status = 'approved' THEN 'approved'
        WHEN COALESCE(pi.status, pn.status) = 'revoked' THEN 'revoked'
        ELSE 'unapproved' END
      END AS status
  FROM keyed k
  LEFT JOIN skills s ON k.type = 'skill' AND s.skill_id = k.component_id
    AND s.digest_alg = k.digest_alg AND s.digest_value = k.digest_value
  LEFT JOIN server_pins pi ON k.type = 'mcp_server' AND pi.server_key = lower(trim(k.component_id))
  LEFT JOIN server_pins pn ON k.type = 'mcp_server' AND pn.server_key = lower(trim(k.name)))
"""
)

COMPONENTS = (
    CTES
    + """,
grouped AS (
  SELECT type, ref, release, MIN(name) AS name, MIN(purl) AS purl,
    COUNT(DISTINCT agent_id) AS agents, MIN(first_seen) AS first_seen,
    MAX(seen_at) AS last_seen, MAX(CASE status {ranks} END) AS status_rank,
    COUNT(DISTINCT developer) AS developers, COUNT(DISTINCT platform) AS hosts,
    MAX(severity) AS severity, substr({list_agg}, 1, {max_rules_text}) AS rules
  FROM judged GROUP BY type, ref, release)
SELECT type, ref, release, name, purl, agents, first_seen, last_seen, status_rank,
  developers, hosts, severity, rules, COUNT(*) OVER () AS total
FROM grouped
WHERE (CAST(:rank AS INTEGER) IS NULL OR status_rank = :rank)
  AND (CAST(:severity AS INTEGER) IS NULL OR severity >= :severity)
  AND (CAST(:search AS TEXT) IS NULL OR lower(name) LIKE :search ESCAPE '\\'
    OR lower(ref) LIKE :search ESCAPE '\\' OR lower(COALESCE(purl, '')) LIKE :search ESCAPE '\\')
ORDER BY type{C}, name{C}, ref{C}, COALESCE(release, ''){C}
LIMIT :limit OFFSET :offset
"""
)

AGENTS = (
    CTES
    + """
SELECT agent_id, MIN(session_id), MIN(agbom_version), MIN(first_seen), MAX(seen_at),
  MAX(CASE status {ranks} END), COUNT(*) OVER () AS total
FROM judged
WHERE type = :type AND ref = :ref AND COALESCE(release, '') = COALESCE(CAST(:version AS TEXT), '')
GROUP BY agent_id
ORDER BY agent_id{C}
LIMIT :limit OFFSET :offset
"""
)


# The agents of the fleet, one row per agent id (a developer on a machine with one host
# platform, agbom/adapters/identity.py): what its latest accepted AgBOM holds by type, how
# much of it is not approved, and the last decision recorded in that AgBOM's session.
# The page is cut before the last decision is looked up, so only its rows pay for it.
AGENT_LIST = (
    CTES
    + """,
counted AS (
  SELECT agent_id,
    COUNT(CASE WHEN type = 'skill' THEN 1 END) AS skills,
    COUNT(CASE WHEN type = 'mcp_server' THEN 1 END) AS servers,
    COUNT(CASE WHEN type = 'model' THEN 1 END) AS models,
    COUNT(CASE WHEN type = 'a2a_peer' THEN 1 END) AS peers,
    COUNT(CASE WHEN status <> 'approved' THEN 1 END) AS unapproved
  FROM judged GROUP BY agent_id),
listed AS (
  SELECT l.agent_id, l.session_id, l.version, l.created_at,
    COALESCE(n.skills, 0) AS skills, COALESCE(n.servers, 0) AS servers,
    COALESCE(n.models, 0) AS models, COALESCE(n.peers, 0) AS peers,
    COALESCE(n.unapproved, 0) AS unapproved, COUNT(*) OVER () AS total
  FROM latest l LEFT JOIN counted n ON n.agent_id = l.agent_id
  WHERE (CAST(:search AS TEXT) IS NULL OR lower(l.agent_id) LIKE :search ESCAPE '\\')
    AND (CAST(:unapproved AS INTEGER) IS NULL OR COALESCE(n.unapproved, 0) > 0)
  ORDER BY l.agent_id{C}
  LIMIT :limit OFFSET :offset)
SELECT agent_id, {platform_a}, {developer_a}, {machine_a}, session_id, version, created_at,
  skills, servers, models, peers, unapproved,
  (SELECT e.entry FROM chain_entries e WHERE e.session_id = listed.session_id
    ORDER BY e.seq DESC LIMIT 1) AS last_entry,
  total
FROM listed
ORDER BY agent_id{C}
"""
)

# An agent's AgBOM versions, newest first, each with the latest accepted version stored
# before it (what was in use when it came): the timeline diffs each against that one.
VERSIONS = """
WITH page AS (
  SELECT v.{tiebreak} AS k, v.agent_id, v.session_id, v.version, v.created_at, v.accepted,
    v.agbom_hash, COUNT(*) OVER () AS total
  FROM agbom_versions v WHERE v.agent_id = :agent
  ORDER BY v.created_at DESC, v.{tiebreak} DESC
  LIMIT :limit OFFSET :offset)
SELECT pg.session_id, pg.version, pg.created_at, pg.accepted, pg.agbom_hash,
  b.session_id, b.version, pg.total
FROM page pg
LEFT JOIN agbom_versions b ON b.{tiebreak} = (
  SELECT p.{tiebreak} FROM agbom_versions p
  WHERE p.agent_id = pg.agent_id AND p.accepted AND (p.created_at < pg.created_at
    OR (p.created_at = pg.created_at AND p.{tiebreak} < pg.k))
  ORDER BY p.created_at DESC, p.{tiebreak} DESC LIMIT 1)
ORDER BY pg.created_at DESC, pg.k DESC
"""


def platform_of(column: str) -> str:
    """The host platform of an agent id: what comes before its first ``/`` (the whole id
    when it has none: an agent that named itself)."""
    return (
        f"CASE WHEN {{pos}}({column}, '/') > 0 "
        f"THEN substr({column}, 1, {{pos}}({column}, '/') - 1) ELSE {column} END"
    )


def _identified(column: str) -> str:
    return f"{{pos}}({column}, '/') > 0 AND {{pos}}({column}, '@') > {{pos}}({column}, '/') + 1"


def developer_of(column: str) -> str:
    """The user of ``RUNTIME/USER@HOST`` (``claimed:USER`` for a claim, counted apart)."""
    return (
        f"CASE WHEN {_identified(column)} THEN substr({column}, {{pos}}({column}, '/') + 1, "
        f"{{pos}}({column}, '@') - {{pos}}({column}, '/') - 1) END"
    )


def machine_of(column: str) -> str:
    return f"CASE WHEN {_identified(column)} THEN substr({column}, {{pos}}({column}, '@') + 1) END"
