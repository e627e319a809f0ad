"""Incremental runs that skip the whole-graph cycle and depth rules must still agree with a
full evaluation when a change closes a cycle or makes a path too long."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rule_samples

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
