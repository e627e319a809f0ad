"""The fleet routes (docs/api.md; the store's queries are :mod:`agbom.store._fleet_logic`):
``GET /v1/fleet/components`` and ``/v1/fleet/components/agents``, the distinct components of
every agent's latest accepted AgBOM and the agents that use one of them;
``GET /v1/fleet/agents``, one row per agent, with ``/v1/fleet/agents/components`` (what one
runs now) and ``/v1/fleet/agents/versions`` (its AgBOM timeline with diffs);
``GET /v1/fleet/advisories``, the components a ``serve --osv`` advisory names;
``GET /v1/fleet/charts``, the numbers of the Overview page's charts; ``GET /v1/servers/queue``,
the fleet's MCP servers that wait for a decision (:mod:`agbom.review.server_queue`).

Filters and pages are checked here for their form (a page size that is not a number) and by
the store for their values; either refusal is a 400 with the reason, through the app's one
place for store errors (``store_error_handlers``).

A page reads and groups what every agent's latest AgBOM holds, which takes seconds in a
large fleet, so it never runs on the event loop that forwards decisions: one thread of its
own with a store handle of its own (``Store.reopen``), as the review page reads. At most
:data:`MAX_WAITING` requests wait for it; past that the answer is 503 ``busy`` at once, so
no client can pile up work.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from agbom.store import Store
from agbom.store._fleet_agents import MAX_VERSIONS_PAGE
from agbom.store._fleet_logic import MAX_PAGE, check_page

COMPONENTS_PATH = "/v1/fleet/components"
AGENTS_PATH = "/v1/fleet/components/agents"
FLEET_AGENTS_PATH = "/v1/fleet/agents"
AGENT_COMPONENTS_PATH = "/v1/fleet/agents/components"
AGENT_VERSIONS_PATH = "/v1/fleet/agents/versions"
ADVISORIES_PATH = "/v1/fleet/advisories"
CHARTS_PATH = "/v1/fleet/charts"
SERVER_QUEUE_PATH = "/v1/servers/queue"

MAX_WAITING = 8
"""Fleet requests queued or running at once; more are answered 503 ``busy``."""

_NUMBER = re.compile(r"[0-9]{1,7}")


class _BadQuery(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _bad(field: str, message: str) -> Response:
    body = {"error": "invalid_value", "field": field, "message": message}
    return Response(orjson.dumps(body), status_code=400, media_type="application/json")


def _number(request: Request, name: str) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return None
    if not _NUMBER.fullmatch(text):
        raise _BadQuery(name, f"{name} must be a whole number of at most 7 digits")
    return int(text)


class _NotConfigured(Exception):
    pass


def _flag(query: Any, name: str) -> bool | None:
    text = query.get(name)
    if text is None:
        return None
    if text not in ("true", "false"):
        raise _BadQuery(name, f"{name} must be true or false")
    return bool(text == "true")


def fleet_routes(
    store: Callable[[], Store],
    authorized: Callable[[Request], bool],
    unauthorized: Callable[[], Response],
    advisories: Callable[[], Any] | None = None,
) -> list[BaseRoute]:
    """The fleet routes, reading ``store()`` with the read API's token check; ``advisories``
    gives the loaded ``serve --osv`` export (None: the advisories route answers 404)."""

    reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agbom-fleet")
    handle: list[Store] = []
    waiting = [0]

    def reader(base: Store) -> Store:
        """The fleet thread's own handle on the server's store."""
        if not handle:
            handle.append(base.reopen())
        return handle[0]

    def route(path: str, list_page: Callable[[Store, Any, int | None, int | None], Any]) -> Route:
        """A GET route: the token, the page's form, then ``list_page(store, query, limit,
        offset)`` on the fleet thread (a dict to answer, or a refusal)."""

        async def endpoint(request: Request) -> Response:
            if not authorized(request):
                return unauthorized()
            if waiting[0] >= MAX_WAITING:
                body = {"error": "busy", "message": "too many fleet requests at once; retry"}
                return Response(orjson.dumps(body), status_code=503, media_type="application/json")
            base = store()
            waiting[0] += 1
            try:
                limit, offset = _number(request, "limit"), _number(request, "offset")
                if limit is not None and not 1 <= limit <= MAX_PAGE:
                    raise _BadQuery("limit", f"limit must be a whole number from 1 to {MAX_PAGE}")
                query = request.query_params
                data = await asyncio.get_running_loop().run_in_executor(
                    reads, lambda: list_page(reader(base), query, limit, offset)
                )
            except _BadQuery as exc:
                return _bad(exc.field, str(exc))
            except _NotConfigured:
                body = {"error": "not_configured", "message": "serve was started without --osv"}
                return Response(orjson.dumps(body), status_code=404, media_type="application/json")
            finally:
                waiting[0] -= 1
            return Response(orjson.dumps(data), media_type="application/json")

        return Route(path, endpoint, methods=["GET"])

    def components(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        return db.fleet_components(
            type=query.get("type"),
            status=query.get("status"),
            search=query.get("search"),
            limit=limit,
            offset=offset,
            host=query.get("host"),
            severity=query.get("severity"),
        )

    def agents(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        for name in ("type", "ref"):
            if name not in query:
                raise _BadQuery(name, f"{name} is required: the component's, as the list gives it")
        named = {"type": query["type"], "ref": query["ref"], "version": query.get("version")}
        found = db.fleet_component_agents(*named.values(), limit=limit, offset=offset)
        return {**named, **found}

    def charts(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        return db.fleet_charts()

    def servers(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        from agbom.review.server_queue import server_queue

        which = query.get("pending", "true")
        if which not in ("true", "false"):
            raise _BadQuery("pending", "pending must be true or false")
        size, start = check_page(limit, offset)  # the fleet's bounds: a 400 past them
        return server_queue(db, pending_only=which == "true", limit=size, offset=start)

    def agent_named(query: Any) -> str:
        if "agent_id" not in query:
            raise _BadQuery("agent_id", "agent_id is required: the agent's, as the list gives it")
        return str(query["agent_id"])

    def fleet_agents(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        return db.fleet_agents(
            host=query.get("host"),
            search=query.get("search"),
            unapproved=_flag(query, "unapproved"),
            limit=limit,
            offset=offset,
        )

    def agent_components(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        agent_id = agent_named(query)
        return {"agent_id": agent_id, "components": db.fleet_agent_components(agent_id)}

    def agent_versions(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        if limit is not None and limit > MAX_VERSIONS_PAGE:
            raise _BadQuery("limit", f"limit must be a whole number from 1 to {MAX_VERSIONS_PAGE}")
        return db.fleet_agent_versions(agent_named(query), limit=limit, offset=offset)

    def fleet_advisories(db: Store, query: Any, limit: int | None, offset: int | None) -> Any:
        from agbom.advisories.fleet import fleet_advisories as listed

        if advisories is None:
            raise _NotConfigured
        return listed(db, advisories(), severity=query.get("severity"), limit=limit, offset=offset)

    return [
        route(AGENTS_PATH, agents),
        route(COMPONENTS_PATH, components),
        route(CHARTS_PATH, charts),
        route(SERVER_QUEUE_PATH, servers),
        route(AGENT_COMPONENTS_PATH, agent_components),
        route(AGENT_VERSIONS_PATH, agent_versions),
        route(FLEET_AGENTS_PATH, fleet_agents),
        route(ADVISORIES_PATH, fleet_advisories),
    ]
