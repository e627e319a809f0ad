"""Flow rules (``kind: flow``) and the provenance lineage they read (issue 33)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agbom.cli.app import app
from agbom.protocol.provenance import ORIGINS, ProvenanceNode
from agbom.rules import RuleError, load_rules
from agbom.rules.flow import FlowCall, evaluate_call, flow_rules
from agbom.rules.lineage import DEFAULT_TRUST, Lineage, Trust, TrustPolicy

REPO = Path(__file__).resolve().parents[2]
STRICT = REPO / "agbom" / "rules" / "packs" / "flow-strict.yaml"
STRICT_TESTS = REPO / "agbom" / "rules" / "packs" / "flow-strict_test.yaml"
runner = CliRunner()


def node(pid: str, origin: str, *parents: str, **extra: str) -> ProvenanceNode:
    return ProvenanceNode(provenance_id=pid, origin=origin, derived_from=parents, **extra)


def shell_call(*parents: str, pid: str = "arg") -> FlowCall:
    payload = {
        "tool": {"name": "Bash"},
        "capability": "process.execute",
        "arguments": {
            "command": {
                "value": "ls",
                "provenance": {
                    "provenance_id": pid,
                    "origin": "agent_generated",
                    "derived_from": list(parents),
                },
            }
        },
    }
    return FlowCall.of(payload)


def test_the_strict_pack_tests_pass_and_a_wrong_expectation_fails(tmp_path: Path) -> None:
    result = runner.invoke(app, ["rules", "test", str(STRICT_TESTS), "--rules", str(STRICT)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "5 passed, 0 failed" in result.stdout
    # The injection case must find something: expecting nothing makes it fail, naming the path.
    cases = yaml.safe_load(STRICT_TESTS.read_text())
    cases["cases"][0]["want_findings"] = []
    broken = tmp_path / "broken_test.yaml"
    broken.write_text(yaml.safe_dump(cases))
    result = runner.invoke(app, ["rules", "test", str(broken), "--rules", str(STRICT)])
    assert result.exit_code == 1
    assert (
        "argument `command` ← agent_generated p9 ← agent_generated p7 ← tool_output p3 "
        "(web_fetch https://example.net/page)" in result.stdout
    )


def test_an_override_trusts_an_internal_source_and_is_named(tmp_path: Path) -> None:
    pack = yaml.safe_load(STRICT.read_text())
    pack["trust"] = [
        {
            "origin": "retrieved",
            "source_id": "kb://internal/*",
            "trust": "trusted",
            "reason": "the reviewed internal wiki",
        }
    ]
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(pack))
    rules = load_rules(tmp_path / "p.yaml")
    lineage = Lineage(TrustPolicy(rules.trust_overrides))
    lineage.add(node("k1", "retrieved", source_id="kb://internal/runbook"))
    lineage.add(node("w1", "retrieved", source_id="https://example.net/"))
    inside = evaluate_call(flow_rules(rules), shell_call("k1"), lineage)
    assert inside.findings == ()
    assert inside.overrides == ("flow-strict:trust[0]",)
    assert "k1" in inside.cited
    outside = evaluate_call(flow_rules(rules), shell_call("w1"), lineage)
    assert [f.rule_id for f in outside.findings] == ["AGB-FLOW-S01"]
    assert outside.findings[0].path == ("arguments.command", "arg", "w1")


def test_a_source_filter_only_counts_matching_untrusted_ancestors(tmp_path: Path) -> None:
    pack = {
        "pack": "f",
        "rules": [
            {
                "id": "F1",
                "kind": "flow",
                "severity": "high",
                "action": "deny",
                "message": "{argument} from {origin} {source_id}",
                "sink": {"tool": "Bash", "arguments": "command"},
                "source": {"origin": "tool_output", "source_id": "web_*"},
            }
        ],
    }
    (tmp_path / "f.yaml").write_text(yaml.safe_dump(pack))
    rules = flow_rules(load_rules(tmp_path / "f.yaml"))
    lineage = Lineage()
    lineage.add_all(
        [
            node("mail", "a2a_inbound", source_id="peer"),
            node("page", "tool_output", source_id="web_fetch"),
            node("mix", "agent_generated", "mail"),
            node("mix2", "agent_generated", "mix", "page"),
        ]
    )
    # Untrusted, but only through an A2A message: this rule does not care.
    assert evaluate_call(rules, shell_call("mix"), lineage).findings == ()
    found = evaluate_call(rules, shell_call("mix2"), lineage).findings
    assert [f.message for f in found] == ["command from tool_output web_fetch"]
    assert found[0].path == ("arguments.command", "arg", "mix2", "page")


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"kind": "flow"}, "rule 'F1', at rules[0]: missing required field: sink"),
        ({"kind": "flow", "sink": {"arguments": "x"}}, "at rules[0].sink"),
        ({"kind": "flow", "sink": {"tool": "x", "nope": 1}}, "at rules[0].sink.nope: unknown key"),
        ({"kind": "flow", "sink": {"tool": "x"}, "message": "{bogus}"}, "unknown placeholder"),
    ],
)
def test_bad_flow_rules_are_located_errors(tmp_path: Path, rule: dict, message: str) -> None:
    raw = {"id": "F1", "severity": "high", "action": "deny", "message": "m", **rule}
    (tmp_path / "f.yaml").write_text(yaml.safe_dump({"rules": [raw]}))
    with pytest.raises(RuleError) as info:
        load_rules(tmp_path / "f.yaml")
    assert message in str(info.value)


def test_agent_generated_cannot_be_overridden(tmp_path: Path) -> None:
    pack = yaml.safe_load(STRICT.read_text())
    pack["trust"] = [{"origin": "agent_generated", "trust": "trusted", "reason": "no"}]
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(pack))
    with pytest.raises(RuleError, match=r"at trust\[0\]\.origin: agent_generated takes"):
        load_rules(tmp_path / "p.yaml")


def test_a_remote_trust_label_is_only_a_hint() -> None:
    lineage = Lineage()
    lineage.add(node("t", "tool_output", trust_hint="trusted"))
    lineage.add(node("u", "user_input", trust_hint="untrusted"))
    assert lineage.verdict(node("a", "agent_generated", "t")).trust is Trust.UNTRUSTED
    assert lineage.verdict(node("b", "agent_generated", "u")).trust is Trust.UNTRUSTED


def test_an_id_delivered_again_cannot_be_laundered() -> None:
    lineage = Lineage()
    assert lineage.add(node("p3", "tool_output"))
    assert not lineage.add(node("p3", "user_input"))
    assert lineage.conflicts == 1
    # The argument itself claims a known id with a trusted origin: the weaker one stands.
    assert lineage.verdict(node("p3", "user_input")).trust is Trust.UNTRUSTED


def test_the_byte_bound_drops_nodes_and_what_derives_from_them_is_unknown() -> None:
    lineage = Lineage(max_bytes=2_000)
    added = lineage.add_all(node(f"u{i}", "user_input") for i in range(100))
    assert 0 < added < 100 and lineage.dropped == 100 - added
    assert lineage.bytes <= 2_000
    verdict = lineage.verdict(node("a", "agent_generated", "u99"))
    assert verdict.trust is Trust.UNKNOWN and verdict.missing == "u99"


def test_a_cycle_is_unknown_whichever_end_arrives_first() -> None:
    for order in (("x", "y"), ("y", "x")):
        lineage = Lineage()
        for pid in order:
            other = "y" if pid == "x" else "x"
            lineage.add(node(pid, "agent_generated", other))
        assert lineage.verdict(node("a", "agent_generated", "x")).trust is Trust.UNKNOWN


# -- property tests of trust derivation ---------------------------------------------------------

BASE_ORIGINS = [o for o in ORIGINS if o != "agent_generated"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BASE_ORIGINS), st.integers(min_value=1, max_value=40))
def test_no_chain_of_agent_generated_steps_raises_trust(origin: str, steps: int) -> None:
    lineage = Lineage()
    lineage.add(node("p0", origin))
    start = lineage.verdict(node("probe", "agent_generated", "p0")).trust
    assert start is DEFAULT_TRUST[origin]
    for i in range(1, steps + 1):
        lineage.add(node(f"p{i}", "agent_generated", f"p{i - 1}"))
        assert lineage.verdict(node("probe", "agent_generated", f"p{i}")).trust <= start


@st.composite
def dags(draw: st.DrawFn) -> list[ProvenanceNode]:
    size = draw(st.integers(min_value=1, max_value=25))
    out = []
    for i in range(size):
        origin = draw(st.sampled_from(ORIGINS))
        # Edges to earlier nodes and, now and then, to one never delivered.
        parents = draw(st.lists(st.integers(min_value=0, max_value=i), max_size=3, unique=True))
        ids = [f"n{p}" if p < i else "ghost" for p in parents]
        out.append(node(f"n{i}", origin, *ids))
    return out


@settings(max_examples=200, deadline=None)
@given(dags(), st.randoms(use_true_random=False))
def test_trust_does_not_depend_on_arrival_order(nodes: list[ProvenanceNode], rnd) -> None:  # noqa: ANN001
    def verdicts(order: list[ProvenanceNode]) -> dict[str, Trust]:
        lineage = Lineage()
        lineage.add_all(order)
        probes = {n.provenance_id: node("probe", "agent_generated", n.provenance_id) for n in order}
        return {pid: lineage.verdict(p).trust for pid, p in probes.items()}

    shuffled = list(nodes)
    rnd.shuffle(shuffled)
    assert verdicts(nodes) == verdicts(shuffled)
    # Reversed: every node arrives before its parents.
    assert verdicts(nodes) == verdicts(nodes[::-1])


def test_rules_check_lists_flow_rules(tmp_path: Path) -> None:
    shutil.copy(STRICT, tmp_path / "flow.yaml")
    result = runner.invoke(app, ["rules", "check", str(tmp_path)])
    assert result.exit_code == 0, result.stdout + result.stderr


def test_benign_flows_against_the_strict_pack_flag_exactly_the_documented_two() -> None:
    benign = REPO / "agbom" / "rules" / "packs" / "flow-strict-benign_test.yaml"
    cases = yaml.safe_load(benign.read_text())["cases"]
    flagged = [c["note"] for c in cases if c["want_findings"]]
    assert len(cases) == 7 and [n.split()[0] for n in flagged] == ["5", "6"]
    result = runner.invoke(app, ["rules", "test", str(benign)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "7 passed, 0 failed" in result.stdout


def test_provenance_without_an_id_is_kept_by_its_origin_and_refused_when_strict() -> None:
    from agbom.protocol.provenance import ProvenanceProblem, step_provenance

    payload = {
        "tool": {"name": "Bash"},
        "capability": "process.execute",
        "arguments": {"command": {"value": "x", "provenance": {"origin": "tool_output"}}},
    }
    found = step_provenance("steps/toolCallRequest", payload, step_id="r1")
    assert [n.provenance_id for n in found.nodes] == ["~r1/arguments.command"]
    rules = flow_rules(load_rules(STRICT))
    call = FlowCall.of(payload, step_id="r1")
    assert [f.rule_id for f in evaluate_call(rules, call, Lineage()).findings] == ["AGB-FLOW-S01"]
    with pytest.raises(ProvenanceProblem, match=r"arguments\.command\.provenance has no"):
        step_provenance("steps/toolCallRequest", payload, step_id="r1", strict=True)
    # Edges that cannot be kept become one unresolvable parent: unknown, never trusted.
    many = {"origin": "agent_generated", "provenance_id": "m"}
    payload["arguments"]["command"]["provenance"] = {
        **many,
        "derived_from": [f"u{i}" for i in range(300)],
    }
    node = step_provenance("steps/toolCallRequest", payload).nodes[0]
    assert len(node.derived_from) == 256 and node.derived_from[-1] == "~unresolvable"
    lineage = Lineage()
    lineage.add_all(
        node_
        for node_ in (
            ProvenanceNode(provenance_id=f"u{i}", origin="user_input") for i in range(300)
        )
    )
    assert lineage.verdict(node).trust is Trust.UNKNOWN


def test_modify_is_for_flow_rules_only(tmp_path: Path) -> None:
    rule = {"id": "B1", "kind": "ban", "severity": "high", "action": "modify", "message": "m"}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"rules": [{**rule, "match": {"name": "x"}}]}))
    with pytest.raises(RuleError, match=r"rule 'B1', at rules\[0\]\.kind"):
        load_rules(tmp_path / "b.yaml")
