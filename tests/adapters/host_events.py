"""Each host's hook input, in the shapes the hosts send (the source of each shape is named).

Ids and paths are placeholders; field names, nesting and value types are the hosts'. Every
builder takes the values a test varies and returns the event as bytes for stdin.
"""

from __future__ import annotations

import json
from typing import Any


def _bytes(event: dict[str, Any]) -> bytes:
    return json.dumps(event).encode()


# -- Cursor --------------------------------------------------------------------------------------
# Captured from Cursor 3.7.x and masked: GenAI-Security-Project/agent-control-standard
# adapters/cursor/tests/example_payloads.md @ 1b99678 (preToolUse, beforeShellExecution,
# beforeSubmitPrompt, sessionStart). beforeMCPExecution (tool_input a JSON string; url or
# command) and beforeReadFile: cupcake.eqtylab.io/reference/harnesses/cursor and the ACS mapping.

_CURSOR_COMMON = {
    "conversation_id": "00000000-0000-0000-0000-000000000001",
    "generation_id": "00000000-0000-0000-0000-000000000002",
    "model": "default",
    "cursor_version": "3.7.x",
    "workspace_roots": ["/path/to/workspace"],
    "user_email": "<user@example.com>",
    "transcript_path": "/Users/user/.cursor/projects/ws/agent-transcripts/s/s.jsonl",
}


def cursor(event: str, session: str, **fields: Any) -> bytes:
    return _bytes({**_CURSOR_COMMON, "session_id": session, "hook_event_name": event, **fields})


def cursor_tool(session: str, tool: str, tool_input: dict[str, Any]) -> bytes:
    return cursor(
        "preToolUse",
        session,
        tool_name=tool,
        tool_input=tool_input,
        tool_use_id="tool_00000000-0000-0000-0000-000000000003",
    )


def cursor_shell(session: str, command: str) -> bytes:
    return cursor(
        "beforeShellExecution", session, command=command, cwd="/path/to/workspace", sandbox=True
    )


def cursor_mcp(session: str, tool: str, url: str, arguments: dict[str, Any]) -> bytes:
    return cursor(
        "beforeMCPExecution", session, tool_name=tool, tool_input=json.dumps(arguments), url=url
    )


def cursor_read(session: str, path: str) -> bytes:
    return cursor("beforeReadFile", session, file_path=path, content="API_KEY=...", attachments=[])


def cursor_prompt(session: str, prompt: str) -> bytes:
    return cursor(
        "beforeSubmitPrompt", session, prompt=prompt, attachments=[], composer_mode="agent"
    )


# -- Codex CLI -----------------------------------------------------------------------------------
# openai/codex codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json
# @ 3be4afd and user-prompt-submit.command.input.schema.json @ bde5e18 (every required field);
# MCP tools as mcp__<server>__<tool> (codex-rs/hooks/src/events/pre_tool_use.rs @ 0082977).


def _codex(event: str, session: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": None,
        "cwd": "/path/to/repo",
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
        **fields,
    }


def codex_tool(session: str, tool: str, tool_input: dict[str, Any]) -> bytes:
    return _bytes(
        _codex("PreToolUse", session, tool_name=tool, tool_input=tool_input, tool_use_id="call_1")
    )


def codex_prompt(session: str, prompt: str) -> bytes:
    return _bytes(_codex("UserPromptSubmit", session, prompt=prompt, turn_id="turn-1"))


def codex_session_start(session: str) -> bytes:
    return _bytes(_codex("SessionStart", session, source="startup"))


# -- Gemini CLI ----------------------------------------------------------------------------------
# google-gemini/gemini-cli @ 5411f11: docs/hooks/reference.md (base input, BeforeTool,
# BeforeAgent) and packages/core/src/hooks/types.ts (BeforeToolInput.mcp_context, the
# McpToolContext's server_name and tool_name); activate_skill's one argument, name:
# docs/tools/activate-skill.md.


def _gemini(event: str, session: str, cwd: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/user/.gemini/tmp/{session}.json",
        "cwd": cwd,
        "hook_event_name": event,
        "timestamp": "2026-09-01T10:00:00.000Z",
        **fields,
    }


def gemini_tool(
    session: str,
    tool: str,
    tool_input: dict[str, Any],
    *,
    cwd: str = "/path/to/project",
    mcp: tuple[str, str] | None = None,
) -> bytes:
    fields: dict[str, Any] = {"tool_name": tool, "tool_input": tool_input}
    if mcp:
        fields["mcp_context"] = {
            "server_name": mcp[0],
            "tool_name": mcp[1],
            "command": "npx",
            "args": [mcp[0]],
        }
    return _bytes(_gemini("BeforeTool", session, cwd, **fields))


def gemini_prompt(session: str, prompt: str) -> bytes:
    return _bytes(_gemini("BeforeAgent", session, "/path/to/project", prompt=prompt))


def gemini_session_start(session: str) -> bytes:
    return _bytes(_gemini("SessionStart", session, "/path/to/project", source="startup"))


# -- GitHub Copilot CLI --------------------------------------------------------------------------
# github/docs content/copilot/reference/hooks-reference.md @ 05da5bc: the camelCase payloads
# (no event name in them) and the VS Code compatible PascalCase ones (hook_event_name,
# snake_case, Claude's tool names).


def copilot_tool(session: str, tool: str, args: dict[str, Any]) -> bytes:
    return _bytes(
        {
            "sessionId": session,
            "timestamp": 1767261600000,
            "cwd": "/path/to/repo",
            "toolName": tool,
            "toolArgs": json.dumps(args),
        }
    )


def copilot_pascal_tool(session: str, tool: str, tool_input: dict[str, Any]) -> bytes:
    return _bytes(
        {
            "hook_event_name": "PreToolUse",
            "session_id": session,
            "timestamp": "2026-09-01T10:00:00.000Z",
            "cwd": "/path/to/repo",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    )


def copilot_session_start(session: str) -> bytes:
    return _bytes(
        {"sessionId": session, "timestamp": 1767261600000, "cwd": "/path/to/repo", "source": "new"}
    )


# -- Windsurf ------------------------------------------------------------------------------------
# shared/reference/hook-wire-formats-hosts.md §7: the envelope (agent_action_name,
# trajectory_id, execution_id, timestamp, model_name, tool_info) from a third-party
# specification citing docs.devin.ai/desktop/cascade/hooks; Windsurf publishes no fixture.


def windsurf(event: str, trajectory: str, tool_info: dict[str, Any]) -> bytes:
    return _bytes(
        {
            "agent_action_name": event,
            "trajectory_id": trajectory,
            "execution_id": "exec-1",
            "timestamp": "2026-09-01T10:00:00Z",
            "model_name": "swe-1",
            "tool_info": tool_info,
        }
    )


# -- opencode ------------------------------------------------------------------------------------
# What agbom's plugin sends (agbom/hostconfig/opencode_plugin.ts): tool.execute.before's input
# ({tool, sessionID, callID}) and output.args, as @opencode-ai/plugin 1.18.33 types them.


def opencode_tool(
    session: str,
    tool: str,
    args: dict[str, Any],
    *,
    cwd: str = "/path/to/project",
    servers: list[str] | None = None,
) -> bytes:
    return _bytes(
        {
            "hook_event_name": "tool.execute.before",
            "session_id": session,
            "call_id": "call_1",
            "tool": tool,
            "args": args,
            "cwd": cwd,
            "worktree": cwd,
            "mcp_servers": servers or [],
        }
    )
