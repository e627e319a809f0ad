"""Each host's events through the real ``agbom hook HOST`` command against a real ``agbom serve``.

The pack (tests/adapters/conftest.py) bans the tool ``Bash`` and the MCP server ``evil-crm``
and asks a person before the tool ``deploy``. Every host names its shell its own way, so a
deny of each host's shell proves the names meet in one vocabulary; each answer is checked in
the host's own format and exit code (hook-wire-formats-hosts.md §11, docs/hosts/).
"""

from __future__ import annotations

import json
import uuid

import host_events as ev
import jsonschema
import pytest
from hook_helpers import Run, Server, run_hook

pytestmark = pytest.mark.network


def sid() -> str:
    return str(uuid.uuid4())


def hook(server: Server, host: str, event: bytes, **env: str) -> Run:
    return run_hook([host, "--server", server.url, "--timeout", "20"], event, env=env)


# -- Cursor --------------------------------------------------------------------------------------


def test_cursor_denies_its_shell_and_banned_mcp_server_and_allows_the_rest(server: Server) -> None:
    s = sid()
    for event in (ev.cursor_tool(s, "Shell", {"command": "ls"}), ev.cursor_shell(s, "ls -la")):
        denied = hook(server, "cursor", event)
        assert denied.code == 0, denied.stderr
        doc = denied.json
        assert doc["permission"] == "deny", doc
        assert "no-shell" in doc["user_message"] and doc["agent_message"] == doc["user_message"]
    mcp = hook(server, "cursor", ev.cursor_mcp(s, "lookup", "https://evil-crm/mcp", {"q": 1}))
    assert mcp.json["permission"] == "deny" and "no-evil-crm" in mcp.json["agent_message"]
    for event in (ev.cursor_tool(s, "Grep", {"pattern": "TODO"}), ev.cursor_read(s, "/etc/hosts")):
        allowed = hook(server, "cursor", event)
        assert (allowed.code, allowed.json) == (0, {"permission": "allow"}), allowed.stderr
    prompt = hook(server, "cursor", ev.cursor_prompt(s, "explain this repo"))
    assert (prompt.code, prompt.json) == (0, {"continue": True})
    start = hook(server, "cursor", ev.cursor("sessionStart", s, cwd="/path/to/workspace"))
    assert (start.code, start.json) == (0, {})


def test_cursor_ask_prompts_where_cursor_asks_and_denies_where_it_would_not(
    server: Server,
) -> None:
    s = sid()
    asked = hook(server, "cursor", ev.cursor_mcp(s, "deploy", "https://ops.example/mcp", {}))
    assert asked.code == 0 and asked.json["permission"] == "ask", asked.stdout
    # preToolUse accepts ask but does not enforce it: agbom refuses, saying a person must approve.
    refused = hook(server, "cursor", ev.cursor_tool(s, "deploy", {}))
    assert refused.json["permission"] == "deny"
    assert "person's approval" in refused.json["user_message"]


def test_cursor_prompt_block_and_failures_fail_closed(server: Server) -> None:
    s = sid()
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    blocked = hook(server, "cursor", ev.cursor_prompt(s, f"use token {secret} please"))
    assert blocked.code == 2 and blocked.json["continue"] is False, blocked.stdout
    assert secret not in blocked.stdout.decode()
    down = run_hook(["cursor", "--server", "http://127.0.0.1:9"], ev.cursor_shell(s, "ls"))
    assert down.code == 0 and down.json["permission"] == "deny"
    assert "unreachable" in down.json["user_message"]
    garbage = hook(server, "cursor", b"not json")
    assert (garbage.code, garbage.stdout) == (2, b"")


# -- Codex CLI -----------------------------------------------------------------------------------

# What Codex's parser accepts from a PreToolUse hook (codex-rs/hooks/src/engine/output_parser.rs
# and schema/generated/pre-tool-use.command.output.schema.json): no unknown key anywhere, and a
# deny with a non-empty reason; anything else lets the call through.
CODEX_PRETOOL_DENY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["hookSpecificOutput"],
    "properties": {
        "hookSpecificOutput": {
            "type": "object",
            "additionalProperties": False,
            "required": ["hookEventName", "permissionDecision", "permissionDecisionReason"],
            "properties": {
                "hookEventName": {"const": "PreToolUse"},
                "permissionDecision": {"const": "deny"},
                "permissionDecisionReason": {"type": "string", "pattern": r"\S"},
            },
        }
    },
}
CODEX_PROMPT_BLOCK = {
    "type": "object",
    "additionalProperties": False,
    "required": ["decision", "reason"],
    "properties": {"decision": {"const": "block"}, "reason": {"type": "string", "pattern": r"\S"}},
}


