"""Components across the fleet, free of any database driver: the checks of a query's
filters and page, and the SQL texts both backends run: the scan that defines the list, and
the summary kept from it as AgBOMs are saved, which the pages read (below).

A fleet component is a distinct thing the agents' latest accepted AgBOMs hold (each agent
counts with the AgBOM it sent last): a skill by ``(id, digest)``, an MCP server by its purl,
else its endpoint, else its name, a model by provider and name, an A2A peer by its endpoint;
each at a version (for a skill, its digest). Its status is the store's word on it: a skill's
approval record, an MCP server's approval pin.

The backends keep versions differently (SQLite as content-addressed pieces, PostgreSQL as
whole documents with a per-version index), so each gives the statement one fragment: the
``held`` relation, one row per component of each agent's latest version with its JSON body.
Everything else (which version is an agent's latest, the identity, the status, grouping,
filters, order and page) is this module's text, run alike on both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agbom._identifiers import invisible_character
from agbom.store.interface import StoreValueError

FLEET_TYPES = ("skill", "mcp_server", "model", "a2a_peer")
"""The component types the fleet view lists (tools, memory and the rest belong to these)."""

STATUSES = ("approved", "expired", "pending", "denied", "revoked", "unreviewed", "unapproved")
"""A skill's status is its approval record's (``expired``: approved, past its expiry;
``unreviewed``: no record); an MCP server's is ``approved`` or ``revoked`` by its approval
pin, else ``unapproved``. Models and A2A peers have none (``None``)."""

# When one component is named differently by agents (an MCP server approved under one
# agent's id, unknown under another's), the group shows the least approved of its rows.
_RANK = {s: i + 1 for i, s in enumerate(STATUSES)}

MAX_PAGE = 500
"""Rows a page of the read API may ask for (the API refuses more)."""
MAX_LIMIT = 1_000_000
"""Rows one store call may return: the CLI lists the whole fleet in one call (one walk of
the summary's index rather than one count per page)."""
DEFAULT_PAGE = 100
MAX_OFFSET = 1_000_000
MAX_SEARCH = 256
MAX_REF = 1024
MAX_VERSION = 256
MAX_HOST = 64
_HOST = re.compile(r"[A-Za-z0-9._-]{1,64}")


@dataclass(frozen=True, slots=True)
class FleetFilter:
    """Checked filters and page of :meth:`fleet_components`."""

    type: str | None = None
    status: str | None = None
    search: str | None = None
    limit: int = DEFAULT_PAGE
    offset: int = 0
    host: str | None = None


def check_filter(
    type: Any = None, status: Any = None, search: Any = None, limit: Any = None,
    offset: Any = None, host: Any = None,
) -> FleetFilter:  # fmt: skip
    """Refuse a filter or a page the query must not run with, with the reason."""
    if type is not None and type not in FLEET_TYPES:
        raise StoreValueError(f"type must be one of {', '.join(FLEET_TYPES)}")
    if status is not None and status not in STATUSES:
        raise StoreValueError(f"status must be one of {', '.join(STATUSES)}")
    return FleetFilter(
        type, status, check_search(search), *check_page(limit, offset), check_host(host)
    )


def check_search(search: Any) -> str | None:
    if search is None:
        return None
    if not isinstance(search, str) or len(search) > MAX_SEARCH:
        raise StoreValueError(f"search must be text of at most {MAX_SEARCH} characters")
    if invisible_character(search):
        raise StoreValueError("search holds a control or invisible character")
    return search or None


def check_host(host: Any) -> str | None:
    """A host platform as agent ids begin with it (``claude-code``, ``cursor``)."""
    if host is None or host == "":
        return None
    if not isinstance(host, str) or not _HOST.fullmatch(host):
        raise StoreValueError(
            f"host must be a host platform's name: letters, digits and ._- "
            f"(at most {MAX_HOST} characters)"
        )
    return host


def check_agent(agent_id: Any) -> str:
    if not isinstance(agent_id, str) or not agent_id or len(agent_id) > MAX_REF:
        raise StoreValueError(f"agent_id must be non-empty text of at most {MAX_REF} characters")
    if "\x00" in agent_id:
        raise StoreValueError("agent_id holds a NUL character")
    if invisible_character(agent_id):
        raise StoreValueError("agent_id holds a control or invisible character")
    return agent_id


def check_page(limit: Any, offset: Any) -> tuple[int, int]:
    limit = DEFAULT_PAGE if limit is None else limit
    offset = 0 if offset is None else offset
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise StoreValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise StoreValueError(f"offset must be a whole number from 0 to {MAX_OFFSET}")
    return limit, offset


def check_component(type: Any, ref: Any, version: Any) -> tuple[str, str, str | None]:
    """A component named by its identity, as the rows of :meth:`fleet_components` give it."""
    if type not in FLEET_TYPES:
        raise StoreValueError(f"type must be one of {', '.join(FLEET_TYPES)}")
    for what, value, limit in (("ref", ref, MAX_REF), ("version", version, MAX_VERSION)):
        if value is None and what == "version":
            continue
        if not isinstance(value, str) or not value or len(value) > limit:
            raise StoreValueError(f"{what} must be non-empty text of at most {limit} characters")
        if "\x00" in value:
            raise StoreValueError(f"{what} holds a NUL character")
    return type, ref, version


def _like(text: str) -> str:
    """``text`` as a case-insensitive substring pattern of LIKE (with ESCAPE '\\')."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", text.lower()) + "%"


_TYPES_IN = ", ".join(f"'{t}'" for t in FLEET_TYPES)
_RANK_CASE = " ".join(f"WHEN '{s}' THEN {r}" for s, r in _RANK.items())

# ``agents`` walks the distinct agents down the index on agbom_versions (agent_id,
# created_at), one seek each, and ``picked`` takes each one's latest accepted version from
# the same index: no pass over the versions themselves.
# {held}: the backend's rows (agent_id, session_id, agbom_version, seen_at, first_seen,
# component_id, type, name, version, body) of the components of each ``latest`` version.
# {tiebreak}: the column that orders versions stored in the same instant. {c}: the collation
# that makes text from JSON compare bytewise, as stored ids do.
_EVERY_AGENT = """
WITH RECURSIVE agents(agent_id) AS (
  SELECT MIN(agent_id) FROM agbom_versions
  UNION ALL
  SELECT (SELECT MIN(v.agent_id) FROM agbom_versions v WHERE v.agent_id > a.agent_id)
  FROM agents a WHERE a.agent_id IS NOT NULL),"""
_ONE_AGENT = """
WITH RECURSIVE agents(agent_id) AS (SELECT CAST(:agent AS TEXT)),"""

_KEYED = """
picked AS MATERIALIZED (
  SELECT (SELECT v.{tiebreak} FROM agbom_versions v WHERE v.agent_id = a.agent_id
    AND v.accepted ORDER BY v.created_at DESC, v.{tiebreak} DESC LIMIT 1) AS pick
  FROM agents a WHERE a.agent_id IS NOT NULL{pick_filter}),
latest AS MATERIALIZED (
  SELECT v.agent_id, v.session_id, v.version, v.created_at
  FROM picked p JOIN agbom_versions v ON v.{tiebreak} = p.pick),
held AS ({held}),
parts AS (
  SELECT h.agent_id, h.session_id, h.agbom_version, h.seen_at, h.first_seen,
    h.component_id, h.type, h.name, h.version,
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
  FROM held h
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

# The scan's agents: one (``:agent``), or those of one host platform (``:host``), or all.
_AGENT_OR_HOST = """
    AND (CAST(:agent AS TEXT) IS NULL OR a.agent_id = :agent)
    AND (CAST(:host AS TEXT) IS NULL OR a.agent_id = :host
      OR substr(a.agent_id, 1, length(CAST(:host AS TEXT)) + 1) = CAST(:host AS TEXT) || '/')"""

_CTES = (
    _EVERY_AGENT
    + _KEYED.replace(
        "{type_filter}", " AND (CAST(:type AS TEXT) IS NULL OR h.type = :type)"
    ).replace("{pick_filter}", _AGENT_OR_HOST)
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

_COMPONENTS = (
    _CTES
    + """,
grouped AS (
  SELECT type, ref, release, MIN(name) AS name, MIN(purl) AS purl,
    COUNT(DISTINCT agent_id) AS agents, MIN(first_seen) AS first_seen,
    MAX(seen_at) AS last_seen, MAX(CASE status {ranks} END) AS status_rank,
    COUNT(DISTINCT developer) AS developers, COUNT(DISTINCT platform) AS hosts
  FROM judged GROUP BY type, ref, release)
SELECT type, ref, release, name, purl, agents, first_seen, last_seen, status_rank,
  developers, hosts, COUNT(*) OVER () AS total
FROM grouped
WHERE (CAST(:rank AS INTEGER) IS NULL OR status_rank = :rank)
  AND (CAST(:search AS TEXT) IS NULL OR lower(name) LIKE :search ESCAPE '\\'
    OR lower(ref) LIKE :search ESCAPE '\\' OR lower(COALESCE(purl, '')) LIKE :search ESCAPE '\\')
ORDER BY type{C}, name{C}, ref{C}, COALESCE(release, ''){C}
LIMIT :limit OFFSET :offset
"""
)

_AGENTS = (
    _CTES
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
_AGENT_LIST = (
    _CTES
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
_VERSIONS = """
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


def _platform(column: str) -> str:
    """The host platform of an agent id: what comes before its first ``/`` (the whole id
    when it has none: an agent that named itself)."""
    return (
        f"CASE WHEN {{pos}}({column}, '/') > 0 "
        f"THEN substr({column}, 1, {{pos}}({column}, '/') - 1) ELSE {column} END"
    )


def _identified(column: str) -> str:
    return f"{{pos}}({column}, '/') > 0 AND {{pos}}({column}, '@') > {{pos}}({column}, '/') + 1"


def _developer(column: str) -> str:
    """The user of ``RUNTIME/USER@HOST`` (``claimed:USER`` for a claim, counted apart)."""
    return (
        f"CASE WHEN {_identified(column)} THEN substr({column}, {{pos}}({column}, '/') + 1, "
        f"{{pos}}({column}, '@') - {{pos}}({column}, '/') - 1) END"
    )


def _machine(column: str) -> str:
    return f"CASE WHEN {_identified(column)} THEN substr({column}, {{pos}}({column}, '@') + 1) END"


# The summary (SQLite v13, PostgreSQL v7), kept as AgBOMs are saved so that a page reads
# ranges of indexes, not every agent's latest AgBOM:
# - fleet_held: the ``keyed`` rows above of each agent's latest accepted version, replaced
#   whole when an agent saves one (``ref_key``/``release_key``: the ref and release, '' for
#   NULL and 'v' before any text, so that they can key an index);
# - fleet_summary: one row per distinct component (type, ref_key, release_key), the
#   aggregates the list shows; recomputed from fleet_held for each component an agent's
#   change touched (an index range of its holders);
# - fleet_dirty: scratch of one refresh, the components it touches (empty between them).
# A status is never stored: it depends on approvals, pins and the clock, so a page judges its
# rows when it reads them (by primary key), as the scan did.
_HELD_COLUMNS = (
    "agent_id, session_id, agbom_version, seen_at, first_seen, component_id, type, name, "
    "ref, release, ref_key, release_key, purl, digest_alg, digest_value"
)
_KEY = "type, ref_key, release_key"


def _fill_held(agents: str) -> str:
    return (
        f"INSERT INTO fleet_held ({_HELD_COLUMNS})"
        + agents
        + _KEYED.replace("{type_filter}", "").replace("{pick_filter}", "")
        + """
SELECT agent_id, session_id, agbom_version, seen_at, first_seen, component_id, type, name,
  ref, release, CASE WHEN ref IS NULL THEN '' ELSE 'v' || ref END,
  CASE WHEN release IS NULL THEN '' ELSE 'v' || release END, purl, digest_alg, digest_value
FROM keyed"""
    )


# ``pins_alike``: 1 when every row of the component has the same pin keys (its id and its
# name, trimmed and lowercased, as server_pins keys them), kept in ``pin_id`` and
# ``pin_name``: its status is then theirs, two primary-key reads.
# ``search``: what a search looks in (the name, the ref, the purl), lowercased and joined by
# a line break, which a search never holds (check_filter refuses control characters): one
# LIKE per row matches exactly where one of the three would.
_SUMMARIZE = f"""
INSERT INTO fleet_summary ({_KEY}, ref, release, name, purl, agents, first_seen, last_seen,
  digest_alg, digest_value, search, pins_alike, pin_id, pin_name, developers, hosts)
SELECT {_KEY}, MIN(ref), MIN(release), MIN(name), MIN(purl), COUNT(DISTINCT agent_id),
  MIN(first_seen), MAX(seen_at), MIN(digest_alg), MIN(digest_value),
  lower(COALESCE(MIN(name), '')) || '\n' || lower(COALESCE(MIN(ref), '')) || '\n'
    || lower(COALESCE(MIN(purl), '')),
  CASE WHEN MIN(lower(trim(component_id))) = MAX(lower(trim(component_id)))
    AND (COUNT(name) = 0 OR (COUNT(name) = COUNT(*)
      AND MIN(lower(trim(name))) = MAX(lower(trim(name))))) THEN 1 ELSE 0 END,
  MIN(lower(trim(component_id))), MIN(lower(trim(name))),
  COUNT(DISTINCT {_developer("agent_id")}), COUNT(DISTINCT {_platform("agent_id")})
FROM fleet_held {{where}} GROUP BY {_KEY}"""

_DIRTY = f"({_KEY}) IN (SELECT {_KEY} FROM fleet_dirty)"

# One agent's refresh, in its save's transaction (refresh_agent): its rows of fleet_held
# are read, replaced by those of its latest accepted version, and read again; a component
# whose holders or whose rows' identity changed is recomputed from its holders (gone when
# none is left), and one the agent held before and holds now, alike, has its first and last
# seen moved where that is exact (else it is recomputed too).
_IDENTITY = "component_id, name, ref, release, purl, digest_alg, digest_value"
_HELD_OF_AGENT = (
    f"SELECT {_KEY}, {_IDENTITY}, first_seen, seen_at FROM fleet_held WHERE agent_id = :agent"
)
_SEEN_OF_AGENT = (
    f"SELECT {_KEY}, first_seen, last_seen, agents FROM fleet_summary WHERE ({_KEY}) IN "
    f"(SELECT {_KEY} FROM fleet_held WHERE agent_id = :agent)"
)
_PK = "type = :type AND ref_key = :ref_key AND release_key = :release_key"
_MOVE_SEEN = (
    f"UPDATE fleet_summary SET first_seen = :first_seen, last_seen = :last_seen WHERE {_PK}"
)
_OF_HOLDERS = "FROM fleet_held h WHERE h.type = :type AND h.ref_key = :ref_key AND " + (
    "h.release_key = :release_key"
)
_RESCAN_SEEN = (
    f"UPDATE fleet_summary SET first_seen = (SELECT MIN(h.first_seen) {_OF_HOLDERS}), "
    f"last_seen = (SELECT MAX(h.seen_at) {_OF_HOLDERS}) WHERE {_PK}"
)
# {json_rows}: the backend's rows ``k`` of the JSON array ``:keys`` (one statement for every
# dirty component: a round trip each cost PostgreSQL more than the recompute saved).
_MARK_DIRTY = (
    f"INSERT INTO fleet_dirty ({_KEY}) SELECT j.k ->> 0, j.k ->> 1, j.k ->> 2 FROM "
    "({json_rows}) j"
)
_RECOMPUTE_DIRTY = (
    f"DELETE FROM fleet_summary WHERE {_DIRTY}",
    _SUMMARIZE.replace("{where}", f"WHERE {_DIRTY}"),
    "DELETE FROM fleet_dirty",
)

_REBUILD = (
    "DELETE FROM fleet_dirty",
    "DELETE FROM fleet_summary",
    "DELETE FROM fleet_held",
    _fill_held(_EVERY_AGENT),
    _SUMMARIZE.replace("{where}", ""),
)
"""The whole summary from the stored versions: the migration's backfill, and what a copy
into a store runs after its versions."""

# A skill's status as its approval record gives it (``k``), an MCP server row's (``h``) by
# the pins of its id or its name, each as its rank.
_SKILL_RANK = """(SELECT CASE (CASE WHEN k.status = 'approved' AND k.expires_at IS NOT NULL
    AND k.expires_at <= :now THEN 'expired' ELSE k.status END) {ranks} END
  FROM skills k WHERE k.skill_id = {of}.{id} AND k.digest_alg = {of}.digest_alg
    AND k.digest_value = {of}.digest_value)"""
_SERVER_RANK = """CASE
    WHEN EXISTS (SELECT 1 FROM server_pins p WHERE p.status = 'approved'
      AND p.server_key IN ({by_id}, {by_name})) THEN {approved}
    WHEN COALESCE(
      (SELECT p.status FROM server_pins p WHERE p.server_key = {by_id}),
      (SELECT p.status FROM server_pins p WHERE p.server_key = {by_name}))
      = 'revoked' THEN {revoked}
    ELSE {unapproved} END"""
_HELD_PIN_KEYS = {"{by_id}": "lower(trim(h.component_id))", "{by_name}": "lower(trim(h.name))"}


def _server_rank(keys: dict[str, str]) -> str:
    text = _SERVER_RANK
    for name, value in keys.items():
        text = text.replace(name, value)
    return text


_UNREVIEWED = "{unreviewed}"

# An MCP server's group is judged by the pin keys the summary keeps when all its rows share
# them (nearly always: one server, one id and name), else row by row from its holders.
_GROUP_RANK = (
    "(CASE s.type WHEN 'skill' THEN COALESCE("
    + _SKILL_RANK.replace("{of}", "s").replace("{id}", "ref")
    + f", {_UNREVIEWED}) WHEN 'mcp_server' THEN (CASE WHEN s.pins_alike = 1 THEN "
    + _server_rank({"{by_id}": "s.pin_id", "{by_name}": "s.pin_name"})
    + " ELSE (SELECT MAX("
    + _server_rank(_HELD_PIN_KEYS)
    + ") FROM fleet_held h WHERE h.type = s.type AND h.ref_key = s.ref_key "
    "AND h.release_key = s.release_key) END) END)"
)
_ROW_RANK = (
    "(CASE h.type WHEN 'skill' THEN COALESCE("
    + _SKILL_RANK.replace("{of}", "h").replace("{id}", "component_id")
    + f", {_UNREVIEWED}) WHEN 'mcp_server' THEN "
    + _server_rank(_HELD_PIN_KEYS)
    + " END)"
)

_SUMMARY_WHERE = f"""{{type_range}}
  (CAST(:search AS TEXT) IS NULL OR s.search LIKE :search ESCAPE '\\')
  AND (CAST(:rank AS INTEGER) IS NULL OR {_GROUP_RANK} = :rank)"""

# A type, or a status only some types can have, narrows the rows to those types' ranges of
# the primary key and of the list's index (a status filter judges only them).
_ANY_TYPE = ""
_SOME_TYPES = "s.type IN (:type_a, :type_b) AND"
_STATUS_TYPES = {
    "approved": ("skill", "mcp_server"),
    "revoked": ("skill", "mcp_server"),
    "unapproved": ("mcp_server",),
}
"""The types that can have each status (every other status is a skill's only)."""

# The page walks fleet_summary_by_name in the list's order and stops at its end; the total
# is one count of the same filter (an index scan without one).
_SUMMARY_COMPONENTS = f"""
SELECT s.type, s.ref, s.release, s.name, s.purl, s.agents, s.first_seen, s.last_seen,
  {_GROUP_RANK} AS status_rank, s.developers, s.hosts,
  (SELECT COUNT(*) FROM fleet_summary s WHERE {_SUMMARY_WHERE}) AS total
FROM fleet_summary s
WHERE {_SUMMARY_WHERE}
ORDER BY s.type{{C}}, s.name{{C}}, s.ref{{C}}, s.release_key{{C}}
LIMIT :limit OFFSET :offset
"""

_SUMMARY_AGENTS = f"""
SELECT h.agent_id, MIN(h.session_id), MIN(h.agbom_version), MIN(h.first_seen),
  MAX(h.seen_at), MAX({_ROW_RANK}), COUNT(*) OVER () AS total
FROM fleet_held h
WHERE h.type = :type AND h.ref_key = 'v' || :ref
  AND (h.release_key = 'v' || COALESCE(CAST(:version AS TEXT), '')
    OR (COALESCE(CAST(:version AS TEXT), '') = '' AND h.release_key = ''))
GROUP BY h.agent_id
ORDER BY h.agent_id{{C}}
LIMIT :limit OFFSET :offset
"""


# The overview's charts, each bounded: components by status judges each distinct component
# once (as a status filter does); pending approvals over time reads today's pending count
# from skills_by_status and each day's changes from the history's rows of the window
# (skill_history_by_at), never the whole history.
_STATUS_COUNTS = f"""
SELECT {_GROUP_RANK} AS status_rank, COUNT(*) FROM fleet_summary s GROUP BY status_rank
"""
_PENDING_NOW = "SELECT COUNT(*) FROM skills WHERE status = 'pending'"
_PENDING_CHANGES = """
SELECT substr(at, 1, 10) AS day,
  SUM(CASE WHEN to_status = 'pending' THEN 1 ELSE 0 END)
    - SUM(CASE WHEN from_status = 'pending' THEN 1 ELSE 0 END)
FROM skill_history WHERE at >= :since GROUP BY day
"""


@dataclass(frozen=True, slots=True)
class FleetSql:
    """The statements in one backend's dialect: the pages read from the summary; ``scan_*``
    is the definition the summary is kept equal to (every agent's latest AgBOM read whole,
    seconds in a large fleet: for tests and benchmarks, never a request)."""

    components: str
    components_of_types: str
    agents: str
    held_of_agent: str
    seen_of_agent: str
    delete_held: str
    fill_held: str
    move_seen: str
    rescan_seen: str
    mark_dirty: str
    recompute_dirty: tuple[str, ...]
    rebuild: tuple[str, ...]
    scan_components: str
    scan_agents: str
    agent_list: str
    versions: str
    status_counts: str
    pending_now: str
    pending_changes: str


def fleet_sql(
    *,
    held: str,
    json_rows: str,
    tiebreak: str,
    collate: str = "",
    pyformat: bool = False,
    position: str = "instr",
) -> FleetSql:
    """The statements with a backend's ``held`` fragment and ``json_rows`` (rows ``k`` of
    the JSON array ``:keys``). ``pyformat`` turns the ``:name`` placeholders into psycopg's
    ``%(name)s`` (before ``held`` goes in: it may hold a ``::`` cast). ``position``: the
    function that finds text in text, ``(string, part)`` (SQLite's ``instr``, PostgreSQL's
    ``strpos``)."""

    def build(template: str) -> str:
        text = template.replace("{json_rows}", json_rows).replace("{types}", _TYPES_IN)
        text = text.replace("{ranks}", _RANK_CASE)
        for status in ("approved", "revoked", "unapproved", "unreviewed"):
            text = text.replace("{" + status + "}", str(_RANK[status]))
        text = text.replace("{platform_h}", _platform("h.agent_id"))
        text = text.replace("{developer_h}", _developer("h.agent_id"))
        text = text.replace("{platform_a}", _platform("agent_id"))
        text = text.replace("{developer_a}", _developer("agent_id"))
        text = text.replace("{machine_a}", _machine("agent_id"))
        text = text.replace("{pos}", position)
        text = text.replace("{c}", collate).replace("{C}", collate)
        text = text.replace("{tiebreak}", tiebreak)
        if pyformat:
            text = re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", text.replace("%", "%%"))
        return text.replace("{held}", held)

    return FleetSql(
        components=build(_SUMMARY_COMPONENTS.replace("{type_range}", _ANY_TYPE)),
        components_of_types=build(_SUMMARY_COMPONENTS.replace("{type_range}", _SOME_TYPES)),
        agents=build(_SUMMARY_AGENTS),
        held_of_agent=build(_HELD_OF_AGENT),
        seen_of_agent=build(_SEEN_OF_AGENT),
        delete_held=build("DELETE FROM fleet_held WHERE agent_id = :agent"),
        fill_held=build(_fill_held(_ONE_AGENT)),
        move_seen=build(_MOVE_SEEN),
        rescan_seen=build(_RESCAN_SEEN),
        mark_dirty=build(_MARK_DIRTY),
        recompute_dirty=tuple(build(t) for t in _RECOMPUTE_DIRTY),
        rebuild=tuple(build(t) for t in _REBUILD),
        scan_components=build(_COMPONENTS),
        scan_agents=build(_AGENTS),
        agent_list=build(_AGENT_LIST),
        versions=build(_VERSIONS),
        status_counts=build(_STATUS_COUNTS),
        pending_now=build(_PENDING_NOW),
        pending_changes=build(_PENDING_CHANGES),
    )


Execute = Callable[[str, dict[str, Any]], Any]
"""A backend's way to run one statement with named parameters in its write transaction."""


def refresh_agent(execute: Execute, sql: FleetSql, agent_id: str) -> None:
    """Bring the summary up to ``agent_id``'s latest accepted AgBOM, in the transaction that
    saved it (on PostgreSQL under the lock that orders refreshes: see the backend).

    A component's summary is recomputed from its holders (an index range: every agent's row
    of a model they all use) only when this agent starts or stops holding it, or its rows of
    it name it otherwise; else only its first and last seen can move, and they are moved
    (see :func:`_moved`), or read again from its holders' times where that is not exact."""
    params = {"agent": agent_id}
    before = _held_by_key(execute(sql.held_of_agent, params).fetchall())
    seen = {tuple(r[:3]): (r[3], r[4], int(r[5])) for r in
            execute(sql.seen_of_agent, params).fetchall()}  # fmt: skip
    execute(sql.delete_held, params)
    execute(sql.fill_held, params)
    after = _held_by_key(execute(sql.held_of_agent, params).fetchall())
    dirty: list[tuple[Any, ...]] = []
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        named = {"type": key[0], "ref_key": key[1], "release_key": key[2]}
        if old == new:
            continue
        if old is None or new is None or old[0] != new[0] or key not in seen:
            dirty.append(key)
            continue
        moved = _moved(seen[key], old[1:], new[1:])
        if moved is None:  # its holders' times are read again, nothing else
            execute(sql.rescan_seen, named)
        elif moved != seen[key][:2]:
            execute(sql.move_seen, {**named, "first_seen": moved[0], "last_seen": moved[1]})
    if dirty:
        execute(sql.mark_dirty, {"keys": json.dumps(dirty)})
        for statement in sql.recompute_dirty:
            execute(statement, {})


Held = tuple[list[tuple[Any, ...]], Any, Any]
"""An agent's rows of one component: their identities (sorted), their least first seen and
their greatest last seen."""


def _held_by_key(rows: Sequence[Sequence[Any]]) -> dict[tuple[Any, ...], Held]:
    grouped: dict[tuple[Any, ...], list[Sequence[Any]]] = {}
    for row in rows:
        grouped.setdefault(tuple(row[:3]), []).append(row)
    held: dict[tuple[Any, ...], Held] = {}
    for key, group in grouped.items():
        identities = sorted((tuple(r[3:10]) for r in group), key=repr)
        first = [r[10] for r in group]
        least = None if None in first else min(first)
        held[key] = (identities, least, max(r[11] for r in group))
    return held


def _moved(summary: tuple[Any, Any, int], old: tuple[Any, Any], new: tuple[Any, Any]) -> Any:
    """A component's (first seen, last seen) once one holder's least first seen and greatest
    last seen went from ``old`` to ``new``, the other holders and the rows' identities
    unchanged (``summary``: the two and the count of holders before); ``None`` where the
    others' rows must be read (the holder had the extreme and moved it inwards, or a time is
    missing)."""
    if summary[2] == 1 and None not in new:
        return new  # the only holder: its times are the component's
    first = _extreme(summary[0], old[0], new[0], lambda a, b: a <= b)
    last = _extreme(summary[1], old[1], new[1], lambda a, b: a >= b)
    if first is None or last is None:
        return None
    return (first, last)


def _extreme(current: Any, old: Any, new: Any, beyond: Callable[[Any, Any], bool]) -> Any:
    """The new MIN (``beyond``: <=) or MAX (>=) of a column over every holder, from its
    current value and one holder's old and new value, or ``None`` if that takes reading
    the others."""
    if current is None or old is None or new is None:
        return None
    if beyond(new, current):
        return new  # at or past every other holder's value
    if old != current and beyond(current, old):
        return current  # another holder has the extreme, and this one stays short of it
    return None


def rebuild(execute: Execute, sql: FleetSql) -> None:
    """Recompute the whole summary from the stored versions."""
    for statement in sql.rebuild:
        execute(statement, {})


def components_params(checked: FleetFilter, now: str) -> dict[str, Any]:
    return {
        "type": checked.type,
        "rank": None if checked.status is None else _RANK[checked.status],
        "search": None if checked.search is None else _like(checked.search),
        "host": checked.host,
        "agent": None,
        "now": now,
        "limit": checked.limit,
        "offset": checked.offset,
    }


def agents_params(
    component: tuple[str, str, str | None], limit: int, offset: int, now: str
) -> dict[str, Any]:
    type, ref, version = component
    return {
        "type": type,
        "ref": ref,
        "version": version,
        "host": None,
        "agent": None,
        "now": now,
        "limit": limit,
        "offset": offset,
    }


_STATUS_OF_RANK = {r: s for s, r in _RANK.items()}


def component_row(row: Sequence[Any]) -> dict[str, Any]:
    """One row of :meth:`fleet_components`."""
    return {
        "type": row[0],
        "ref": row[1],
        "version": row[2],
        "name": row[3],
        "purl": row[4],
        "agents": int(row[5]),
        "first_seen": row[6],
        "last_seen": row[7],
        "status": None if row[8] is None else _STATUS_OF_RANK[int(row[8])],
        "developers": int(row[9]),
        "hosts": int(row[10]),
    }


def agent_row(row: Sequence[Any]) -> dict[str, Any]:
    """One agent of :meth:`fleet_component_agents`."""
    return {
        "agent_id": row[0],
        "session_id": row[1],
        "agbom_version": int(row[2]),
        "first_seen": row[3],
        "last_seen": row[4],
        "status": None if row[5] is None else _STATUS_OF_RANK[int(row[5])],
    }


def page(
    rows: Sequence[Sequence[Any]], total_at: int, limit: int, offset: int, key: str, entry: Any
) -> dict[str, Any]:
    """A page of rows with the total of the whole list (``None`` for a page past its end,
    where no row carries it)."""
    total = int(rows[0][total_at]) if rows else (0 if offset == 0 else None)
    return {"total": total, "limit": limit, "offset": offset, key: [entry(r) for r in rows]}


Run = Callable[[str, dict[str, Any]], Sequence[Sequence[Any]]]
"""A backend's way to run one statement with named parameters and fetch its rows."""


def list_components(
    run: Run, sql: FleetSql, now: str, *, type: Any, status: Any, search: Any, limit: Any,
    offset: Any, host: Any = None,
) -> dict[str, Any]:  # fmt: skip
    """:meth:`fleet_components` over a backend's ``run``. A host filter counts only that host
    platform's agents, which the summary (counts over every agent) cannot give: it reads the
    scan, bounded as before the summary but not within item 6's second at fleet scale."""
    checked = check_filter(type, status, search, limit, offset, host)
    params = components_params(checked, now)
    types = [t for t in FLEET_TYPES if checked.type in (None, t)]
    if checked.status is not None:
        types = [t for t in types if t in _STATUS_TYPES.get(checked.status, ("skill",))]
    if not types:  # no type can have that status
        rows: Sequence[Sequence[Any]] = []
    elif checked.host is not None:
        rows = run(sql.scan_components, params)
    elif len(types) == len(FLEET_TYPES):
        rows = run(sql.components, params)
    else:
        params.update(type_a=types[0], type_b=types[-1])
        rows = run(sql.components_of_types, params)
    return page(rows, 11, checked.limit, checked.offset, "components", component_row)


def list_agents(
    run: Run, sql: FleetSql, now: str, component: tuple[Any, Any, Any], limit: Any, offset: Any
) -> dict[str, Any]:
    """:meth:`fleet_component_agents` over a backend's ``run``."""
    named = check_component(*component)
    size, start = check_page(limit, offset)
    rows = run(sql.agents, agents_params(named, size, start, now))
    return page(rows, 6, size, start, "agents", agent_row)


# -- the agents of the fleet ---------------------------------------------------------------------

MAX_VERSIONS_PAGE = 50
"""Versions one timeline page may ask for: each is a diff of two stored documents."""
DEFAULT_VERSIONS_PAGE = 20
MAX_DIFF_ROWS = 200
"""Entries of one kind (added, removed, changed) a version's diff lists; the count is whole."""


def identity_of(agent_id: str) -> dict[str, str | None]:
    """``host``, ``developer`` and ``machine`` of an agent id, as the SQL reads them."""
    host, slash, rest = agent_id.partition("/")
    user, at, machine = rest.partition("@")
    if not slash or not at or not user:
        return {"host": host, "developer": None, "machine": None}
    return {"host": host, "developer": user, "machine": machine}


def _last_decision(text: Any) -> dict[str, Any] | None:
    """The recorded entry's decision, step and reasons (None when it holds none)."""
    import orjson

    try:
        entry = orjson.loads(text) if isinstance(text, str | bytes) else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("decision"), str):
        return None
    codes = entry.get("reason_codes")
    return {
        "decision": entry["decision"],
        "step_type": entry.get("step_type") if isinstance(entry.get("step_type"), str) else None,
        "reason_codes": [str(c) for c in codes][:20] if isinstance(codes, list) else [],
        "at": entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None,
        "entry_id": str(entry["entry_id"]) if entry.get("entry_id") is not None else None,
    }


def fleet_agent_row(row: Sequence[Any]) -> dict[str, Any]:
    """One agent of :meth:`fleet_agents`."""
    return {
        "agent_id": row[0],
        "host": row[1],
        "developer": row[2],
        "machine": row[3],
        "session_id": row[4],
        "agbom_version": int(row[5]),
        "last_seen": row[6],
        "components": {
            "skill": int(row[7]),
            "mcp_server": int(row[8]),
            "model": int(row[9]),
            "a2a_peer": int(row[10]),
        },
        "unapproved": int(row[11]),
        "last_decision": _last_decision(row[12]),
    }


def list_fleet_agents(
    run: Run, sql: FleetSql, now: str, *, host: Any, search: Any, unapproved: Any, limit: Any,
    offset: Any,
) -> dict[str, Any]:  # fmt: skip
    """:meth:`fleet_agents` over a backend's ``run``."""
    checked_host, text = check_host(host), check_search(search)
    if unapproved not in (None, True, False):
        raise StoreValueError("unapproved must be true or false")
    size, start = check_page(limit, offset)
    params = {
        "type": None,
        "host": checked_host,
        "agent": None,
        "search": None if text is None else _like(text),
        "unapproved": 1 if unapproved else None,
        "now": now,
        "limit": size,
        "offset": start,
    }
    rows = run(sql.agent_list, params)
    return page(rows, 13, size, start, "agents", fleet_agent_row)


def list_agent_components(run: Run, sql: FleetSql, now: str, agent_id: Any) -> list[Any]:
    """The fleet components of one agent's latest accepted AgBOM, with their status
    (:meth:`fleet_agent_components`): at most :data:`MAX_LIMIT` rows."""
    params = {
        "type": None,
        "rank": None,
        "search": None,
        "host": None,
        "agent": check_agent(agent_id),
        "now": now,
        "limit": MAX_LIMIT,
        "offset": 0,
    }
    return [component_row(r) for r in run(sql.scan_components, params)]


Load = Callable[[str, int], Any]
"""A backend's way to read one stored version's document (None when it is gone)."""


def _summary(component: Any) -> dict[str, Any]:
    digest = component.digest
    return {
        "id": component.id,
        "type": component.type.value,
        "name": component.get("name"),
        "version": component.version,
        "digest": f"{digest[0]}:{digest[1]}" if digest else None,
    }


def _fields(before: Any, after: Any) -> list[dict[str, Any]]:
    """The version and digest changes of one component under the same id, of any type
    (compute_diff flags those of skills, tools and MCP servers only; a model's matters here)."""
    out = []
    if before.version != after.version:
        out.append({"field": "version", "old": before.version, "new": after.version})
    digests = [_summary(c)["digest"] for c in (before, after)]
    if digests[0] != digests[1]:
        out.append({"field": "digest", "old": digests[0], "new": digests[1]})
    return out


def version_changes(before: Any, after: Any) -> dict[str, Any]:
    """What changed from the stored document ``before`` to ``after``: components added,
    removed, and changed (with each version or digest change), each list cut at
    :data:`MAX_DIFF_ROWS` with its whole count beside it; ``error`` when one no longer loads."""
    from agbom.errors import AgbomError
    from agbom.inventory import AgBOM, compute_diff

    try:
        old = AgBOM.from_document(dict(before), source="stored AgBOM")
        new = AgBOM.from_document(dict(after), source="stored AgBOM")
    except (AgbomError, ValueError, TypeError) as exc:
        return {"error": f"a stored version no longer loads: {str(exc)[:200]}"}
    diff = compute_diff(old, new)
    removed = [old.components[cid] for cid in diff.removed]
    changed = [{**_summary(c), "fields": _fields(old.components[c.id], c)} for c in diff.changed]
    return {
        "added": [_summary(c) for c in diff.added[:MAX_DIFF_ROWS]],
        "added_count": len(diff.added),
        "removed": [_summary(c) for c in removed[:MAX_DIFF_ROWS]],
        "removed_count": len(removed),
        "changed": changed[:MAX_DIFF_ROWS],
        "changed_count": len(changed),
        "header_changed": diff.header is not None,
    }


def list_agent_versions(
    run: Run, sql: FleetSql, load: Load, agent_id: Any, limit: Any, offset: Any
) -> dict[str, Any]:
    """:meth:`fleet_agent_versions` over a backend's ``run`` and ``load``: a page of the
    agent's AgBOM versions, newest first, each diffed against the accepted version in use
    when it came (``base``; None for the agent's first)."""
    agent = check_agent(agent_id)
    size = DEFAULT_VERSIONS_PAGE if limit is None else limit
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_VERSIONS_PAGE:
        raise StoreValueError(f"limit must be a whole number from 1 to {MAX_VERSIONS_PAGE}")
    size, start = check_page(size, offset)
    rows = run(sql.versions, {"agent": agent, "limit": size, "offset": start})
    documents: dict[tuple[str, int], Any] = {}

    def document(session_id: str, version: int) -> Any:
        key = (session_id, version)
        if key not in documents:
            documents[key] = load(session_id, version)
        return documents[key]

    out = []
    for row in rows:
        entry: dict[str, Any] = {
            "session_id": row[0],
            "version": int(row[1]),
            "created_at": row[2],
            "accepted": bool(row[3]),
            "agbom_hash": row[4],
            "base": None,
            "changes": None,
        }
        after = document(row[0], int(row[1]))
        if row[5] is not None:
            entry["base"] = {"session_id": row[5], "version": int(row[6])}
            before = document(row[5], int(row[6]))
            if before is not None and after is not None:
                entry["changes"] = version_changes(before, after)
        elif after is not None:
            entry["changes"] = version_changes({"components": []} | _header(after), after)
        out.append(entry)
    total = int(rows[0][7]) if rows else (0 if start == 0 else None)
    return {"agent_id": agent, "total": total, "limit": size, "offset": start, "versions": out}


def _header(document: Any) -> dict[str, Any]:
    """``document`` without its components: the first version's diff is all additions."""
    return {k: v for k, v in dict(document).items() if k != "components"}


class FleetReads:
    """The fleet's agent calls of a store (:meth:`fleet_agents`, :meth:`fleet_agent_components`,
    :meth:`fleet_agent_versions`), over what a backend gives: its statements
    (``_fleet_sql``), its way to run one (``_fleet_rows``, which holds whatever lock or
    error translation the backend needs), its clock (``_fleet_now``) and ``agbom_version``."""

    _fleet_sql: FleetSql

    def _fleet_rows(self, sql: str, params: dict[str, Any]) -> Sequence[Sequence[Any]]:
        raise NotImplementedError

    def _fleet_now(self) -> str:
        raise NotImplementedError

    def _fleet_document(self, session_id: str, version: int) -> Any:
        record = self.agbom_version(session_id, version)  # type: ignore[attr-defined]
        return None if record is None else record["document"]

    def fleet_agents(
        self,
        *,
        host: str | None = None,
        search: str | None = None,
        unapproved: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> dict[str, Any]:
        """The agents of the fleet and what their latest AgBOMs hold."""
        return list_fleet_agents(
            self._fleet_rows, self._fleet_sql, self._fleet_now(), host=host, search=search,
            unapproved=unapproved, limit=limit, offset=offset,
        )  # fmt: skip

    def fleet_agent_components(self, agent_id: str) -> list[dict[str, Any]]:
        """The fleet components of one agent's latest accepted AgBOM, with their status."""
        return list_agent_components(self._fleet_rows, self._fleet_sql, self._fleet_now(), agent_id)

    def fleet_agent_versions(
        self, agent_id: str, *, limit: int | None = None, offset: int | None = None
    ) -> dict[str, Any]:
        """A page of one agent's AgBOM versions, newest first, each with its diff."""
        return list_agent_versions(
            self._fleet_rows, self._fleet_sql, self._fleet_document, agent_id, limit, offset
        )


CHART_DAYS = 30
"""Days the pending-approvals chart covers, today included."""


def charts(run: Run, sql: FleetSql, now: datetime) -> dict[str, Any]:
    """:meth:`fleet_charts` over a backend's ``run``: the components in use by status (every
    status listed, with 0 for none; ``None``: types agbom does not review) and the pending
    skill approvals at the end of each of the last :data:`CHART_DAYS` days (UTC)."""
    stamp = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    counts = {None if r[0] is None else _STATUS_OF_RANK[int(r[0])]: int(r[1]) for r in
              run(sql.status_counts, {"now": stamp})}  # fmt: skip
    statuses: list[str | None] = [*STATUSES, None]
    today = now.astimezone(UTC).date()
    days = [today - timedelta(days=n) for n in range(CHART_DAYS - 1, -1, -1)]
    since = days[0].isoformat() + "T00:00:00"
    changes = {r[0]: int(r[1]) for r in run(sql.pending_changes, {"since": since})}
    pending = int(run(sql.pending_now, {})[0][0])
    series: list[dict[str, Any]] = []
    for day in reversed(days):  # back from today: each day ends where the next one began
        series.append({"day": day.isoformat(), "pending": pending})
        pending -= changes.get(day.isoformat(), 0)
    series.reverse()
    return {
        "components_by_status": [{"status": st, "count": counts.get(st, 0)} for st in statuses],
        "pending_by_day": series,
    }
