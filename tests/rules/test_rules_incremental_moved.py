"""Incremental evaluation told where edges moved (``moved=GraphUndo.nodes``) keeps only the
findings whose path cannot have moved: after any change, rewiring included, it must give
what a full evaluation gives, paths and all, also once the composition closes a cycle (where
the witness of a least-privilege finding used to depend on which sources were searched
before it)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from rule_samples import server, skill, tool

from agbom.inventory import AgBOM, ComponentGraph, parse_component
from agbom.rules import load_rules
from agbom.rules.interface import Finding

CAPS = ["fs.read", "fs.write", "process.execute", "net.http"]


def as_json(findings: list[Finding]) -> list[dict[str, Any]]:
    return [f.to_json() for f in findings]


def start(rng: random.Random) -> dict[str, dict[str, Any]]:
    comps = [tool(f"t{i}", rng.choice(CAPS)) for i in range(12)]
    comps += [server(f"s{i}", [f"t{j}" for j in range(12) if j % 4 == i], version=None)
              for i in range(4)]  # fmt: skip
    comps += [skill(f"k{i}", mcp_servers=[f"s{i}"], declared_capabilities=["fs.read"])
              for i in range(3)]  # fmt: skip
    return {c["id"]: c for c in comps}


def rewire(
    rng: random.Random, by_id: dict[str, dict[str, Any]], serial: int
) -> tuple[list, list, list]:
    """One random change: (added, removed ids, changed), as wire dicts."""
    kind = rng.choice(["cap", "servers", "tools", "compose", "add", "remove"])
    skills = sorted(i for i in by_id if i.startswith("k"))
    servers = sorted(i for i in by_id if i.startswith("s"))
    tools = sorted(i for i in by_id if i.startswith("t"))
    if kind == "cap":
        victim = rng.choice(tools)
        return [], [], [dict(by_id[victim], capability=rng.choice(CAPS))]
    if kind == "servers":  # a skill now reaches other servers: their tools' paths may move
        victim = rng.choice(skills)
        return [], [], [dict(by_id[victim], mcp_servers=rng.sample(servers, rng.randint(0, 2)))]
    if kind == "tools":
        victim = rng.choice(servers)
        return [], [], [dict(by_id[victim], tools=rng.sample(tools, rng.randint(0, 3)))]
    if kind == "compose":
        victim = rng.choice(skills)
        others = [k for k in skills if k < victim]
        return [], [], [dict(by_id[victim], composed_skills=rng.sample(others, len(others) and 1))]
    if kind == "add":
        new = skill(
            f"k{100 + serial}",
            mcp_servers=rng.sample(servers, 1),
            composed_skills=rng.sample(skills, 1),  # may close a cycle (ids compare as text)
            declared_capabilities=["fs.*"],
        )
        return [new], [], []
    victim = rng.choice(tools)
    changed = [dict(by_id[s], tools=[t for t in by_id[s]["tools"] if t != victim])
               for s in servers if victim in by_id[s]["tools"]]  # fmt: skip
    return [], [victim], changed


@pytest.mark.parametrize("told", [True, False], ids=["moved", "not-told"])
@pytest.mark.parametrize("seed", range(8))
def test_incremental_with_moved_edges_matches_a_full_evaluation(seed: int, told: bool) -> None:
    rules = load_rules()
    rng = random.Random(seed)
    by_id = start(rng)
    graph = ComponentGraph(AgBOM.from_document({"components": list(by_id.values())}))
    previous = rules.evaluate(graph)
    for serial in range(30):
        added, removed, changed = rewire(rng, by_id, serial)
        undo = graph.apply_undoable(
            [parse_component(c) for c in added], removed, [parse_component(c) for c in changed]
        )
        for component in (*added, *changed):
            by_id[component["id"]] = component
        for cid in removed:
            del by_id[cid]
        ids = [*(c["id"] for c in added), *removed, *(c["id"] for c in changed)]
        incremental = rules.evaluate_incremental(
            graph, ids, previous, moved=undo.nodes if told else None
        )
        assert as_json(incremental) == as_json(rules.evaluate(graph)), (seed, serial)
        previous = incremental