def test_codex_deny_is_what_its_parser_blocks_on_and_allow_is_empty(server: Server) -> None:
    s = sid()
    for tool, tool_input in (
        ("Bash", {"command": "rm -rf build"}),
        ("mcp__evil-crm__lookup", {"q": "acme"}),
        ("deploy", {}),  # an ASK: Codex cannot ask, so a deny with the reason
    ):
        denied = hook(server, "codex", ev.codex_tool(s, tool, tool_input))
        assert denied.code == 0, denied.stderr
        jsonschema.validate(denied.json, CODEX_PRETOOL_DENY)
    allowed = hook(server, "codex", ev.codex_tool(s, "apply_patch", {"command": "*** Begin"}))
    assert (allowed.code, allowed.stdout) == (0, b""), allowed.stderr
    prompt = hook(server, "codex", ev.codex_prompt(s, "hello"))
    assert (prompt.code, prompt.stdout) == (0, b"")
    start = hook(server, "codex", ev.codex_session_start(s))
    assert (start.code, start.stdout) == (0, b"")


def test_codex_failures_fail_closed_in_its_blocking_forms(server: Server) -> None:
    s = sid()
    down = run_hook(["codex", "--server", "http://127.0.0.1:9"], ev.codex_tool(s, "Read", {}))
    jsonschema.validate(down.json, CODEX_PRETOOL_DENY)
    prompt_down = run_hook(["codex", "--server", "http://127.0.0.1:9"], ev.codex_prompt(s, "x"))
    jsonschema.validate(prompt_down.json, CODEX_PROMPT_BLOCK)
    # Unreadable input: exit 2 with the reason on stderr, which Codex blocks on.
    garbage = hook(server, "codex", b"{")
    assert garbage.code == 2 and garbage.stdout == b"" and garbage.stderr.strip()
    # Fail-open really is open: an empty stdout.
    opened = run_hook(
        ["codex", "--server", "http://127.0.0.1:9", "--fail-open"], ev.codex_tool(s, "Read", {})
    )
    assert (opened.code, opened.stdout) == (0, b"")


# -- Gemini CLI ----------------------------------------------------------------------------------


def test_gemini_denies_its_shell_and_mcp_by_server_and_allows_the_rest(server: Server) -> None:
    s = sid()
    shell = hook(server, "gemini-cli", ev.gemini_tool(s, "run_shell_command", {"command": "ls"}))
    assert shell.code == 0 and shell.json["decision"] == "deny", shell.stdout
    assert "no-shell" in shell.json["reason"]
    # The server's name holds '_': only mcp_context tells where it ends.
    mcp = hook(
        server,
        "gemini-cli",
        ev.gemini_tool(s, "mcp_evil-crm_lookup", {"q": 1}, mcp=("evil-crm", "lookup")),
    )
    assert mcp.json == {"decision": "deny", "reason": mcp.json["reason"]}
    assert "no-evil-crm" in mcp.json["reason"]
    asked = hook(server, "gemini-cli", ev.gemini_tool(s, "deploy", {}))
    assert asked.json["decision"] == "deny" and "person's approval" in asked.json["reason"]
    for event in (
        ev.gemini_tool(s, "read_file", {"file_path": "README.md"}),
        ev.gemini_prompt(s, "summarise"),
        ev.gemini_session_start(s),
    ):
        allowed = hook(server, "gemini-cli", event)
        assert (allowed.code, allowed.stdout) == (0, b""), allowed.stderr


def test_gemini_fails_closed_on_an_unknown_event_shape(server: Server) -> None:
    garbage = hook(server, "gemini-cli", b"[]")
    # Gemini denies on exit 2 with plain text, whatever stdout holds.
    assert garbage.code == 2 and garbage.stdout == b"" and garbage.stderr.strip()


# -- GitHub Copilot CLI --------------------------------------------------------------------------


