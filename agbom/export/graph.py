"""The component graph as Mermaid, Graphviz DOT or JSON, in a deterministic order.

Nodes come first (the agent, then components by id), edges sorted by (source, target).
Labels are escaped for each syntax; Mermaid and DOT node names are generated (``n0``,
``n1`` …) so that no component id can break out of its statement.
"""

from __future__ import annotations

from typing import Any

import orjson

from agbom.export.interface import ExportError
from agbom.inventory import ROOT_ID, AgBOM

GRAPH_FORMATS: tuple[str, ...] = ("mermaid", "dot", "json")


def _nodes_and_edges(agbom: AgBOM) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    from agbom.inventory import ComponentGraph  # networkx: only when a graph is drawn

    graph = ComponentGraph(agbom)
    agent_name = agbom.agent.get("name")
    nodes = [
        {
            "id": ROOT_ID,
            "type": "agent",
            "name": agent_name if isinstance(agent_name, str) and agent_name else agbom.agent_id,
        }
    ]
    nodes.extend({"id": c.id, "type": c.type.value, "name": c.name} for c in agbom)
    edges = sorted(
        ({"source": s, "target": t, "kind": str(k)} for s, t, k in graph.edges()),
        key=lambda e: (e["source"], e["target"]),
    )
    return nodes, edges


def _mermaid_text(text: str) -> str:
    # Inside a quoted Mermaid label only entity codes are safe for these characters.
    out = []
    for ch in text:
        if ch in '"#<>&`':
            out.append(f"#{ord(ch)};")
        elif ch in "\r\n\t" or ord(ch) < 32:
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _dot_text(text: str) -> str:
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32:
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _label(node: dict[str, str]) -> str:
    if node["name"] == node["id"]:
        return f"{node['type']}: {node['id']}"
    return f"{node['type']}: {node['name']} ({node['id']})"


def render_mermaid(agbom: AgBOM) -> str:
    """A Mermaid ``flowchart LR``."""
    nodes, edges = _nodes_and_edges(agbom)
    names = {n["id"]: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["flowchart LR"]
    lines.extend(f'  {names[n["id"]]}["{_mermaid_text(_label(n))}"]' for n in nodes)
    lines.extend(f"  {names[e['source']]} -->|{e['kind']}| {names[e['target']]}" for e in edges)
    return "\n".join(lines) + "\n"


_DOT_SHAPES = {"agent": "doubleoctagon", "mcp_server": "box3d", "skill": "note", "tool": "box"}


def render_dot(agbom: AgBOM) -> str:
    """A Graphviz ``digraph``."""
    nodes, edges = _nodes_and_edges(agbom)
    names = {n["id"]: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["digraph agbom {", "  rankdir=LR;", "  node [shape=ellipse];"]
    for n in nodes:
        shape = _DOT_SHAPES.get(n["type"])
        extra = f", shape={shape}" if shape else ""
        lines.append(f'  {names[n["id"]]} [label="{_dot_text(_label(n))}"{extra}];')
    lines.extend(
        f'  {names[e["source"]]} -> {names[e["target"]]} [label="{e["kind"]}"];' for e in edges
    )
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_json(agbom: AgBOM) -> str:
    """``{"nodes": [{id, type, name}], "edges": [{source, target, kind}]}``."""
    nodes, edges = _nodes_and_edges(agbom)
    document: dict[str, Any] = {"root": ROOT_ID, "nodes": nodes, "edges": edges}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def render_graph(agbom: AgBOM, fmt: str) -> str:
    """Render the component graph of ``agbom`` in ``fmt`` (one of :data:`GRAPH_FORMATS`)."""
    if fmt == "mermaid":
        return render_mermaid(agbom)
    if fmt == "dot":
        return render_dot(agbom)
    if fmt == "json":
        return render_json(agbom)
    raise ExportError(f"unknown graph format {fmt!r} (known: {', '.join(GRAPH_FORMATS)})")
