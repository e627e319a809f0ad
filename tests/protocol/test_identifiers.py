"""Agent-chosen ids holding control, line-break, bidi or other invisible characters are refused
where they enter: -32602 at the wire (in process and over a real ``agbom serve``), a usage
error on the command line, 400 on the read API, a located problem in an AgBOM.

Two ids that render alike (``deploy\\nhelper`` and ``deploy\\r\\nhelper``) let a reviewer
approve one while seeing the other; see tests/review for the page's half."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agbom._identifiers import identifier_problem
from agbom.guardian import Guardian, build_guardian
from agbom.inventory import AgBOM, InvalidAgBOM
from tests.guardian.acs import SAMPLE_AGBOM, SHA_A, hello, new_session_id, request
from tests.transports.served import Served, post, run_cli

HOSTILE = [
    "deploy\nhelper",
    "deploy\r\nhelper",
    "deploy\thelper",
    "deploy\x85helper",  # NEL, a C1 control
    "deploy\u2028helper",  # line separator
    "deploy\u202ehelper",  # right-to-left override
    "deploy\u2066helper",  # left-to-right isolate
    "deploy\u200bhelper",  # zero-width space
    "deploy\u200dhelper",  # zero-width joiner
    "deploy\ufeffhelper",  # byte order mark
    "deploy\x7fhelper",  # DEL
]
FINE = ["deploy-helper", "déploiement", "部署助手", "skill:team/deploy@1.2", "a b"]


@pytest.fixture
def guardian(tmp_path: Path) -> Guardian:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def _session(g: Guardian) -> str:
    sid = new_session_id()
    assert "result" in g.handle(hello(sid))
    assert g.handle(request("steps/sessionStart", {}, session_id=sid))["result"]["decision"] == (
        "allow"
    )
    return sid


def _register(skill_id: str) -> dict[str, Any]:
    return {
        "skill_id": skill_id,
        "definition": {"ref": "file:///s", "digest": {"algorithm": "sha256", "value": SHA_A}},
        "declared_capabilities": [],
    }


def _refused(answer: dict[str, Any], field: str) -> None:
    assert "error" in answer, answer
    error = answer["error"]
    assert error["code"] == -32602, error
    assert error["data"]["reason"] == "invalid_identifier", error
    message = error["data"]["message"]
    assert field in message, error
    assert "U+" in message  # the character is named, not echoed raw


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_skill_id_with_an_invisible_character_is_refused_at_the_wire(
    guardian: Guardian, hostile: str
) -> None:
    sid = _session(guardian)
    for method, payload in [
        ("steps/skillRegister", _register(hostile)),
        (
            "steps/skillLoad",
            {
                "skill_id": hostile,
                "digest": {"algorithm": "sha256", "value": SHA_A},
                "load_trigger": "user",
                "load_path": [{"skill_id": hostile}],
            },
        ),
        ("steps/skillUnload", {"skill_id": hostile, "reason": "session_end"}),
    ]:
        _refused(guardian.handle(request(method, payload, session_id=sid)), "payload.skill_id")
    # Nothing was recorded for the refused steps: no pending registration of that id.
    assert guardian.store.skill_records(hostile) == []


def test_a_load_path_hop_and_a_composition_entry_are_checked(guardian: Guardian) -> None:
    sid = _session(guardian)
    load = {
        "skill_id": "outer",
        "digest": {"algorithm": "sha256", "value": SHA_A},
        "load_trigger": "skill_composition",
        "load_path": [{"skill_id": "outer"}, {"skill_id": "in\u202eer"}],
    }
    _refused(guardian.handle(request("steps/skillLoad", load, session_id=sid)), "load_path[1]")
    register = _register("outer") | {"composition": {"tools": ["ba\nsh"]}}
    answer = guardian.handle(request("steps/skillRegister", register, session_id=sid))
    _refused(answer, "payload.composition.tools[0]")


@pytest.mark.parametrize("hostile", HOSTILE[:4])
def test_envelope_ids_are_checked(guardian: Guardian, hostile: str) -> None:
    answer = guardian.handle(hello(new_session_id()) | {})
    assert "result" in answer
    _refused(guardian.handle(hello(hostile)), "params.metadata.session_id")
    message = hello(new_session_id())
    message["params"]["metadata"]["agent_id"] = hostile
    _refused(guardian.handle(message), "params.metadata.agent_id")
    sid = _session(guardian)
    step = request("steps/userMessage", {"content": "hi"}, session_id=sid, mcp_server=hostile)
    _refused(guardian.handle(step), "params.metadata.mcp_server")


def test_tool_names_are_checked_in_steps_and_wrapped_mcp_calls(guardian: Guardian) -> None:
    sid = _session(guardian)
    call = {"tool": {"name": "read\u200bfile"}, "arguments": {}}
    answer = guardian.handle(request("steps/toolCallRequest", call, session_id=sid))
    _refused(answer, "payload.tool.name")
    wrapped = {"jsonrpc": "2.0", "method": "tools/call", "id": 1, "params": {"name": "rm\n"}}
    answer = guardian.handle(request("protocols/MCP/tools/call", wrapped, session_id=sid))
    _refused(answer, "payload.params.name")


def test_an_agbom_component_id_or_name_with_an_invisible_character_is_refused(
    guardian: Guardian,
) -> None:
    document = copy.deepcopy(SAMPLE_AGBOM)
    document["components"][0]["name"] = "file\u202esystem"
    with pytest.raises(InvalidAgBOM, match=r"\.name.*U\+202E"):
        AgBOM.from_payload({"agbom": document})
    # A document read from disk (a scan) keeps the component, to report it escaped.
    assert "file\u202esystem" in {c.name for c in AgBOM.from_document(document)}
    sid = _session(guardian)
    answer = guardian.handle(request("agbom/snapshot", {"agbom": document}, session_id=sid))
    assert answer["error"]["code"] == -32602, answer
    assert "U+202E" in answer["error"]["data"]["message"], answer


@pytest.mark.parametrize("fine", FINE)
def test_ordinary_ids_in_any_script_are_accepted(guardian: Guardian, fine: str) -> None:
    sid = _session(guardian)
    answer = guardian.handle(request("steps/skillRegister", _register(fine), session_id=sid))
    assert "result" in answer, answer
    assert answer["result"]["decision"] == "deny"  # unapproved, but decided: not refused


@given(st.text(min_size=1, max_size=40))
def test_a_refused_id_is_exactly_one_that_is_not_printable(text: str) -> None:
    # Every character that is neither a control, a format character nor a line or paragraph
    # separator is allowed; str.isprintable() also rejects other spaces and unassigned code
    # points, which are allowed, so only one direction is implied.
    if identifier_problem(text) is not None:
        assert not text.isprintable()
    if text.isprintable():
        assert identifier_problem(text) is None


def test_the_cli_refuses_such_ids_as_usage_errors(tmp_path: Path) -> None:
    db = tmp_path / "agbom.db"
    for command in (["skills", "approve"], ["skills", "deny"], ["skills", "revoke"]):
        done = run_cli(*command, "deploy\r\nhelper", "--digest", f"sha256:{SHA_A}", "--db", str(db))
        assert done.returncode == 2, done.stderr
        message = done.stderr.decode()
        assert "U+000D CARRIAGE RETURN" in message, message
        assert "Traceback" not in message
    assert not db.exists()  # refused before any store was opened or created
    done = run_cli(
        "servers", "approve", "fs\u202e", "--tools-from", str(tmp_path / "none.json"), "--db",
        str(db),
    )  # fmt: skip
    assert done.returncode == 2 and "U+202E" in done.stderr.decode(), done.stderr


@pytest.mark.network
def test_a_real_server_refuses_them_on_the_wire_and_in_the_read_api(tmp_path: Path) -> None:
    served = Served(db=tmp_path / "agbom.db", log=tmp_path / "serve.log").start()
    try:
        sid = new_session_id()
        with httpx.Client() as client:
            assert "result" in post(served.url, hello(sid), client=client)
            answer = post(
                served.url,
                request("steps/skillRegister", _register("deploy\nhelper"), session_id=sid),
                client=client,
            )
            _refused(answer, "payload.skill_id")
            for path in (
                "/v1/skills/deploy%0Ahelper",
                f"/v1/skills/deploy%0D%0Ahelper/approvals/sha256:{SHA_A}",
                "/v1/agents/a%E2%80%AEb/agbom",
                "/v1/sessions/s%0A1/agbom",
                f"/v1/skills/ok/approvals/sha256:{SHA_A}?agent_id=a%0Ab",
            ):
                reply = client.get(served.url + path, timeout=30)
                assert reply.status_code == 400, (path, reply.text)
                assert reply.json()["error"] == "invalid_identifier", reply.text
    finally:
        served.stop()


def test_a_hook_event_naming_such_a_skill_is_denied_not_registered(tmp_path: Path) -> None:
    import orjson

    db = tmp_path / "hook.db"
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "cwd": str(tmp_path),
        "tool_name": "Skill",
        "tool_input": {"skill": "deploy\nhelper"},
    }
    done = run_cli("hook", "claude-code", "--db", str(db), stdin=orjson.dumps(event))
    assert done.returncode == 0, done.stderr
    answer = orjson.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny", answer
    assert "U+000A LINE FEED" in answer["permissionDecisionReason"]
    listed = run_cli("skills", "pending", "--db", str(db), "--format", "json")
    assert b"helper" not in listed.stdout, listed.stdout