def test_copilot_camel_case_events_named_by_the_hook_env(server: Server) -> None:
    s = sid()
    env = {"AGBOM_HOOK_EVENT": "preToolUse"}
    denied = hook(server, "copilot", ev.copilot_tool(s, "bash", {"command": "ls"}), **env)
    assert denied.code == 0 and denied.json["permissionDecision"] == "deny", denied.stdout
    assert "no-shell" in denied.json["permissionDecisionReason"]
    asked = hook(server, "copilot", ev.copilot_tool(s, "deploy", {}), **env)
    assert asked.json["permissionDecision"] == "ask"
    allowed = hook(server, "copilot", ev.copilot_tool(s, "view", {"path": "README.md"}), **env)
    assert (allowed.code, allowed.stdout) == (0, b""), allowed.stderr
    start = hook(server, "copilot", ev.copilot_session_start(s), AGBOM_HOOK_EVENT="sessionStart")
    assert (start.code, start.stdout) == (0, b"")


def test_copilot_event_from_shape_and_from_pascal_case_payloads(server: Server) -> None:
    s = sid()
    by_shape = hook(server, "copilot", ev.copilot_tool(s, "powershell", {"command": "dir"}))
    assert by_shape.json["permissionDecision"] == "deny"
    pascal = hook(server, "copilot", ev.copilot_pascal_tool(s, "Bash", {"command": "ls"}))
    assert pascal.json["permissionDecision"] == "deny"
    # A failure at preToolUse exits 2 with a deny: Copilot denies on it either way.
    down = run_hook(["copilot", "--server", "http://127.0.0.1:9"], ev.copilot_tool(s, "view", {}))
    assert down.code == 2 and down.json["permissionDecision"] == "deny"


def test_copilot_http_hook_route(server: Server) -> None:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(
        "POST",
        "/hooks/copilot",
        body=ev.copilot_tool(sid(), "bash", {"command": "ls"}),
        headers={"Content-Type": "application/json", "X-Agbom-Hook-Event": "preToolUse"},
    )
    response = conn.getresponse()
    body = json.loads(response.read())
    assert response.status == 200 and body["permissionDecision"] == "deny"


# -- Windsurf ------------------------------------------------------------------------------------


def test_windsurf_blocks_with_exit_2_and_the_reason_on_stderr(server: Server) -> None:
    t = sid()
    cases = [
        ("pre_run_command", {"command_line": "ls -la", "cwd": "/path/to/repo"}, "no-shell"),
        (
            "pre_mcp_tool_use",
            {"mcp_server_name": "evil-crm", "mcp_tool_name": "lookup", "mcp_tool_arguments": {}},
            "no-evil-crm",
        ),
        ("pre_mcp_tool_use", {"mcp_server_name": "ops", "mcp_tool_name": "deploy"}, "deploy"),
    ]
    for event, info, rule in cases:
        blocked = hook(server, "windsurf", ev.windsurf(event, t, info))
        assert (blocked.code, blocked.stdout) == (2, b""), blocked.stderr
        assert rule in blocked.stderr
    for event, info in (
        ("pre_read_code", {"file_path": "/path/to/repo/README.md"}),
        ("pre_write_code", {"file_path": "/path/to/repo/a.py", "edits": []}),
        ("pre_user_prompt", {"user_prompt": "hello"}),
        ("post_cascade_response", {"response": "done"}),
    ):
        allowed = hook(server, "windsurf", ev.windsurf(event, t, info))
        assert (allowed.code, allowed.stdout) == (0, b""), allowed.stderr
    down = run_hook(
        ["windsurf", "--server", "http://127.0.0.1:9"], ev.windsurf("pre_read_code", t, {})
    )
    assert down.code == 2 and "unreachable" in down.stderr


# -- opencode ------------------------------------------------------------------------------------


def test_opencode_answers_allow_or_deny_for_its_plugin(server: Server) -> None:
    s = sid()
    bash = hook(server, "opencode", ev.opencode_tool(s, "bash", {"command": "ls"}))
    assert bash.code == 0 and bash.json["decision"] == "deny" and "no-shell" in bash.json["reason"]
    # A server name with '_' is split by the configured names the plugin sends.
    mcp = hook(
        server,
        "opencode",
        ev.opencode_tool(s, "evil-crm_lookup", {}, servers=["evil", "evil-crm"]),
    )
    assert mcp.json["decision"] == "deny" and "no-evil-crm" in mcp.json["reason"]
    asked = hook(server, "opencode", ev.opencode_tool(s, "deploy", {}))
    assert asked.json["decision"] == "deny" and "person's approval" in asked.json["reason"]
    read = hook(server, "opencode", ev.opencode_tool(s, "read", {"filePath": "/x"}))
    assert (read.code, read.json) == (0, {"decision": "allow"})
    down = run_hook(["opencode", "--server", "http://127.0.0.1:9"], ev.opencode_tool(s, "read", {}))
    assert down.json["decision"] == "deny"
