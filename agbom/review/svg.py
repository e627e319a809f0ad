"""Component graphs drawn as SVG on the server: no script, no remote content, every label
escaped.

The layout is layered: a node's column is its distance from the roots (the nodes nothing
points at), rows follow the order nodes are given in. It is plain and predictable, which is
what a reviewer comparing two pictures wants. The picture is styled by class names (the
page's stylesheet), never by inline ``style`` attributes, which the page's CSP forbids.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

MAX_NODES = 200
MAX_LABEL = 24
_BOX_W, _BOX_H, _GAP_X, _GAP_Y, _PAD = 190, 30, 70, 14, 10


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    label: str
    kind: str  # the component type (a CSS class suffix), or "skill", "agent"


def _kind_class(kind: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in kind.lower())[:32] or "other"


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "\u2026"


def _columns(ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    targets = {dst for _, dst in edges}
    children: dict[str, list[str]] = {i: [] for i in ids}
    for src, dst in edges:
        children[src].append(dst)
    column = {i: 0 for i in ids if i not in targets}
    queue = deque(column)
    if not queue and ids:  # every node is on a cycle: start anywhere
        column[ids[0]] = 0
        queue.append(ids[0])
    while queue:
        node = queue.popleft()
        for child in children[node]:
            if child not in column:  # first reach wins: cycles cannot push columns forever
                column[child] = column[node] + 1
                queue.append(child)
    for i in ids:  # unreachable members of cycles
        column.setdefault(i, 0)
    return column


def render(nodes: Iterable[Node], edges: Iterable[tuple[str, str]], *, title: str) -> Markup | None:
    """An ``<svg>`` element, or None when there are more than :data:`MAX_NODES` nodes (the
    table beside it still lists everything)."""
    unique: dict[str, Node] = {}
    for node in nodes:
        unique.setdefault(node.id, node)
        if len(unique) > MAX_NODES:
            return None
    ids = list(unique)
    links = sorted({(s, d) for s, d in edges if s in unique and d in unique and s != d})
    column = _columns(ids, links)
    rows: dict[int, int] = {}
    position: dict[str, tuple[int, int]] = {}
    for node_id in ids:
        col = column[node_id]
        row = rows.get(col, 0)
        rows[col] = row + 1
        position[node_id] = (
            _PAD + col * (_BOX_W + _GAP_X),
            _PAD + row * (_BOX_H + _GAP_Y),
        )
    width = _PAD * 2 + (max(column.values(), default=0) + 1) * (_BOX_W + _GAP_X) - _GAP_X
    height = _PAD * 2 + max(rows.values(), default=1) * (_BOX_H + _GAP_Y) - _GAP_Y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f"<title>{escape(title)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'class="arrowhead"/></marker></defs>',
    ]
    for src, dst in links:
        (x1, y1), (x2, y2) = position[src], position[dst]
        if x2 > x1:
            start, end = (x1 + _BOX_W, y1 + _BOX_H // 2), (x2, y2 + _BOX_H // 2)
        else:  # a back or same-column edge: from the bottom of one box to the top of the other
            start, end = (x1 + _BOX_W // 2, y1 + _BOX_H), (x2 + _BOX_W // 2, y2)
        parts.append(
            f'<line class="edge" x1="{start[0]}" y1="{start[1]}" x2="{end[0]}" y2="{end[1]}" '
            'marker-end="url(#arrow)"/>'
        )
    for node_id, node in unique.items():
        x, y = position[node_id]
        parts.append(
            f'<g class="node node-{_kind_class(node.kind)}"><title>{escape(node.kind)}: '
            f"{escape(node.id)}</title>"
            f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="4"/>'
            f'<text x="{x + 8}" y="{y + 20}">{escape(_short(node.label))}</text></g>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
