"""Translation layers with plain data: runtime event → ACS step, decision → runtime reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.adapters import ADAPTERS, get_adapter, replies
from agbom.adapters._base import MAX_EVENT_DEPTH, parse_event
from agbom.adapters.claude_code import UNKNOWN_DIGEST, split_mcp_name
from agbom.adapters.headers import env_from_headers, headers_from_env
from agbom.adapters.interface import AdapterError, MalformedEvent, StepCall, Verdict
from agbom.inventory.skill_digest import digest_skill_folder

SESSION = "0198c1d2-3e4f-7a5b-8c6d-9e0f1a2b3c4d"


def oscova(event_name: str, event: dict | None = None, **top: object) -> dict:
    doc = {
        "schema_version": 1,
        "hook_event_name": event_name,
        "hook_run_id": "4d2f1e0c2a3b4f6e8a9b0c1d2e3f4a5b",
        "timestamp": "2026-07-30T10:00:00.0000000+00:00",
        "event": event if event is not None else {},
        "user_id": "user-id",
        "agent_id": "main",
        "chat_thread_id": "thread-id",
        "execution_kind": "web_chat",
    }
    doc.update(top)
    return doc


def translate(runtime: str, doc: dict, env: dict | None = None) -> StepCall:
    return get_adapter(runtime).translate(doc, env=env or {})  # type: ignore[attr-defined]


def render(runtime: str, verdict: Verdict | None, call: StepCall) -> tuple[bytes, int]:
    return get_adapter(runtime).render(verdict, call, hook_id="gate")  # type: ignore[attr-defined]


DENY = Verdict(
    disposition="deny",
    reasoning="tool Bash is banned",
    reason_codes=("banned_component",),
    rule_ids=("no-shell",),
    chain_hash="ab" * 32,
)
ALLOW = Verdict(disposition="allow")


def test_registry_names_and_unknown_runtime() -> None:
    assert ADAPTERS == (
        "oscova", "meerkat", "claude-code",
        "cursor", "codex", "gemini-cli", "copilot", "windsurf", "opencode",
    )  # fmt: skip
    for name in ADAPTERS:
        assert get_adapter(name).name == name
    with pytest.raises(AdapterError, match="unknown hook runtime 'aider'"):
        get_adapter("aider")


# -- Oscova ---------------------------------------------------------------------------------------


def test_oscova_pre_tool_use_maps_to_tool_call_request() -> None:
    call = translate(
        "oscova",
        oscova(
            "PreToolUse",
            {"tool_name": "shell__exec_command", "tool_call_id": "c1", "arguments": {"cmd": "ls"}},
        ),
    )
    assert call.method == "steps/toolCallRequest"
    assert call.payload == {
        "tool": {"name": "shell__exec_command"},
        "arguments": {"cmd": {"value": "ls"}},
    }
    assert (call.session_id, call.agent_id, call.blocking) == ("thread-id", "main", True)
    assert [c["id"] for c in call.components] == ["tool:shell__exec_command"]


def test_oscova_confidential_agent_without_content_is_still_decided() -> None:
    call = translate("oscova", oscova("PreToolUse", {"tool_name": "web_fetch"}))
    assert call.payload == {"tool": {"name": "web_fetch"}, "arguments": {}}
    prompt = translate("oscova", oscova("UserPromptSubmit", {"chat_thread_id": "thread-id"}))
    assert prompt.method == "steps/userMessage"
    assert prompt.payload == {"content": ""}


def test_oscova_env_fills_what_the_envelope_omits() -> None:
    doc = {"schema_version": 1, "event": {"tool_name": "x"}}
    env = {
        "OSCOVA_HOOK_EVENT_NAME": "PreToolUse",
        "OSCOVA_HOOK_AGENT_ID": "ops-bot",
        "OSCOVA_HOOK_TASK_RUN_ID": "run-7",
    }
    call = translate("oscova", doc, env)
    assert (call.event, call.agent_id, call.session_id) == ("PreToolUse", "ops-bot", "run-7")


@pytest.mark.parametrize(
    ("name", "event", "method", "blocking"),
    [
        ("SessionStart", {}, "steps/sessionStart", False),
        ("UserPromptSubmit", {"prompt_text": "hi"}, "steps/userMessage", True),
        ("PostToolUse", {"tool_name": "t", "result_kind": "denied"}, "steps/toolCallResult", False),
        (
            "TaskStart",
            {"task_name": "nightly", "trigger_source": "schedule"},
            "steps/agentTrigger",
            True,
        ),
        ("TaskComplete", {"status": "completed"}, "steps/sessionEnd", False),
        ("TaskFailed", {"status": "cancelled"}, "steps/sessionEnd", False),
    ],
)
def test_oscova_event_table(name: str, event: dict, method: str, blocking: bool) -> None:
    call = translate("oscova", oscova(name, event, task_run_id="run-1"))
    assert (call.method, call.blocking) == (method, blocking)
    if name == "TaskStart":
        assert call.payload["trigger_type"] == "scheduled"
    if name == "TaskFailed":
        assert call.payload == {"reason": "cancelled"}
    if name == "PostToolUse":
        assert call.payload["exit_status"] == "blocked"


def test_oscova_unknown_event_and_bad_envelopes() -> None:
    assert translate("oscova", oscova("SomethingNew")).method is None
    with pytest.raises(MalformedEvent, match="schema_version 2"):
        translate("oscova", oscova("PreToolUse", {"tool_name": "x"}, schema_version=2))
    with pytest.raises(MalformedEvent, match="hook_event_name"):
        translate("oscova", {"schema_version": 1, "event": {}})
    with pytest.raises(MalformedEvent, match="'event' must be an object"):
        translate("oscova", oscova("PreToolUse", None) | {"event": "x"})
    with pytest.raises(MalformedEvent, match="tool_name"):
        translate("oscova", oscova("PreToolUse", {}))


def test_oscova_replies() -> None:
    pre = translate("oscova", oscova("PreToolUse", {"tool_name": "Bash"}))
    post = translate("oscova", oscova("PostToolUse", {"tool_name": "Bash"}))
    assert render("oscova", ALLOW, pre) == (b'{"decision":"allow"}', 0)
    body, code = render("oscova", DENY, pre)
    assert code == 2
    assert json.loads(body) == {
        "decision": "deny",
        "reason": "banned_component",
        "message": "agbom: Bash: tool Bash is banned (rule no-shell)",
    }
    # Observe-only events never deny.
    assert render("oscova", DENY, post) == (b'{"decision":"allow"}', 0)
    body, code = render("oscova", Verdict(disposition="defer", reasoning="wait"), pre)
    assert code == 3
    assert json.loads(body)["reason"] == "deferral_not_supported"
    body, code = render("oscova", Verdict(disposition="ask", reasoning="r"), pre)
    assert (json.loads(body)["reason"], code) == ("approver_unavailable", 2)
    body, code = render("oscova", Verdict(disposition="modify", reasoning="r"), pre)
    assert (json.loads(body)["reason"], code) == ("modify_unsupported", 2)


# -- Meerkat --------------------------------------------------------------------------------------

MEERKAT_PRE = {
    "point": "pre_tool_execution",
    "session_id": SESSION,
    "turn_number": 0,
    "tool_call": {
        "tool_use_id": "toolu_01A2B3C4D5",
        "name": "lookup",
        "args": {"query": "customers in EU"},
        "provenance": {"kind": "mcp", "source_id": "crm-server"},
    },
}


def test_meerkat_pre_tool_with_mcp_provenance() -> None:
    call = translate("meerkat", MEERKAT_PRE | {"future_field": [1, 2]})
    assert call.method == "steps/toolCallRequest"
    assert call.payload == {
        "tool": {"name": "lookup", "provider": "crm-server", "id": "tool:crm-server/lookup"},
        "arguments": {"query": {"value": "customers in EU"}},
    }
    assert [c["id"] for c in call.components] == ["tool:crm-server/lookup", "mcp_server:crm-server"]
    assert call.components[1]["tools"] == ["tool:crm-server/lookup"]
    assert (call.session_id, call.agent_id) == (SESSION, "meerkat")


def test_meerkat_other_points() -> None:
    started = translate(
        "meerkat",
        {
            "point": "run_started",
            "session_id": SESSION,
            "prompt_input": {"kind": "content", "content": [{"type": "text", "text": "Delete"}]},
        },
    )
    assert (started.method, started.payload) == ("steps/userMessage", {"content": "Delete"})
    post = translate(
        "meerkat",
        {
            "point": "post_tool_execution",
            "session_id": SESSION,
            "tool_result": {
                "tool_use_id": "t",
                "name": "shell",
                "content": "boom",
                "is_error": True,
                "provenance": {"kind": "shell", "source_id": "sh"},
            },
        },
        {"AGBOM_AGENT_ID": "billing"},
    )
    assert post.payload == {
        "tool": {"name": "shell", "provider": "shell"},
        "exit_status": "failure",
        "outputs": [{"value": "boom"}],
    }
    assert post.agent_id == "billing"
    assert translate("meerkat", {"point": "turn_boundary", "session_id": SESSION}).method is None
    with pytest.raises(MalformedEvent, match="'args' must be an object"):
        translate("meerkat", MEERKAT_PRE | {"tool_call": MEERKAT_PRE["tool_call"] | {"args": "x"}})
    with pytest.raises(MalformedEvent, match="session_id"):
        translate("meerkat", {"point": "run_started"})


def test_meerkat_replies_use_only_known_keys() -> None:
    call = translate("meerkat", MEERKAT_PRE)
    assert render("meerkat", ALLOW, call) == (b'{"decision":{"decision":"allow"}}', 0)
    assert render("meerkat", None, call) == (b"{}", 0)
    body, code = render("meerkat", DENY, call)
    reply = json.loads(body)
    assert code == 0
    assert set(reply) == {"decision"}
    assert set(reply["decision"]) == {"decision", "hook_id", "reason_code", "message", "payload"}
    assert reply["decision"]["hook_id"] == "gate"
    assert reply["decision"]["reason_code"] == "policy_violation"
    assert reply["decision"]["payload"]["rules"] == ["no-shell"]


def test_meerkat_reply_respects_the_payload_bound() -> None:
    codes = tuple(f"c{i}" * 50 for i in range(5000))
    huge = Verdict(disposition="deny", reasoning="x", reason_codes=codes)
    body, _ = render("meerkat", huge, translate("meerkat", MEERKAT_PRE))
    assert len(body) <= replies.MEERKAT_MAX_REPLY_BYTES
    assert "payload" not in json.loads(body)["decision"]
    body, _ = replies.meerkat_deny("m" * 500_000, reason_code="NotACode")
    deny = json.loads(body)["decision"]
    assert deny["reason_code"] == "policy_violation"
    assert len(body) < 4096


# -- Claude Code ----------------------------------------------------------------------------------


def cc(event: str, **fields: object) -> dict:
    return {
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def test_split_mcp_name() -> None:
    assert split_mcp_name("mcp__memory__create_entities") == ("memory", "create_entities")
    assert split_mcp_name("mcp__plugin_x_db__query") == ("plugin_x_db", "query")
    assert split_mcp_name("Bash") is None
    assert split_mcp_name("mcp__broken") is None


def test_claude_pre_tool_use() -> None:
    call = translate(
        "claude-code",
        cc("PreToolUse", tool_name="Bash", tool_input={"command": "npm test", "timeout": 1}),
    )
    assert call.method == "steps/toolCallRequest"
    assert call.payload["raw_command"] == "npm test"
    assert call.payload["tool"] == {"name": "Bash"}
    assert call.agent_id == "claude-code"
    mcp = translate(
        "claude-code",
        cc("PreToolUse", tool_name="mcp__crm__lookup", tool_input={}, agent_id="sub-1"),
    )
    assert mcp.payload["tool"] == {"name": "lookup", "provider": "crm", "id": "tool:crm/lookup"}
    assert [c["type"] for c in mcp.components] == ["tool", "mcp_server"]
    assert mcp.agent_id == "sub-1"


def _read_here(event: dict, home: Path) -> dict:
    """The event as the hook process hands it on: the skill read and attached."""
    from agbom.adapters import skill_files

    raw = skill_files.with_local_skill(
        json.dumps(event).encode(),
        home=str(home),
        limits=skill_files.ReadLimits.within(10),
        limit=1024 * 1024,
    )
    return dict(json.loads(raw))


def test_claude_skill_tool_is_a_skill_load(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "pdf"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf\ndescription: d\n---\nbody\n")
    event = cc("PreToolUse", tool_name="Skill", tool_input={"skill": "pdf"}, cwd=str(tmp_path))
    nohome = tmp_path / "nohome"
    call = translate("claude-code", _read_here(event, nohome), {"HOME": str(nohome)})
    assert call.method == "steps/skillLoad"
    assert call.payload["skill_id"] == "skill:pdf"
    assert call.payload["digest"]["value"] == digest_skill_folder(folder).value
    assert call.payload["load_path"] == [{"skill_id": "skill:pdf"}]
    # A changed file is a different artifact.
    (folder / "run.sh").write_text("echo hi\n")
    changed = translate("claude-code", _read_here(event, nohome), {"HOME": str(nohome)})
    assert changed.payload["digest"]["value"] != call.payload["digest"]["value"]
    bad_name = cc(
        "PreToolUse", tool_name="Skill", tool_input={"skill": "../etc"}, cwd=str(tmp_path)
    )
    missing = translate("claude-code", _read_here(bad_name, tmp_path), {"HOME": str(tmp_path)})
    assert missing.payload["digest"]["value"] == UNKNOWN_DIGEST
    # The adapter itself reads no folder (issue 38 item 1): without the hook's report the
    # folder named by cwd is not looked at, though it is there.
    unread = translate("claude-code", event, {"HOME": str(nohome)})
    assert unread.payload["digest"]["value"] == UNKNOWN_DIGEST
    assert "reads no folder an event names" in unread.note


def test_claude_other_events() -> None:
    prompt = translate("claude-code", cc("UserPromptSubmit", prompt="hello"))
    assert (prompt.method, prompt.payload) == ("steps/userMessage", {"content": "hello"})
    start = translate("claude-code", cc("SessionStart", source="startup", model="m"))
    assert start.method == "steps/sessionStart"
    assert start.payload["platform_context"]["source"] == "startup"
    failed = translate(
        "claude-code",
        cc("PostToolUseFailure", tool_name="Bash", tool_input={}, error="exit 1", duration_ms=12.5),
    )
    assert failed.payload["exit_status"] == "failure"
    assert failed.payload["duration_ms"] == 12
    stop = translate("claude-code", cc("Stop", last_assistant_message="done"))
    assert (stop.method, stop.blocking) == ("steps/agentResponse", False)
    assert translate("claude-code", cc("SessionEnd", reason="clear")).method is None
    with pytest.raises(MalformedEvent, match="tool_input"):
        translate("claude-code", cc("PreToolUse", tool_name="Bash", tool_input="ls"))


def test_claude_replies() -> None:
    pre = translate("claude-code", cc("PreToolUse", tool_name="Bash", tool_input={}))
    assert render("claude-code", ALLOW, pre) == (b"{}", 0)
    body, code = render("claude-code", DENY, pre)
    out = json.loads(body)["hookSpecificOutput"]
    assert code == 0
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    assert "no-shell" in out["permissionDecisionReason"]
    ask = Verdict(disposition="ask", reasoning="r", question="Allow Bash in prod?")
    out = json.loads(render("claude-code", ask, pre)[0])["hookSpecificOutput"]
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == (
        "ask",
        "Allow Bash in prod?",
    )
    prompt = translate("claude-code", cc("UserPromptSubmit", prompt="x"))
    assert json.loads(render("claude-code", DENY, prompt)[0])["decision"] == "block"
    start = translate("claude-code", cc("SessionStart"))
    assert json.loads(render("claude-code", DENY, start)[0])["continue"] is False
    stop = translate("claude-code", cc("Stop"))
    assert set(json.loads(render("claude-code", DENY, stop)[0])) == {"systemMessage"}


# -- failures, headers, parsing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime", "event", "fail_open", "want_body", "want_code"),
    [
        ("oscova", "PreToolUse", True, {"decision": "allow"}, 0),
        ("oscova", "PreToolUse", False, {"decision": "deny"}, 2),
        ("oscova", "PostToolUse", False, {"decision": "allow"}, 0),
        ("meerkat", "pre_tool_execution", True, {}, 0),
        ("meerkat", "pre_tool_execution", False, {"decision": {"decision": "deny"}}, 0),
        ("meerkat", "run_completed", False, {}, 0),
        ("claude-code", "PreToolUse", True, {}, 0),
        (
            "claude-code",
            "PreToolUse",
            False,
            {"hookSpecificOutput": {"permissionDecision": "deny"}},
            0,
        ),
        ("claude-code", "UserPromptSubmit", False, {"decision": "block"}, 0),
        ("claude-code", None, False, None, 2),
    ],
)
def test_failure_replies(
    runtime: str, event: str | None, fail_open: bool, want_body: dict | None, want_code: int
) -> None:
    body, code = replies.failure(
        runtime, "server down", fail_open=fail_open, event=event, code="server_down"
    )
    assert code == want_code
    if want_body is None:
        assert body == b""
        return
    got = json.loads(body)

    def contains(got: object, want: object) -> bool:
        if isinstance(want, dict):
            return isinstance(got, dict) and all(contains(got.get(k), v) for k, v in want.items())
        return got == want

    assert contains(got, want_body), got
    if want_body == {}:
        assert got == {}


def test_headers_round_trip() -> None:
    env = {
        "OSCOVA_HOOK_AGENT_ID": "main",
        "OSCOVA_HOOK_CHAT_THREAD_ID": "t-1",
        "AGBOM_AGENT_ID": "a",
        "SECRET_TOKEN": "s3cr3t",
        "OSCOVA_HOOK_USER_ID": "evil\r\nX-Injected: 1",
    }
    head = headers_from_env(env)
    assert "s3cr3t" not in json.dumps(head)
    assert all("\n" not in v for v in head.values())
    back = env_from_headers({k.upper(): v for k, v in head.items()})
    dropped = ("SECRET_TOKEN", "OSCOVA_HOOK_USER_ID")
    assert back == {k: v for k, v in env.items() if k not in dropped}


def test_parse_event_bounds() -> None:
    with pytest.raises(MalformedEvent, match="empty input"):
        parse_event(b"  \n")
    with pytest.raises(MalformedEvent, match="not valid JSON"):
        parse_event(b"{")
    with pytest.raises(MalformedEvent, match="expected a JSON object"):
        parse_event(b"[1]")
    deep = b'{"a":' * (MAX_EVENT_DEPTH + 1) + b"1" + b"}" * (MAX_EVENT_DEPTH + 1)
    with pytest.raises(MalformedEvent, match="nested deeper"):
        parse_event(deep)
    assert parse_event(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_input_is_an_event_or_a_malformed_error(raw: bytes) -> None:
    for runtime in ADAPTERS:
        try:
            call = translate(runtime, parse_event(raw))
        except MalformedEvent:
            continue
        assert isinstance(call, StepCall)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_keys = st.sampled_from(
    [
        "point",
        "session_id",
        "hook_event_name",
        "schema_version",
        "event",
        "tool_call",
        "tool_name",
        "tool_input",
        "tool_result",
        "prompt_input",
        "llm_response",
        "agent_id",
    ]
)
_values = _json | st.sampled_from(
    ["pre_tool_execution", "PreToolUse", "run_started", "Skill", "mcp__a__b", "TaskStart", 1]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6))
def test_any_event_shaped_object_translates_or_is_malformed(doc: dict) -> None:
    for runtime in ADAPTERS:
        try:
            call = translate(runtime, doc)
        except MalformedEvent:
            continue
        assert isinstance(call, StepCall)
        assert call.session_id and call.agent_id


# -- thin mode internals --------------------------------------------------------------------------


def test_thin_response_parsing() -> None:
    from agbom.adapters.thin import _BadResponse, _not_agbom, _parse_response

    plain = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-agbom-exit-code: 2\r\n\r\n{}"
    assert _parse_response(plain) == (
        200,
        b"{}",
        {"content-length": "2", "x-agbom-exit-code": "2"},
    )
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Agbom-Diagnostic: why\r\n\r\n"
        b'3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n'
    )
    status, payload, fields = _parse_response(chunked)
    assert (status, payload, fields["x-agbom-diagnostic"]) == (200, b'{"a":1}', "why")
    with pytest.raises(_BadResponse, match="truncated"):
        _parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}")
    with pytest.raises(_BadResponse, match="not an HTTP"):
        _parse_response(b"SSH-2.0-OpenSSH\r\n\r\n")
    with pytest.raises(_BadResponse, match="incomplete"):
        _parse_response(b"HTTP/1.1 200 OK\r\n")
    # The reply shape: agbom's headers, an exit code the runtime uses, a JSON object body.
    good = {
        "x-agbom-runtime": "oscova",
        "x-agbom-exit-code": "2",
        "content-type": "application/json",
    }
    assert _not_agbom("oscova", good, b'{"decision":"deny"}') is None
    assert _not_agbom("oscova", {**good, "x-agbom-exit-code": "x"}, b'{"decision":"deny"}')
    assert _not_agbom("oscova", {**good, "x-agbom-exit-code": "1"}, b'{"decision":"deny"}')
    assert _not_agbom("oscova", good, b'{"decision":"maybe"}')
    assert _not_agbom("meerkat", {**good, "x-agbom-runtime": "meerkat"}, b"{}") is not None
    meerkat = {**good, "x-agbom-runtime": "meerkat", "x-agbom-exit-code": "0"}
    assert _not_agbom("meerkat", meerkat, b"{}") is None
    assert _not_agbom("meerkat", meerkat, b'{"decision":"allow"}')
    claude = {**good, "x-agbom-runtime": "claude-code"}
    assert _not_agbom("claude-code", claude, b"") is None  # its blocking failure: exit 2
    assert _not_agbom("claude-code", {**claude, "x-agbom-exit-code": "0"}, b"")


def test_thin_mode_imports_nothing_heavy() -> None:
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from agbom.cli import main\n"
        "rc = main(['hook', 'claude-code', '--server', 'http://127.0.0.1:9', '--timeout', '1'])\n"
        "heavy = ('typer', 'click', 'http', 'email', 'orjson', 'networkx', 'sqlite_utils',\n"
        "         'dataclasses', 'agbom.guardian', 'agbom.store', 'agbom.inventory', 'yaml',\n"
        # Per event: socket (selectors, array, enums) and signal cost 3.4 ms; the C modules do.
        "         'socket', 'signal', 'selectors', 'typing',\n"
        # json (re, enum, functools, collections) was 10 ms of an 11 ms start; urllib.parse
        # (ipaddress) 2.5 ms; importlib, __future__ and pathlib each a fraction of one.
        "         're', 'json', 'enum', 'functools', 'collections', 'urllib', 'ipaddress',\n"
        "         'importlib', '__future__', 'pathlib')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    # -S: without site, whose import finder for an editable install loads re and urllib in
    # every process; the probe finds agbom in the checkout itself.
    proc = subprocess.run(
        [sys.executable, "-S", "-c", probe], input=b"{}", capture_output=True, check=False
    )
    assert proc.stdout.decode().strip().splitlines()[-1] == "[]", proc.stderr
