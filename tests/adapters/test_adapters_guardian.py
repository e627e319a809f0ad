"""Adapters deciding with a real Guardian (real SQLite store, real rule pack), in process.

The subprocess and HTTP paths are covered in test_adapters_hooks_e2e.py; here the many cases
run through the same ``Adapter.handle`` without paying a process start each.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agbom.adapters import get_adapter
from agbom.adapters.interface import HookReply
from agbom.guardian import build_guardian


@pytest.fixture
def guardian(tmp_path: Path, rules_dir: Path) -> Iterator[Any]:
    g = build_guardian(tmp_path / "g.db", rules_dir)
    yield g
    g.store.close()


def handle(
    guardian: Any, runtime: str, event: dict | bytes, *, fail_open: bool = False, **env: str
) -> HookReply:
    raw = event if isinstance(event, bytes) else json.dumps(event).encode()
    return get_adapter(runtime).handle(raw, guardian, env=env, fail_open=fail_open)


def body(reply: HookReply) -> Any:
    return json.loads(reply.body)


def cc(event: str, session: str, **fields: object) -> dict:
    return {"session_id": session, "cwd": "/tmp", "hook_event_name": event, **fields}


def test_hook_decisions_join_the_audit_chain(guardian: Any) -> None:
    session = str(uuid.uuid4())
    handle(guardian, "claude-code", cc("SessionStart", session, source="startup"))
    handle(guardian, "claude-code", cc("UserPromptSubmit", session, prompt="list files"))
    reply = handle(guardian, "claude-code", cc("PreToolUse", session, tool_name="Bash"))
    assert body(reply)["hookSpecificOutput"]["permissionDecision"] == "deny"
    entries = guardian.store.chain_entries(session)
    methods = [e["step_type"] for e in entries]
    assert methods[:3] == ["steps/sessionStart", "steps/userMessage", "steps/toolCallRequest"]
    # The deny names the same rule as the chain entry's decision.
    assert entries[-1]["decision"] == "deny"


def test_same_named_tools_of_different_servers(guardian: Any) -> None:
    session = str(uuid.uuid4())
    ok = handle(guardian, "meerkat", _mk(session, "lookup", "crm"))
    assert body(ok) == {"decision": {"decision": "allow"}}
    bad = handle(guardian, "meerkat", _mk(session, "export", "evil-crm"))
    assert body(bad)["decision"]["decision"] == "deny"


def test_same_tool_name_on_a_banned_server_is_denied(guardian: Any) -> None:
    session = str(uuid.uuid4())
    handle(guardian, "meerkat", _mk(session, "lookup", "crm"))
    bad = handle(guardian, "meerkat", _mk(session, "lookup", "evil-crm"))
    assert body(bad)["decision"]["decision"] == "deny"


def test_second_tool_of_a_banned_server_is_denied(guardian: Any) -> None:
    session = str(uuid.uuid4())
    for tool in ("mcp__evil-crm__lookup", "mcp__evil-crm__export_all"):
        reply = handle(guardian, "claude-code", cc("PreToolUse", session, tool_name=tool))
        assert body(reply)["hookSpecificOutput"]["permissionDecision"] == "deny", tool


def _mk(session: str, name: str, server: str | None = None) -> dict:
    call: dict = {"tool_use_id": "t", "name": name, "args": {}}
    if server:
        call["provenance"] = {"kind": "mcp", "source_id": server}
    return {"point": "pre_tool_execution", "session_id": session, "tool_call": call}


def test_oscova_task_lifecycle(guardian: Any) -> None:
    run = f"run-{uuid.uuid4().hex[:8]}"

    def env(name: str, event: dict) -> dict:
        return {
            "schema_version": 1,
            "hook_event_name": name,
            "hook_run_id": uuid.uuid4().hex,
            "event": event,
            "task_id": "nightly",
            "task_run_id": run,
            "execution_kind": "task_run",
        }

    start = handle(guardian, "oscova", env("TaskStart", {"task_name": "n", "trigger_source": "x"}))
    assert (start.exit_code, body(start)) == (0, {"decision": "allow"})
    tool = handle(guardian, "oscova", env("PreToolUse", {"tool_name": "shell"}))
    assert tool.exit_code == 2
    done = handle(guardian, "oscova", env("TaskComplete", {"status": "completed"}))
    assert (done.exit_code, body(done)) == (0, {"decision": "allow"})
    steps = [e["step_type"] for e in guardian.store.chain_entries(run)]
    assert steps == [
        "steps/sessionStart",
        "steps/agentTrigger",
        "steps/toolCallRequest",
        "steps/sessionEnd",
    ]
    assert guardian.store.get_session(run)["status"] == "closed"


def test_agent_id_comes_from_event_env_or_option(guardian: Any) -> None:
    session = str(uuid.uuid4())
    handle(guardian, "meerkat", _mk(session, "lookup"), AGBOM_AGENT_ID="billing-agent")
    assert guardian.store.get_session(session)["agent_id"] == "billing-agent"
    sub = str(uuid.uuid4())
    handle(guardian, "claude-code", cc("PreToolUse", sub, tool_name="Read", agent_id="sub-7"))
    assert guardian.store.get_session(sub)["agent_id"] == "sub-7"


def test_observe_mode_still_answers_in_the_runtime_format(tmp_path: Path, rules_dir: Path) -> None:
    g = build_guardian(tmp_path / "o.db", rules_dir, mode="observe")
    try:
        reply = handle(
            g, "claude-code", cc("PreToolUse", "s1", tool_name="Skill", tool_input={"skill": "x"})
        )
        assert reply.exit_code == 0
        assert isinstance(body(reply), dict)
    finally:
        g.store.close()


def test_large_and_deep_events(guardian: Any) -> None:
    big = json.dumps(
        cc("PostToolUse", "s2", tool_name="Read", tool_input={}, tool_response="x" * 1_000_000)
    ).encode()
    reply = handle(guardian, "claude-code", big)
    assert reply.exit_code == 0
    # The recorded output is clipped, not the whole megabyte.
    entries = guardian.store.chain_entries("s2")
    assert len(json.dumps(entries[-1])) < 100_000
    # Past the limit the event is not read: denied (exit 2 blocks it) in both failure modes.
    over = json.dumps(
        cc("PostToolUse", "s2", tool_name="Read", tool_input={}, tool_response="x" * 1_100_000)
    ).encode()
    for fail_open in (False, True):
        adapter = get_adapter("claude-code")
        refused = adapter.handle(over, guardian, env={}, fail_open=fail_open)
        assert (refused.exit_code, refused.body) == (2, b"")
        assert "event larger than" in refused.stderr
    assert len(guardian.store.chain_entries("s2")) == len(entries)  # nothing recorded
    deep = b'{"hook_event_name":"PreToolUse","session_id":"s","x":' + b"[" * 500 + b"]" * 500 + b"}"
    reply = handle(guardian, "claude-code", deep)
    assert body(reply)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "nested deeper" in reply.stderr


@pytest.mark.parametrize(
    ("runtime", "raw", "closed", "opened"),
    [
        ("oscova", b'{"schema_version": 9}', (2, {"decision": "deny"}), (0, {"decision": "allow"})),
        (
            "oscova",
            b'{"schema_version":1,"hook_event_name":"PostToolUse","event":[]}',
            (0, {"decision": "allow"}),  # observe-only: never denied, even when malformed
            (0, {"decision": "allow"}),
        ),
        ("meerkat", b'{"point":"pre_tool_execution"}', (0, "deny"), (0, {})),
        ("meerkat", b'{"point":"run_failed","session_id":1.5}', (0, {}), (0, {})),
        (
            "claude-code",
            b'{"hook_event_name":"PreToolUse","session_id":"s","tool_input":"x","tool_name":"B"}',
            (0, "deny"),
            (0, {}),
        ),
        (
            "claude-code",
            b'{"hook_event_name":"UserPromptSubmit"}',
            (0, {"decision": "block"}),
            (0, {}),
        ),
    ],
)
def test_malformed_events(
    guardian: Any, runtime: str, raw: bytes, closed: tuple, opened: tuple
) -> None:
    reply = handle(guardian, runtime, raw)
    assert reply.exit_code == closed[0]
    got = body(reply)
    if closed[1] == "deny":
        if runtime == "meerkat":
            assert got["decision"]["decision"] == "deny"
            assert got["decision"]["reason_code"] == "schema_violation"
        else:
            assert got["hookSpecificOutput"]["permissionDecision"] == "deny"
    elif isinstance(closed[1], dict) and "reason" not in got:
        assert got == closed[1]
    else:
        assert got["decision"] == closed[1]["decision"]
    assert "fail-closed" in reply.stderr
    reply = handle(guardian, runtime, raw, fail_open=True)
    assert (reply.exit_code, body(reply)) == opened


def test_oscova_env_variables_supply_missing_ids(guardian: Any) -> None:
    envelope = {"schema_version": 1, "hook_event_name": "PreToolUse", "event": {"tool_name": "w"}}
    reply = handle(
        guardian,
        "oscova",
        envelope,
        OSCOVA_HOOK_AGENT_ID="ops-bot",
        OSCOVA_HOOK_TASK_RUN_ID="run-42",
    )
    assert (reply.exit_code, body(reply)) == (0, {"decision": "allow"})
    assert guardian.store.get_session("run-42")["agent_id"] == "ops-bot"


def test_modify_is_refused_with_an_honest_message(guardian: Any) -> None:
    token = "ghp_" + "a1b2c3d4e5" * 4
    reply = handle(
        guardian,
        "claude-code",
        cc("PreToolUse", "m1", tool_name="Read", tool_input={"file_path": f"/x?{token}"}),
    )
    out = body(reply)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "cannot be applied" in out["permissionDecisionReason"]
    assert token not in reply.body.decode()
    started = {"point": "run_started", "session_id": "m2", "prompt": token}
    reply = handle(guardian, "meerkat", started)
    deny = body(reply)["decision"]
    assert deny["payload"]["disposition"] == "modify"
    assert token not in reply.body.decode()
