"""The Components pages: the distinct components of every agent's latest accepted AgBOM
(``Store.fleet_components``), filtered by a GET form and paged, and the agents that use one
of them. Values come from the query string and are checked here (a bad one is a 400 page
saying why); the store checks them again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agbom.store import Store, StoreValueError
from agbom.store._fleet_logic import FLEET_TYPES, MAX_OFFSET, STATUSES, check_filter
from agbom.store._fleet_scan import SEVERITIES

PAGE_ROWS = 100
KNOWN_HOSTS = (
    *("claude-code", "codex", "copilot", "cursor", "gemini-cli", "meerkat", "opencode"),
    *("oscova", "windsurf"),
)
"""Host platforms the forms offer: the runtimes agbom/adapters serves (a sibling layer, so
named here; a test holds the two equal). Another name may be given in the URL."""
MAX_PAGE_NUMBER = MAX_OFFSET // PAGE_ROWS + 1


def _page_number(text: str) -> int:
    if not text:
        return 1
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        raise StoreValueError("page must be a whole number")
    number = int(text)
    if not 1 <= number <= MAX_PAGE_NUMBER:
        raise StoreValueError(f"page must be from 1 to {MAX_PAGE_NUMBER}")
    return number


def _pages(total: int | None, number: int) -> dict[str, Any]:
    last = max(1, -(-total // PAGE_ROWS)) if total is not None else None
    return {
        "number": number,
        "last": last,
        "previous": number - 1 if number > 1 else None,
        "next": number + 1 if last is not None and number < last else None,
    }


def components_page(store: Store, get: Callable[[str], str]) -> dict[str, Any]:
    """What ``components.html`` shows for the query ``get`` reads (empty: any)."""
    type_, status, text = get("type") or None, get("status") or None, get("q") or None
    host, severity = get("host") or None, get("severity") or None
    number = _page_number(get("page"))
    checked = check_filter(type_, status, text, PAGE_ROWS, (number - 1) * PAGE_ROWS, host, severity)
    found = store.fleet_components(
        type=checked.type,
        status=checked.status,
        search=checked.search,
        limit=checked.limit,
        offset=checked.offset,
        host=checked.host,
        severity=checked.severity,
    )
    return {
        "rows": found["components"],
        "total": found["total"],
        "first": checked.offset + 1,
        "type": type_ or "",
        "status": status or "",
        "text": text or "",
        "host": host or "",
        "severity": severity or "",
        "severities": SEVERITIES,
        "hosts": KNOWN_HOSTS,
        "types": FLEET_TYPES,
        "statuses": STATUSES,
        "pages": _pages(found["total"], number),
    }


def component_agents_page(store: Store, get: Callable[[str], str]) -> dict[str, Any]:
    """What ``component_agents.html`` shows: the agents of the component the query names."""
    type_, ref, version = get("type"), get("ref"), get("version") or None
    number = _page_number(get("page"))
    found = store.fleet_component_agents(
        type_, ref, version, limit=PAGE_ROWS, offset=(number - 1) * PAGE_ROWS
    )
    return {
        "rows": found["agents"],
        "total": found["total"],
        "first": (number - 1) * PAGE_ROWS + 1,
        "type": type_,
        "ref": ref,
        "version": version,
        "pages": _pages(found["total"], number),
    }
