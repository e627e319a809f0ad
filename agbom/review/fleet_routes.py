"""The review page's server queue and fleet routes: the MCP servers waiting for a decision
(and the decision on one), the overview's charts, the fleet's agents, components and
advisories. They read the fleet calls of the store (docs/api.md) and decide only servers;
skills are reviewed by the routes of :mod:`.app`, which mounts these beside its own under
the same sign-in, sessions and page thread (:class:`.web.PageKit`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agbom.review import queries
from agbom.review.web import BadInput, PageKit, finish, query
from agbom.store.interface import MAX_REASON

Handler = Callable[..., Response]
"""A route's handler: ``(request, who)``, or ``(request, who, fields)`` for a decision."""


def _filters(data: dict[str, Any]) -> dict[str, Any]:
    """The Components page's filter values, as its form shows them."""
    keys = ("type", "status", "text", "host", "severity", "types", "statuses")
    return {k: data[k] for k in keys}


def fleet_routes(kit: PageKit) -> list[tuple[str, Handler, bool]]:
    """``(path under /ui, handler, decides)`` of each route: a deciding route is a POSTed
    form that only an approver may send; every other route is a GET any reviewer may."""

    def servers(request: Request, who: Any) -> Response:
        from agbom.review.server_queue import server_queue

        which = query(request, "show", "pending")
        if which not in ("pending", "all"):
            raise BadInput(400, "show is pending or all")
        db = kit.reader()
        data = server_queue(db, pending_only=which == "pending", limit=queries.MAX_ROWS)
        history = {s["server"]: db.server_history(s["server"])[-20:] for s in data["servers"]}
        done = query(request, "done")
        return kit.page(request, "servers.html", who=who, q=data, show=which, history=history,
                        done=done if done in ("approved", "revoked") else None)  # fmt: skip

    def decide_server(request: Request, who: Any, fields: dict[str, str]) -> Response:
        from agbom.review.server_queue import decide

        reason = fields.get("reason", "").strip()
        if not reason or len(reason) > MAX_REASON:
            raise BadInput(400, f"a decision needs a reason of at most {MAX_REASON} characters")
        found = decide(kit.reader(), fields, actor=who[1].name, reason=reason)
        if isinstance(found, tuple):
            raise BadInput(*found)
        return finish(RedirectResponse(f"/ui/servers?done={found}", status_code=303))

    def fleet(request: Request, who: Any) -> Response:
        db = kit.reader()
        from agbom.store._inventory_logic import agbom_status

        # each with its latest AgBOM received, accepted or refused, and what refused it
        agents = [
            {**a, **agbom_status(db.latest_agbom_for_agent(a["agent_id"], include_refused=True))}
            for a in db.list_agents()[: queries.MAX_ROWS]
        ]
        return kit.page(request, "fleet.html", who=who, agents=agents, limit=queries.MAX_ROWS)

    def components(request: Request, who: Any) -> Response:
        from agbom.review.components import components_page

        data = components_page(kit.reader(), lambda name: query(request, name))
        return kit.page(request, "components.html", who=who, c=data, **_filters(data))

    def overview(request: Request, who: Any) -> Response:
        from agbom.review.overview import overview_page

        return kit.page(request, "overview.html", who=who, o=overview_page(kit.reader()))

    def component_agents(request: Request, who: Any) -> Response:
        from agbom.review.components import component_agents_page

        data = component_agents_page(kit.reader(), lambda name: query(request, name))
        return kit.page(request, "component_agents.html", who=who, a=data)

    def agent(request: Request, who: Any) -> Response:
        agent_id = query(request, "id")
        if not agent_id:
            raise BadInput(400, "an agent id is needed")
        db = kit.reader()
        data = queries.agent_page(db, agent_id)
        if data is None:
            raise BadInput(404, "no such agent in the store")
        from agbom.review.fleet_pages import agent_fleet_sections

        def decisions() -> list[Any]:
            return queries.decision_log(db, decision="", reason="", agent=agent_id).rows

        fleet = agent_fleet_sections(db, agent_id, lambda name: query(request, name), decisions)
        return kit.page(request, "agent.html", who=who, a=data, f=fleet)

    def agents(request: Request, who: Any) -> Response:
        from agbom.review.fleet_pages import agents_page

        data = agents_page(kit.reader(), lambda name: query(request, name))
        return kit.page(request, "agents.html", who=who, g=data)

    def advisories_list(request: Request, who: Any) -> Response:
        from agbom.review.fleet_pages import advisories_page

        data = advisories_page(kit.reader(), kit.advisories(), lambda name: query(request, name))
        return kit.page(request, "advisories.html", who=who, v=data)

    return [
        ("/overview", overview, False),
        ("/servers", servers, False),
        ("/servers/decide", decide_server, True),
        ("/fleet", fleet, False),
        ("/components", components, False),
        ("/components/agents", component_agents, False),
        ("/agent", agent, False),
        ("/agents", agents, False),
        ("/advisories", advisories_list, False),
    ]
