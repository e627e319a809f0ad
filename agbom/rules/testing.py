"""Rule unit tests: ``*_test.yaml`` files next to the packs, run by ``agbom rules test DIR``.

A test file holds ``cases``; each case gives an input AgBOM (inline, or a JSON file path
relative to the test file) and the findings it must produce::

    cases:
      - note: an unpinned stdio server is reported
        input: {components: [...]}
        want_findings: [AGB-HYG-001]            # rule ids ...
      - note: ... or rule ids with components
        input: fixtures/agent.json
        approved_capabilities: {my-skill: [process.execute]}
        want_findings: [{rule_id: AGB-PATH-001, components: [my-skill]}]
      - note: a flow case: the steps' provenance, then the tool call (flow rules only)
        steps: [{method: steps/toolCallResult, payload: {...}}]
        call: {tool: {name: Bash}, capability: process.execute, arguments: {...}}
        want_findings: [{rule_id: AGB-FLOW-001, components: [Bash]}]

Every wanted item must be matched by a finding, and every finding must match a wanted item
unless ``allow_extra: true``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from agbom.errors import AgbomError
from agbom.inventory import AgBOM, ComponentGraph
from agbom.protocol.provenance import ProvenanceProblem, step_provenance
from agbom.rules.engine import RuleSet, load_rules
from agbom.rules.flow import FlowCall, evaluate_call, flow_rules
from agbom.rules.interface import EvalContext, Finding, RuleError
from agbom.rules.lineage import Lineage, TrustPolicy
from agbom.rules.loader import TEST_SUFFIXES, read_yaml

MAX_CASES = 10_000


@dataclass
class CaseResult:
    file: str
    index: int
    note: str
    passed: bool
    problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def find_test_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise RuleError("no such rule test file or folder", file=str(path))
    return sorted(p for p in path.rglob("*") if p.name.endswith(TEST_SUFFIXES) and p.is_file())


def _want_items(raw: Any, where: str, file: str) -> list[tuple[str, frozenset[str] | None]]:
    if not isinstance(raw, list):
        raise RuleError("want_findings must be a list", file=file, key_path=where)
    items: list[tuple[str, frozenset[str] | None]] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            items.append((item, None))
        elif isinstance(item, Mapping) and isinstance(item.get("rule_id"), str):
            comps = item.get("components")
            if comps is not None and not (
                isinstance(comps, list) and all(isinstance(c, str) for c in comps)
            ):
                raise RuleError(
                    "components must be a list of ids", file=file, key_path=f"{where}[{i}]"
                )
            items.append((item["rule_id"], frozenset(comps) if comps is not None else None))
        else:
            raise RuleError(
                "each wanted finding is a rule id or {rule_id, components}",
                file=file,
                key_path=f"{where}[{i}]",
            )
    return items


def _satisfies(finding: Finding, want: tuple[str, frozenset[str] | None]) -> bool:
    rule_id, comps = want
    return finding.rule_id == rule_id and (comps is None or comps <= set(finding.components))


def _flow_findings(rules: RuleSet, case: Mapping[str, Any], where: str, file: str) -> list[Finding]:
    """A flow case: the steps' Provenance objects make the lineage, then the call is checked."""
    steps = case.get("steps") or []
    if not isinstance(steps, list):
        raise RuleError("steps must be a list", file=file, key_path=f"{where}.steps")
    lineage = Lineage(TrustPolicy(rules.trust_overrides))
    try:
        for i, step in enumerate(steps):
            if not (isinstance(step, Mapping) and isinstance(step.get("method"), str)):
                raise RuleError(
                    "each step is {method, payload}", file=file, key_path=f"{where}.steps[{i}]"
                )
            found = step_provenance(step["method"], step.get("payload"), step_id=f"step-{i}")
            lineage.add_all(found.nodes)
        call = case["call"]
        if not isinstance(call, Mapping):
            raise RuleError("call must be a toolCallRequest payload", file=file, key_path=where)
        flow_call = FlowCall.of(call, step_id="call")
    except ProvenanceProblem as exc:
        raise RuleError(str(exc), file=file, key_path=where) from None
    return list(evaluate_call(flow_rules(rules), flow_call, lineage).findings)


