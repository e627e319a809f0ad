"""What a chain entry records of each Provenance object's trust (issue 42 N4, N5), read from
``agbom audit export`` after a real ``agbom serve``.

ACS §7.1 reserves an optional ``trust`` on the wire that a receiver MUST treat as a hint and
re-derive; §7.2 gives the default trust of each origin and says a deployment MAY override it
but SHOULD record the override in audit metadata. agbom takes the minimum over the whole
ancestry for every origin, so a ``user_input`` object derived from a tool's output is
``untrusted`` where the table says ``trusted``: stricter, and recorded. On main the entry held
only the client's claim, under ``trust`` (a tool output the client called "trusted" read as
trusted there), and no override.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.guardian.acs import hello, request
from tests.guardian.test_guardian_flow import PROFILES, STRICT
from tests.transports.served import Served, post, run_cli

pytestmark = pytest.mark.network

# §7.2, as the specification's table gives it (agent_generated: the minimum of its lineage).
SPEC_DEFAULT = {
    "user_input": "trusted",
    "system": "trusted",
    "tool_output": "untrusted",
    "retrieved": "untrusted",
    "a2a_inbound": "untrusted",
    "external": "untrusted",
}


def prov(pid: str, origin: str, *parents: str, trust: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"provenance_id": pid, "origin": origin}
    if parents:
        out["derived_from"] = list(parents)
    if trust:
        out["trust"] = trust
    return out


def message(sid: str, provenance: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "value": "text", "provenance": provenance}]
    return request("steps/userMessage", {"content": content}, session_id=sid)


def steps(sid: str) -> list[dict[str, Any]]:
    reply = [{"type": "text", "value": "ok", "provenance": prov("p9", "agent_generated", "p6")}]
    result = {
        "tool": {"name": "web_fetch"},
        "exit_status": "success",
        "outputs": [{"value": "page", "provenance": prov("p3", "tool_output", trust="trusted")}],
    }
    return [
        request("steps/toolCallResult", result, session_id=sid),
        message(sid, prov("p5", "user_input", "p3")),  # the user pasted the page
        message(sid, prov("p6", "user_input")),
        message(sid, prov("p7", "user_input", trust="untrusted")),
        message(sid, prov("p8", "user_input", "p404")),  # an ancestor never delivered
        request("steps/agentResponse", {"content": reply}, session_id=sid),
    ]


def _serve(folder: Path) -> Served:
    return Served(folder / "s.db", folder / "serve.log", extra=["--rules", str(STRICT)]).start()


def _facts(db: Path, sid: str) -> dict[str, dict[str, Any]]:
    exported = run_cli("audit", "export", sid, "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    return {
        fact["id"]: fact
        for entry in orjson.loads(exported.stdout)
        for fact in entry.get("provenance") or ()
    }


def test_each_object_records_the_trust_agbom_derived_and_the_claim_apart(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    sid = str(uuid.uuid4())
    try:
        assert post(server.url, hello(sid, profiles_supported=PROFILES))["result"]
        assert post(server.url, request("steps/sessionStart", {}, session_id=sid))["result"]
        for step in steps(sid):
            assert post(server.url, step)["result"]["decision"] == "allow"
    finally:
        server.stop()
    facts = _facts(server.db, sid)
    # N5: the client called its tool output trusted; agbom derived untrusted; both recorded,
    # neither under the bare name a reader would take for agbom's verdict.
    assert facts["p3"]["claimed_trust"] == "trusted"
    assert facts["p3"]["derived_trust"] == "untrusted"
    assert all("trust" not in fact for fact in facts.values())
    # N4: user_input derived from a tool's output: untrusted, as an override of §7.2.
    assert facts["p5"]["derived_trust"] == "untrusted"
    assert facts["p5"]["trust_override"] == {
        "default": SPEC_DEFAULT["user_input"],
        "reason": "lineage",
        "via": "p3",
    }
    assert facts["p6"]["derived_trust"] == "trusted" and "trust_override" not in facts["p6"]
    assert facts["p7"]["derived_trust"] == "untrusted"  # the client's own claim lowers it
    assert facts["p7"]["trust_override"] == {"default": "trusted", "reason": "claimed"}
    assert facts["p8"]["derived_trust"] == "unknown"
    assert facts["p8"]["trust_override"] == {
        "default": "trusted",
        "reason": "ancestor_missing",
        "via": "p404",
    }
    # agent_generated follows §7.2's own rule (the minimum of its lineage): no override.
    assert facts["p9"]["derived_trust"] == "trusted" and "trust_override" not in facts["p9"]
    # Whenever the derived trust is not the table's, the entry says why.
    for fact in facts.values():
        default = SPEC_DEFAULT.get(fact["origin"])
        if default is not None:
            assert (fact["derived_trust"] != default) == ("trust_override" in fact), fact
    verify = run_cli("audit", "verify", sid, "--db", str(server.db))
    assert verify.returncode == 0, verify.stderr


def test_the_claim_is_read_back_after_a_restart_and_explain_shows_both(tmp_path: Path) -> None:
    """A restarted Guardian rebuilds the lineage from the entries: an object only the client's
    claim made untrusted stays untrusted, and a shell call from it is denied."""
    server = _serve(tmp_path)
    sid = str(uuid.uuid4())
    try:
        assert post(server.url, hello(sid, profiles_supported=PROFILES))["result"]
        assert post(server.url, request("steps/sessionStart", {}, session_id=sid))["result"]
        for step in steps(sid):
            assert post(server.url, step)["result"]["decision"] == "allow"
        server.stop()
        server.start()
        call = {
            "tool": {"name": "Bash"},
            "capability": "process.execute",
            "arguments": {
                "command": {"value": "ls", "provenance": prov("p10", "agent_generated", "p7")}
            },
        }
        result = post(server.url, request("steps/toolCallRequest", call, session_id=sid))
        assert result["result"]["decision"] == "deny", result
        assert "AGB-FLOW-S01" in result["result"]["reason_codes"]
    finally:
        server.stop()
    shown = run_cli("explain", "--session", sid, "--db", str(server.db))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert "  p7 user_input [from " in text
    assert "] trust untrusted (claimed untrusted; §7.2 says trusted: claimed)" in text
