"""The agents of the fleet, free of any database driver: the list of agents with what each
one's latest accepted AgBOM holds, one agent's components, and its timeline of AgBOM
versions, each diffed against the version in use when it came.

These are the reads about agents rather than components; they run the statements of
:mod:`._fleet_scan` in a backend's dialect (:class:`._fleet_logic.FleetSql`) and share the
component list's checks and pages (:mod:`._fleet_logic`). A backend takes the calls by
deriving from :class:`FleetReads`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agbom.store._fleet_logic import (
    MAX_LIMIT,
    FleetSql,
    Run,
    check_agent,
    check_host,
    check_page,
    check_search,
    component_row,
    like,
    page,
)
from agbom.store.interface import StoreValueError

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
        "search": None if text is None else like(text),
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
        "severity": None,
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
