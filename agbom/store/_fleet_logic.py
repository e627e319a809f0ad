"""Components across the fleet, free of any database driver: the checks of a query's
filters and page, the statements in a backend's dialect, and the component list, its
agents and the overview's charts over a backend's way to run a statement.

What a fleet component is, and the scan that reads the fleet whole, are
:mod:`._fleet_scan`; the summary the pages read instead, and its refresh as AgBOMs are
saved, :mod:`._fleet_summary`; the reads about agents (the agents list, an agent's
timeline), :mod:`._fleet_agents`. This module joins them: :func:`fleet_sql` puts every
statement of the three in one backend's dialect, and the checks here are the ones all the
fleet's calls share.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agbom._identifiers import invisible_character
from agbom.store._decision_counts import DECISIONS_BY_DAY, DISPOSITIONS, TOP_DENIED_RULES
from agbom.store._fleet_scan import (
    AGENT_LIST,
    AGENTS,
    COMPONENTS,
    ONE_AGENT,
    RANK,
    RANK_CASE,
    SEVERITIES,
    SEVERITY_CASE,
    SEVERITY_RANK,
    STATUS_OF_RANK,
    TYPES_IN,
    VERSIONS,
    developer_of,
    machine_of,
    platform_of,
)
from agbom.store._fleet_scan import FLEET_TYPES as FLEET_TYPES  # what callers import here
from agbom.store._fleet_scan import STATUSES as STATUSES
from agbom.store._fleet_summary import (
    ANY_TYPE,
    HELD_OF_AGENT,
    MARK_DIRTY,
    MOVE_SEEN,
    REBUILD,
    RECOMPUTE_DIRTY,
    RESCAN_SEEN,
    SEEN_OF_AGENT,
    SOME_TYPES,
    STATUS_COUNTS,
    SUMMARY_AGENT_LIST,
    SUMMARY_AGENTS,
    SUMMARY_COMPONENTS,
    SummarySql,
    fill_agents,
    fill_held,
)
from agbom.store.interface import StoreValueError

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
    severity: str | None = None


def check_filter(
    type: Any = None, status: Any = None, search: Any = None, limit: Any = None,
    offset: Any = None, host: Any = None, severity: Any = None,
) -> FleetFilter:  # fmt: skip
    """Refuse a filter or a page the query must not run with, with the reason."""
    if type is not None and type not in FLEET_TYPES:
        raise StoreValueError(f"type must be one of {', '.join(FLEET_TYPES)}")
    if status is not None and status not in STATUSES:
        raise StoreValueError(f"status must be one of {', '.join(STATUSES)}")
    if severity is not None and severity not in SEVERITIES:
        raise StoreValueError(f"severity must be one of {', '.join(SEVERITIES)}")
    return FleetFilter(
        type, status, check_search(search), *check_page(limit, offset), check_host(host),
        severity,
    )  # fmt: skip


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


def like(text: str) -> str:
    """``text`` as a case-insensitive substring pattern of LIKE (with ESCAPE '\\')."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", text.lower()) + "%"


_STATUS_TYPES = {
    "approved": ("skill", "mcp_server"),
    "revoked": ("skill", "mcp_server"),
    "unapproved": ("mcp_server",),
}
"""The types that can have each status (every other status is a skill's only)."""

# The pending-approvals chart reads today's pending count from skills_by_status and each
# day's changes from the history's rows of the window (skill_history_by_at), never the
# whole history.
_PENDING_NOW = "SELECT COUNT(*) FROM skills WHERE status = 'pending'"
_PENDING_CHANGES = """
SELECT substr(at, 1, 10) AS day,
  SUM(CASE WHEN to_status = 'pending' THEN 1 ELSE 0 END)
    - SUM(CASE WHEN from_status = 'pending' THEN 1 ELSE 0 END)
FROM skill_history WHERE at >= :since GROUP BY day
"""


@dataclass(frozen=True, slots=True)
class FleetSql(SummarySql):
    """The statements in one backend's dialect: the summary's upkeep (:class:`SummarySql`),
    the pages read from the summary; ``scan_*`` is the definition the summary is kept equal
    to (every agent's latest AgBOM read whole, seconds in a large fleet: for tests and
    benchmarks, never a request)."""

    components: str
    components_of_types: str
    agents: str
    scan_components: str
    scan_agents: str
    agent_list: str
    scan_agent_list: str
    versions: str
    status_counts: str
    pending_now: str
    pending_changes: str
    decisions_by_day: str
    top_denied_rules: str


