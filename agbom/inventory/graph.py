"""The component graph: the agent at the root, one node per component, typed edges.

Edges point from the user of a component to what it uses, so "what can X reach" is the set
of descendants of X. Path searches are always bounded: on large graphs an unbounded
``all_simple_paths`` can run forever and ``find_cycle`` is super-linear on acyclic graphs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum
from typing import Any

import networkx as nx

from agbom.inventory.model import ROOT_ID, AgBOM, Component, ComponentType


class EdgeKind(StrEnum):
    """How one node relates to another."""

    HAS = "has"  # the agent has a top-level component
    USES = "uses"  # capability or skill uses a tool / server / peer / model
    EXPOSES = "exposes"  # an MCP server exposes a tool
    COMPOSES = "composes"  # a skill composes another skill


_EDGE_KIND_BY_FIELD = {
    (ComponentType.MCP_SERVER, "tools"): EdgeKind.EXPOSES,
    (ComponentType.SKILL, "composed_skills"): EdgeKind.COMPOSES,
}

DEFAULT_MAX_PATH_LENGTH = 12
DEFAULT_MAX_PATHS = 1000
# Edge visits one paths() call may make before it returns what it has found.
PATH_SEARCH_BUDGET = 200_000


def edge_kind(source: ComponentType, field: str) -> EdgeKind:
    return _EDGE_KIND_BY_FIELD.get((source, field), EdgeKind.USES)


class _Journal:
    """Edges from the agent that a full reachability pass changed during an undoable apply:
    ``(node, data)`` for one removed, ``(node, None)`` for one added."""

    __slots__ = ("root_edges",)

    def __init__(self) -> None:
        self.root_edges: list[tuple[str, dict[str, Any] | None]] = []


class GraphUndo:
    """Takes back one :meth:`ComponentGraph.apply_undoable`: restores every node the change
    touched (attributes, incoming and outgoing edges) and the agent's entry edges."""

    def __init__(
        self,
        graph: ComponentGraph,
        touched: set[str],
        saved: dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any]]],
        journal: _Journal,
    ) -> None:
        self._graph = graph
        self._touched = touched
        self._saved = saved
        self._journal = journal
        self._done = False

    def undo(self) -> None:
        if self._done:
            return
        self._done = True
        cg = self._graph
        g = cg.graph
        succ, pred, nodes = g._succ, g._pred, g._node
        for node in self._touched:
            if node not in nodes:
                continue
            for target in succ[node]:
                del pred[target][node]
            for parent in pred[node]:
                del succ[parent][node]
            del succ[node], pred[node], nodes[node]
        for node, (attrs, _, _) in self._saved.items():
            nodes[node] = attrs
            succ[node] = {}
            pred[node] = {}
        for node, (_, out_edges, in_edges) in self._saved.items():
            for target, data in out_edges.items():
                succ[node][target] = data
                pred[target][node] = data
            for parent, data in in_edges.items():
                if parent in self._saved:
                    continue  # restored with the parent's outgoing edges
                succ[parent][node] = data
                pred[node][parent] = data
        for node, data in reversed(self._journal.root_edges):
            if data is None:
                if node in succ[ROOT_ID] and node not in self._saved:
                    del succ[ROOT_ID][node]
                    del pred[node][ROOT_ID]
            elif node in nodes and node not in self._saved:
                succ[ROOT_ID][node] = data
                pred[node][ROOT_ID] = data
        cg._entry_count = None


