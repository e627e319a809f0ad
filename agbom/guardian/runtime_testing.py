"""Runtime pack unit tests: ``*_test.yaml`` files with a ``runtime_pack:`` key, run by
``agbom rules test`` next to the component rule tests (agbom/rules/testing.py).

A test file names the pack and the operator data its cases run with, then the cases::

    runtime_pack: baseline            # a shipped pack, or a pack file relative to this file
    egress_allow: [docs.example.com]  # hosts added to the pack's allowlist for these cases
    known_tools: []                   # tools added to the pack's list
    cases:
      - note: a recursive forced rm of the root is denied
        command: "rm -rf /"           # shorthand: a Bash toolCallRequest running this line
        want: deny                    # deny, warn (only warn rules fire) or allow
        want_rules: [AGB-RUN-001]     # exactly the rules that fire
        want_match: "rm -rf /"        # optional: the text the first hit matched
      - note: any step, as sent
        step: {method: steps/toolCallRequest, payload: {tool: {name: WebFetch}, ...}}
        want: allow
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agbom.guardian.runtime_pack import RuntimePacks, builtin_packs, load_pack
from agbom.rules.interface import RuleError
from agbom.rules.loader import read_yaml
from agbom.rules.testing import MAX_CASES, CaseResult

RUNTIME_KEY = "runtime_pack"


def is_runtime_test(path: Path) -> bool:
    """Whether the rule test file at ``path`` tests a runtime pack."""
    data, _ = read_yaml(path)
    return isinstance(data, Mapping) and RUNTIME_KEY in data


def _names(data: Mapping[str, Any], key: str, file: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError("must be a list of names", file=file, key_path=key)
    return list(value)


def _step(case: Mapping[str, Any], where: str, file: str) -> tuple[str, Mapping[str, Any]]:
    if isinstance(case.get("command"), str):
        command = case["command"]
        payload = {
            "tool": {"name": str(case.get("tool", "Bash"))},
            "arguments": {"command": {"value": command}},
            "raw_command": command,
        }
        return "steps/toolCallRequest", payload
    step = case.get("step")
    if not (
        isinstance(step, Mapping)
        and isinstance(step.get("method"), str)
        and isinstance(step.get("payload"), Mapping)
    ):
        raise RuleError(
            "a case gives command (text) or step {method, payload}", file=file, key_path=where
        )
    return step["method"], step["payload"]


def run_file(file: Path) -> list[CaseResult]:
    """Every case of one runtime test file."""
    name = str(file)
    data, _ = read_yaml(file)
    if not isinstance(data, Mapping) or not isinstance(data.get("cases"), list):
        raise RuleError("a rule test file needs a list of cases", file=name, key_path="cases")
    cases = data["cases"]
    if len(cases) > MAX_CASES:
        raise RuleError(f"more than {MAX_CASES} cases", file=name)
    pack_name = data[RUNTIME_KEY]
    if not isinstance(pack_name, str):
        raise RuleError("runtime_pack names a pack", file=name, key_path=RUNTIME_KEY)
    source = pack_name if pack_name in builtin_packs() else str(file.parent / pack_name)
    pack = load_pack(
        source,
        egress_allow=_names(data, "egress_allow", name),
        tools=_names(data, "known_tools", name),
    )
    packs = RuntimePacks([pack])
    results: list[CaseResult] = []
    for index, case in enumerate(cases):
        where = f"cases[{index}]"
        if not isinstance(case, Mapping):
            raise RuleError("each case must be an object", file=name, key_path=where)
        note = str(case.get("note", f"case {index}"))
        want = case.get("want")
        if want not in ("deny", "warn", "allow"):
            raise RuleError("want is deny, warn or allow", file=name, key_path=f"{where}.want")
        method, payload = _step(case, where, name)
        hits = packs.hits(method, payload)
        got = (
            "deny" if any(h.rule.action == "deny" for h in hits) else ("warn" if hits else "allow")
        )
        problems: list[str] = []
        if got != want:
            fired = ", ".join(f"{h.rule.id} {h.matched!r}" for h in hits) or "nothing fired"
            problems.append(f"wanted {want}, got {got} ({fired})")
        if "want_rules" in case:
            wanted = case["want_rules"]
            if not isinstance(wanted, list) or not all(isinstance(r, str) for r in wanted):
                raise RuleError(
                    "want_rules is a list of rule ids", file=name, key_path=f"{where}.want_rules"
                )
            fired_ids = {h.rule.id for h in hits}
            if fired_ids != set(wanted):
                problems.append(f"wanted rules {sorted(wanted)}, fired {sorted(fired_ids)}")
        if "want_match" in case and (not hits or hits[0].matched != case["want_match"]):
            shown = hits[0].matched if hits else None
            problems.append(f"wanted the match {case['want_match']!r}, got {shown!r}")
        results.append(CaseResult(name, index, note, not problems, problems))
    return results
