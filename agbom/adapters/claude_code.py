"""Claude Code command/HTTP hooks.

Event → ACS step:

==================  ===============================================  =========================
Claude Code event   ACS step                                         a deny answers
==================  ===============================================  =========================
PreToolUse          steps/toolCallRequest (``Skill``: steps/skillLoad)  permissionDecision deny
PostToolUse(…Fail)  steps/toolCallResult                             ``decision: block``
UserPromptSubmit    steps/userMessage                                ``decision: block``
SessionStart        steps/sessionStart                               ``continue: false``
Stop, SubagentStop  steps/agentResponse (observe-only)               ``systemMessage`` notice
others (SessionEnd)  none: answered ``{}``                            -
==================  ===============================================  =========================

An allow is answered ``{}``: agbom adds its verdict to Claude Code's own permission rules rather
than replacing them (an explicit ``permissionDecision: allow`` would skip the user's prompts).
An ASK becomes ``permissionDecision: ask`` with the Guardian's question, so the user is the
approver; so does a DEFER, which Claude Code cannot resume. MCP tools arrive as
``mcp__<server>__<tool>`` and are recorded as that server's tool; the ``Skill`` tool is a skill
load, checked against the approvals by ``(skill_id, digest)`` with the digest that the hook
process computed from the skill's folder and attached to the event
(agbom/adapters/skill_files.py): the adapter itself reads no folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, replies, skill_files
from agbom.adapters.interface import MalformedEvent, StepCall, Verdict

DEFAULT_AGENT_ID = "claude-code"
SKILL_TOOL = "Skill"
# Sent as the digest of a skill whose files cannot be found: it matches no approval.
UNKNOWN_DIGEST = "0" * 64
_HEX64 = re.compile(r"[0-9a-f]{64}")


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """``mcp__<server>__<tool>`` → ``(server, tool)``; None for a built-in tool name."""
    if not name.startswith("mcp__"):
        return None
    server, sep, tool = name[5:].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


def _attached(event: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The skill report thin mode attached to the event, when it is for ``name`` and sound."""
    info = event.get(skill_files.EVENT_KEY)
    if not isinstance(info, dict) or info.get("name") != name:
        return None
    if info.get("found") is True:
        digest = info.get("digest")
        if not (isinstance(digest, str) and _HEX64.fullmatch(digest)):
            return None
        if not isinstance(info.get("files"), list):
            return None
    elif info.get("found") is not False:
        return None
    return info


def skill_steps(
    skill_id: str, info: Mapping[str, Any], *, runtime: str
) -> tuple[tuple[tuple[str, dict[str, Any]], ...], str, str]:
    """``(before, digest, note)`` for a skill load: the skillRegister that carries the found
    folder's files (none when it was not found), the digest to load, and what to tell the user."""
    if info.get("found") is not True:
        looked = [str(p) for p in info.get("looked_in") or [] if isinstance(p, str)][:4]
        error = info.get("error")
        where = " or ".join(looked) or "no skill folder (no absolute cwd or HOME)"
        if isinstance(error, str) and error:
            note = f"{error[:512]} (on the machine running the hook)"
        else:
            note = f"no SKILL.md in {where} on the machine running the hook"
        return (), UNKNOWN_DIGEST, note
    digest = str(info["digest"])
    scope = "user" if info.get("scope") == "user" else "project"
    register = {
        "skill_id": skill_id,
        "definition": {
            "ref": f"{runtime}:{scope}:.claude/skills/{info['name']}",
            "digest": {"algorithm": "sha256", "value": digest},
            "body": {"files": info.get("files") or []},
        },
        "declared_capabilities": [],
    }
    return (("steps/skillRegister", register),), digest, ""