def run_case(
    rules: RuleSet, case: Mapping[str, Any], base: Path, file: str, index: int
) -> CaseResult:
    where = f"cases[{index}]"
    note = str(case.get("note", f"case {index}"))
    if "call" in case:
        want = _want_items(case.get("want_findings", []), f"{where}.want_findings", file)
        return _judge(case, want, _flow_findings(rules, case, where, file), file, index, note)
    raw_input = case.get("input")
    if isinstance(raw_input, str):
        input_path = (base / raw_input).resolve()
        try:
            document = orjson.loads(input_path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise RuleError(
                f"cannot read input {raw_input}: {exc}", file=file, key_path=f"{where}.input"
            ) from exc
    elif isinstance(raw_input, Mapping):
        document = raw_input
    else:
        raise RuleError(
            "input must be an AgBOM object or a file path", file=file, key_path=f"{where}.input"
        )
    want = _want_items(case.get("want_findings", []), f"{where}.want_findings", file)
    approved = case.get("approved_capabilities") or {}
    if not isinstance(approved, Mapping):
        raise RuleError(
            "approved_capabilities must map skill ids to lists",
            file=file,
            key_path=f"{where}.approved_capabilities",
        )
    now = case.get("now")
    when = datetime.now(UTC)
    if now is not None:
        try:
            when = datetime.fromisoformat(str(now))
        except ValueError:
            raise RuleError(f"invalid date {now!r}", file=file, key_path=f"{where}.now") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
    context = EvalContext(
        approved_capabilities=lambda sid: set(approved[sid]) if sid in approved else None, now=when
    )
    try:
        graph = ComponentGraph(AgBOM.from_payload(document, source=f"{file} {where}.input"))
    except AgbomError as exc:
        raise RuleError(exc.diagnostics(), file=file, key_path=f"{where}.input") from exc
    findings = rules.evaluate(graph, context=context)
    return _judge(case, want, findings, file, index, note)


def _judge(
    case: Mapping[str, Any],
    want: list[tuple[str, frozenset[str] | None]],
    findings: list[Finding],
    file: str,
    index: int,
    note: str,
) -> CaseResult:
    problems = []
    for item in want:
        if not any(_satisfies(f, item) for f in findings):
            comps = f" on {sorted(item[1])}" if item[1] else ""
            problems.append(f"missing finding {item[0]}{comps}")
    if not case.get("allow_extra", False):
        problems.extend(
            f"unexpected finding {f.rule_id} on {list(f.components)}: {f.message}"
            for f in findings
            if not any(_satisfies(f, item) for item in want)
        )
    return CaseResult(file, index, note, not problems, problems, findings)


def run_tests(path: Path, rules_path: Path | None = None) -> list[CaseResult]:
    """Run every rule test under ``path`` against the packs next to each test file (or
    ``rules_path`` / the file's own ``rules:`` key; with ``with_default: true``, the default
    pack too)."""
    results: list[CaseResult] = []
    files = find_test_files(path)
    if not files:
        raise RuleError("no rule tests (*_test.yaml) found", file=str(path))
    cache: dict[str, RuleSet] = {}
    for file in files:
        data, _ = read_yaml(file)
        if not isinstance(data, Mapping) or not isinstance(data.get("cases"), list):
            raise RuleError(
                "a rule test file needs a list of cases", file=str(file), key_path="cases"
            )
        cases: Sequence[Any] = data["cases"]
        if len(cases) > MAX_CASES:
            raise RuleError(f"more than {MAX_CASES} cases", file=str(file))
        if rules_path is not None:
            source = rules_path
        elif isinstance(data.get("rules"), str):
            source = (file.parent / data["rules"]).resolve()
        else:
            source = file.parent
        # ``with_default: true``: the default pack is loaded too, as --rules loads it.
        with_default = data.get("with_default") is True
        key = f"{source}\0{with_default}"
        if key not in cache:
            cache[key] = load_rules(source, with_default=with_default)
        for index, case in enumerate(cases):
            if not isinstance(case, Mapping):
                raise RuleError(
                    "each case must be an object", file=str(file), key_path=f"cases[{index}]"
                )
            results.append(run_case(cache[key], case, file.parent, str(file), index))
    return results
