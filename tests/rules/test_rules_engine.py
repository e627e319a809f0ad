"""Rule kinds, exceptions, incremental evaluation, explain, and invalid packs."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rule_samples import graph_of, server, skill, tool

from agbom.inventory import AgBOM, ComponentGraph, parse_component
from agbom.rules import EvalContext, RuleError, Severity, load_rules
from agbom.rules.interface import Finding


def write_pack(tmp_path: Path, text: str, name: str = "pack.yaml") -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def ids(findings: list[Finding]) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.rule_id, f.components) for f in findings]


BAN_PACK = (
    """
pack: t
rules:
  - id: BAN-NAME
    kind: ban
    severity: critical
    action: deny
    message: "banned {component.name}@{component.version}"
    match: {type: mcp_server, name: evil-server, version: "<2.0"}
  - id: BAN-DIGEST
    kind: ban
    severity: high
    action: deny
    message: "banned skill {component.id}"
    match: {digest: "sha256:"""
    + "cd" * 32
    + """"}
  - id: BAN-PROVIDER
    kind: ban
    severity: low
    action: warn
    message: "provider {component.provider}"
    match: {type: tool, provider: "shady*"}
    exceptions:
      - components: [grandfathered]
        expires: "2099-01-01"
        reason: still migrating
      - components: [expired]
        expires: "2000-01-01"
        reason: too late
"""
)


def test_ban_rules(tmp_path: Path) -> None:
    rules = load_rules(write_pack(tmp_path, BAN_PACK))
    g = graph_of(
        server("old", [], name="evil-server", version="1.9"),
        server("new", [], name="evil-server", version="2.0"),
        server("other", [], name="Evil-Server-2", version="1.0"),
        skill(
            "bad", definition={"ref": "x", "digest": {"algorithm": "SHA-256", "value": "CD" * 32}}
        ),
        tool("t1", "fs.read", provider="shadyco"),
        tool("grandfathered", "fs.read", provider="shadyco"),
        tool("expired", "fs.read", provider="shadyco"),
    )
    findings = rules.evaluate(g)
    assert ids(findings) == [
        ("BAN-NAME", ("old",)),
        ("BAN-DIGEST", ("bad",)),
        ("BAN-PROVIDER", ("expired",)),
        ("BAN-PROVIDER", ("t1",)),
    ]
    assert findings[0].message == "banned evil-server@1.9"
    assert findings[0].path == ("@agent", "old")
    assert findings[0].severity is Severity.CRITICAL
    assert "version in <2.0" in findings[0].explanation
    # Before the exception's expiry date it applies; after it, it does not.
    early = rules.evaluate(g, context=EvalContext(now=datetime(1999, 6, 1, tzinfo=UTC)))
    assert ("BAN-PROVIDER", ("expired",)) not in ids(early)


PATH_PACK = """
rules:
  - id: EXEC
    kind: path
    check: reach
    severity: high
    action: deny
    message: "{component.id} reaches {target.id} ({capabilities})"
    from: {type: skill}
    to: {type: tool, capability: process.execute}
    unless: approved_capabilities
  - id: PEERS
    kind: path
    check: reach
    severity: medium
    action: ask
    message: "agent reaches {target.id}"
    from: {type: agent}
    to: {type: a2a_peer, not: {endpoint: {host_suffix: example.com}}}
  - id: MUST-READ
    kind: path
    check: reach
    mode: require
    severity: info
    action: warn
    message: "{component.id} reads nothing"
    from: {type: skill}
    to: {type: tool, capability: fs.read}
  - id: DEPTH
    kind: path
    check: max_length
    max_length: 3
    severity: low
    action: warn
    message: "{length} > {max_length}"
  - id: LOOP
    kind: path
    check: cycle
    severity: medium
    action: warn
    message: "cycle"
"""


def test_path_rules(tmp_path: Path) -> None:
    rules = load_rules(write_pack(tmp_path, PATH_PACK))
    g = graph_of(
        tool("sh", "process.execute"),
        tool("rd", "fs.read"),
        server("srv", ["sh", "rd"]),
        skill("top", composed_skills=["mid"]),
        skill("mid", mcp_servers=["srv"]),
        skill("lonely"),
        {
            "id": "good",
            "type": "a2a_peer",
            "endpoint": "https://a.example.com",
            "protocol_version": "1",
        },
        {
            "id": "bad",
            "type": "a2a_peer",
            "endpoint": "https://evil-example.com",
            "protocol_version": "1",
        },
    )
    findings = rules.evaluate(g)
    by_rule = {(f.rule_id, f.components[0]): f for f in findings}
    assert by_rule[("EXEC", "top")].path == ("@agent", "top", "mid", "srv", "sh")
    assert by_rule[("EXEC", "top")].message == "top reaches sh (process.execute)"
    assert ("EXEC", "mid") in by_rule
    assert by_rule[("PEERS", "@agent")].components == ("@agent", "bad")
    assert ("MUST-READ", "lonely") in by_rule and ("MUST-READ", "top") not in by_rule
    assert by_rule[("DEPTH", "rd")].path == ("@agent", "top", "mid", "srv", "rd")
    assert not any(f.rule_id == "LOOP" for f in findings)
    # Approval covering the capability silences the path rule for that skill only.
    approved = EvalContext(approved_capabilities=lambda s: {"process.*"} if s == "mid" else None)
    again = {(f.rule_id, f.components[0]) for f in rules.evaluate(g, context=approved)}
    assert ("EXEC", "top") in again and ("EXEC", "mid") not in again