class ComponentGraph:
    """A networkx DiGraph over an AgBOM, kept in step with it by :meth:`apply`.

    Node attributes: ``type`` (a :class:`ComponentType`, or ``"agent"`` for the root) and
    ``component`` (the :class:`Component`, absent on the root and on placeholder nodes for
    references that were not in the inventory). Edge attribute: ``kind``.
    """

    def __init__(self, agbom: AgBOM | None = None) -> None:
        self.graph: nx.DiGraph = nx.DiGraph()
        self.agent: dict[str, Any] = {}
        self.graph.add_node(ROOT_ID, type="agent")
        self._journal: _Journal | None = None
        self._entry_count: int | None = None
        if agbom is not None:
            self.agent = dict(agbom.agent)
            self._add_all(agbom)

    @classmethod
    def from_agbom(cls, agbom: AgBOM) -> ComponentGraph:
        return cls(agbom)

    # -- building ------------------------------------------------------------------------------

    def _add_all(self, agbom: AgBOM) -> None:
        g = self.graph
        g.add_nodes_from((c.id, {"type": c.type, "component": c}) for c in agbom)
        g.add_edges_from(
            (c.id, target, {"kind": edge_kind(c.type, field)})
            for c in agbom
            for field, target, _ in c.references()
        )
        self._attach_roots(c.id for c in agbom)
        self._reach_all()

    def _reach_all(self) -> None:
        """Make every node reachable from the agent.

        A component used only from inside a cycle (two skills that compose only each other)
        has parents, so it gets no ``has`` edge, yet nothing connects it to the agent: rules that
        start from the agent would silently miss it. Each such group gets one entry edge, to the
        smallest id of each of its source components, so a fresh build and an incremental update
        agree.
        """
        g = self.graph
        journal = self._journal
        stale = self._entries()
        if journal is not None:
            journal.root_edges.extend((n, dict(g._succ[ROOT_ID][n])) for n in stale)
        g.remove_edges_from((ROOT_ID, n) for n in stale)
        self._entry_count = 0
        reachable = nx.descendants(g, ROOT_ID)
        if len(reachable) == g.number_of_nodes() - 1:
            return
        entries = 0
        unreachable = [n for n in g if n != ROOT_ID and n not in reachable]
        condensed = nx.condensation(g.subgraph(unreachable))
        members = condensed.graph["mapping"]
        groups: dict[int, list[str]] = {}
        for node, group in members.items():
            groups.setdefault(group, []).append(node)
        for group, nodes in groups.items():
            if condensed.in_degree(group) == 0:
                entry = min(nodes)
                if journal is not None:
                    journal.root_edges.append((entry, None))
                g.add_edge(ROOT_ID, entry, kind=EdgeKind.HAS, entry=True)
                entries += 1
        self._entry_count = entries

    def _attach_roots(self, candidates: Iterable[str]) -> None:
        g = self.graph
        for node in candidates:
            if node not in g:
                continue
            parents = [p for p in g.predecessors(node) if p != ROOT_ID]
            if parents:
                if g.has_edge(ROOT_ID, node):
                    g.remove_edge(ROOT_ID, node)
            else:
                g.add_edge(ROOT_ID, node, kind=EdgeKind.HAS, entry=False)

    def upsert(self, component: Component) -> None:
        """Add or replace one component and its outgoing edges."""
        self._upsert(component)
        self._reach_all()

    def _upsert(self, component: Component) -> None:
        """Add or replace one component and its outgoing edges."""
        g = self.graph
        touched: set[str] = {component.id}
        if component.id in g:
            for _, target in list(g.out_edges(component.id)):
                if target != ROOT_ID:
                    g.remove_edge(component.id, target)
                    touched.add(target)
        g.add_node(component.id, type=component.type, component=component)
        for field, target, expected in component.references():
            if target not in g:
                g.add_node(target, type=expected)  # placeholder: referenced, not inventoried
            g.add_edge(component.id, target, kind=edge_kind(component.type, field))
            touched.add(target)
        self._attach_roots(touched)

    def remove(self, component_id: str) -> None:
        """Remove a component; what it used becomes top-level if nothing else uses it."""
        g = self.graph
        if component_id not in g or component_id == ROOT_ID:
            return
        orphans = list(g.successors(component_id))
        g.remove_node(component_id)
        self._attach_roots(orphans)
        self._reach_all()

    def apply(
        self, added: Iterable[Component], removed: Iterable[str], changed: Iterable[Component]
    ) -> None:
        """Apply an AgBOM diff incrementally (no rebuild)."""
        self._apply(list(added), list(removed), list(changed))

    def apply_undoable(
        self, added: Iterable[Component], removed: Iterable[str], changed: Iterable[Component]
    ) -> GraphUndo:
        """Apply a diff in place, in time proportional to it, and return how to take it back.

        The Guardian patches the session's own graph this way (a copy would cost as much as
        the whole graph) and calls :meth:`GraphUndo.undo` when the change is refused.
        """
        added, removed, changed = list(added), list(removed), list(changed)
        g = self.graph
        touched: set[str] = set(removed)
        for component in itertools.chain(added, changed):
            touched.add(component.id)
            touched.update(target for _, target, _ in component.references())
        for node in list(touched):
            if node in g:
                touched.update(g._succ[node])
        touched.discard(ROOT_ID)
        saved = {
            node: (
                dict(g._node[node]),
                {t: dict(d) for t, d in g._succ[node].items()},
                {p: dict(d) for p, d in g._pred[node].items()},
            )
            for node in touched
            if node in g
        }
        journal = _Journal()
        self._journal = journal
        try:
            self._apply(added, removed, changed)
        finally:
            self._journal = None
        return GraphUndo(self, touched, saved, journal)

    def _apply(self, added: list[Component], removed: list[str], changed: list[Component]) -> None:
        g = self.graph
        lost_parent: set[str] = set()
        for component_id in removed:
            if component_id in g and component_id != ROOT_ID:
                orphans = list(g.successors(component_id))
                lost_parent.update(orphans)
                g.remove_node(component_id)
                self._attach_roots(orphans)
        for component in itertools.chain(added, changed):
            if component.id in g:
                lost_parent.update(g._succ[component.id])
            lost_parent.add(component.id)
            self._upsert(component)
            lost_parent.update(target for _, target, _ in component.references())
        self._reach_from(lost_parent)

    def _entries(self) -> list[str]:
        return [n for n, data in self.graph._succ[ROOT_ID].items() if data.get("entry")]

    def _reach_from(self, suspects: Iterable[str]) -> None:
        """Restore "every node is reachable" after a change, looking only near the change.

        Only a node that lost an incoming edge (or is new) can have become unreachable: any
        other node keeps a path whose last lost edge ends at such a node. So when there are no
        entry edges to revisit and every suspect still has a path up to the agent, nothing
        else can have changed; otherwise fall back to :meth:`_reach_all`.
        """
        g = self.graph
        if self._has_entries():
            self._reach_all()
            return
        pred = g._pred
        for node in suspects:
            if node not in g or node == ROOT_ID:
                continue
            if ROOT_ID in pred[node]:
                continue
            if not self._reaches_root(node):
                self._reach_all()
                return

    def _has_entries(self) -> bool:
        known = self._entry_count
        if known is None:
            known = len(self._entries())
            self._entry_count = known
        return known > 0

    def _reaches_root(self, node: str) -> bool:
        """Whether a path leads from the agent to ``node`` (a search up its ancestors)."""
        pred = self.graph._pred
        seen = {node}
        stack = [node]
        while stack:
            for parent in pred[stack.pop()]:
                if parent == ROOT_ID:
                    return True
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return False

    # -- queries -------------------------------------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self.graph

    def __len__(self) -> int:
        return int(self.graph.number_of_nodes()) - 1

    def component(self, node: str) -> Component | None:
        data = self.graph.nodes.get(node)
        return data.get("component") if data else None

    def node_type(self, node: str) -> Any:
        return self.graph.nodes[node].get("type")

    def components(self) -> Iterator[Component]:
        for _, data in self.graph.nodes(data=True):
            component = data.get("component")
            if component is not None:
                yield component

    def reachable(self, node: str) -> set[str]:
        """Every node ``node`` can reach (not including itself unless on a cycle)."""
        if node not in self.graph:
            return set()
        return set(nx.descendants(self.graph, node))

    def reachable_matching(
        self, node: str, predicate: Callable[[str, dict[str, Any]], bool]
    ) -> list[str]:
        """Reachable nodes for which ``predicate(node_id, node_data)`` holds, sorted."""
        nodes = self.graph.nodes
        return sorted(n for n in self.reachable(node) if predicate(n, nodes[n]))

    def shortest_path(self, source: str, target: str) -> list[str] | None:
        try:
            return list(nx.shortest_path(self.graph, source, target))
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None

    def paths(
        self,
        source: str,
        target: str,
        *,
        max_length: int = DEFAULT_MAX_PATH_LENGTH,
        limit: int = DEFAULT_MAX_PATHS,
    ) -> list[list[str]]:
        """Simple paths from ``source`` to ``target``.

        At most ``limit`` paths, each of at most ``max_length`` edges. The search only enters
        nodes that can still reach ``target`` within the edges left, and stops after
        ``PATH_SEARCH_BUDGET`` edge visits, so it is bounded even on dense graphs
        (``all_simple_paths`` with a cutoff still explores every dead branch: minutes on a
        14-node clique). When the budget runs out the paths found so far are returned.
        """
        g = self.graph
        if source not in g or target not in g or limit <= 0:
            return []
        if source == target:
            return [[source]]
        # Edges from each node to the target, within max_length (BFS on the reversed graph).
        distance = nx.single_source_shortest_path_length(
            g.reverse(copy=False), target, cutoff=max_length
        )
        if source not in distance:
            return []
        found: list[list[str]] = []
        path = [source]
        on_path = {source}
        stack = [iter(g.successors(source))]
        budget = PATH_SEARCH_BUDGET
        while stack and budget > 0:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                on_path.discard(path.pop())
                continue
            budget -= 1
            if child == target:
                found.append([*path, target])
                if len(found) >= limit:
                    break
                continue
            # len(path) edges are used once ``child`` is appended.
            if child in on_path or distance.get(child, max_length + 1) > max_length - len(path):
                continue
            path.append(child)
            on_path.add(child)
            stack.append(iter(g.successors(child)))
        return found

    def path_from_root(self, node: str) -> list[str]:
        """A shortest path from the agent to ``node`` (``[node]`` if unreachable)."""
        return self.shortest_path(ROOT_ID, node) or [node]

    def cycles(self, *, limit: int = 100) -> list[list[str]]:
        """Up to ``limit`` cycles, one per non-trivial strongly connected component.

        Deterministic: components are taken in order of their smallest node, each searched on a
        copy built in sorted order, and each cycle is rotated to start at its smallest node (a
        subgraph view would iterate a set, so the cycle found changed with PYTHONHASHSEED).
        """
        g = self.graph
        if nx.is_directed_acyclic_graph(g):
            return []
        cyclic = [
            sorted(scc)
            for scc in nx.strongly_connected_components(g)
            if len(scc) > 1 or g.has_edge(next(iter(scc)), next(iter(scc)))
        ]
        found: list[list[str]] = []
        for nodes in sorted(cyclic)[: max(limit, 0)]:
            members = set(nodes)
            sub = nx.DiGraph()
            sub.add_nodes_from(nodes)
            sub.add_edges_from(sorted((u, v) for u, v in g.out_edges(nodes) if v in members))
            cycle = [edge[0] for edge in nx.find_cycle(sub, source=nodes[0])]
            start = cycle.index(min(cycle))
            found.append(cycle[start:] + cycle[:start])
        return sorted(found)

    def longest_path_length(self) -> int:
        """Longest path (in edges) when acyclic; raises ValueError on a cyclic graph."""
        if not nx.is_directed_acyclic_graph(self.graph):
            raise ValueError("graph has a cycle")
        return int(nx.dag_longest_path_length(self.graph))

    def edges(self) -> Iterator[tuple[str, str, EdgeKind]]:
        for source, target, data in self.graph.edges(data=True):
            yield source, target, data["kind"]
