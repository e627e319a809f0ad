"""GitHub Copilot CLI hooks, command and HTTP (``~/.copilot/hooks/*.json``,
``.github/hooks/*.json``, ``/etc/github-copilot/policy.d/*.json``).

Event -> ACS step:

====================  =====================================  ======================================
Copilot event         ACS step                               a deny answers
====================  =====================================  ======================================
preToolUse            steps/toolCallRequest                  ``permissionDecision: deny`` + reason
sessionStart          steps/sessionStart (recorded only)     nothing
userPromptSubmitted   steps/userMessage (recorded only)      nothing: Copilot drops this output
postToolUse(Failure)  steps/toolCallResult (recorded only)   nothing
others                none                                   nothing
====================  =====================================  ======================================

Copilot has two payload dialects: camelCase events (``preToolUse``: ``sessionId``,
``toolName``, ``toolArgs``) name no event in the payload, so the event comes from the hook's
environment (``AGBOM_HOOK_EVENT``, which ``agbom hook install copilot`` sets) or the
``X-Agbom-Hook-Event`` header of an HTTP hook, else from the payload's shape; PascalCase
events (``PreToolUse``) carry ``hook_event_name`` and snake_case fields. An allow is an
empty answer (Copilot's default flow, its own permission prompts kept); an ASK is
``permissionDecision: ask`` (the cloud agent, which has no user, treats it as deny).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, _hosts, host_replies, names
from agbom.adapters.interface import StepCall, Verdict

# PascalCase (Claude-compatible) event names -> the camelCase ones.
_CAMEL = {
    "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse",
    "PostToolUseFailure": "postToolUseFailure",
    "SessionStart": "sessionStart",
    "SessionEnd": "sessionEnd",
    "UserPromptSubmit": "userPromptSubmitted",
    "Stop": "agentStop",
    "SubagentStop": "subagentStop",
    "PreCompact": "preCompact",
    "ErrorOccurred": "errorOccurred",
}
KNOWN_EVENTS = frozenset(
    {
        *_CAMEL.values(),
        "userPromptTransformed",
        "permissionRequest",
        "subagentStart",
        "notification",
    }
)


def event_of(event: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The camelCase event: named by the payload, the hook, or the payload's shape."""
    named = _base.opt_str(event, "hook_event_name")
    if named:
        return _CAMEL.get(named, named)
    told = env.get(host_replies.EVENT_ENV, "")
    told = _CAMEL.get(told, told)
    if told in KNOWN_EVENTS:
        return told
    if "toolName" in event:
        if "toolResult" in event:
            return "postToolUse"
        if "error" in event:
            return "postToolUseFailure"
        return "preToolUse"
    if "transformedPrompt" in event:
        return "userPromptTransformed"
    if "prompt" in event:
        return "userPromptSubmitted"
    if "reason" in event:
        return "sessionEnd"
    if "source" in event:
        return "sessionStart"
    return None


def copilot_tool(tool_name: str) -> names.Tool:
    mcp = names.split_double_underscore(tool_name)
    if mcp:
        return names.mcp(*mcp, host_name=tool_name)
    return names.builtin(host_replies.COPILOT, tool_name)


class CopilotAdapter(_hosts.HostAdapter):
    """``agbom hook copilot`` and ``POST /hooks/copilot``."""

    name = host_replies.COPILOT

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = event_of(event, env)
        if name is None:
            from agbom.adapters.interface import MalformedEvent

            raise MalformedEvent(
                "Copilot hook input: the event is not named (set AGBOM_HOOK_EVENT in the "
                "hook's env, or the X-Agbom-Hook-Event header) and its shape is not one known"
            )
        session = _base.opt_str(event, "sessionId") or _base.opt_str(event, "session_id")
        common = self.common(event, name, session, env=env)
        if name in ("preToolUse", "postToolUse", "postToolUseFailure"):
            tool_name = _base.opt_str(event, "toolName") or _base.req_str(
                event, "tool_name", f"Copilot {name} input"
            )
            raw_args = event["toolArgs"] if "toolArgs" in event else event.get("tool_input")
            arguments = _hosts.arguments_of(raw_args)
            tool = copilot_tool(tool_name)
            if name == "preToolUse":
                return _hosts.tool_request(common, tool, arguments)
            failed = name == "postToolUseFailure"
            result = event.get("error") if failed else (
                event.get("toolResult") or event.get("tool_result")
            )  # fmt: skip
            return _hosts.tool_result(common, tool, result, failed=failed)
        if name == "userPromptSubmitted":
            # Copilot drops this hook's output: the prompt is recorded, never blocked.
            return _hosts.user_prompt(common, event.get("prompt"), blocking=False)
        if name == "sessionStart":
            return _hosts.session_start(common, {"source": event.get("source")})
        return _hosts.no_step(common)

    def allow(self, call: StepCall) -> tuple[bytes, int]:
        return host_replies.EMPTY

    def deny(self, call: StepCall, message: str) -> tuple[bytes, int]:
        return host_replies.copilot_permission("deny", message)

    def ask(self, verdict: Verdict, call: StepCall) -> tuple[bytes, int]:
        return host_replies.copilot_permission(
            "ask", verdict.question or verdict.message(call.subject)
        )
