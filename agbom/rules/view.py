"""The per-evaluation view of a component graph the rules read (split from engine.py).

The adjacency is read from networkx's ``_succ``/``_pred``/``_node`` dicts directly, and only
read: the public views cost a wrapper object per call, which matters on 10,000 nodes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agbom.inventory import ROOT_ID, ComponentGraph, ComponentType
from agbom.rules.matchers import (
    AllOf,
    EndpointIs,
    Predicate,
    PurlIs,
    Subject,
    capabilities_of,
    covered_by_any,
)

# ``ComponentType.value`` is an enum property lookup; a dict is cheaper on 10,000 nodes.
_TYPE_VALUES: dict[ComponentType, str] = {t: t.value for t in ComponentType}


# -- shared per-evaluation state --------------------------------------------------------------


class _Graph:
    """Fast read access to a ComponentGraph for one evaluation (adjacency dicts, subjects)."""

    def __init__(self, graph: ComponentGraph) -> None:
        self.cg = graph
        self.g = graph.graph
        self.succ: Mapping[str, Mapping[str, Any]] = self.g._succ
        self.pred: Mapping[str, Mapping[str, Any]] = self.g._pred
        self.nodes: Mapping[str, Mapping[str, Any]] = self.g._node
        self._subjects: dict[str, Subject] = {}
        self._by_type: dict[str, list[str]] | None = None
        self._root_paths: dict[str, tuple[str, ...]] = {}
        self._caps: dict[str, tuple[str, ...]] = {}
        self.memos: dict[int, dict[str, frozenset[str]]] = {}
        self.longest: list[str] | None = None
        self.postorder: list[str] | None = None
        self.inner: list[str] = []  # post-order nodes other than the root that have successors
        self._declared: dict[str, tuple[list[str], frozenset[str]]] = {}
        self._uncovered: dict[tuple[frozenset[str], frozenset[str]], list[str]] = {}
        self._children: dict[str, list[str]] = {}
        self.back_edges: set[tuple[str, str]] = set()

    def caps(self, node: str) -> tuple[str, ...]:
        """Capabilities a tool node exposes (empty for other nodes), cached."""
        found = self._caps.get(node)
        if found is None:
            data = self.nodes[node]
            component = data.get("component")
            found = (
                capabilities_of(component.data)
                if component is not None and data.get("type") == "tool"
                else ()
            )
            self._caps[node] = found
        return found

    def declared(self, node: str) -> tuple[list[str], frozenset[str]]:
        """A node's ``declared_capabilities``, stripped and lower-cased, as a list and a set.

        Cached: both least-privilege checks read them for every skill."""
        found = self._declared.get(node)
        if found is None:
            raw = self.subject(node).data.get("declared_capabilities")
            names = [c.strip().lower() for c in raw or () if isinstance(c, str) and c.strip()]
            found = (names, frozenset(names))  # already what normalize_caps would give
            self._declared[node] = found
        return found

    def uncovered(self, declared: frozenset[str], exposed: frozenset[str]) -> list[str]:
        """The ``exposed`` capabilities no ``declared`` one covers, sorted.

        Cached per pair: skills repeat a few declared sets, and the unions below them are
        shared frozensets, so thousands of skills reduce to a few distinct questions."""
        key = (declared, exposed)
        found = self._uncovered.get(key)
        if found is None:
            found = sorted(c for c in exposed if not covered_by_any(declared, c))
            self._uncovered[key] = found
        return list(found)

    def tool_caps(self) -> dict[str, frozenset[str]]:
        """:meth:`caps` of every tool that exposes something, as sets."""
        out: dict[str, frozenset[str]] = {}
        for node in self.by_type().get("tool", ()):
            caps = self.caps(node)
            if caps:
                out[node] = frozenset(caps)
        return out

    def subject(self, node: str) -> Subject:
        found = self._subjects.get(node)
        if found is None:
            data = self.nodes[node]
            component = data.get("component")
            if component is not None:
                kind = component.type
                found = Subject(component.id, _TYPE_VALUES.get(kind) or kind.value, component.data)
            elif node == ROOT_ID:
                found = Subject.root(self.cg.agent)
            else:
                found = Subject(node, str(data.get("type", "")), {})
            self._subjects[node] = found
        return found

    def children(self, node: str) -> list[str]:
        """``node``'s successors in sorted order (cached: witness searches revisit nodes)."""
        found = self._children.get(node)
        if found is None:
            found = sorted(self.succ[node])
            self._children[node] = found
        return found

    def type_key(self, node: str) -> str:
        """The key :meth:`by_type` files ``node`` under."""
        return str(self.nodes[node].get("type")) if node != ROOT_ID else "agent"

    def by_type(self) -> dict[str, list[str]]:
        if self._by_type is None:
            index: dict[str, list[str]] = {}
            for node, data in self.nodes.items():
                kind = data.get("type")
                index.setdefault(str(kind) if node != ROOT_ID else "agent", []).append(node)
            # Unsorted: every caller that iterates in order sorts what it picked.
            self._by_type = index
        return self._by_type

    def candidates(self, predicate: Predicate) -> list[str]:
        """Nodes that could match ``predicate`` (narrowed by a top-level ``type``)."""
        types = _types_of(predicate)
        index = self.by_type()
        if types is None:
            return sorted(self.nodes)
        return sorted(n for t in types for n in index.get(t, ()))

    def root_path(self, node: str) -> tuple[str, ...]:
        """A shortest path from the agent to ``node``, found by walking up predecessors.

        Costs only the ancestors of ``node``; ties break on the smallest id so the result is
        deterministic. ``(node,)`` when the node hangs off no path from the root (a cycle).
        """
        cached = self._root_paths.get(node)
        if cached is not None:
            return cached
        if node == ROOT_ID:
            return (ROOT_ID,)
        parent: dict[str, str] = {node: ""}
        queue = deque([node])
        found = False
        while queue and not found:
            current = queue.popleft()
            for p in sorted(self.pred.get(current, ())):
                if p in parent:
                    continue
                parent[p] = current
                if p == ROOT_ID:
                    found = True
                    break
                queue.append(p)
        if not found:
            result: tuple[str, ...] = (node,)
        else:
            chain = [ROOT_ID]
            while chain[-1] != node:
                chain.append(parent[chain[-1]])
            result = tuple(chain)
        self._root_paths[node] = result
        return result

    def ancestors(self, nodes: Iterable[str]) -> set[str]:
        return _closure(nodes, self.pred, self.nodes)

    def descendants(self, nodes: Iterable[str]) -> set[str]:
        return _closure(nodes, self.succ, self.nodes)

    def path_valid(self, path: Sequence[str]) -> bool:
        if any(n not in self.nodes for n in path):
            return False
        return all(b in self.succ[a] for a, b in zip(path, path[1:], strict=False))


