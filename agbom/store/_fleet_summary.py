"""The fleet summary (SQLite v13, PostgreSQL v7), free of any database driver: its tables'
statements, the pages' reads of them, and the refresh that keeps them equal to the scan
(:mod:`._fleet_scan`) as AgBOMs are saved.

The scan reads every agent's latest AgBOM whole, seconds in a large fleet; the summary is
kept in each save's transaction so that a page reads ranges of indexes instead. Its tables
are filled from the scan's own ``keyed`` rows, restricted to one agent, so the two cannot
drift apart in what they call a component; tests/store/test_store_fleet_summary.py compares
them on random fleets. :mod:`._fleet_logic` puts these statements in a backend's dialect.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agbom.store._fleet_scan import (
    EVERY_AGENT,
    KEYED,
    LATEST,
    developer_of,
    machine_of,
    platform_of,
)

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
    "ref, release, ref_key, release_key, purl, digest_alg, digest_value, severity, rules"
)
_KEY = "type, ref_key, release_key"


def fill_held(agents: str) -> str:
    return (
        f"INSERT INTO fleet_held ({_HELD_COLUMNS})"
        + agents
        + KEYED.replace("{type_filter}", "").replace("{pick_filter}", "")
        + """
SELECT agent_id, session_id, agbom_version, seen_at, first_seen, component_id, type, name,
  ref, release, CASE WHEN ref IS NULL THEN '' ELSE 'v' || ref END,
  CASE WHEN release IS NULL THEN '' ELSE 'v' || release END, purl, digest_alg, digest_value,
  severity, rules
FROM keyed"""
    )


# ``pins_alike``: 1 when every row of the component has the same pin keys (its id and its
# name, trimmed and lowercased, as server_pins keys them), kept in ``pin_id`` and
# ``pin_name``: its status is then theirs, two primary-key reads.
# ``search``: what a search looks in (the name, the ref, the purl), lowercased and joined by
# a line break, which a search never holds (check_filter refuses control characters): one
# LIKE per row matches exactly where one of the three would.
# ``severity`` and ``rules``: its holders' worst finding and their rule lists (a reader
# splits, deduplicates and sorts them).
# ``platform``: '' for the row over every holder, 'h' and a host platform for the row over
# that platform's holders (what a host filter lists: the scan's filter on agent ids, as
# :func:`platform_of` reads them; the 'h' keeps an id's empty platform from the '' row).
_HOST_KEY = "'h' || " + platform_of("agent_id")
SUMMARIZE = f"""
INSERT INTO fleet_summary (platform, {_KEY}, ref, release, name, purl, agents, first_seen,
  last_seen, digest_alg, digest_value, search, pins_alike, pin_id, pin_name, developers, hosts,
  severity, rules)
SELECT {{platform}}, {_KEY}, MIN(ref), MIN(release), MIN(name), MIN(purl),
  COUNT(DISTINCT agent_id),
  MIN(first_seen), MAX(seen_at), MIN(digest_alg), MIN(digest_value),
  lower(COALESCE(MIN(name), '')) || '\n' || lower(COALESCE(MIN(ref), '')) || '\n'
    || lower(COALESCE(MIN(purl), '')),
  CASE WHEN MIN(lower(trim(component_id))) = MAX(lower(trim(component_id)))
    AND (COUNT(name) = 0 OR (COUNT(name) = COUNT(*)
      AND MIN(lower(trim(name))) = MAX(lower(trim(name))))) THEN 1 ELSE 0 END,
  MIN(lower(trim(component_id))), MIN(lower(trim(name))),
  COUNT(DISTINCT {developer_of("agent_id")}), COUNT(DISTINCT {platform_of("agent_id")}),
  MAX(severity), substr({{list_agg}}, 1, {{max_rules_text}})
FROM fleet_held {{where}} GROUP BY {{platform}}, {_KEY}"""


def summarize(where: str) -> tuple[str, str]:
    """The rows over every holder and those of each host platform, of the components
    ``where`` selects from fleet_held (the whole of it when empty)."""
    return (
        SUMMARIZE.replace("{where}", where).replace("GROUP BY {platform}, ", "GROUP BY ")
        .replace("{platform}", "''"),
        SUMMARIZE.replace("{where}", where).replace("{platform}", _HOST_KEY),
    )  # fmt: skip


_DIRTY = f"({_KEY}) IN (SELECT {_KEY} FROM fleet_dirty)"

# One agent's refresh, in its save's transaction (refresh_agent): its rows of fleet_held
# are read, replaced by those of its latest accepted version, and read again; a component
# whose holders or whose rows' identity changed is recomputed from its holders (gone when
# none is left: each of its rows), and one the agent held before and holds now, alike, has
# the first and last seen of its two rows the agent counts in (every holder's, its host
# platform's) moved where that is exact (else read again from those holders).
_IDENTITY = "component_id, name, ref, release, purl, digest_alg, digest_value, severity, rules"
_IDENTITIES = len(_IDENTITY.split(","))
HELD_OF_AGENT = (
    f"SELECT {_KEY}, {_IDENTITY}, first_seen, seen_at FROM fleet_held WHERE agent_id = :agent"
)
SEEN_OF_AGENT = (
    f"SELECT platform, {_KEY}, first_seen, last_seen, agents FROM fleet_summary "
    f"WHERE platform IN ('', :platform) AND ({_KEY}) IN "
    f"(SELECT {_KEY} FROM fleet_held WHERE agent_id = :agent)"
)
_PK = "platform = :platform AND type = :type AND ref_key = :ref_key AND release_key = :release_key"
MOVE_SEEN = f"UPDATE fleet_summary SET first_seen = :first_seen, last_seen = :last_seen WHERE {_PK}"
_OF_HOLDERS = (
    "FROM fleet_held h WHERE h.type = :type AND h.ref_key = :ref_key AND h.release_key = "
    ":release_key AND (CAST(:platform AS TEXT) = '' OR 'h' || "
    + platform_of("h.agent_id")
    + " = :platform)"
)
RESCAN_SEEN = (
    f"UPDATE fleet_summary SET first_seen = (SELECT MIN(h.first_seen) {_OF_HOLDERS}), "
    f"last_seen = (SELECT MAX(h.seen_at) {_OF_HOLDERS}) WHERE {_PK}"
)
# {json_rows}: the backend's rows ``k`` of the JSON array ``:keys`` (one statement for every
# dirty component: a round trip each cost PostgreSQL more than the recompute saved).
MARK_DIRTY = (
    f"INSERT INTO fleet_dirty ({_KEY}) SELECT j.k ->> 0, j.k ->> 1, j.k ->> 2 FROM "
    "({json_rows}) j"
)
RECOMPUTE_DIRTY = (
    f"DELETE FROM fleet_summary WHERE {_DIRTY}",
    *summarize(f"WHERE {_DIRTY}"),
    "DELETE FROM fleet_dirty",
)


def fill_agents(agents: str) -> str:
    """``fleet_agents``: each agent's latest accepted version (SQLite 16, PostgreSQL 10), the
    agents list's rows, in the agents' order (its primary key)."""
    return (
        "INSERT INTO fleet_agents (agent_id, session_id, agbom_version, seen_at)"
        + agents
        + LATEST.replace("{pick_filter}", "")
        + "\nSELECT agent_id, session_id, version, created_at FROM latest"
    )


REBUILD = (
    "DELETE FROM fleet_dirty",
    "DELETE FROM fleet_summary",
    "DELETE FROM fleet_held",
    "DELETE FROM fleet_agents",
    fill_held(EVERY_AGENT),
    fill_agents(EVERY_AGENT),
    *summarize(""),
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
GROUP_RANK = (
    "(CASE s.type WHEN 'skill' THEN COALESCE("
    + _SKILL_RANK.replace("{of}", "s").replace("{id}", "ref")
    + f", {_UNREVIEWED}) WHEN 'mcp_server' THEN (CASE WHEN s.pins_alike = 1 THEN "
    + _server_rank({"{by_id}": "s.pin_id", "{by_name}": "s.pin_name"})
    + " ELSE (SELECT MAX("
    + _server_rank(_HELD_PIN_KEYS)
    + ") FROM fleet_held h WHERE h.type = s.type AND h.ref_key = s.ref_key "
    "AND h.release_key = s.release_key AND (s.platform = '' OR 'h' || "
    + platform_of("h.agent_id")
    + " = s.platform)) END) END)"
)
ROW_RANK = (
    "(CASE h.type WHEN 'skill' THEN COALESCE("
    + _SKILL_RANK.replace("{of}", "h").replace("{id}", "component_id")
    + f", {_UNREVIEWED}) WHEN 'mcp_server' THEN "
    + _server_rank(_HELD_PIN_KEYS)
    + " END)"
)

_SUMMARY_WHERE = f"""s.platform = :platform AND {{type_range}}
  (CAST(:search AS TEXT) IS NULL OR s.search LIKE :search ESCAPE '\\')
  AND (CAST(:severity AS INTEGER) IS NULL OR s.severity >= :severity)
  AND (CAST(:rank AS INTEGER) IS NULL OR {GROUP_RANK} = :rank)"""

# A type, or a status only some types can have, narrows the rows to those types' ranges of
# the primary key and of the list's index (a status filter judges only them).
ANY_TYPE = ""
SOME_TYPES = "s.type IN (:type_a, :type_b) AND"

# The page walks fleet_summary_by_name in the list's order and stops at its end; the total
# is one count of the same filter (an index scan without one).
SUMMARY_COMPONENTS = f"""
SELECT s.type, s.ref, s.release, s.name, s.purl, s.agents, s.first_seen, s.last_seen,
  {GROUP_RANK} AS status_rank, s.developers, s.hosts, s.severity, s.rules,
  (SELECT COUNT(*) FROM fleet_summary s WHERE {_SUMMARY_WHERE}) AS total
