"""The Agents and Advisories pages and the fleet sections of an agent's page: one row per
agent (``Store.fleet_agents``), what one agent runs now with each component's status, its
last decisions and its AgBOM versions as a timeline of diffs (``Store.fleet_agent_versions``),
and the components that advisories name (``serve --osv``, agbom/advisories/fleet.py).

Values come from the query string and are checked by the store (a bad one is a 400 page
saying why); pages are numbered and bounded, so no page reads more than one page's rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agbom.review.components import KNOWN_HOSTS, PAGE_ROWS, _page_number, _pages
from agbom.store import Store, StoreValueError
from agbom.store._fleet_agents import DEFAULT_VERSIONS_PAGE

LAST_DECISIONS = 10
"""Decisions an agent's page lists (the decision log has them all)."""


def agents_page(store: Store, get: Callable[[str], str]) -> dict[str, Any]:
    """What ``agents.html`` shows for the query ``get`` reads (empty: any)."""
    host, text = get("host") or None, get("q") or None
    flag = get("unapproved")
    if flag not in ("", "1"):
        raise StoreValueError("unapproved must be 1 or absent")
    number = _page_number(get("page"))
    found = store.fleet_agents(
        host=host,
        search=text,
        unapproved=True if flag else None,
        limit=PAGE_ROWS,
        offset=(number - 1) * PAGE_ROWS,
    )
    return {
        "rows": found["agents"],
        "total": found["total"],
        "first": (number - 1) * PAGE_ROWS + 1,
        "host": host or "",
        "text": text or "",
        "unapproved": bool(flag),
        "hosts": KNOWN_HOSTS,
        "pages": _pages(found["total"], number),
    }


def agent_fleet_sections(
    store: Store, agent_id: str, get: Callable[[str], str], decisions: Callable[[], Any]
) -> dict[str, Any]:
    """What an agent's page adds for the fleet: the components its latest accepted AgBOM
    holds with their status, its last decisions, and a page of its AgBOM timeline
    (``vpage``, :data:`DEFAULT_VERSIONS_PAGE` versions a page)."""
    number = _page_number(get("vpage"))
    size = DEFAULT_VERSIONS_PAGE
    timeline = store.fleet_agent_versions(agent_id, limit=size, offset=(number - 1) * size)
    total = timeline["total"]
    last = max(1, -(-total // size)) if total is not None else None
    held = store.fleet_agent_components(agent_id)
    return {
        "held": held,
        "unapproved": [c for c in held if c["status"] not in (None, "approved")],
        "decisions": decisions()[:LAST_DECISIONS],
        "versions": timeline["versions"],
        "versions_total": total,
        "versions_first": (number - 1) * size + 1,
        "versions_pages": {
            "number": number,
            "last": last,
            "previous": number - 1 if number > 1 else None,
            "next": number + 1 if last is not None and number < last else None,
        },
    }


def advisories_page(store: Store, source: Any, get: Callable[[str], str]) -> dict[str, Any]:
    """What ``advisories.html`` shows: the components advisories name, the most severe
    first (``source`` None: ``serve`` was started without ``--osv``)."""
    from agbom.advisories.fleet import fleet_advisories
    from agbom.advisories.osv import SEVERITIES

    severity = get("severity") or None
    number = _page_number(get("page"))
    found = (
        fleet_advisories(
            store, source, severity=severity, limit=PAGE_ROWS, offset=(number - 1) * PAGE_ROWS
        )
        if source is not None
        else None
    )
    if source is None and severity is not None and severity not in SEVERITIES:
        raise StoreValueError(f"severity must be one of {', '.join(SEVERITIES)}")
    total = None if found is None else found["total"]
    return {
        "configured": source is not None,
        "found": found,
        "rows": [] if found is None else found["components"],
        "total": total,
        "first": (number - 1) * PAGE_ROWS + 1,
        "severity": severity or "",
        "severities": SEVERITIES,
        "pages": _pages(total if total else 0, number),
    }