def _purl_keys(predicate: Predicate) -> frozenset[str] | None:
    """Index keys of a top-level ``purl`` predicate (a rule that needs a purl to match)."""
    if isinstance(predicate, AllOf):
        for part in predicate.parts:
            if isinstance(part, PurlIs) and part.index_keys:
                return part.index_keys
    return None


def _host_keys(predicate: Predicate) -> frozenset[str] | None:
    """Hosts and host suffixes of a top-level ``endpoint`` predicate, for indexing.

    A rule indexed here is looked up by the component's host and each of its parent domains
    (a superset filter; the predicate still decides)."""
    if isinstance(predicate, AllOf):
        for part in predicate.parts:
            if isinstance(part, EndpointIs) and (part.hosts or part.suffixes):
                return frozenset((*(part.hosts or ()), *(part.suffixes or ())))
    return None


def _types_of(predicate: Predicate) -> frozenset[str] | None:
    if isinstance(predicate, AllOf):
        for part in predicate.parts:
            types = getattr(part, "types", None)
            if part.key == "type" and types is not None:
                return frozenset(types)
    return None


def _closure(
    nodes: Iterable[str], edges: Mapping[str, Iterable[str]], known: Mapping[str, Any]
) -> set[str]:
    """Every node reached from ``nodes`` (those in ``known``) along ``edges``, not counting
    the start nodes unless a walk comes back to them."""
    seen: set[str] = set()
    queue = deque(n for n in nodes if n in known)
    while queue:
        current = queue.popleft()
        for nxt in edges.get(current, ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen
