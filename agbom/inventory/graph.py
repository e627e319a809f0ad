"""The component graph: the agent at the root, one node per component, typed edges.

Edges point from the user of a component to what it uses, so "what can X reach" is the set
of descendants of X. Path searches are always bounded: on large graphs an unbounded
``all_simple_paths`` can run forever and ``find_cycle`` is super-linear on acyclic graphs.

The adjacency is a :class:`DiGraph` of this module, laid out exactly as networkx lays out its
own (``_node``, ``_succ``, ``_pred``), so building, patching and reading a graph never imports
networkx (about 0.1 s, a third of a standalone hook process). networkx is imported only for
what it computes and this module does not: shortest paths, cycles, the longest path and the
condensation of nodes the agent cannot reach; it then works on a networkx graph that shares
these very dicts (:meth:`DiGraph.to_networkx`), so both always see the same graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from agbom.inventory.model import ROOT_ID, AgBOM, Component, ComponentType

if TYPE_CHECKING:
    import networkx as nx


def _networkx() -> Any:
    import networkx

    return networkx


_SHARED_DIGRAPH: Any = None


def _shared_digraph_class() -> Any:
    """A ``networkx.DiGraph`` subclass built on dicts it is given, through the factories
    networkx documents for subclasses (``node_dict_factory``, ``adjlist_outer_dict_factory``):
    its ``__init__`` asks them for the node dict, then the successor and predecessor dicts.
    A graph networkx itself creates from the class (a subgraph view, a copy) gets fresh ones.
    """
    global _SHARED_DIGRAPH
    if _SHARED_DIGRAPH is None:
        import networkx

        class SharedDiGraph(networkx.DiGraph):  # type: ignore[misc]
            def __init__(self, *parts: Any) -> None:
                # (node, succ, pred) when we build it; nothing when networkx does.
                self._given = list(parts[:1]), list(parts[1:3])
                super().__init__()
                del self._given

            def node_dict_factory(self) -> dict[str, Any]:
                given = getattr(self, "_given", None)
                return given[0].pop(0) if given and given[0] else {}

            def adjlist_outer_dict_factory(self) -> dict[str, Any]:
                given = getattr(self, "_given", None)
                return given[1].pop(0) if given and given[1] else {}

        _SHARED_DIGRAPH = SharedDiGraph
    return _SHARED_DIGRAPH


class _NodeView:
    """``DiGraph.nodes``: a mapping of node to attributes, called for ``(node, data)`` pairs."""

    __slots__ = ("_node",)

    def __init__(self, nodes: dict[str, dict[str, Any]]) -> None:
        self._node = nodes

    def __call__(self, data: bool = False) -> Iterator[Any]:
        return iter(self._node.items()) if data else iter(self._node)

    def __getitem__(self, node: str) -> dict[str, Any]:
        return self._node[node]

    def get(self, node: str, default: Any = None) -> Any:
        return self._node.get(node, default)

    def __contains__(self, node: object) -> bool:
        return node in self._node

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)


class DiGraph:
    """The part of ``networkx.DiGraph`` the component graph uses, in networkx's own layout.

    ``_node[n]`` holds a node's attributes, ``_succ[u][v]`` and ``_pred[v][u]`` the same edge
    attribute dict; every method keeps them as networkx would (insertion order included), so
    :meth:`to_networkx` can hand the very same dicts to networkx's algorithms.
    """

    __slots__ = ("_node", "_succ", "_pred", "_nx")

    def __init__(self) -> None:
        self._node: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[str, Any]]] = {}
        self._pred: dict[str, dict[str, dict[str, Any]]] = {}
        self._nx: Any = None

    @property
    def _adj(self) -> dict[str, dict[str, dict[str, Any]]]:
        return self._succ

    def to_networkx(self) -> nx.DiGraph:
        """A ``networkx.DiGraph`` over the same dicts (not a copy: changes show both ways), made
        through the dict factories networkx documents for subclasses, not its private fields."""
        if self._nx is None:
            self._nx = _shared_digraph_class()(self._node, self._succ, self._pred)
        else:
            # Anything networkx cached about the graph may be stale after a change made here.
            cache = getattr(self._nx, "__networkx_cache__", None)
            if isinstance(cache, dict):
                cache.clear()
        return self._nx

    # -- building ------------------------------------------------------------------------------

    def add_node(self, node: str, **attrs: Any) -> None:
        if node not in self._succ:
            self._succ[node] = {}
            self._pred[node] = {}
            self._node[node] = dict(attrs)
        else:
            self._node[node].update(attrs)

    def add_nodes_from(self, nodes: Iterable[Any]) -> None:
        for item in nodes:
            if isinstance(item, tuple):
                node, attrs = item
                self.add_node(node, **attrs)
            else:
                self.add_node(item)

    def add_edge(self, source: str, target: str, **attrs: Any) -> None:
        succ, pred = self._succ, self._pred
        for node in (source, target):
            if node not in succ:
                succ[node] = {}
                pred[node] = {}
                self._node[node] = {}
        data = succ[source].get(target, {})
        data.update(attrs)
        succ[source][target] = data
        pred[target][source] = data

    def add_edges_from(self, edges: Iterable[tuple[Any, ...]]) -> None:
        for edge in edges:
            if len(edge) == 3:
                self.add_edge(edge[0], edge[1], **edge[2])
            else:
                self.add_edge(edge[0], edge[1])

    def remove_edge(self, source: str, target: str) -> None:
        try:
            del self._succ[source][target]
            del self._pred[target][source]
        except KeyError:
            raise KeyError(f"the edge {source}-{target} is not in the graph") from None

    def remove_edges_from(self, edges: Iterable[tuple[Any, ...]]) -> None:
        succ, pred = self._succ, self._pred
        for edge in edges:
            source, target = edge[0], edge[1]
            if source in succ and target in succ[source]:
                del succ[source][target]
                del pred[target][source]

    def remove_node(self, node: str) -> None:
        try:
            targets = self._succ[node]
        except KeyError:
            raise KeyError(f"the node {node} is not in the graph") from None
        del self._node[node]
        for target in targets:
            del self._pred[target][node]
        del self._succ[node]
        for parent in self._pred[node]:
            del self._succ[parent][node]
        del self._pred[node]

    def copy(self) -> DiGraph:
        """An independent copy: new attribute dicts, the same attribute values (as networkx)."""
        clone = DiGraph()
        clone._node = {n: dict(attrs) for n, attrs in self._node.items()}
        clone._succ = {n: {} for n in self._node}
        clone._pred = {n: {} for n in self._node}
        for source, targets in self._succ.items():
            for target, data in targets.items():
                copied = dict(data)
                clone._succ[source][target] = copied
                clone._pred[target][source] = copied
        return clone

    # -- reading -------------------------------------------------------------------------------

    @property
    def nodes(self) -> _NodeView:
        return _NodeView(self._node)

    @property
    def succ(self) -> Mapping[str, Mapping[str, dict[str, Any]]]:
        return self._succ

    @property
    def pred(self) -> Mapping[str, Mapping[str, dict[str, Any]]]:
        return self._pred

    def __contains__(self, node: object) -> bool:
        try:
            return node in self._node
        except TypeError:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    def __getitem__(self, node: str) -> Mapping[str, dict[str, Any]]:
        return self._succ[node]

    def has_edge(self, source: str, target: str) -> bool:
        try:
            return target in self._succ[source]
        except KeyError:
            return False

    def successors(self, node: str) -> Iterator[str]:
        try:
            return iter(self._succ[node])
        except KeyError:
            raise KeyError(f"the node {node} is not in the graph") from None

    def predecessors(self, node: str) -> Iterator[str]:
        try:
            return iter(self._pred[node])
        except KeyError:
            raise KeyError(f"the node {node} is not in the graph") from None

    def out_edges(self, nodes: Any = None) -> Iterator[tuple[str, str]]:
        """``(source, target)`` for the edges out of ``nodes`` (one node or several; all)."""
        if nodes is None:
            sources: Iterable[str] = self._succ
        elif nodes in self:
            sources = (nodes,)
        else:
            sources = [n for n in nodes if n in self._succ]
        return ((source, target) for source in sources for target in self._succ[source])

    def edges(self, data: bool = False) -> Iterator[tuple[Any, ...]]:
        if data:
            return (
                (source, target, attrs)
                for source, targets in self._succ.items()
                for target, attrs in targets.items()
            )
        return self.out_edges()

    def number_of_nodes(self) -> int:
        return len(self._node)

    def number_of_edges(self) -> int:
        return sum(len(targets) for targets in self._succ.values())

    def descendants(self, node: str) -> set[str]:
        """Every node a path leads to from ``node``, without ``node`` itself even on a cycle
        (as ``networkx.descendants``)."""
        succ = self._succ
        seen: set[str] = set()
        stack = [node]
        while stack:
            for child in succ[stack.pop()]:
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        seen.discard(node)
        return seen

    def distances_to(self, target: str, cutoff: int) -> dict[str, int]:
        """Edges from each node to ``target``, for the nodes within ``cutoff`` (a BFS up the
        predecessors: what ``single_source_shortest_path_length`` gives on the reverse)."""
        pred = self._pred
        distance = {target: 0}
        frontier = [target]
        level = 0
        while frontier and level < cutoff:
            level += 1
            following = []
            for node in frontier:
                for parent in pred[node]:
                    if parent not in distance:
                        distance[parent] = level
                        following.append(parent)
            frontier = following
        return distance


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

    @property
    def nodes(self) -> frozenset[str]:
        """The nodes whose attributes or edges the change may have touched: the components it
        added, removed or changed, and their children before and after. Every edge the
        change made or took away ends at one of them."""
        return frozenset(self._touched)

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
    """A :class:`DiGraph` over an AgBOM, kept in step with it by :meth:`apply`.

    Node attributes: ``type`` (a :class:`ComponentType`, or ``"agent"`` for the root) and
    ``component`` (the :class:`Component`, absent on the root and on placeholder nodes for
    references that were not in the inventory). Edge attribute: ``kind``.
    """

    def __init__(self, agbom: AgBOM | None = None) -> None:
        self.graph = DiGraph()
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
        reachable = g.descendants(ROOT_ID)
        if len(reachable) == g.number_of_nodes() - 1:
            return
        entries = 0
        unreachable = [n for n in g if n != ROOT_ID and n not in reachable]
        # Rare (a cycle nothing outside it uses): networkx finds the groups.
        condensed = _networkx().condensation(g.to_networkx().subgraph(unreachable))
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
        return self.graph.descendants(node)

    def reachable_matching(
        self, node: str, predicate: Callable[[str, dict[str, Any]], bool]
    ) -> list[str]:
        """Reachable nodes for which ``predicate(node_id, node_data)`` holds, sorted."""
        nodes = self.graph.nodes
        return sorted(n for n in self.reachable(node) if predicate(n, nodes[n]))

    def shortest_path(self, source: str, target: str) -> list[str] | None:
        nx = _networkx()
        try:
            return list(nx.shortest_path(self.graph.to_networkx(), source, target))
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
        distance = g.distances_to(target, max_length)
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
        nx = _networkx()
        g = self.graph.to_networkx()
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
        nx = _networkx()
        g = self.graph.to_networkx()
        if not nx.is_directed_acyclic_graph(g):
            raise ValueError("graph has a cycle")
        return int(nx.dag_longest_path_length(g))

    def edges(self) -> Iterator[tuple[str, str, EdgeKind]]:
        for source, target, data in self.graph.edges(data=True):
            yield source, target, data["kind"]
