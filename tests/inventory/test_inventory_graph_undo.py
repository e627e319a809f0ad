"""An in-place, undoable graph patch equals a fresh build, and its undo restores the graph."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.inventory import AgBOM, ComponentGraph
from agbom.inventory.diff import apply_changed_payload


def _state(graph: ComponentGraph) -> tuple[Any, Any]:
    g = graph.graph
    nodes = sorted((n, sorted((k, str(v)) for k, v in d.items())) for n, d in g.nodes(data=True))
    edges = sorted((u, v, sorted(d.items())) for u, v, d in g.edges(data=True))
    return nodes, edges


def _skill(index: int, composed: list[int], tools: list[int]) -> dict[str, Any]:
    return {
        "id": f"s{index}",
        "type": "skill",
        "name": f"s{index}",
        "description": "a skill",
        "definition": {
            "ref": f"skills/s{index}",
            "digest": {"algorithm": "sha256", "value": "a" * 64},
        },
        "composed_skills": [f"s{c}" for c in composed],
        "tools": [f"t{t}" for t in tools],
    }


def _tool(index: int, cap: str = "fs.read") -> dict[str, Any]:
    return {
        "id": f"t{index}",
        "type": "tool",
        "name": f"t{index}",
        "version": "1",
        "provider": "local",
        "capability": cap,
    }


_links = st.lists(st.integers(0, 4), max_size=3, unique=True)


@settings(max_examples=80, deadline=None)
@given(
    compositions=st.lists(st.tuples(_links, _links), min_size=5, max_size=5),
    new_composition=st.tuples(_links, _links),
    target=st.integers(0, 4),
    remove_tool=st.booleans(),
)
def test_undoable_patch_matches_fresh_build_and_undoes(
    compositions: list[tuple[list[int], list[int]]],
    new_composition: tuple[list[int], list[int]],
    target: int,
    remove_tool: bool,
) -> None:
    tools = [_tool(i) for i in range(5)]
    skills = [_skill(i, c, t) for i, (c, t) in enumerate(compositions)]
    base = AgBOM.from_document({"components": tools + skills})
    graph = ComponentGraph(base)
    before = _state(graph)
    changed = _skill(target, *new_composition)
    if remove_tool:
        # Drop t5's only use so removing it is valid: add then remove in two diffs.
        payload: dict[str, Any] = {"added": [_tool(5, "net.http")], "changed": [changed]}
    else:
        payload = {"changed": [changed, _tool(target, "fs.write")]}
    new, diff = apply_changed_payload(base, payload)
    undo = graph.apply_undoable(diff.added, diff.removed, diff.changed)
    assert _state(graph) == _state(ComponentGraph(new))
    undo.undo()
    assert _state(graph) == before


def test_removal_and_undo_restore_edges_of_untouched_parents() -> None:
    base = AgBOM.from_document(
        {
            "components": [
                _tool(1),
                _tool(2),
                {
                    "id": "srv",
                    "type": "mcp_server",
                    "name": "srv",
                    "version": "1",
                    "endpoint": "stdio:srv",
                    "tools": ["t1"],
                },
            ]
        }
    )
    graph = ComponentGraph(base)
    before = _state(graph)
    new, diff = apply_changed_payload(base, {"removed": ["srv"]})
    undo = graph.apply_undoable(diff.added, diff.removed, diff.changed)
    assert _state(graph) == _state(ComponentGraph(new))
    undo.undo()
    undo.undo()  # a second undo changes nothing
    assert _state(graph) == before
