"""What a client can apply (spec §6.5, §9.2), replays of refused requests, and the sessions of
runtime hooks kept apart from ACS sessions. In process, over a real SQLite store."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from agbom.guardian import Guardian, GuardianConfig, build_guardian
from agbom.protocol import AcsError, verify_chain
from agbom.store import Digest
from tests.guardian.acs import SHA_A, SHA_B, digest, hello, new_session_id, request
from tests.guardian.test_guardian_pipeline import ASK_PACK, err, ok, open_session

SECRET = "ghp_" + "x" * 36
SECRET_MESSAGE = {"content": f"here is my token {SECRET} use it"}
DEPLOY_CALL = {"tool": {"name": "deploy"}, "arguments": {}}


def guardian_with(tmp_path: Path, rules: Path | None = None, **config: Any) -> Guardian:
    return build_guardian(
        tmp_path / f"{uuid.uuid4().hex}.db", rules, config=GuardianConfig(**config)
    )


@pytest.fixture
def ask_pack(tmp_path: Path) -> Path:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "ask.yaml").write_text(ASK_PACK)
    return packs


def entries(g: Guardian, sid: str) -> list[dict[str, Any]]:
    stored = g.store.chain_entries(sid)
    assert verify_chain([{k: v for k, v in e.items() if k != "seq"} for e in stored]) is None
    return stored


# -- MODIFY-incapable clients -------------------------------------------------------------------


def test_a_capable_client_gets_the_modify(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid = open_session(g)
    result = ok(g.handle(request("steps/userMessage", SECRET_MESSAGE, session_id=sid)))
    assert result["decision"] == "modify" and result["modifications"]["redactions"]
    assert "substitution" not in entries(g, sid)[-1]


def test_modify_becomes_deny_for_a_client_that_cannot_apply_it(tmp_path: Path) -> None:
    g = guardian_with(tmp_path, no_modify_agents=("agent-*",))
    sid = open_session(g)
    result = ok(g.handle(request("steps/userMessage", SECRET_MESSAGE, session_id=sid)))
    assert result["decision"] == "deny"
    assert "modify_unsupported" in result["reason_codes"]
    assert "modifications" not in result
    assert "/content" in result["reasoning"]  # names the intended modification ...
    assert SECRET not in result["reasoning"]  # ... never the value it would have removed
    last = entries(g, sid)[-1]
    assert last["decision"] == "deny"
    assert last["substitution"] == {"from": "modify", "to": "deny", "reason": "modify_unsupported"}


def test_modify_at_post_compact_becomes_allow_with_the_event(tmp_path: Path) -> None:
    g = guardian_with(tmp_path, no_modify_agents=("agent-1",))
    sid = open_session(g)
    head = entries(g, sid)[-1]["entry_hash"]
    payload = {
        "summary": {"value": f"the user shared {SECRET}"},
        "entries_compacted": ["s1"],
        "pre_compact_chain_hash": head,
    }
    result = ok(g.handle(request("steps/postCompact", payload, session_id=sid)))
    assert result["decision"] == "allow"
    assert "modify_unsupported" in result["reason_codes"]
    assert entries(g, sid)[-1]["substitution"]["to"] == "allow"


def test_other_agents_keep_modify(tmp_path: Path) -> None:
    g = guardian_with(tmp_path, no_modify_agents=("opencode-*",))
    sid = open_session(g)
    result = ok(g.handle(request("steps/userMessage", SECRET_MESSAGE, session_id=sid)))
    assert result["decision"] == "modify"


def test_a_client_hello_can_narrow_but_never_widen(tmp_path: Path) -> None:
    g = guardian_with(tmp_path, no_modify_agents=("agent-1",))
    # The operator said this client cannot MODIFY: the hello saying it can changes nothing.
    sid = open_session(g, client_capabilities={"modify": True, "ask": True})
    result = ok(g.handle(request("steps/userMessage", SECRET_MESSAGE, session_id=sid)))
    assert result["decision"] == "deny"
    # The client saying of itself that it cannot MODIFY is honoured.
    g2 = guardian_with(tmp_path)
    sid2 = open_session(g2, client_capabilities={"modify": False})
    result = ok(g2.handle(request("steps/userMessage", SECRET_MESSAGE, session_id=sid2)))
    assert result["decision"] == "deny" and "modify_unsupported" in result["reason_codes"]


def test_the_declaration_survives_a_restart(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid = open_session(g, client_capabilities={"modify": False})
    g.forget_sessions()
    result = ok(g.handle(request("steps/userMessage", SECRET_MESSAGE, session_id=sid)))
    assert "modify_unsupported" in result["reason_codes"]


# -- ASK-incapable clients ----------------------------------------------------------------------


def test_ask_is_answered_to_a_client_that_can(tmp_path: Path, ask_pack: Path) -> None:
    g = guardian_with(tmp_path, ask_pack)
    sid = open_session(g)
    server_hello = ok(g.handle(hello(new_session_id())))
    assert server_hello["approver_types_supported"] == ["human"]
    asked = ok(g.handle(request("steps/toolCallRequest", DEPLOY_CALL, session_id=sid)))
    assert asked["decision"] == "ask"
    assert asked["ask_details"]["approver"]["type"] in server_hello["approver_types_supported"]


def test_ask_becomes_a_complete_defer(tmp_path: Path, ask_pack: Path) -> None:
    g = guardian_with(tmp_path, ask_pack, no_ask_agents=("agent-1",))
    server_hello = ok(g.handle(hello(sid := new_session_id())))
    assert server_hello["approver_types_supported"] == []
    ok(g.handle(request("steps/sessionStart", {}, session_id=sid)))
    result = ok(g.handle(request("steps/toolCallRequest", DEPLOY_CALL, session_id=sid)))
    assert result["decision"] == "defer"
    assert "ask_details" not in result
    details = result["defer_details"]
    assert details["timeout_decision"] == "deny"
    assert set(details) == {
        "reason",
        "resolution_method",
        "resolution_timeout_ms",
        "timeout_decision",
        "required_context",
    }
    assert details["reason"] in (
        "insufficient_context",
        "conflicting_policies",
        "low_confidence",
        "pending_dependency",
    )
    assert entries(g, sid)[-1]["substitution"] == {
        "from": "ask",
        "to": "defer",
        "reason": "approver_unavailable",
    }


def test_ask_becomes_deny_when_the_fallback_is_deny(tmp_path: Path, ask_pack: Path) -> None:
    g = guardian_with(tmp_path, ask_pack, no_ask_agents=("agent-1",), ask_fallback="deny")
    sid = open_session(g)
    result = ok(g.handle(request("steps/toolCallRequest", DEPLOY_CALL, session_id=sid)))
    assert result["decision"] == "deny"
    assert "approver_unavailable" in result["reason_codes"]
    assert "ASK" in result["reasoning"]
    assert entries(g, sid)[-1]["substitution"]["to"] == "deny"


# -- replays of refused requests ----------------------------------------------------------------


def test_a_replay_of_a_refused_request_is_a_replay(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid = new_session_id()
    ok(g.handle(hello(sid, methods=["steps/sessionStart", "steps/userMessage"])))
    # Refused for its payload, then for not being negotiated: the same ids again are replays.
    bad = request("steps/userMessage", {}, session_id=sid)
    assert err(g.handle(bad))["code"] == -32602
    again = err(g.handle(bad))
    assert again["code"] == -32005 and again["data"]["reason"] == "duplicate_request_id"
    unlisted = request("steps/agentResponse", {"content": "x"}, session_id=sid)
    assert err(g.handle(unlisted))["code"] == -32003
    assert err(g.handle(unlisted))["code"] == -32005
    # Fixed, the same id is still a replay: the first answer stands.
    bad["params"]["payload"] = {"content": "hello"}
    assert err(g.handle(bad))["code"] == -32005
    assert g.store.chain_entries(sid) == []


def test_refused_ids_are_remembered_within_a_bound(tmp_path: Path) -> None:
    from agbom.guardian.session import REFUSED_REQUEST_IDS

    g = guardian_with(tmp_path)
    sid = open_session(g)
    first = request("steps/userMessage", {}, session_id=sid)
    err(g.handle(first))
    for _ in range(REFUSED_REQUEST_IDS):
        err(g.handle(request("steps/userMessage", {}, session_id=sid)))
    session = g.session(sid)
    assert session is not None
    assert len(session.refused_request_ids) == REFUSED_REQUEST_IDS
    # The oldest fell out of the bound: it is refused for its own reason again.
    assert err(g.handle(first))["code"] == -32602


# -- payload bounds -----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["steps/skillRegister", "steps/skillLoad"])
def test_an_overlong_skill_id_is_invalid_params(tmp_path: Path, method: str) -> None:
    g = guardian_with(tmp_path)
    sid = open_session(g)
    skill_id = "s" * 513
    payload: dict[str, Any] = {"skill_id": skill_id}
    if method == "steps/skillRegister":
        payload |= {
            "definition": {"ref": "x", "digest": digest(SHA_A)},
            "declared_capabilities": [],
        }
    else:
        payload |= {
            "digest": digest(SHA_A),
            "load_trigger": "user",
            "load_path": [{"skill_id": skill_id}],
        }
    error = err(g.handle(request(method, payload, session_id=sid)))
    assert error["code"] == -32602 and "skill_id" in error["data"]["message"]


def test_tool_call_request_needs_arguments(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid = open_session(g)
    error = err(
        g.handle(request("steps/toolCallRequest", {"tool": {"name": "Bash"}}, session_id=sid))
    )
    assert error["code"] == -32602 and "arguments" in error["data"]["message"]


# -- a load is judged against its registration --------------------------------------------------


def register(g: Guardian, sid: str, caps: list[str], sha: str = SHA_A) -> dict[str, Any]:
    payload = {
        "skill_id": "deployer",
        "definition": {"ref": "skills/deployer", "digest": digest(sha)},
        "declared_capabilities": caps,
    }
    return ok(g.handle(request("steps/skillRegister", payload, session_id=sid)))


def load(g: Guardian, sid: str, sha: str = SHA_A, **extra: Any) -> dict[str, Any]:
    payload = {
        "skill_id": "deployer",
        "digest": digest(sha),
        "load_trigger": "user",
        "load_path": [{"skill_id": "deployer"}],
        **extra,
    }
    return ok(g.handle(request("steps/skillLoad", payload, session_id=sid)))


def test_a_load_after_a_denied_registration_is_denied(tmp_path: Path) -> None:
    g = guardian_with(tmp_path, deny_overbroad_capabilities=False)
    g.store.set_status(
        "deployer",
        Digest.from_wire(digest(SHA_A)),
        "approved",
        actor="alice",
        reason="reviewed",
        capabilities=["fs.read"],
    )
    sid = open_session(g)
    denied = register(g, sid, ["fs.read", "process.execute"])
    assert denied["decision"] == "deny" and "capabilities_exceed_approval" in denied["reason_codes"]
    # The load names no capabilities: it is judged against the registration, which was denied.
    loaded = load(g, sid)
    assert loaded["decision"] == "deny" and "registration_denied" in loaded["reason_codes"]
    # ... also after a restart, from the chain.
    g.forget_sessions()
    assert "registration_denied" in load(g, sid)["reason_codes"]
    # Registered again within its approval, the pair loads.
    assert register(g, sid, ["fs.read"])["decision"] == "allow"
    assert load(g, sid)["decision"] == "allow"
    # Another digest's registration says nothing about this one.
    assert "registration_denied" not in load(g, sid, SHA_B).get("reason_codes", [])


# -- hook sessions and ACS sessions -------------------------------------------------------------


def test_a_hook_session_cannot_be_driven_over_acs(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid = "claude-conversation-1"
    decision = g.decide("steps/userMessage", {"content": "hi"}, session_id=sid, agent_id="cc")
    assert decision.decision == "allow"
    refused = err(g.handle(request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)))
    assert refused["code"] == -32000 and refused["data"]["reason"] == "hook_session"
    refused = err(g.handle(hello(sid)))
    assert refused["data"]["reason"] == "hook_session"
    g.forget_sessions()  # the origin is stored
    assert err(g.handle(hello(sid)))["data"]["reason"] == "hook_session"
    # The hook session goes on.
    later = g.decide("steps/userMessage", {"content": "more"}, session_id=sid, agent_id="cc")
    assert later.decision == "allow"


def test_an_acs_session_cannot_be_driven_by_a_hook(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid = open_session(g)
    with pytest.raises(AcsError) as refused:
        g.decide("steps/sessionEnd", {"reason": "completed"}, session_id=sid, agent_id="agent-1")
    assert refused.value.reason == "acs_session"
    assert [e["step_type"] for e in entries(g, sid)] == ["steps/sessionStart"]


# -- toolCallResult.request_id_ref --------------------------------------------------------------


def test_an_unresolved_request_id_ref_is_recorded(tmp_path: Path) -> None:
    g = guardian_with(tmp_path)
    sid, other = open_session(g), open_session(g)
    call = request(
        "steps/toolCallRequest", {"tool": {"name": "Bash"}, "arguments": {}}, session_id=sid
    )
    ok(g.handle(call))
    foreign = request(
        "steps/toolCallRequest", {"tool": {"name": "Bash"}, "arguments": {}}, session_id=other
    )
    ok(g.handle(foreign))

    def result_for(ref: str) -> dict[str, Any]:
        payload = {
            "tool": {"name": "Bash"},
            "exit_status": "success",
            "outputs": [],
            "request_id_ref": ref,
        }
        return ok(g.handle(request("steps/toolCallResult", payload, session_id=sid)))

    resolved = result_for(call["params"]["request_id"])
    assert "request_id_ref_unresolved" not in resolved.get("reason_codes", [])
    assert "finding" not in entries(g, sid)[-1]
    for ref in (foreign["params"]["request_id"], str(uuid.uuid4())):
        unresolved = result_for(ref)
        assert "request_id_ref_unresolved" in unresolved["reason_codes"]
        last = entries(g, sid)[-1]
        assert last["request_id_ref"] == ref and last["finding"] == "request_id_ref_unresolved"
    g.forget_sessions()  # the session's tool calls are read back from its chain
    assert "request_id_ref_unresolved" not in result_for(call["params"]["request_id"]).get(
        "reason_codes", []
    )