def test_cycle_and_via(tmp_path: Path) -> None:
    pack = (
        PATH_PACK
        + """
  - id: VIA
    kind: path
    check: reach
    severity: high
    action: deny
    message: "via skills only"
    from: {type: agent}
    to: {type: tool}
    via: {type: skill}
"""
    )
    rules = load_rules(write_pack(tmp_path, pack))
    g = graph_of(
        tool("t", "fs.read"),
        skill("a", composed_skills=["b"], tools=["t"]),
        skill("b", composed_skills=["a"]),
        server("srv", ["t"]),
        skill("c", mcp_servers=["srv"]),
    )
    findings = rules.evaluate(g)
    loops = [f for f in findings if f.rule_id == "LOOP"]
    assert [f.components for f in loops] == [("a", "b")]
    assert loops[0].path == ("a", "b", "a")
    # "c" reaches t only through the server (not a skill), so VIA must not use that path.
    # a and b sit on a cycle nobody else uses; the graph still hangs the cycle off the agent
    # (fail closed), so the agent reaches t through skill a.
    via = [f for f in findings if f.rule_id == "VIA"]
    assert via and all("c" not in f.path and "srv" not in f.path for f in via)
    assert any(f.path[-2:] == ("a", "t") for f in via)


LP_PACK = """
rules:
  - id: UNDECLARED
    kind: least_privilege
    check: undeclared
    severity: medium
    action: warn
    message: "{component.id}: {capabilities}"
  - id: BROAD
    kind: least_privilege
    check: overbroad
    allow_wildcards: false
    severity: low
    action: warn
    message: "{component.id}: {capabilities}"
"""


def test_least_privilege(tmp_path: Path) -> None:
    rules = load_rules(write_pack(tmp_path, LP_PACK))
    g = graph_of(
        tool("rd", "fs.read"),
        tool("wr", ["fs.write", "net.http"]),
        server("srv", ["wr"]),
        skill("exact", declared_capabilities=["fs.read"], tools=["rd"]),
        skill("family", declared_capabilities=["fs"], tools=["rd"], mcp_servers=["srv"]),
        skill("unused", declared_capabilities=["fs.read", "process.execute"], tools=["rd"]),
        skill("nothing", composed_skills=["exact"]),
        {"id": "cap", "type": "agent_capability", "name": "c", "description": "d", "tools": ["wr"]},
    )
    got = {(f.rule_id, f.components[0]): f.message for f in rules.evaluate(g)}
    assert got == {
        ("UNDECLARED", "family"): "family: net.http",
        ("UNDECLARED", "nothing"): "nothing: fs.read",
        ("BROAD", "family"): "family: fs",
        ("BROAD", "unused"): "unused: process.execute",
    }


def test_default_pack_loads_and_is_compiled_once() -> None:
    rules = load_rules()
    assert {"AGB-HYG-001", "AGB-PATH-001", "AGB-LP-001"} <= set(rules.rule_ids)