class ClaudeCodeAdapter(_base.BaseAdapter):
    """``agbom hook claude-code`` and ``POST /hooks/claude-code``."""

    name = replies.CLAUDE_CODE

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = _base.req_str(event, "hook_event_name", "Claude Code hook input")
        session_id = _base.req_str(event, "session_id", f"Claude Code {name} input")
        agent_id = (
            _base.opt_str(event, "agent_id") or env.get(_base.AGENT_ID_ENV) or DEFAULT_AGENT_ID
        )
        common: dict[str, Any] = {
            "runtime": self.name,
            "event": name,
            "session_id": session_id,
            "agent_id": agent_id,
        }
        if name in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
            tool_name = _base.req_str(event, "tool_name", f"Claude Code {name} input")
            tool_input = event.get("tool_input")
            if tool_input is not None and not isinstance(tool_input, dict):
                raise MalformedEvent(f"Claude Code {name}: 'tool_input' must be an object")
            tool_input = tool_input or {}
            if name == "PreToolUse" and tool_name == SKILL_TOOL:
                return self._skill_load(event, tool_input, env=env, common=common)
            mcp = split_mcp_name(tool_name)
            if mcp:
                server, short = mcp
                components = _base.mcp_components(server, short)
                # The id tells same-named tools of different servers apart.
                tool: dict[str, Any] = {
                    "name": short,
                    "provider": server,
                    "id": components[0]["id"],
                }
                subject = f"{server}/{short}"
            else:
                tool = {"name": tool_name}
                components = (_base.tool_component(tool_name),)
                subject = tool_name
            if name == "PreToolUse":
                payload: dict[str, Any] = {
                    "tool": tool,
                    "arguments": _base.arguments(tool_input),
                }
                if tool_name == "Bash" and isinstance(tool_input.get("command"), str):
                    payload["raw_command"] = _base.text(tool_input["command"])
                return StepCall(
                    method="steps/toolCallRequest",
                    payload=payload,
                    components=components,
                    subject=subject,
                    **common,
                )
            failed = name == "PostToolUseFailure"
            output = event.get("error") if failed else event.get("tool_response")
            payload = {
                "tool": tool,
                "exit_status": "failure" if failed else "success",
                "outputs": [{"value": _base.text(output)}] if output is not None else [],
            }
            duration = event.get("duration_ms")
            if isinstance(duration, int | float) and not isinstance(duration, bool):
                payload["duration_ms"] = max(0, int(duration))
            return StepCall(
                method="steps/toolCallResult",
                payload=payload,
                components=components,
                subject=subject,
                **common,
            )
        if name == "UserPromptSubmit":
            return StepCall(
                method="steps/userMessage",
                payload={"content": _base.text(event.get("prompt"))},
                subject="prompt",
                **common,
            )
        if name == "SessionStart":
            context = {"runtime": "claude-code"}
            for key in ("source", "model", "agent_type", "permission_mode"):
                value = _base.opt_str(event, key)
                if value:
                    context[key] = value
            return StepCall(
                method="steps/sessionStart",
                payload={"platform_context": context},
                subject="session",
                **common,
            )
        if name in ("Stop", "SubagentStop"):
            return StepCall(
                method="steps/agentResponse",
                payload={"content": _base.text(event.get("last_assistant_message"))},
                blocking=False,
                subject="response",
                **common,
            )
        # SessionEnd is deliberately not sent as steps/sessionEnd: Claude Code resumes a
        # conversation under the same session_id, and a sealed ACS session refuses every later step.
        return StepCall(method=None, payload={}, blocking=False, **common)

    def _skill_load(
        self,
        event: Mapping[str, Any],
        tool_input: Mapping[str, Any],
        *,
        env: Mapping[str, str],
        common: dict[str, Any],
    ) -> StepCall:
        skill = _base.opt_str(tool_input, "skill") or _base.opt_str(tool_input, "command")
        if skill is None:
            raise MalformedEvent("Claude Code Skill call: 'tool_input.skill' is missing")
        skill = skill.strip().lstrip("/")
        skill_id = f"skill:{skill}"
        info = _attached(event, skill)
        if info is None:
            # Never read here: on a server the event's cwd names a path of the client's
            # choosing. The hook process reads the folder and attaches what it found
            # (agbom/adapters/skill_files.py); so does a server whose operator turned on
            # --read-project-skills, before the event reaches the decision process.
            info = {
                "name": skill,
                "found": False,
                "looked_in": [],
                "error": "the event carries no report of the skill's folder: the server reads "
                "no folder an event names; use the command hook 'agbom hook claude-code "
                "--server URL', which reads it as the user, or start the server with "
                "--read-project-skills DIR",
            }
        before, digest, note = skill_steps(skill_id, info, runtime=self.name)
        payload = {
            "skill_id": skill_id,
            "digest": {"algorithm": "sha256", "value": digest},
            "load_trigger": "agent_decision",
            "load_path": [{"skill_id": skill_id}],
        }
        return StepCall(
            method="steps/skillLoad",
            payload=payload,
            subject=f"skill {skill}",
            before=before,
            note=note,
            **common,
        )

    def render(self, verdict: Verdict | None, call: StepCall, *, hook_id: str) -> replies.Reply:
        if verdict is None or verdict.disposition == "allow":
            return replies.claude_pass()
        message = verdict.message(call.subject)
        if not call.blocking:
            return replies.claude_notice(f"{message} (recorded; not enforced at {call.event})")
        if call.event == "PreToolUse":
            if verdict.disposition in ("ask", "defer"):
                return replies.claude_permission("PreToolUse", "ask", verdict.question or message)
            return replies.claude_permission("PreToolUse", "deny", message)
        if call.event == "SessionStart":
            return replies.claude_stop(message)
        return replies.claude_block(message)
