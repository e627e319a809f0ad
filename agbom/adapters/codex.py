"""OpenAI Codex CLI command hooks (``requirements.toml`` managed hooks, ``config.toml``,
``hooks.json``).

Event -> ACS step (the ACS reference adapter maps ``PreToolUse`` only; agbom also gates the
prompt and records the rest):

================  ================================  ============================================
Codex event       ACS step                          a deny answers
================  ================================  ============================================
PreToolUse        steps/toolCallRequest             ``permissionDecision: deny`` + its reason
UserPromptSubmit  steps/userMessage                 ``decision: block`` + its reason
SessionStart      steps/sessionStart (recorded)     nothing
PostToolUse       steps/toolCallResult (recorded)   nothing
others            none                              nothing
================  ================================  ============================================

Codex's output parser is strict, and everything it refuses lets the call through: an empty
reason, ``ask``, ``allow`` without ``updatedInput``, an unknown key. So an allow is an empty
stdout, every deny carries a non-empty reason, and an ASK, a DEFER or a MODIFY is a deny
saying why (Codex cannot ask the user from a hook). Tools arrive as ``Bash`` (a shell
command), ``apply_patch`` and ``mcp__<server>__<tool>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, _hosts, host_replies, names
from agbom.adapters.interface import StepCall


def codex_tool(tool_name: str) -> names.Tool:
    mcp = names.split_double_underscore(tool_name)
    if mcp:
        return names.mcp(*mcp, host_name=tool_name)
    return names.builtin(host_replies.CODEX, tool_name)


class CodexAdapter(_hosts.HostAdapter):
    """``agbom hook codex`` and ``POST /hooks/codex``."""

    name = host_replies.CODEX

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = _base.req_str(event, "hook_event_name", "Codex hook input")
        common = self.common(event, name, _base.opt_str(event, "session_id"), env=env)
        if name in ("PreToolUse", "PostToolUse"):
            tool = codex_tool(_base.req_str(event, "tool_name", f"Codex {name} input"))
            arguments = _hosts.arguments_of(event.get("tool_input"))
            if name == "PreToolUse":
                return _hosts.tool_request(common, tool, arguments)
            return _hosts.tool_result(common, tool, event.get("tool_response"), failed=False)
        if name == "UserPromptSubmit":
            return _hosts.user_prompt(common, event.get("prompt"))
        if name == "SessionStart":
            context = {k: event.get(k) for k in ("source", "model", "permission_mode")}
            return _hosts.session_start(common, context)
        return _hosts.no_step(common)

    def allow(self, call: StepCall) -> tuple[bytes, int]:
        return host_replies.EMPTY

    def deny(self, call: StepCall, message: str) -> tuple[bytes, int]:
        return host_replies.codex_deny(call.event, message)
