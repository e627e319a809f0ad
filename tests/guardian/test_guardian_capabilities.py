"""An approval covers the capabilities it names, never what the agent declares afterwards."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agbom.guardian import Guardian, build_guardian
from agbom.store import Digest, SkillStatus
from tests.guardian.acs import SHA_A, SHA_B, digest, hello, new_session_id, request
from tests.guardian.test_guardian_pipeline import BASH_AGBOM, register_runner

PAIR = Digest("sha256", SHA_A)


@pytest.fixture
def guardian(tmp_path: Path) -> Iterator[Guardian]:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def ok(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in response, response
    result: dict[str, Any] = response["result"]
    return result


def open_session(g: Guardian) -> str:
    sid = new_session_id()
    ok(g.handle(hello(sid)))
    assert ok(g.handle(request("steps/sessionStart", {}, session_id=sid)))["decision"] == "allow"
    return sid


def register(
    g: Guardian, sid: str, declared: Sequence[str], skill_id: str = "helper"
) -> dict[str, Any]:
    payload = {
        "skill_id": skill_id,
        "definition": {"ref": f"skills/{skill_id}", "digest": digest(SHA_A)},
        "declared_capabilities": list(declared),
    }
    return ok(g.handle(request("steps/skillRegister", payload, session_id=sid)))


def load(
    g: Guardian, sid: str, declared: Sequence[str] | None, skill_id: str = "helper"
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "skill_id": skill_id,
        "digest": digest(SHA_A),
        "load_trigger": "user",
        "load_path": [{"skill_id": skill_id}],
    }
    if declared is not None:
        payload["declared_capabilities"] = list(declared)
    return ok(g.handle(request("steps/skillLoad", payload, session_id=sid)))


def approve(g: Guardian, skill_id: str, capabilities: Sequence[str] | None) -> None:
    g.store.set_status(
        skill_id, PAIR, SkillStatus.APPROVED, actor="reviewer", capabilities=capabilities
    )


def stored_caps(g: Guardian, skill_id: str) -> tuple[str, ...]:
    record = g.store.get_skill(skill_id, PAIR)
    assert record is not None
    return record.declared_capabilities


def test_approve_ahead_without_capabilities_denies_a_declared_escalation(
    guardian: Guardian,
) -> None:
    sid = open_session(guardian)
    approve(guardian, "helper", None)
    result = register(guardian, sid, ["fs.read", "process.execute"])
    assert result["decision"] == "deny"
    assert "capabilities_exceed_approval" in result["reason_codes"]
    assert "process.execute" in result["reasoning"] and "no capabilities" in result["reasoning"]
    refs = [r["rule_id"] for r in result.get("policy_references", [])]
    assert "skill-approved-capabilities" in refs
    # The registration did not turn the declaration into an approval.
    assert stored_caps(guardian, "helper") == ()
    assert register(guardian, sid, [])["decision"] == "allow"


def test_approve_ahead_with_the_capability_allows(guardian: Guardian) -> None:
    sid = open_session(guardian)
    approve(guardian, "helper", ["process.execute"])
    result = register(guardian, sid, ["process.execute"])
    assert result["decision"] == "allow", result
    assert "capabilities_exceed_approval" not in result.get("reason_codes", [])


def test_coverage_follows_the_rules_layer(guardian: Guardian) -> None:
    sid = open_session(guardian)
    approve(guardian, "helper", ["fs.*", "net.http"])
    covered = ["fs", "fs.read", "FS.write", "net.http.get"]
    assert register(guardian, sid, covered)["decision"] == "allow"
    # net is broader than the approved net.http.
    wider = register(guardian, sid, ["fs.read", "net"])
    assert wider["decision"] == "deny" and "capabilities_exceed_approval" in wider["reason_codes"]
    # The reasoning names the extra capability and the approved ones.
    assert "declares net," in wider["reasoning"] and "fs.*, net.http" in wider["reasoning"]


def test_approving_a_pending_registration_keeps_its_declared_capabilities(
    guardian: Guardian,
) -> None:
    sid = open_session(guardian)
    first = register(guardian, sid, ["fs.read", "process.execute"])
    assert first["decision"] == "deny" and "approval_pending" in first["reason_codes"]
    approve(guardian, "helper", None)
    assert stored_caps(guardian, "helper") == ("fs.read", "process.execute")
    again = register(guardian, sid, ["fs.read", "process.execute"])
    assert again["decision"] == "allow", again


def test_re_registration_declaring_more_than_approved_is_denied(guardian: Guardian) -> None:
    sid = open_session(guardian)
    register(guardian, sid, ["fs.read"])
    approve(guardian, "helper", None)
    assert register(guardian, sid, ["fs.read"])["decision"] == "allow"
    wider = register(guardian, sid, ["fs.read", "net.http"])
    assert wider["decision"] == "deny"
    codes = wider["reason_codes"]
    assert codes[0] == "capabilities_exceed_approval"
    assert all(c.startswith("warn:") for c in codes[1:])  # rule warnings ride along
    assert "net.http" in wider["reasoning"] and "fs.read" in wider["reasoning"]
    assert stored_caps(guardian, "helper") == ("fs.read",)


def test_skill_load_checks_declared_capabilities_when_given(guardian: Guardian) -> None:
    sid = open_session(guardian)
    approve(guardian, "helper", ["fs.read"])
    assert register(guardian, sid, ["fs.read"])["decision"] == "allow"
    assert load(guardian, sid, None)["decision"] == "allow"
    assert load(guardian, sid, ["fs.read"])["decision"] == "allow"
    wider = load(guardian, sid, ["fs.read", "process.execute"])
    assert wider["decision"] == "deny"
    assert "capabilities_exceed_approval" in wider["reason_codes"]
    assert "process.execute" in wider["reasoning"]


def test_path_rule_allows_a_process_execute_tool_only_with_an_approval_naming_it(
    guardian: Guardian,
) -> None:
    sid = open_session(guardian)
    assert (
        ok(guardian.handle(request("agbom/snapshot", {"agbom": BASH_AGBOM}, session_id=sid)))[
            "decision"
        ]
        == "allow"
    )
    approve(guardian, "runner", ["process.execute"])
    allowed = register_runner(guardian, sid, ["process.execute"])
    assert allowed["decision"] == "allow", allowed


def test_path_rule_denies_a_process_execute_tool_approved_without_it(guardian: Guardian) -> None:
    sid = open_session(guardian)
    ok(guardian.handle(request("agbom/snapshot", {"agbom": BASH_AGBOM}, session_id=sid)))
    approve(guardian, "runner", None)
    # Declaring nothing: the capability check passes, the path rule still sees bash.
    silent = register_runner(guardian, sid, [])
    assert silent["decision"] == "deny" and "AGB-PATH-001" in silent["reason_codes"]
    assert "capabilities_exceed_approval" not in silent["reason_codes"]
    # Declaring it: both the approval check and the path rule deny.
    loud = register_runner(guardian, sid, ["process.execute"])
    assert loud["decision"] == "deny"
    assert {"capabilities_exceed_approval", "AGB-PATH-001"} <= set(loud["reason_codes"])


def test_another_digests_approval_does_not_cover_this_artifact(guardian: Guardian) -> None:
    # Digest A is approved with process.execute; digest B of the same skill is approved with
    # nothing. B composes the process.execute tool: A's approval must not cover it.
    sid = open_session(guardian)
    ok(guardian.handle(request("agbom/snapshot", {"agbom": BASH_AGBOM}, session_id=sid)))
    guardian.store.set_status(
        "runner",
        Digest("sha256", SHA_A),
        SkillStatus.APPROVED,
        actor="t",
        capabilities=["process.execute"],
    )
    guardian.store.set_status(
        "runner", Digest("sha256", SHA_B), SkillStatus.APPROVED, actor="t", capabilities=[]
    )
    payload = {
        "skill_id": "runner",
        "definition": {"ref": "skills/runner", "digest": digest(SHA_B)},
        "declared_capabilities": [],
        "composition": {"tools": ["bash"]},
    }
    result = ok(guardian.handle(request("steps/skillRegister", payload, session_id=sid)))
    assert result["decision"] == "deny" and "AGB-PATH-001" in result["reason_codes"]