FROM fleet_summary s
WHERE {_SUMMARY_WHERE}
ORDER BY s.platform{{C}}, s.type{{C}}, s.name{{C}}, s.ref{{C}}, s.release_key{{C}}
LIMIT :limit OFFSET :offset
"""

SUMMARY_AGENTS = f"""
SELECT h.agent_id, MIN(h.session_id), MIN(h.agbom_version), MIN(h.first_seen),
  MAX(h.seen_at), MAX({ROW_RANK}), COUNT(*) OVER () AS total
FROM fleet_held h
WHERE h.type = :type AND h.ref_key = 'v' || :ref
  AND (h.release_key = 'v' || COALESCE(CAST(:version AS TEXT), '')
    OR (COALESCE(CAST(:version AS TEXT), '') = '' AND h.release_key = ''))
GROUP BY h.agent_id
ORDER BY h.agent_id{{C}}
LIMIT :limit OFFSET :offset
"""


# The agents list (fleet_agents) in its order, its filters on each agent's row (a host
# platform is a range of ids: '/' sorts just before '0'), "not approved" an EXISTS that
# stops at an agent's first row not approved; only the page's agents have their rows
# counted and judged, and their last decision read.
_NOT_APPROVED = "h.type IN ('skill', 'mcp_server') AND " + ROW_RANK + " <> {approved}"
SUMMARY_AGENT_LIST = f"""
WITH listed AS (
  SELECT a.agent_id, a.session_id, a.agbom_version, a.seen_at, COUNT(*) OVER () AS total
  FROM fleet_agents a
  WHERE (CAST(:host AS TEXT) IS NULL OR a.agent_id = :host
      OR (a.agent_id >= CAST(:host AS TEXT) || '/' AND a.agent_id < CAST(:host AS TEXT) || '0'))
    AND (CAST(:search AS TEXT) IS NULL OR lower(a.agent_id) LIKE :search ESCAPE '\\')
    AND (CAST(:unapproved AS INTEGER) IS NULL OR EXISTS (
      SELECT 1 FROM fleet_held h WHERE h.agent_id = a.agent_id AND {_NOT_APPROVED}))
  ORDER BY a.agent_id{{C}}
  LIMIT :limit OFFSET :offset),
counted AS (
  SELECT h.agent_id,
    COUNT(CASE WHEN h.type = 'skill' THEN 1 END) AS skills,
    COUNT(CASE WHEN h.type = 'mcp_server' THEN 1 END) AS servers,
    COUNT(CASE WHEN h.type = 'model' THEN 1 END) AS models,
    COUNT(CASE WHEN h.type = 'a2a_peer' THEN 1 END) AS peers,
    COUNT(CASE WHEN {_NOT_APPROVED} THEN 1 END) AS unapproved
  FROM listed l JOIN fleet_held h ON h.agent_id = l.agent_id
  GROUP BY h.agent_id)
SELECT l.agent_id, {platform_of("l.agent_id")}, {developer_of("l.agent_id")},
  {machine_of("l.agent_id")}, l.session_id, l.agbom_version, l.seen_at,
  COALESCE(n.skills, 0), COALESCE(n.servers, 0), COALESCE(n.models, 0), COALESCE(n.peers, 0),
  COALESCE(n.unapproved, 0),
  (SELECT e.entry FROM chain_entries e WHERE e.session_id = l.session_id
    ORDER BY e.seq DESC LIMIT 1) AS last_entry,
  l.total