def fleet_sql(
    *,
    held: str,
    found: str,
    json_rows: str,
    tiebreak: str,
    collate: str = "",
    pyformat: bool = False,
    position: str = "instr",
    list_agg: str = "group_concat(DISTINCT rules)",
) -> FleetSql:
    """The statements with a backend's ``held`` and ``found`` fragments (see
    :mod:`._fleet_scan`; ``{severity_case}`` in ``found`` is the severities' ranks) and
    ``json_rows`` (rows ``k`` of the JSON array ``:keys``). ``pyformat`` turns the ``:name``
    placeholders into psycopg's ``%(name)s`` (before the fragments go in: they may hold a
    ``::`` cast). ``position``: the function that finds text in text, ``(string, part)``
    (SQLite's ``instr``, PostgreSQL's ``strpos``). ``list_agg``: the distinct ``rules`` of a
    group joined by commas."""

    def build(template: str) -> str:
        text = template.replace("{json_rows}", json_rows).replace("{types}", TYPES_IN)
        text = text.replace("{ranks}", RANK_CASE)
        for status in ("approved", "revoked", "unapproved", "unreviewed"):
            text = text.replace("{" + status + "}", str(RANK[status]))
        text = text.replace("{platform_h}", platform_of("h.agent_id"))
        text = text.replace("{developer_h}", developer_of("h.agent_id"))
        text = text.replace("{platform_a}", platform_of("agent_id"))
        text = text.replace("{developer_a}", developer_of("agent_id"))
        text = text.replace("{machine_a}", machine_of("agent_id"))
        text = text.replace("{pos}", position)
        text = text.replace("{c}", collate).replace("{C}", collate)
        text = text.replace("{tiebreak}", tiebreak)
        text = text.replace("{list_agg}", list_agg)
        text = text.replace("{max_rules_text}", str(MAX_RULES_TEXT))
        if pyformat:
            text = re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", text.replace("%", "%%"))
        text = text.replace("{found}", found.replace("{severity_case}", SEVERITY_CASE))
        return text.replace("{held}", held)

    return FleetSql(
        components=build(SUMMARY_COMPONENTS.replace("{type_range}", ANY_TYPE)),
        components_of_types=build(SUMMARY_COMPONENTS.replace("{type_range}", SOME_TYPES)),
        agents=build(SUMMARY_AGENTS),
        held_of_agent=build(HELD_OF_AGENT),
        seen_of_agent=build(SEEN_OF_AGENT),
        delete_held=build("DELETE FROM fleet_held WHERE agent_id = :agent"),
        fill_held=build(fill_held(ONE_AGENT)),
        delete_agent=build("DELETE FROM fleet_agents WHERE agent_id = :agent"),
        fill_agent=build(fill_agents(ONE_AGENT)),
        move_seen=build(MOVE_SEEN),
        rescan_seen=build(RESCAN_SEEN),
        mark_dirty=build(MARK_DIRTY),
        recompute_dirty=tuple(build(t) for t in RECOMPUTE_DIRTY),
        rebuild=tuple(build(t) for t in REBUILD),
        scan_components=build(COMPONENTS),
        scan_agents=build(AGENTS),
        agent_list=build(SUMMARY_AGENT_LIST),
        scan_agent_list=build(AGENT_LIST),
        versions=build(VERSIONS),
        status_counts=build(STATUS_COUNTS),
        pending_now=build(_PENDING_NOW),
        pending_changes=build(_PENDING_CHANGES),
        decisions_by_day=build(DECISIONS_BY_DAY),
        top_denied_rules=build(TOP_DENIED_RULES),
    )


def components_params(checked: FleetFilter, now: str) -> dict[str, Any]:
    return {
        "type": checked.type,
        "rank": None if checked.status is None else RANK[checked.status],
        "severity": None if checked.severity is None else SEVERITY_RANK[checked.severity],
        "search": None if checked.search is None else like(checked.search),
        "host": checked.host,
        "platform": "" if checked.host is None else "h" + checked.host,
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
        "status": None if row[8] is None else STATUS_OF_RANK[int(row[8])],
        "developers": int(row[9]),
        "hosts": int(row[10]),
        "severity": SEVERITIES[int(row[11]) - 1] if row[11] in SEVERITY_RANK.values() else None,
        "findings": rule_ids(row[12]),
    }


_RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
MAX_RULES_TEXT = 4096
"""Characters of a component's rule ids the summary keeps (its holders' lists joined)."""
MAX_RULES_LISTED = 20
"""Rule ids a component's row lists (the first, sorted)."""


def rule_ids(text: Any) -> list[str]:
    """The distinct rule ids of the comma-joined lists ``text``, sorted, at most
    :data:`MAX_RULES_LISTED`: what is no rule id (hostile, or cut at
    :data:`MAX_RULES_TEXT`) is left out."""
    if not isinstance(text, str):
        return []
    parts = text.split(",")
    if len(text) >= MAX_RULES_TEXT:
        parts.pop()  # cut by the summary: its last id may be part of one
    found = {part for part in parts if _RULE_ID.fullmatch(part)}
    return sorted(found)[:MAX_RULES_LISTED]


def agent_row(row: Sequence[Any]) -> dict[str, Any]:
    """One agent of :meth:`fleet_component_agents`."""
    return {
        "agent_id": row[0],
        "session_id": row[1],
        "agbom_version": int(row[2]),
        "first_seen": row[3],
        "last_seen": row[4],
        "status": None if row[5] is None else STATUS_OF_RANK[int(row[5])],
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
    offset: Any, host: Any = None, severity: Any = None,
) -> dict[str, Any]:  # fmt: skip
    """:meth:`fleet_components` over a backend's ``run``. A host filter reads the summary's
    rows of that host platform (counted over its agents alone), the others its rows over
    every agent."""
    checked = check_filter(type, status, search, limit, offset, host, severity)
    params = components_params(checked, now)
    types = [t for t in FLEET_TYPES if checked.type in (None, t)]
    if checked.status is not None:
        types = [t for t in types if t in _STATUS_TYPES.get(checked.status, ("skill",))]
    if not types:  # no type can have that status
        rows: Sequence[Sequence[Any]] = []
    elif len(types) == len(FLEET_TYPES):
        rows = run(sql.components, params)
    else:
        params.update(type_a=types[0], type_b=types[-1])
        rows = run(sql.components_of_types, params)
    return page(rows, 13, checked.limit, checked.offset, "components", component_row)


def list_agents(
    run: Run, sql: FleetSql, now: str, component: tuple[Any, Any, Any], limit: Any, offset: Any
) -> dict[str, Any]:
    """:meth:`fleet_component_agents` over a backend's ``run``."""
    named = check_component(*component)
    size, start = check_page(limit, offset)
    rows = run(sql.agents, agents_params(named, size, start, now))
    return page(rows, 6, size, start, "agents", agent_row)


CHART_DAYS = 30
"""Days the charts over time cover, today included."""


def charts(run: Run, sql: FleetSql, now: datetime) -> dict[str, Any]:
    """:meth:`fleet_charts` over a backend's ``run``: the components in use by status (every
    status listed, with 0 for none; ``None``: types agbom does not review), the pending
    skill approvals at the end of each of the last :data:`CHART_DAYS` days (UTC), the
    decisions recorded each of those days by disposition, and the rules that denied most
    over them (:mod:`._decision_counts`)."""
    stamp = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    counts = {None if r[0] is None else STATUS_OF_RANK[int(r[0])]: int(r[1]) for r in
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
    window = {"since": days[0].isoformat(), "until": today.isoformat()}
    decided = {(r[0], r[1]): int(r[2]) for r in run(sql.decisions_by_day, window)}
    return {
        "components_by_status": [{"status": st, "count": counts.get(st, 0)} for st in statuses],
        "pending_by_day": series,
        "decisions_by_day": [
            {"day": d.isoformat(), **{k: decided.get((d.isoformat(), k), 0) for k in DISPOSITIONS}}
            for d in days
        ],
        "top_denied_rules": [
            {"rule": r[0], "count": int(r[1])} for r in run(sql.top_denied_rules, window)
        ],
    }
