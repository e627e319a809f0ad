"""The component graph's own DiGraph keeps exactly the layout networkx's would.

The graph is built and patched without importing networkx. These tests run the same
operations on a ComponentGraph whose adjacency is a real ``networkx.DiGraph`` and compare the
two layouts dict by dict, in order (the rules read the adjacency dicts directly, and the order
of a node's successors decides which witness path a finding names).
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import networkx as nx
from hypothesis import given, settings
from inventory_samples import agbom_documents

from agbom.inventory import ROOT_ID, AgBOM, ComponentGraph
from agbom.inventory import graph as graph_module


class NetworkxBacked(nx.DiGraph):  # type: ignore[misc]
    """networkx's DiGraph with the three helpers the component graph calls on its own."""

    def descendants(self, node: str) -> set[str]:
        return set(nx.descendants(self, node))

    def distances_to(self, target: str, cutoff: int) -> dict[str, int]:
        reverse = self.reverse(copy=False)
        return dict(nx.single_source_shortest_path_length(reverse, target, cutoff=cutoff))

    def to_networkx(self) -> nx.DiGraph:
        return self


def layout(graph: ComponentGraph) -> tuple[Any, ...]:
    g = graph.graph
    return (
        list(g._node.items()),
        [(n, list(targets.items())) for n, targets in g._succ.items()],
        [(n, list(parents.items())) for n, parents in g._pred.items()],
    )


def both(build: Any) -> tuple[Any, Any]:
    ours = build()
    with mock.patch.object(graph_module, "DiGraph", NetworkxBacked):
        reference = build()
    assert isinstance(reference.graph, nx.DiGraph)
    assert not isinstance(ours.graph, nx.DiGraph)
    return ours, reference


@settings(max_examples=80, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_builds_and_changes_lay_the_graph_out_as_networkx(first: Any, second: Any) -> None:
    before, after = AgBOM.from_document(first), AgBOM.from_document(second)
    ours, reference = both(lambda: ComponentGraph(before))
    assert layout(ours) == layout(reference)
    for node in reference.graph:
        assert ours.reachable(node) == reference.reachable(node)
        for cutoff in (0, 1, 3):
            assert ours.graph.distances_to(node, cutoff) == reference.graph.distances_to(
                node, cutoff
            )
    removed = [c.id for c in before if after.get(c.id) is None]
    kept = [c for c in after if before.get(c.id) is not None]
    added = [c for c in after if before.get(c.id) is None]
    undo_ours = ours.apply_undoable(added, removed, kept)
    undo_reference = reference.apply_undoable(added, removed, kept)
    assert layout(ours) == layout(reference)
    assert ours.cycles() == reference.cycles()
    for node in list(reference.graph)[:4]:
        assert ours.paths(ROOT_ID, node, max_length=4) == reference.paths(
            ROOT_ID, node, max_length=4
        )
        assert ours.path_from_root(node) == reference.path_from_root(node)
    undo_ours.undo()
    undo_reference.undo()
    assert layout(ours) == layout(reference)
    for component in after:
        ours.upsert(component)
        reference.upsert(component)
    for component in before:
        ours.remove(component.id)
        reference.remove(component.id)
    assert layout(ours) == layout(reference)


@settings(max_examples=40, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_the_networkx_view_shares_the_graph_through_changes(first: Any, second: Any) -> None:
    graph = ComponentGraph(AgBOM.from_document(first))
    view = graph.graph.to_networkx()
    for component in AgBOM.from_document(second):
        graph.upsert(component)
    # Nothing was copied: the networkx view sees every change.
    assert graph.graph.to_networkx() is view
    assert list(view.nodes) == list(graph.graph)
    assert list(view.edges) == list(graph.graph.edges())
    assert nx.descendants(view, ROOT_ID) == graph.reachable(ROOT_ID)


def test_a_copy_is_independent_of_its_original() -> None:
    graph = ComponentGraph()
    graph.graph.add_edge("a", "b", kind="uses")
    clone = graph.graph.copy()
    clone.add_edge("b", "c", kind="uses")
    clone.nodes["a"]["mark"] = True
    clone._succ["a"]["b"]["kind"] = "has"
    assert "c" not in graph.graph and "mark" not in graph.graph.nodes["a"]
    assert graph.graph._succ["a"]["b"]["kind"] == "uses"
    assert clone._pred["b"]["a"] is clone._succ["a"]["b"]  # one dict per edge, as networkx
