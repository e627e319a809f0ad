"""Replay the reference TypeScript Guardian's published decisions against agbom.

The cases are data (tests/conformance/data/reference_guardian_cases.json): each step's
payload and the decision the reference gave, transcribed from its published case file (the
file's source says where). Each case runs in a session of its own against a Guardian with
the baseline runtime pack and the reference deployment's operator data (its egress allowlist
and its tools), and agbom's decision is compared with the reference's.

A step agrees when the disposition is the same and, for a MODIFY, agbom's rewrite of the
field the reference rewrote is the reference's text. Where agbom decides otherwise on
purpose, :data:`DELIBERATE` says why (also in docs/rules.md, "Agreement with the reference
Guardian").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CASES = Path(__file__).parent / "data" / "reference_guardian_cases.json"
TWO_METHODS = ["steps/toolCallRequest", "steps/toolCallResult"]

DELIBERATE: dict[str, str] = {
    "argument_named_like_the_leaf": "the reference refuses an argument named acs_policy_target "
    "because its own mapping writes its policy target there; agbom has no such field, and "
    "`ls` is allowed",
    "egress_ftp_ignored": "ftp:// is egress: agbom's egress check reads every network scheme "
    "(http, https, ftp, ftps, ws, wss, sftp), the reference only http(s)",
    "egress_upper_case_scheme": "URL schemes are case-insensitive (RFC 3986 §3.1): "
    "HTTPS://evil.example.net is the same destination as https://, and is denied",
    "raw_command_absent": "the reference reads egress from raw_command only; agbom reads the "
    "command argument a shell tool runs, so leaving raw_command out does not skip the check",
    "result_no_outputs": "a tool result with no outputs has nothing to inspect or leak; the "
    "reference refuses it because its policy path is missing, agbom allows it",
    "result_output_is_an_object": "a credential in an output that is an object still reaches "
    "the model: agbom redacts it (MODIFY), the reference does not look inside",
    "result_secret_in_second_output": "the reference inspects the first output only; agbom "
    "redacts a credential in any output (MODIFY)",
    "split_flags_not_matched": "rm -r -f / removes the root as rm -rf / does: agbom denies it, "
    "the reference's pattern wants the flags joined",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    case: str
    index: int
    wanted: str
    got: str
    agrees: bool
    detail: str = ""


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CASES.read_text())
    return data


def replay(
    decide: Callable[[str, str, dict[str, Any]], dict[str, Any]],
    new_session: Callable[[], str],
) -> Iterator[Outcome]:
    """Every step of every case, decided by ``decide(session_id, method, payload)`` (the
    result object of the answer) in a session of its own per case."""
    for case in load()["cases"]:
        session = new_session()
        for index, step in enumerate(case["steps"]):
            result = decide(session, step["method"], step["payload"])
            got = str(result.get("decision"))
            agrees = got == step["decision"]
            detail = ""
            if agrees and got == "modify":
                replaced = {
                    r.get("replacement")
                    for r in (result.get("modifications") or {}).get("redactions") or []
                }
                agrees = step["replacement"] in replaced
                detail = f"rewrites {sorted(str(r) for r in replaced)}"
            elif got == "deny":
                detail = str(result.get("reasoning") or "")[:200]
            yield Outcome(case["name"], index, step["decision"], got, agrees, detail)
