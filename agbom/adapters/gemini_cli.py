"""Gemini CLI command hooks (``hooks`` in ``settings.json``).

Event -> ACS step:

===========  =====================================================  ===========================
Gemini event ACS step                                               a deny answers
===========  =====================================================  ===========================
BeforeTool   steps/toolCallRequest; ``activate_skill``:              ``decision: deny`` + reason
             steps/skillRegister then steps/skillLoad
BeforeAgent  steps/userMessage                                      ``decision: deny`` + reason
SessionStart steps/sessionStart (recorded only)                     nothing
AfterTool    steps/toolCallResult (recorded only)                   nothing
others       none                                                   nothing
===========  =====================================================  ===========================

Every skill Gemini CLI loads goes through its ``activate_skill`` tool, the model's choice and
the user's typed ``/name`` alike, so ``BeforeTool`` is its skill gate: the hook process reads
the folder (agbom/adapters/host_skills.py) and the load is decided against the approvals by
``(skill_id, digest)``, as for Claude Code. MCP tools are ``mcp_<server>_<tool>``; the server
is read from ``mcp_context.server_name`` (the name alone cannot be split when the server's
name holds ``_``). An ASK is a deny saying a person must approve: only newer builds honour
``decision: ask``, and an older one would run the tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, _hosts, host_replies, host_skills, names
from agbom.adapters.interface import StepCall


def gemini_tool(event: Mapping[str, Any], tool_name: str) -> names.Tool:
    context = event.get("mcp_context")
    if isinstance(context, dict):
        server = _base.opt_str(context, "server_name")
        tool = _base.opt_str(context, "tool_name")
        if server and tool:
            return names.mcp(server, tool, host_name=tool_name)
    split = names.split_single_underscore(tool_name, "mcp_")
    if split:
        return names.mcp(*split, host_name=tool_name)
    return names.builtin(host_replies.GEMINI, tool_name)


class GeminiCliAdapter(_hosts.HostAdapter):
    """``agbom hook gemini-cli`` and ``POST /hooks/gemini-cli``."""

    name = host_replies.GEMINI

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = _base.req_str(event, "hook_event_name", "Gemini CLI hook input")
        common = self.common(event, name, _base.opt_str(event, "session_id"), env=env)
        if name in ("BeforeTool", "AfterTool"):
            tool_name = _base.req_str(event, "tool_name", f"Gemini CLI {name} input")
            arguments = _hosts.arguments_of(event.get("tool_input"))
            if name == "BeforeTool" and tool_name == host_skills.GEMINI_SKILL_TOOL:
                skill = _base.opt_str(arguments, "name")
                if skill:
                    return _hosts.skill_load(common, event, skill, trigger="agent_decision")
            tool = gemini_tool(event, tool_name)
            if name == "BeforeTool":
                return _hosts.tool_request(common, tool, arguments)
            response = event.get("tool_response")
            failed = isinstance(response, dict) and bool(response.get("error"))
            return _hosts.tool_result(common, tool, response, failed=failed)
        if name == "BeforeAgent":
            return _hosts.user_prompt(common, event.get("prompt"))
        if name == "SessionStart":
            return _hosts.session_start(common, {"source": event.get("source")})
        return _hosts.no_step(common)

    def allow(self, call: StepCall) -> tuple[bytes, int]:
        return host_replies.EMPTY

    def deny(self, call: StepCall, message: str) -> tuple[bytes, int]:
        return host_replies.gemini_deny(call.event, message)
