"""The component graph: edge kinds, root attachment, reach, bounded paths, cycles, and
incremental updates that match a fresh build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from inventory_samples import MINIMAL, agbom_documents, full_document

from agbom.inventory import (
    ROOT_ID,
    AgBOM,
    ComponentGraph,
    ComponentType,
    EdgeKind,
    apply_diff,
    compute_diff,
    parse_component,
)
from agbom.inventory import graph as graph_module

HAS, USES, EXPOSES, COMPOSES = EdgeKind.HAS, EdgeKind.USES, EdgeKind.EXPOSES, EdgeKind.COMPOSES


def skill(skill_id: str, composes: Sequence[str] = (), **fields: Any) -> dict[str, Any]:
    return {
        **MINIMAL["skill"],
        "id": skill_id,
        "composed_skills": list(composes),
        **fields,
    }


def tool(tool_id: str) -> dict[str, Any]:
    return {**MINIMAL["tool"], "id": tool_id}


def graph_of(*components: dict[str, Any]) -> ComponentGraph:
    return ComponentGraph(AgBOM.from_document({"components": list(components)}))


def snapshot(graph: ComponentGraph) -> tuple[dict[str, Any], set[tuple[str, str, EdgeKind]]]:
    """Nodes with their type and component, and edges with their kind."""
    nodes = {
        node: (data.get("type"), data.get("component"))
        for node, data in graph.graph.nodes(data=True)
    }
    return nodes, set(graph.edges())


# -- structure -----------------------------------------------------------------------------------


def test_edges_of_every_kind_and_root_attachment() -> None:
    graph = ComponentGraph.from_agbom(AgBOM.from_document(full_document()))
    assert set(graph.edges()) == {
        (ROOT_ID, "cap1", HAS),
        (ROOT_ID, "sk1", HAS),
        (ROOT_ID, "ks1", HAS),
        (ROOT_ID, "mem1", HAS),
        ("cap1", "t1", USES),
        ("cap1", "srv1", USES),
        ("cap1", "peer1", USES),
        ("srv1", "t1", EXPOSES),
        ("sk1", "t1", USES),
        ("sk1", "srv1", USES),
        ("sk1", "peer1", USES),
        ("sk1", "m1", USES),
        ("sk1", "sk2", COMPOSES),
    }
    assert graph.node_type(ROOT_ID) == "agent"
    assert graph.node_type("srv1") is ComponentType.MCP_SERVER
    assert len(graph) == 9
    assert ROOT_ID in graph and "t1" in graph and "ghost" not in graph
    assert graph.component(ROOT_ID) is None
    assert graph.component("t1").get("capability") == ["fs.read", "fs.list"]  # type: ignore[union-attr]
    assert {c.id for c in graph.components()} == {c["id"] for c in full_document()["components"]}
    assert graph.agent == {"id": "agent-1", "name": "helper", "version": "1.0"}


def test_every_type_is_a_node() -> None:
    graph = graph_of(*MINIMAL.values())
    assert {graph.node_type(c["id"]) for c in MINIMAL.values()} == set(ComponentType)
    # Nothing references anything: every component hangs off the agent.
    assert set(graph.edges()) == {(ROOT_ID, c["id"], HAS) for c in MINIMAL.values()}


def test_a_component_becomes_top_level_when_its_last_user_goes() -> None:
    graph = ComponentGraph(AgBOM.from_document(full_document()))
    graph.remove("sk1")
    assert (ROOT_ID, "m1", HAS) in set(graph.edges())
    assert (ROOT_ID, "sk2", HAS) in set(graph.edges())
    assert (ROOT_ID, "t1", HAS) not in set(graph.edges())  # still used by cap1 and srv1
    graph.remove("cap1")
    graph.remove("srv1")
    assert (ROOT_ID, "t1", HAS) in set(graph.edges())
    graph.remove(ROOT_ID)  # ignored: the agent stays
    graph.remove("ghost")  # ignored
    assert ROOT_ID in graph


def test_upsert_of_a_reference_to_an_unknown_id_adds_a_placeholder() -> None:
    graph = graph_of(tool("t1"))
    graph.upsert(parse_component({**MINIMAL["mcp_server"], "tools": ["t1", "t9"]}))
    assert graph.node_type("t9") is ComponentType.TOOL
    assert graph.component("t9") is None
    assert ("srv1", "t9", EXPOSES) in set(graph.edges())
    assert (ROOT_ID, "t1", HAS) not in set(graph.edges())


# -- reach and paths -----------------------------------------------------------------------------


def test_reachable() -> None:
    graph = ComponentGraph(AgBOM.from_document(full_document()))
    assert graph.reachable("cap1") == {"t1", "srv1", "peer1"}
    assert graph.reachable("sk1") == {"t1", "srv1", "peer1", "m1", "sk2"}
    assert graph.reachable(ROOT_ID) == {c.id for c in graph.components()}
    assert graph.reachable("t1") == set()
    assert graph.reachable("ghost") == set()
    tools = graph.reachable_matching("sk1", lambda _, data: data["type"] is ComponentType.TOOL)
    assert tools == ["t1"]


def test_paths_shortest_path_and_path_from_root() -> None:
    graph = ComponentGraph(AgBOM.from_document(full_document()))
    assert sorted(graph.paths("sk1", "t1")) == [["sk1", "srv1", "t1"], ["sk1", "t1"]]
    assert graph.paths("sk1", "t1", max_length=1) == [["sk1", "t1"]]
    assert len(graph.paths("sk1", "t1", limit=1)) == 1
    assert graph.paths("sk1", "t1", limit=0) == []
    assert graph.paths("t1", "sk1") == []
    assert graph.paths("ghost", "t1") == [] and graph.paths("sk1", "ghost") == []
    assert graph.paths("t1", "t1") == [["t1"]]
    assert graph.shortest_path("sk1", "t1") == ["sk1", "t1"]
    assert graph.shortest_path("t1", "sk1") is None
    assert graph.path_from_root("sk2") == [ROOT_ID, "sk1", "sk2"]
    assert graph.path_from_root("ghost") == ["ghost"]


def test_paths_respect_the_length_cutoff_on_a_chain() -> None:
    chain = [skill(f"s{i}", [f"s{i + 1}"]) for i in range(6)] + [skill("s6")]
    graph = graph_of(*chain)
    assert graph.paths("s0", "s6", max_length=5) == []
    assert graph.paths("s0", "s6", max_length=6) == [[f"s{i}" for i in range(7)]]


def test_paths_stop_at_the_limit_on_a_lattice() -> None:
    # 8 layers of 2 skills, each composing both skills of the next layer: 2^7 paths.
    layers = [[f"l{i}a", f"l{i}b"] for i in range(8)]
    components = [
        skill(node, layers[i + 1] if i + 1 < len(layers) else [])
        for i, layer in enumerate(layers)
        for node in layer
    ]
    graph = graph_of(*components)
    assert len(graph.paths("l0a", "l7a", limit=1000)) == 2**6
    limited = graph.paths("l0a", "l7a", limit=5)
    assert len(limited) == 5
    assert all(path[0] == "l0a" and path[-1] == "l7a" and len(path) == 8 for path in limited)


def test_paths_on_a_dense_clique_finish_quickly() -> None:
    # 14 skills composing each other, plus an entry skill that uses the tool directly.
    # all_simple_paths(cutoff=12) explores every dead branch of the clique (hours).
    clique = [f"c{i:02d}" for i in range(14)]
    components = [skill(c, [o for o in clique if o != c]) for c in clique]
    components.append(skill("entry", clique, tools=["t1"]))
    components.append(tool("t1"))
    graph = graph_of(*components)
    assert graph.paths("entry", "t1") == [["entry", "t1"]]
    assert graph.paths("c00", "t1") == []


def test_paths_return_what_they_found_when_the_budget_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clique = [f"c{i:02d}" for i in range(10)]
    components = [skill(c, [o for o in clique if o != c]) for c in clique]
    graph = graph_of(*components)
    monkeypatch.setattr(graph_module, "PATH_SEARCH_BUDGET", 50)
    found = graph.paths("c00", "c09", limit=10**6)
    assert 0 < len(found) < 50
    assert all(len(set(path)) == len(path) for path in found)


@settings(max_examples=80, deadline=None)
@given(agbom_documents())
def test_paths_match_networkx_simple_paths(document: Any) -> None:
    graph = ComponentGraph(AgBOM.from_document(document))
    nodes = sorted(graph.graph.nodes)
    for source in nodes:
        for target in nodes:
            if source == target:
                continue
            expected = {
                tuple(p)
                for p in nx.all_simple_paths(graph.graph.to_networkx(), source, target, cutoff=3)
            }
            assert {tuple(p) for p in graph.paths(source, target, max_length=3)} == expected


# -- cycles --------------------------------------------------------------------------------------


def test_cycles_through_composed_skills() -> None:
    graph = graph_of(
        skill("a", ["b"]),
        skill("b", ["c"]),
        skill("c", ["a"]),
        skill("d", ["d"]),  # composes itself
        skill("e", ["a"]),
    )
    assert graph.cycles() == [["a", "b", "c"], ["d"]]
    assert graph.cycles(limit=1) == [["a", "b", "c"]]
    with pytest.raises(ValueError, match="graph has a cycle"):
        graph.longest_path_length()


def test_acyclic_graph_has_no_cycles() -> None:
    graph = ComponentGraph(AgBOM.from_document(full_document()))
    assert graph.cycles() == []
    assert graph.longest_path_length() == 3  # agent -> sk1 -> srv1 -> t1


CYCLE_SCRIPT = """
import json, sys
from agbom.inventory import AgBOM, ComponentGraph
graph = ComponentGraph(AgBOM.from_document(json.load(sys.stdin)))
print(json.dumps(graph.cycles()))
"""


def test_cycles_are_the_same_in_every_process() -> None:
    # A three-skill SCC holding two cycles, inside a larger graph: a subgraph view of the
    # SCC iterates a set, so the cycle reported used to depend on PYTHONHASHSEED.
    components = [skill("s0", ["s1"]), skill("s1", ["s2", "s0"]), skill("s2", ["s0"])]
    components += [skill(f"x{i:02d}") for i in range(40)]
    text = json.dumps({"components": components})
    outputs = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        done = subprocess.run(
            [sys.executable, "-c", CYCLE_SCRIPT],
            input=text,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1
    (cycle,) = json.loads(outputs.pop())
    assert cycle[0] == "s0" and set(cycle) <= {"s0", "s1", "s2"}


def test_cycles_on_a_large_acyclic_graph_completes() -> None:
    # 10,000 skills: a chain plus fan-out to tools. Not a timing assertion: it must finish.
    size = 5_000
    components = [
        skill(f"s{i:05d}", [f"s{i + 1:05d}"] if i + 1 < size else [], tools=[f"t{i:05d}"])
        for i in range(size)
    ]
    components += [tool(f"t{i:05d}") for i in range(size)]
    graph = graph_of(*components)
    assert len(graph) == 2 * size
    started = time.perf_counter()
    assert graph.cycles() == []
    elapsed = time.perf_counter() - started
    print(f"cycles() on {len(graph)} acyclic nodes: {elapsed * 1000:.1f} ms")
    assert graph.longest_path_length() == size + 1


# -- incremental updates -------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_incremental_apply_equals_a_fresh_build(old_doc: Any, new_doc: Any) -> None:
    old, new = AgBOM.from_document(old_doc), AgBOM.from_document(new_doc)
    diff = compute_diff(old, new)
    graph = ComponentGraph(old)
    graph.apply(diff.added, diff.removed, diff.changed)
    fresh = ComponentGraph(apply_diff(old, diff))
    assert snapshot(graph) == snapshot(fresh) == snapshot(ComponentGraph(new))
    assert graph.cycles() == fresh.cycles()


@settings(max_examples=80, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_upsert_and_remove_one_by_one_equal_a_fresh_build(old_doc: Any, new_doc: Any) -> None:
    old, new = AgBOM.from_document(old_doc), AgBOM.from_document(new_doc)
    graph = ComponentGraph(old)
    # Upsert first (placeholders for not-yet-added targets), then remove what is gone.
    for component in reversed(list(new)):
        graph.upsert(component)
    for component in old:
        if component.id not in new:
            graph.remove(component.id)
    assert snapshot(graph) == snapshot(ComponentGraph(new))


def test_a_cycle_nobody_else_uses_still_hangs_off_the_agent() -> None:
    # b and c compose only each other: they have parents, yet nothing links them to the agent.
    graph = graph_of(skill("a"), skill("c", ["b"]), skill("b", ["c"]), skill("s", ["s"]))
    assert graph.reachable(ROOT_ID) >= {"a", "b", "c", "s"}
    assert graph.graph.has_edge(ROOT_ID, "b")  # the smallest id of the cycle is its entry
    assert not graph.graph.has_edge(ROOT_ID, "c")


def test_cycle_entry_edges_follow_incremental_updates() -> None:
    start = [skill("x", ["y"]), skill("y", ["x"])]
    graph = graph_of(*start)
    assert graph.graph.has_edge(ROOT_ID, "x")
    # A new user of the cycle makes the entry edge unnecessary, exactly as in a fresh build.
    user = parse_component(skill("u", ["y"]))
    graph.upsert(user)
    fresh = graph_of(*start, skill("u", ["y"]))
    assert snapshot(graph) == snapshot(fresh)
    assert not graph.graph.has_edge(ROOT_ID, "x")
    graph.remove("u")
    assert snapshot(graph) == snapshot(graph_of(*start))