def _random_doc(rng: random.Random, n: int) -> list[dict[str, Any]]:
    caps = ["fs.read", "fs.write", "process.execute", "net.http"]
    comps: list[dict[str, Any]] = [tool(f"t{i}", rng.choice(caps)) for i in range(n)]
    comps.extend(
        server(
            f"s{i}",
            rng.sample([f"t{j}" for j in range(n)], 2),
            version=rng.choice(["1.0.0", None, "latest"]),
        )
        for i in range(n // 3)
    )
    for i in range(n // 3):
        kids = [f"k{j}" for j in range(i)]
        comps.append(
            skill(
                f"k{i}",
                mcp_servers=[f"s{rng.randrange(n // 3)}"],
                composed_skills=rng.sample(kids, min(2, len(kids))),
                declared_capabilities=rng.sample(caps, 2),
            )
        )
    return comps


def test_incremental_matches_full(tmp_path: Path) -> None:
    rules = load_rules()
    rng = random.Random(7)
    comps = _random_doc(rng, 30)
    g = ComponentGraph(AgBOM.from_document({"components": comps}))
    previous = rules.evaluate(g)
    for step in range(25):
        by_id = {c.id: c for c in g.components()}
        victim = rng.choice(sorted(i for i in by_id if i.startswith(("t", "s", "k"))))
        data = dict(by_id[victim].data)
        changed = [victim]
        if data["type"] == "tool":
            data["capability"] = rng.choice(["fs.read", "process.execute"])
        elif data["type"] == "mcp_server":
            data["version"] = rng.choice(["1.0.0", None])
        else:
            data["declared_capabilities"] = rng.sample(["fs.read", "fs.*", "process.execute"], 1)
        g.upsert(parse_component(data))
        if step % 5 == 0:  # add a new skill on top of an existing one
            new = skill(f"new{step}", composed_skills=[victim] if victim.startswith("k") else [])
            g.upsert(parse_component(new))
            changed.append(new["id"])
        incremental = rules.evaluate_incremental(g, changed, previous)
        full = rules.evaluate(g)
        assert ids(incremental) == ids(full), f"step {step}"
        for finding in incremental:
            nodes = finding.path
            assert all(b in g.graph.succ[a] for a, b in zip(nodes, nodes[1:], strict=False))
        previous = incremental


def test_incremental_removal(tmp_path: Path) -> None:
    rules = load_rules()
    g = graph_of(server("srv", [], version=None), skill("k", mcp_servers=["srv"]))
    previous = rules.evaluate(g)
    assert ("AGB-HYG-001", ("srv",)) in ids(previous)
    g.upsert(parse_component(skill("k")))
    g.remove("srv")
    after = rules.evaluate_incremental(g, ["srv", "k"], previous)
    assert ids(after) == ids(rules.evaluate(g))
    assert not any("srv" in f.components for f in after)


def test_evaluate_component_at_hook_time() -> None:
    rules = load_rules()
    srv = parse_component(server("srv", [], version="latest"))
    assert [f.rule_id for f in rules.evaluate_component(srv)] == ["AGB-HYG-001"]
    g = graph_of(
        tool("sh", "process.execute"),
        skill("k", tools=["sh"], declared_capabilities=["process.execute"]),
    )
    found = rules.evaluate_component(g.component("k"), g)
    assert [f.rule_id for f in found] == ["AGB-PATH-001"]
    ctx = EvalContext(approved_capabilities=lambda s: {"process.execute"})
    assert rules.evaluate_component(g.component("k"), g, context=ctx) == []


def test_explain(tmp_path: Path) -> None:
    rules = load_rules(write_pack(tmp_path, BAN_PACK))
    g = graph_of(server("old", [], name="evil-server", version="1.9"))
    (exp,) = rules.explain(g, rule_id="BAN-NAME", component_id="old")
    assert exp.matched and exp.findings[0].components == ("old",)
    assert "version in <2.0: yes" in exp.reasons
    (miss,) = rules.explain(g, rule_id="BAN-DIGEST", component_id="old")
    assert not miss.matched
    with pytest.raises(RuleError, match="no rule with id"):
        rules.explain(g, rule_id="NOPE")


RULE_OK = "  - {id: R1, kind: ban, severity: high, action: deny, message: m, match: {name: x}}\n"


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("rules: []\n", r"pack.yaml:1.*rules"),
        ("", "empty"),
        (
            "rules:\n  - {id: R1, kind: ban, severity: huge, action: deny, message: m, "
            "match: {}}\n",
            r"pack.yaml:2, rule 'R1', at rules\[0\].severity",
        ),
        (
            "rules:\n"
            + RULE_OK
            + "  - id: R2\n    kind: ban\n    severity: low\n    action: deny\n"
            "    message: m\n    match: {nmae: x}\n",
            r"pack.yaml:8, rule 'R2', at rules\[1\].match.nmae: unknown key",
        ),
        (
            "rules:\n  - {id: R1, kind: ban, severity: high, action: deny, message: m, "
            "match: {version: '>>>1'}}\n",
            r"rule 'R1', at match.version: invalid version range",
        ),
        (
            "rules:\n  - {id: R1, kind: ban, severity: high, action: deny, message: m, "
            "match: {purl: 'pkg:'}}\n",
            r"at match.purl: invalid purl",
        ),
        (
            "rules:\n  - {id: R1, kind: ban, severity: high, action: deny, message: '{secret}', "
            "match: {name: x}}\n",
            r"unknown placeholder \{secret\}",
        ),
        ("rules:\n" + RULE_OK + RULE_OK, r"rule 'R1', at rules\[1\].id: duplicate rule id"),
        (
            "rules:\n  - {id: R1, kind: path, check: reach, severity: high, action: deny, "
            "message: m, from: {type: skill}}\n",
            r"rule 'R1'.*to",
        ),
        ("rules: [\n", "not valid YAML"),
        ("x: &a [1]\ny: *a\nrules: []\n", "aliases are not allowed"),
    ],
)
def test_invalid_packs_have_located_errors(tmp_path: Path, text: str, pattern: str) -> None:
    write_pack(tmp_path, text)
    with pytest.raises(RuleError, match=pattern):
        load_rules(tmp_path)


def test_empty_folder_fails_closed(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="no rule packs"):
        load_rules(tmp_path)
    with pytest.raises(RuleError, match="no such rule pack"):
        load_rules(tmp_path / "missing")