FROM listed l LEFT JOIN counted n ON n.agent_id = l.agent_id
ORDER BY l.agent_id{{C}}
"""


# The overview's chart of components by status judges each distinct component once (as a
# status filter does).
STATUS_COUNTS = f"""
SELECT {GROUP_RANK} AS status_rank, COUNT(*) FROM fleet_summary s WHERE s.platform = ''
GROUP BY status_rank
"""


@dataclass(frozen=True, slots=True)
class SummarySql:
    """The statements that keep the summary, in one backend's dialect (the whole set,
    :class:`._fleet_logic.FleetSql`, adds the reads)."""

    held_of_agent: str
    seen_of_agent: str
    delete_held: str
    fill_held: str
    delete_agent: str
    fill_agent: str
    move_seen: str
    rescan_seen: str
    mark_dirty: str
    recompute_dirty: tuple[str, ...]
    rebuild: tuple[str, ...]


Execute = Callable[[str, dict[str, Any]], Any]
"""A backend's way to run one statement with named parameters in its write transaction."""


def refresh_agent(execute: Execute, sql: SummarySql, agent_id: str) -> None:
    """Bring the summary up to ``agent_id``'s latest accepted AgBOM, in the transaction that
    saved it (on PostgreSQL under the lock that orders refreshes: see the backend).

    A component's summary is recomputed from its holders (an index range: every agent's row
    of a model they all use) only when this agent starts or stops holding it, or its rows of
    it name it otherwise; else only its first and last seen can move, and they are moved
    (see :func:`_moved`), or read again from its holders' times where that is not exact: in
    its row over every holder and in that of the agent's host platform."""
    host = "h" + host_platform(agent_id)
    params = {"agent": agent_id, "platform": host}
    before = _held_by_key(execute(sql.held_of_agent, params).fetchall())
    seen = {tuple(r[:4]): (r[4], r[5], int(r[6])) for r in
            execute(sql.seen_of_agent, params).fetchall()}  # fmt: skip
    execute(sql.delete_held, params)
    execute(sql.fill_held, params)
    execute(sql.delete_agent, params)
    execute(sql.fill_agent, params)
    after = _held_by_key(execute(sql.held_of_agent, params).fetchall())
    dirty: list[tuple[Any, ...]] = []
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        rows = [("", *key), (host, *key)]
        if old == new:
            continue
        if old is None or new is None or old[0] != new[0] or not all(r in seen for r in rows):
            dirty.append(key)
            continue
        for row in rows:
            named = {"platform": row[0], "type": key[0], "ref_key": key[1], "release_key": key[2]}
            moved = _moved(seen[row], old[1:], new[1:])
            if moved is None:  # its holders' times are read again, nothing else
                execute(sql.rescan_seen, named)
            elif moved != seen[row][:2]:
                execute(sql.move_seen, {**named, "first_seen": moved[0], "last_seen": moved[1]})
    if dirty:
        execute(sql.mark_dirty, {"keys": json.dumps(dirty)})
        for statement in sql.recompute_dirty:
            execute(statement, {})


def host_platform(agent_id: str) -> str:
    """What :func:`platform_of` reads in SQL: the agent id before its first ``/`` (the whole
    id when it has none)."""
    return agent_id.partition("/")[0]


Held = tuple[list[tuple[Any, ...]], Any, Any]
"""An agent's rows of one component: their identities (sorted), their least first seen and
their greatest last seen."""


def _held_by_key(rows: Sequence[Sequence[Any]]) -> dict[tuple[Any, ...], Held]:
    grouped: dict[tuple[Any, ...], list[Sequence[Any]]] = {}
    for row in rows:
        grouped.setdefault(tuple(row[:3]), []).append(row)
    held: dict[tuple[Any, ...], Held] = {}
    for key, group in grouped.items():
        end = 3 + _IDENTITIES  # (the key, the identity, first and last seen)
        identities = sorted((tuple(r[3:end]) for r in group), key=repr)
        first = [r[end] for r in group]
        least = None if None in first else min(first)
        held[key] = (identities, least, max(r[end + 1] for r in group))
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


def rebuild(execute: Execute, sql: SummarySql) -> None:
    """Recompute the whole summary from the stored versions."""
    for statement in sql.rebuild:
        execute(statement, {})
