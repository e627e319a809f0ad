"""The ACS decision contract, in process, over a real SQLite store and the default rule pack."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from agbom.guardian import Decision, Guardian, GuardianConfig, build_guardian, clamp
from agbom.protocol import (
    METHODS,
    AcsError,
    Disposition,
    KeyRing,
    lookup,
    sign_envelope,
    verify_chain,
    verify_envelope,
)
from agbom.store import Digest, SkillStatus
from agbom.transports.interface import Limits, handle_body
from tests.guardian.acs import (
    SAMPLE_AGBOM,
    SHA_A,
    SHA_B,
    digest,
    hello,
    new_session_id,
    one_tool_agbom,
    request,
)


@pytest.fixture
def guardian(tmp_path: Path) -> Guardian:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def hashed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "seq"} for e in entries]


def ok(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in response, response
    return response["result"]


def err(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" in response, response
    return response["error"]


def open_session(g: Guardian, session_id: str | None = None, **hello_extra: Any) -> str:
    sid = session_id or new_session_id()
    ok(g.handle(hello(sid, **hello_extra)))
    result = ok(g.handle(request("steps/sessionStart", {}, session_id=sid)))
    assert result["decision"] == "allow"
    return sid


def test_full_session_writes_a_verifiable_chain(guardian: Guardian) -> None:
    sid = open_session(guardian)
    heads = []
    steps = [
        ("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, None),
        ("steps/turnStart", {"turn_id": "t1", "triggered_by": "user_message"}, "t1"),
        ("steps/userMessage", {"content": "list the repo"}, "t1"),
        (
            "steps/toolCallRequest",
            {"tool": {"name": "read_file"}, "arguments": {"path": {"value": "README.md"}}},
            "t1",
        ),
        (
            "steps/toolCallResult",
            {"tool": {"name": "read_file"}, "exit_status": "success", "outputs": [{"value": "hi"}]},
            "t1",
        ),
        ("steps/turnEnd", {"turn_id": "t1", "outcome": "completed", "step_count": 3}, "t1"),
    ]
    for method, payload, turn in steps:
        result = ok(guardian.handle(request(method, payload, session_id=sid, turn_id=turn)))
        assert result["decision"] == "allow", (method, result)
        assert len(result["chain_hash"]) == 64
        assert result["metadata"]["evaluation_duration_ms"] >= 0
        heads.append(result["chain_hash"])
    end = ok(
        guardian.handle(
            request(
                "steps/sessionEnd",
                {"reason": "completed", "final_chain_hash": heads[-1]},
                session_id=sid,
            )
        )
    )
    assert end["decision"] == "allow" and "chain_mismatch" not in end.get("reason_codes", [])
    entries = guardian.store.chain_entries(sid)
    assert [e["step_type"] for e in entries][:2] == ["steps/sessionStart", "agbom/snapshot"]
    assert entries[0]["previous_hash"] is None
    assert verify_chain(hashed(entries)) is None
    assert entries[-1]["entry_hash"] == end["chain_hash"]
    turn_entries = [e for e in entries if e["step_type"] == "steps/userMessage"]
    assert turn_entries[0]["turn_id"] == "t1"
    # After sessionEnd the chain is sealed.
    late = err(guardian.handle(request("steps/userMessage", {"content": "x"}, session_id=sid)))
    assert late["code"] == -32000 and late["data"]["reason"] == "session_closed"
    assert len(guardian.store.chain_entries(sid)) == len(entries)


def test_ping_needs_no_session_and_writes_nothing(guardian: Guardian) -> None:
    sid = new_session_id()
    result = ok(guardian.handle(request("system/ping", {"echo": "hi"}, session_id=sid)))
    assert result["decision"] == "allow"
    assert result["payload"]["status"] == "ok" and result["payload"]["echo"] == "hi"
    assert guardian.store.chain_entries(sid) == []


def test_server_hello_fields(guardian: Guardian) -> None:
    sid = new_session_id()
    result = ok(
        guardian.handle(hello(sid, profiles_supported=["acs-core", "acs-inspect", "acs-crypto"]))
    )
    for key in (
        "negotiated_version",
        "methods_evaluated",
        "selected_transport",
        "timeout_config",
        "signature_algorithms_supported",
        "skew_window_ms",
        "on_decision_failure",
        "agbom_serializations_supported",
        "profiles_accepted",
    ):
        assert key in result
    assert result["negotiated_version"] == "0.1.0"
    assert "steps/toolCallRequest" in result["methods_evaluated"]
    assert "acs-crypto" not in result["profiles_accepted"]
    assert "cyclonedx-1.6" in result["agbom_serializations_supported"]
    assert "spdx-3.0" in result["agbom_serializations_supported"]
    # Only values of the handshake schema's enum.
    assert set(result["agbom_serializations_supported"]) <= {
        "canonical",
        "cyclonedx-1.6",
        "spdx-3.0",
        "swid",
    }


@pytest.mark.parametrize(
    ("mutate", "code", "reason"),
    [
        (lambda r: r.pop("jsonrpc"), -32600, None),
        (lambda r: r["params"].pop("request_id"), -32600, None),
        (lambda r: r.__setitem__("method", "steps/noSuchHook"), -32601, "method_not_found"),
        (lambda r: r["params"]["payload"].pop("tool"), -32602, None),
        (lambda r: r["params"].__setitem__("timestamp", "2001-01-01T00:00:00Z"), -32006, None),
    ],
)
def test_request_checks_map_to_codes(
    guardian: Guardian, mutate: Any, code: int, reason: str | None
) -> None:
    sid = open_session(guardian)
    req = request("steps/toolCallRequest", {"tool": {"name": "x"}, "arguments": {}}, session_id=sid)
    mutate(req)
    error = err(guardian.handle(req))
    assert error["code"] == code
    if reason:
        assert error["data"]["reason"] == reason
    assert len(guardian.store.chain_entries(sid)) == 1  # only sessionStart


def test_skew_error_names_window(guardian: Guardian) -> None:
    sid = open_session(guardian)
    old = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    error = err(
        guardian.handle(
            request("steps/userMessage", {"content": "x"}, session_id=sid, timestamp=old)
        )
    )
    assert error["code"] == -32006 and error["data"]["skew_window_ms"] == 300_000


def test_no_handshake_and_not_negotiated_are_32003(guardian: Guardian) -> None:
    sid = new_session_id()
    error = err(guardian.handle(request("steps/sessionStart", {}, session_id=sid)))
    assert error["code"] == -32003 and error["data"]["method"] == "steps/sessionStart"
    sid2 = new_session_id()
    ok(guardian.handle(hello(sid2, methods=["steps/sessionStart", "steps/sessionEnd"])))
    ok(guardian.handle(request("steps/sessionStart", {}, session_id=sid2)))
    error = err(guardian.handle(request("steps/userMessage", {"content": "x"}, session_id=sid2)))
    assert error["code"] == -32003 and error["data"]["reason"] == "method_not_negotiated"


def test_steps_before_session_start_are_refused_when_it_is_required(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", config=GuardianConfig(require_session_start=True))
    sid = new_session_id()
    ok(g.handle(hello(sid)))
    error = err(g.handle(request("steps/userMessage", {"content": "x"}, session_id=sid)))
    assert error["code"] == -32003 and error["data"]["reason"] == "no_session"
    assert g.store.chain_entries(sid) == []
    g.store.close()


def test_replay_of_request_id_and_nonce(guardian: Guardian) -> None:
    sid = open_session(guardian)
    req = request("steps/userMessage", {"content": "x"}, session_id=sid, nonce="n" * 20)
    ok(guardian.handle(req))
    again = err(guardian.handle(copy.deepcopy(req)))
    assert again["code"] == -32005 and again["data"]["reason"] == "duplicate_request_id"
    other = request("steps/userMessage", {"content": "y"}, session_id=sid, nonce="n" * 20)
    error = err(guardian.handle(other))
    assert error["code"] == -32005 and error["data"]["reason"] == "duplicate_nonce"


def test_replay_is_detected_after_restart(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db")
    sid = open_session(g)
    req = request("steps/userMessage", {"content": "x"}, session_id=sid)
    ok(g.handle(req))
    g.store.close()
    g2 = build_guardian(tmp_path / "s.db")
    error = err(g2.handle(copy.deepcopy(req)))
    assert error["code"] == -32005
    # The chain continues from the stored head.
    result = ok(g2.handle(request("steps/userMessage", {"content": "y"}, session_id=sid)))
    assert verify_chain(hashed(g2.store.chain_entries(sid))) is None
    assert result["chain_hash"] == g2.store.chain_head(sid)
    g2.store.close()


def test_version_and_provenance_refusals(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", config=GuardianConfig(policy_requires_provenance=True))
    sid = new_session_id()
    error = err(g.handle(hello(sid, acs_versions_supported=["1.0.0"])))
    assert error["code"] == -32001 and error["data"]["supported_versions"] == ["0.1.0"]
    error = err(g.handle(hello(sid, provenance_producer="none")))
    assert error["code"] == -32002
    g.store.close()


def test_clamp_never_returns_a_disallowed_disposition() -> None:
    for name, spec in METHODS.items():
        if not spec.allowed:
            continue  # handshake/hello answers with a ServerHello, not a decision
        for wanted in Disposition:
            decision = Decision(
                disposition=wanted,
                reasoning="r",
                modifications={"modified_content": "x"} if wanted is Disposition.MODIFY else None,
                ask_details={"question": "q"} if wanted is Disposition.ASK else None,
                defer_details={"reason": "low_confidence"} if wanted is Disposition.DEFER else None,
            )
            clamped = clamp(decision, spec)
            assert clamped.disposition in spec.allowed, (name, wanted)
            if clamped.disposition is Disposition.DEFER:
                assert clamped.defer_details is not None
            if clamped.disposition is not Disposition.ALLOW:
                assert clamped.reasoning


def test_audit_only_hooks_allow_even_with_banned_inventory(guardian: Guardian) -> None:
    spec = lookup("steps/turnEnd")
    assert spec is not None and spec.allowed == frozenset({Disposition.ALLOW})
    post = lookup("steps/postCompact")
    assert post is not None and Disposition.DENY not in post.allowed


def test_secret_in_user_message_is_redacted_by_modify(guardian: Guardian) -> None:
    sid = open_session(guardian)
    token = "ghp_" + "A" * 36
    result = ok(
        guardian.handle(
            request(
                "steps/userMessage", {"content": f"use {token}", "other": "fine"}, session_id=sid
            )
        )
    )
    assert result["decision"] == "modify"
    assert result["modifications"]["redactions"] == [
        {"path": "/content", "replacement": "use [REDACTED]"}
    ]
    assert result["reasoning"]


def test_agbom_snapshot_is_versioned_and_changed_applies(guardian: Guardian) -> None:
    sid = open_session(guardian)
    ok(guardian.handle(request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid)))
    changed = {
        "changed": [dict(SAMPLE_AGBOM["components"][1], version="2.0.0")],
    }
    result = ok(guardian.handle(request("agbom/changed", changed, session_id=sid)))
    assert "artifact_changed" in result["reason_codes"]
    latest = guardian.store.agbom_version(sid)
    assert latest is not None and latest["version"] == 2
    versions = {c["id"]: c.get("version") for c in latest["document"]["components"]}
    assert versions["gh"] == "2.0.0"
    entries = guardian.store.chain_entries(sid)
    assert entries[-1]["step_type"] == "agbom/changed" and entries[-1]["agbom_hash"].startswith(
        "sha256:"
    )


def test_invalid_agbom_is_32602_with_location(guardian: Guardian) -> None:
    sid = open_session(guardian)
    bad = copy.deepcopy(SAMPLE_AGBOM)
    bad["components"][1]["tools"] = ["missing"]
    error = err(guardian.handle(request("agbom/snapshot", {"agbom": bad}, session_id=sid)))
    assert error["code"] == -32602 and "missing" in error["data"]["message"]


def test_strict_inventory_denies_unknown_tool(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", config=GuardianConfig(strict_inventory=True))
    sid = open_session(g)
    ok(g.handle(request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid)))
    known = ok(
        g.handle(
            request(
                "steps/toolCallRequest",
                {"tool": {"name": "read_file"}, "arguments": {}},
                session_id=sid,
            )
        )
    )
    assert known["decision"] == "allow"
    unknown = ok(
        g.handle(
            request(
                "steps/toolCallRequest", {"tool": {"name": "rm"}, "arguments": {}}, session_id=sid
            )
        )
    )
    assert unknown["decision"] == "deny" and "unknown_component" in unknown["reason_codes"]
    g.store.close()


# -- skills ---------------------------------------------------------------------------------


def register(
    g: Guardian, sid: str, skill_id: str, value: str = SHA_A, composed: list[str] | None = None
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "skill_id": skill_id,
        "definition": {"ref": f"skills/{skill_id}", "digest": digest(value)},
        "declared_capabilities": [],
    }
    if composed is not None:
        payload["composition"] = {"composed_skills": composed}
    return ok(g.handle(request("steps/skillRegister", payload, session_id=sid)))


def load(
    g: Guardian, sid: str, skill_id: str, value: str = SHA_A, path: list[str] | None = None
) -> dict[str, Any]:
    payload = {
        "skill_id": skill_id,
        "digest": digest(value),
        "load_trigger": "skill_composition" if path else "user",
        "load_path": [{"skill_id": s} for s in (path or [skill_id])],
        "digest_verified": True,
    }
    return ok(g.handle(request("steps/skillLoad", payload, session_id=sid)))


def approve(g: Guardian, skill_id: str, value: str = SHA_A) -> None:
    g.store.set_status(skill_id, Digest("sha256", value), SkillStatus.APPROVED, actor="test")


def test_skill_register_pending_then_approved_then_load(guardian: Guardian) -> None:
    sid = open_session(guardian)
    first = register(guardian, sid, "pdf-tools")
    assert first["decision"] == "deny" and "approval_pending" in first["reason_codes"]
    unapproved_load = load(guardian, sid, "pdf-tools")
    assert unapproved_load["decision"] == "deny"
    approve(guardian, "pdf-tools")
    assert register(guardian, sid, "pdf-tools")["decision"] == "allow"
    assert load(guardian, sid, "pdf-tools")["decision"] == "allow"


def test_skill_digest_drift_is_denied_naming_the_approved_digest(guardian: Guardian) -> None:
    sid = open_session(guardian)
    approve(guardian, "pdf-tools", SHA_A)
    drift = register(guardian, sid, "pdf-tools", SHA_B)
    assert drift["decision"] == "deny" and "artifact_changed" in drift["reason_codes"]
    assert SHA_A in drift["reasoning"]
    result = load(guardian, sid, "pdf-tools", SHA_B)
    assert result["decision"] == "deny" and "digest_mismatch" in result["reason_codes"]


def test_skill_load_composition_cycle_and_depth(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", config=GuardianConfig(max_load_path_depth=3))
    sid = open_session(g)
    for skill, composed in (("a", ["b"]), ("b", ["c"]), ("c", []), ("d", [])):
        approve(g, skill)
        assert register(g, sid, skill, composed=composed)["decision"] == "allow"
    assert load(g, sid, "c", path=["a", "b", "c"])["decision"] == "allow"
    outside = load(g, sid, "d", path=["a", "d"])
    assert outside["decision"] == "deny" and "composition_violation" in outside["reason_codes"]
    assert "a -> d" in outside["reasoning"]
    cycle = load(g, sid, "a", path=["a", "b", "a"])
    assert "load_path_cycle" in cycle["reason_codes"]
    deep = load(g, sid, "c", path=["a", "b", "c", "a", "b", "c"])
    assert "load_path_too_deep" in deep["reason_codes"]
    g.store.close()


def test_revoke_takes_effect_immediately(guardian: Guardian) -> None:
    sid = open_session(guardian)
    approve(guardian, "s1")
    assert register(guardian, sid, "s1")["decision"] == "allow"
    guardian.store.set_status("s1", Digest("sha256", SHA_A), SkillStatus.REVOKED, actor="test")
    result = load(guardian, sid, "s1")
    assert result["decision"] == "deny" and "skill_revoked" in result["reason_codes"]


def test_observe_mode_allows_and_records(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", mode="observe")
    sid = open_session(g)
    result = register(g, sid, "new-skill")
    assert result["decision"] == "allow" and "observe_mode" in result["reason_codes"]
    record = g.store.get_skill("new-skill", Digest("sha256", SHA_A))
    assert record is not None and str(record.status) == "pending"
    g.store.close()


def test_skill_unload_churn_is_counted(guardian: Guardian) -> None:
    sid = open_session(guardian)
    codes: list[str] = []
    for _ in range(3):
        result = ok(
            guardian.handle(
                request(
                    "steps/skillUnload",
                    {"skill_id": "s", "reason": "explicit_unload"},
                    session_id=sid,
                )
            )
        )
        assert result["decision"] == "allow"
        codes = result.get("reason_codes", [])
    assert "skill_churn" in codes


# -- signatures -----------------------------------------------------------------------------


def signed_guardian(tmp_path: Path, *, require: bool) -> tuple[Guardian, KeyRing]:
    secret = tmp_path / "secret"
    secret.write_bytes(bytes(range(32)))
    secret.chmod(0o600)
    g = build_guardian(
        tmp_path / "s.db",
        secret_file=secret,
        config=GuardianConfig(require_signatures=require),
    )
    assert g.keyring is not None
    return g, g.keyring


def test_signed_requests_get_signed_responses(tmp_path: Path) -> None:
    g, ring = signed_guardian(tmp_path, require=True)
    sid = new_session_id()
    key = ring.session_key(sid)
    response = g.handle(sign_envelope(hello(sid), key, ring.key_id))
    verify_envelope(response, key)
    response = g.handle(
        sign_envelope(request("steps/sessionStart", {}, session_id=sid), key, ring.key_id)
    )
    assert ok(response)["decision"] == "allow"
    verify_envelope(response, key)
    g.store.close()


def test_forged_requests_are_refused_and_leave_no_entry(tmp_path: Path) -> None:
    g, ring = signed_guardian(tmp_path, require=True)
    sid = new_session_id()
    key = ring.session_key(sid)
    ok(g.handle(sign_envelope(hello(sid), key, ring.key_id)))
    ok(g.handle(sign_envelope(request("steps/sessionStart", {}, session_id=sid), key, ring.key_id)))
    before = len(g.store.chain_entries(sid))
    unsigned = request("steps/userMessage", {"content": "x"}, session_id=sid)
    assert err(g.handle(unsigned))["code"] == -32004
    tampered = sign_envelope(
        request("steps/userMessage", {"content": "x"}, session_id=sid), key, ring.key_id
    )
    tampered["params"]["payload"]["content"] = "y"
    assert err(g.handle(tampered))["code"] == -32004
    other_session_key = ring.session_key(new_session_id())
    wrong_key = sign_envelope(
        request("steps/userMessage", {"content": "x"}, session_id=sid),
        other_session_key,
        ring.key_id,
    )
    assert err(g.handle(wrong_key))["code"] == -32004
    good = sign_envelope(
        request("steps/userMessage", {"content": "x"}, session_id=sid), key, ring.key_id
    )
    ok(g.handle(good))
    replayed = err(g.handle(copy.deepcopy(good)))
    assert replayed["code"] == -32005
    assert len(g.store.chain_entries(sid)) == before + 1
    g.store.close()


# -- JSON-RPC framing -----------------------------------------------------------------------


def test_body_limits_parse_errors_and_batches(guardian: Guardian) -> None:
    limits = Limits(max_body_bytes=4096, max_depth=16, max_batch=3)
    parse = orjson.loads(handle_body(guardian, b"{not json", limits))
    assert parse["error"]["code"] == -32700 and parse["id"] is None
    big = orjson.loads(handle_body(guardian, b"[" + b" " * 5000 + b"]", limits))
    assert big["error"]["code"] == -32600 and big["error"]["data"]["reason"] == "payload_too_large"
    deep = orjson.loads(handle_body(guardian, b"[" * 40 + b"]" * 40, limits))
    assert deep["error"]["code"] == -32600
    sid = new_session_id()
    batch = [
        request("system/ping", {}, session_id=sid),
        request("system/ping", {"echo": 1}, session_id=sid),
    ]
    answers = orjson.loads(handle_body(guardian, orjson.dumps(batch), limits))
    assert [a["id"] for a in answers] == [b["id"] for b in batch]
    too_many = orjson.loads(handle_body(guardian, orjson.dumps(batch * 2), limits))
    assert too_many["error"]["code"] == -32600
    empty = orjson.loads(handle_body(guardian, b"[]", limits))
    assert empty["error"]["code"] == -32600


def test_steps_inside_a_turn_carry_its_id_on_the_chain(guardian: Guardian) -> None:
    sid = open_session(guardian)
    turn = {"turn_id": "t9", "triggered_by": "user_message"}
    ok(guardian.handle(request("steps/turnStart", turn, session_id=sid, turn_id="t9")))
    ok(guardian.handle(request("steps/userMessage", {"content": "hi"}, session_id=sid)))
    end = {"turn_id": "t9", "outcome": "completed", "step_count": 1}
    ok(guardian.handle(request("steps/turnEnd", end, session_id=sid)))
    ok(guardian.handle(request("steps/userMessage", {"content": "after"}, session_id=sid)))
    turns = [e.get("turn_id") for e in guardian.store.chain_entries(sid)]
    assert turns == [None, "t9", "t9", "t9", None]


BASH_AGBOM = {
    "agent": {"id": "agent-1"},
    "components": [
        {
            "id": "bash",
            "type": "tool",
            "name": "bash",
            "version": "1",
            "provider": "local",
            "capability": "process.execute",
            "registration_provenance": {"origin": "system"},
        },
    ],
}


def register_runner(g: Guardian, sid: str, declared: list[str]) -> dict[str, Any]:
    payload = {
        "skill_id": "runner",
        "definition": {"ref": "skills/runner", "digest": digest(SHA_A)},
        "declared_capabilities": declared,
        "composition": {"tools": ["bash"]},
    }
    return ok(g.handle(request("steps/skillRegister", payload, session_id=sid)))


def test_skill_reaching_process_execute_needs_an_approval_carrying_it(guardian: Guardian) -> None:
    sid = open_session(guardian)
    snap = ok(guardian.handle(request("agbom/snapshot", {"agbom": BASH_AGBOM}, session_id=sid)))
    assert snap["decision"] == "allow"
    # Registered declaring nothing, then approved: the approval does not carry process.execute.
    assert register_runner(guardian, sid, [])["decision"] == "deny"
    guardian.store.set_status("runner", Digest("sha256", SHA_A), SkillStatus.APPROVED, actor="t")
    denied = register_runner(guardian, sid, [])
    assert denied["decision"] == "deny" and "AGB-PATH-001" in denied["reason_codes"]
    assert "bash" in denied["reasoning"]


def test_skill_approved_with_process_execute_may_reach_it(guardian: Guardian) -> None:
    sid = open_session(guardian)
    ok(guardian.handle(request("agbom/snapshot", {"agbom": BASH_AGBOM}, session_id=sid)))
    register_runner(guardian, sid, ["process.execute"])
    guardian.store.set_status("runner", Digest("sha256", SHA_A), SkillStatus.APPROVED, actor="t")
    allowed = register_runner(guardian, sid, ["process.execute"])
    assert allowed["decision"] == "allow", allowed


def test_composition_of_unknown_tools_is_marked_unverified(guardian: Guardian) -> None:
    sid = open_session(guardian)
    # Approved ahead of registration: the approval must name what the skill will declare.
    guardian.store.set_status(
        "runner",
        Digest("sha256", SHA_A),
        SkillStatus.APPROVED,
        actor="t",
        capabilities=["process.execute"],
    )
    result = register_runner(guardian, sid, ["process.execute"])
    assert result["decision"] == "allow"
    assert "composition_unverified" in result["reason_codes"]


def test_in_process_decide_refuses_a_sealed_session(guardian: Guardian) -> None:
    sid = new_session_id()
    first = guardian.decide(
        "steps/userMessage", {"content": "hi"}, session_id=sid, agent_id="runtime-agent"
    )
    assert first.disposition is Disposition.ALLOW and first.chain_hash
    guardian.decide("steps/sessionEnd", {"reason": "completed"}, session_id=sid, agent_id="a")
    with pytest.raises(AcsError, match="session was ended"):
        guardian.decide("steps/userMessage", {"content": "x"}, session_id=sid, agent_id="a")
    steps = [e["step_type"] for e in guardian.store.chain_entries(sid)]
    assert steps == ["steps/sessionStart", "steps/userMessage", "steps/sessionEnd"]


def test_a_refused_snapshot_is_kept_for_audit_but_never_current(guardian: Guardian) -> None:
    sid = open_session(guardian)
    refused = ok(
        guardian.handle(request("agbom/snapshot", {"agbom": RUNNER_AGBOM}, session_id=sid))
    )
    assert refused["decision"] == "deny"
    assert guardian.store.agbom_version(sid) is None
    kept = guardian.store.agbom_version(sid, 1)
    assert kept is not None and kept["accepted"] is False
    assert kept["change"]["decision"] == "deny"
    # The next, clean snapshot becomes the session's AgBOM; a restart restores that one.
    ok(guardian.handle(request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid)))
    current = guardian.store.agbom_version(sid)
    assert current is not None and current["version"] == 2 and current["accepted"]
    guardian.forget_sessions()
    state = guardian.session(sid)
    assert state is not None and state.agbom is not None and "gh" in state.agbom


RUNNER_AGBOM = {
    "agent": {"id": "agent-1"},
    "components": [
        *BASH_AGBOM["components"],
        {
            "id": "runner",
            "type": "skill",
            "name": "runner",
            "description": "runs tests",
            "definition": {"ref": "skills/runner", "digest": digest(SHA_A)},
            "tools": ["bash"],
        },
    ],
}


ASK_PACK = """
pack: approvals-needed
version: 1
rules:
  - id: ASK-DEPLOY
    kind: ban
    severity: high
    action: ask
    message: "{component.name} deploys to production"
    description: Deploys need a person.
    match:
      type: tool
      name: deploy
"""

DEPLOY_AGBOM = one_tool_agbom("deploy", "net.http")


def test_ask_rule_asks_where_allowed_and_never_fails_open(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "ask.yaml").write_text(ASK_PACK)
    g = build_guardian(tmp_path / "s.db", packs)
    sid = open_session(g)
    # agbom/snapshot allows only ALLOW/DENY: the ask becomes a deny.
    snap = ok(g.handle(request("agbom/snapshot", {"agbom": DEPLOY_AGBOM}, session_id=sid)))
    assert snap["decision"] == "deny" and "ask_unsupported_here" in snap["reason_codes"]
    # toolCallRequest allows ASK: the Guardian asks a person, with the details the spec needs.
    call = {"tool": {"name": "deploy"}, "arguments": {}}
    asked = ok(g.handle(request("steps/toolCallRequest", call, session_id=sid)))
    assert asked["decision"] == "ask"
    details = asked["ask_details"]
    assert details["timeout_disposition"] == "deny" and details["approver"]["type"] == "human"
    assert "ASK-DEPLOY" in asked["reason_codes"] and asked["reasoning"]
    g.store.close()
