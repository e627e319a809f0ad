"""The MCP server queue (issue 45 item 4): the servers the fleet uses that wait for a person.

A server is seen when an agent's latest accepted AgBOM holds it (an ``agbom/snapshot``, an
ACS session's inventory, or a hook that saw one of its tools called: the fleet's components,
:mod:`agbom.store._fleet_logic`). It is pending when no approval stands for it (never
approved, or revoked), or when its tool set there is not the approved pin: the difference is
the Guardian's own (:func:`agbom.scan.lock.server_changes`, each change classified cosmetic,
narrowing or expansion with its reasons), so the queue shows what a decision would deny.

Each entry carries the tool set as that agent's AgBOM lists it, every tool's description and
input schema bounded (:data:`MAX_DESCRIPTION`, :data:`MAX_TOOLS`): they are the server
author's text, hostile like a skill's files, and the page shows them escaped with their
invisible characters spelled out. The read API and the review page share this one reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agbom.store import Store, StoreError, format_timestamp

MAX_SERVERS = 500
"""Servers read per call (the fleet's own page bound): one page of the queue at most."""
MAX_TOOLS = 200
"""Tools shown per server; the rest are counted."""
MAX_DESCRIPTION = 4096
"""Characters of a tool's description (and of its schema's JSON) shown; the rest is cut."""


def _cut(text: str, limit: int = MAX_DESCRIPTION) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def _tool(definition: Mapping[str, Any]) -> dict[str, Any]:
    description = definition.get("description")
    described, cut = _cut(description if isinstance(description, str) else "")
    schema = definition.get("inputSchema")
    schema_text, schema_cut = _cut(
        orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode() if schema is not None else ""
    )
    return {
        "name": _cut(str(definition.get("name") or ""), 256)[0],
        "description": described,
        "input_schema": schema_text,
        "truncated": cut or schema_cut,
    }


def _seen_entry(store: Store, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The lock entry (:func:`agbom.scan.lock.server_entry`) of the server as the first agent
    holding it lists it, and that agent's id."""
    from agbom.inventory import AgBOM, ComponentType, InvalidAgBOM
    from agbom.scan.lock import server_entry

    agents = store.fleet_component_agents(row["type"], row["ref"], row["version"], limit=1)
    if not agents["agents"]:
        return None, None
    agent = agents["agents"][0]
    stored = store.agbom_version(agent["session_id"], agent["agbom_version"])
    if stored is None:
        return None, agent["agent_id"]
    try:
        agbom = AgBOM.from_document(stored["document"], source="fleet")
    except InvalidAgBOM:
        return None, agent["agent_id"]
    wanted = {str(row["ref"]).casefold(), str(row["name"] or "").casefold()}
    for server in agbom.of_type(ComponentType.MCP_SERVER):
        names = {server.id.casefold(), (server.name or "").casefold()}
        purl = server.data.get("purl")
        if names & wanted or (isinstance(purl, str) and purl == row["purl"]):
            return server_entry(agbom, server), agent["agent_id"]
    return None, agent["agent_id"]


def _names(row: Mapping[str, Any]) -> list[str]:
    return [n for n in (row.get("name"), row.get("ref")) if isinstance(n, str) and n]


def queue_entry(store: Store, row: Mapping[str, Any]) -> dict[str, Any]:
    """One fleet MCP server with its tool set, its approval and the diff against the pin;
    ``pending`` says whether it waits for a decision."""
    from agbom.scan.lock import server_changes

    entry, agent = _seen_entry(store, row)
    rows = store.server_pins_for(_names(row))
    pin = next((p for p in rows if p.approved), rows[0] if rows else None)
    tools = (entry or {}).get("tools")
    definitions = tools.get("definitions") if isinstance(tools, Mapping) else None
    listed = [_tool(t) for t in (definitions or [])[:MAX_TOOLS] if isinstance(t, Mapping)]
    diff: dict[str, Any] | None = None
    if pin is not None and pin.approved and entry is not None:
        before = {"name": entry.get("name"), "purl": entry.get("purl"),
                  "version": entry.get("version"), "tools": dict(pin.pin)}  # fmt: skip
        for change in server_changes(str(row["ref"]), before, entry):
            if change.kind == "tools":
                diff = {"detail": change.detail, **change.tools}
    status = pin.status if pin is not None else "unapproved"
    return {
        "server": row["name"] or row["ref"],
        "ref": row["ref"],
        "version": row["version"],
        "purl": row["purl"],
        "agents": row["agents"],
        "first_seen": row["first_seen"],
        "last_seen": row["last_seen"],
        "seen_by": agent,
        "status": status,
        "pending": status != "approved" or diff is not None,
        "tools": listed,
        "tool_count": len(definitions) if isinstance(definitions, list) else None,
        "tool_set": tools.get("value") if isinstance(tools, Mapping) else None,
        "pin": None
        if pin is None
        else {
            "server": pin.server,
            "value": pin.value,
            "count": pin.pin.get("count"),
            "decided_by": pin.decided_by,
            "decided_at": format_timestamp(pin.decided_at),
            "reason": pin.reason,
        },
        "diff": diff,
    }


def server_queue(
    store: Store, *, pending_only: bool = True, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    """A page of the fleet's MCP servers (the pending ones unless ``pending_only`` is
    False), each as :func:`queue_entry`: ``{"total", "limit", "offset", "servers"}``, where
    ``total`` counts the servers read (at most :data:`MAX_SERVERS`)."""
    seen = store.fleet_components(type="mcp_server", limit=MAX_SERVERS, offset=0)
    entries: list[dict[str, Any]] = []
    for row in seen["components"]:
        try:
            entry = queue_entry(store, row)
        except StoreError:
            continue  # a name the store cannot key is nobody's approval
        if entry["pending"] or not pending_only:
            entries.append(entry)
    return {
        "total": len(entries),
        "limit": limit,
        "offset": offset,
        "servers": entries[offset : offset + limit],
    }


def find_server(store: Store, server: str) -> dict[str, Any] | None:
    """The queue entry of the fleet server named ``server`` (its name or ref), pending or not."""
    wanted = server.casefold()
    seen = store.fleet_components(type="mcp_server", search=server[:256], limit=MAX_SERVERS)
    for row in seen["components"]:
        if wanted in {n.casefold() for n in _names(row)}:
            return queue_entry(store, row)
    return None


def pin_of(entry: Mapping[str, Any], store: Store) -> Sequence[Mapping[str, Any]] | None:
    """The tool definitions to approve for a queue entry: the tool set its agent lists now
    (None when the AgBOM lists none: nothing to pin)."""
    row = {k: entry[k] for k in ("ref", "version", "purl")}
    seen, _agent = _seen_entry(store, {**row, "type": "mcp_server", "name": entry["server"]})
    tools = (seen or {}).get("tools")
    definitions = tools.get("definitions") if isinstance(tools, Mapping) else None
    return definitions if isinstance(definitions, list) else None


def decide(
    store: Store, fields: Mapping[str, str], *, actor: str, reason: str
) -> str | tuple[int, str]:
    """A reviewer's decision from the page's form: ``approve`` pins the tool set the page
    showed (``pin`` names it: a set that changed since is refused, 409, so nobody approves
    what they did not see), ``revoke`` withdraws an approval. The new status, or the refusal
    as ``(HTTP status, message)``."""
    from agbom.scan.lock import LockError, canonical_tool, tool_set_pin

    action, server = fields.get("action", ""), fields.get("server", "")
    if action not in ("approve", "revoke"):
        return 400, "the action is approve or revoke"
    if not server or len(server) > 512:
        return 400, "the form does not name a server"
    if action == "revoke":
        current = store.server_pin(server)
        if current is None or not current.approved:
            return 409, "that server has no approval to revoke"
        store.revoke_server(server, actor=actor, reason=reason)
        return "revoked"
    entry = find_server(store, server)
    definitions = pin_of(entry, store) if entry is not None else None
    if entry is None or definitions is None:
        return 404, "no agent's AgBOM lists that server's tool set"
    try:
        tools = [canonical_tool(t, server) for t in definitions]
    except LockError as exc:
        return 400, str(exc)
    pin = tool_set_pin(tools)
    if fields.get("pin", "") != pin["value"]:
        return 409, "the server's tool set changed since the page was shown: load it again"
    pin["definitions"] = sorted(tools, key=lambda t: str(t["name"]))
    store.approve_server(
        entry["server"], pin=pin, actor=actor, reason=reason, purl=entry["purl"],
        version=entry["version"],
    )  # fmt: skip
    return "approved"
