"""Incremental runs that skip the whole-graph cycle and depth rules must still agree with a
full evaluation when a change closes a cycle or makes a path too long."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rule_samples
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.inventory import ComponentGraph, parse_component
from agbom.rules import load_rules
from agbom.rules.engine import RuleSet
from agbom.rules.interface import Finding
from agbom.rules.loader import default_pack_path


def skill(sid: str, composed: list[str]) -> dict[str, Any]:
    return rule_samples.skill(sid, declared_capabilities=[], composed_skills=composed)


def rules_with_depth(tmp_path: Path, limit: int) -> RuleSet:
    text = default_pack_path().read_text(encoding="utf-8")
    assert "max_length: 12" in text
    (tmp_path / "default.yaml").write_text(text.replace("max_length: 12", f"max_length: {limit}"))
    return load_rules(tmp_path)


def as_json(findings: list[Finding]) -> list[dict[str, Any]]:
    return [f.to_json() for f in findings]


def step(
    rules: RuleSet, graph: ComponentGraph, change: dict[str, Any], previous: list[Finding]
) -> list[Finding]:
    graph.upsert(parse_component(change))
    incremental = rules.evaluate_incremental(graph, [change["id"]], previous)
    assert as_json(incremental) == as_json(rules.evaluate(graph))
    return incremental


def test_quiet_then_too_deep_then_cycle(tmp_path: Path) -> None:
    rules = rules_with_depth(tmp_path, 4)
    # A chain k3 -> k2 -> k1 -> k0: three edges below k3, four from the agent.
    chain = [skill("k0", []), *(skill(f"k{i}", [f"k{i - 1}"]) for i in range(1, 4))]
    graph = rule_samples.graph_of(*chain)
    previous = rules.evaluate(graph)
    assert not {"AGB-PATH-002", "AGB-PATH-003"} & {f.rule_id for f in previous}

    # Unrelated: nothing gets longer, no cycle.
    previous = step(rules, graph, skill("side", ["k0"]), previous)
    assert not {"AGB-PATH-002", "AGB-PATH-003"} & {f.rule_id for f in previous}

    # A new top skill above k3 makes the chain five edges long from the agent.
    previous = step(rules, graph, skill("top", ["k3"]), previous)
    assert "AGB-PATH-003" in {f.rule_id for f in previous}


def test_change_deep_below_makes_path_too_long(tmp_path: Path) -> None:
    rules = rules_with_depth(tmp_path, 4)
    chain = [skill("k0", []), *(skill(f"k{i}", [f"k{i - 1}"]) for i in range(1, 4))]
    graph = rule_samples.graph_of(*chain)
    previous = step(rules, graph, skill("leaf", []), rules.evaluate(graph))
    # The bottom of the chain gains a child: the path grows at its far end.
    previous = step(rules, graph, skill("k0", ["leaf"]), previous)
    assert "AGB-PATH-003" in {f.rule_id for f in previous}


def test_change_closes_a_cycle(tmp_path: Path) -> None:
    rules = rules_with_depth(tmp_path, 40)
    chain = [skill("k0", []), *(skill(f"k{i}", [f"k{i - 1}"]) for i in range(1, 4))]
    graph = rule_samples.graph_of(*chain)
    previous = rules.evaluate(graph)
    previous = step(rules, graph, skill("k0", ["k3"]), previous)
    assert "AGB-PATH-002" in {f.rule_id for f in previous}
    # Breaking it again: the previous cycle finding means the rule is re-run and now quiet.
    previous = step(rules, graph, skill("k0", []), previous)
    assert "AGB-PATH-002" not in {f.rule_id for f in previous}


def test_wide_graph_one_change_deepens_then_closes_a_cycle(tmp_path: Path) -> None:
    # The agent and k1 have far more children than a change has ancestors, so the depth
    # check finds the children inside the affected set from that set's side.
    rules = rules_with_depth(tmp_path, 4)
    fan = [skill(f"fan{i:02d}", []) for i in range(40)]
    chain = [
        skill("k0", []),
        skill("k1", ["k0", *(f["id"] for f in fan)]),
        skill("k2", ["k1"]),
        skill("k3", ["k2"]),
    ]
    graph = rule_samples.graph_of(*fan, *chain)
    previous = step(rules, graph, skill("fan07", []), rules.evaluate(graph))
    previous = step(rules, graph, skill("leaf", []), previous)
    previous = step(rules, graph, skill("k0", ["leaf"]), previous)
    assert "AGB-PATH-003" in {f.rule_id for f in previous}
    (tmp_path / "deep").mkdir()
    rules = rules_with_depth(tmp_path / "deep", 40)
    previous = rules.evaluate(graph)
    previous = step(rules, graph, skill("leaf", ["k3"]), previous)
    assert "AGB-PATH-002" in {f.rule_id for f in previous}


@settings(max_examples=60, deadline=None)
@given(
    limit=st.integers(min_value=2, max_value=6),
    edits=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=7),
            st.sets(st.integers(min_value=0, max_value=7), max_size=3),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_incremental_shape_agrees_with_full_evaluation(
    tmp_path_factory: pytest.TempPathFactory,
    limit: int,
    edits: list[tuple[int, set[int]]],
) -> None:
    rules = rules_with_depth(tmp_path_factory.mktemp("pack"), limit)
    fan = [skill(f"fan{i:02d}", []) for i in range(20)]
    graph = rule_samples.graph_of(*fan, *(skill(f"s{i}", []) for i in range(8)))
    previous = rules.evaluate(graph)
    for target, uses in edits:
        composed = [f"s{u}" for u in sorted(uses)]
        if target == 0:
            composed += [f["id"] for f in fan]
        previous = step(rules, graph, skill(f"s{target}", composed), previous)
