"""What the host adapters share (Cursor, Codex, Gemini CLI, Copilot, Windsurf, opencode).

Each host module reads its own event shape and answers in its own reply shape; the ACS steps
in between are built here, the same way for every host, so that a tool call, a prompt, a
session start or a skill load means one thing to the Guardian whichever host sent it. Tool
names come through :mod:`agbom.adapters.names`; a skill load is registered and then loaded
exactly as Claude Code's (:func:`agbom.adapters.claude_code.skill_steps`), on the report the
hook process attached after reading the folder (:mod:`agbom.adapters.host_skills`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agbom.adapters import _base, names
from agbom.adapters.claude_code import _attached, skill_load_call
from agbom.adapters.interface import MalformedEvent, StepCall, Verdict

Common = dict[str, Any]


class HostAdapter(_base.BaseAdapter):
    """A host adapter: ``translate`` reads the host's event; ``allow`` and ``deny`` (and
    ``ask``, where the host can ask a person) write its replies."""

    def allow(self, call: StepCall) -> tuple[bytes, int]:
        raise NotImplementedError

    def deny(self, call: StepCall, message: str) -> tuple[bytes, int]:
        raise NotImplementedError

    def ask(self, verdict: Verdict, call: StepCall) -> tuple[bytes, int]:
        """An ASK or a DEFER: refused, saying a person must approve (most hosts cannot ask)."""
        return self.deny(call, needs_person(verdict, call))

    def render(self, verdict: Verdict | None, call: StepCall, *, hook_id: str) -> tuple[bytes, int]:
        if verdict is None or verdict.disposition == "allow" or not call.blocking:
            return self.allow(call)
        if verdict.disposition in ("ask", "defer"):
            return self.ask(verdict, call)
        return self.deny(call, verdict.message(call.subject))

    def common(
        self, event: Mapping[str, Any], name: str, session_id: str | None, *, env: Mapping[str, str]
    ) -> Common:
        """The fields every step of this event shares; a missing session id is malformed."""
        if not session_id:
            raise MalformedEvent(f"{self.name} {name} input: no session id")
        agent_id = _base.opt_str(event, "agent_id") or env.get(_base.AGENT_ID_ENV) or self.name
        return {
            "runtime": self.name,
            "event": name,
            "session_id": session_id[: names.MAX_NAME],
            "agent_id": agent_id,
        }


def arguments_of(value: Any) -> dict[str, Any]:
    """A tool's arguments as an object: hosts send an object, a JSON-encoded object (Cursor's
    ``beforeMCPExecution``, Copilot's ``toolArgs``), or nothing."""
    if isinstance(value, str):
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {"input": value}
        value = decoded
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    return {"input": value}


def tool_request(common: Common, tool: names.Tool, arguments: Mapping[str, Any]) -> StepCall:
    """``steps/toolCallRequest`` for ``tool``; the tool (and its MCP server) join the
    session's observed inventory."""
    acs_tool, components = _acs_tool(tool)
    if tool.name == names.SHELL and not tool.server:
        arguments = names.shell_arguments(arguments)
    payload: dict[str, Any] = {"tool": acs_tool, "arguments": _base.arguments(dict(arguments))}
    command = arguments.get("command")
    if tool.name == names.SHELL and not tool.server and isinstance(command, str):
        payload["raw_command"] = _base.text(command)
    return StepCall(
        method="steps/toolCallRequest",
        payload=payload,
        components=components,
        subject=tool.subject,
        **common,
    )


def tool_result(common: Common, tool: names.Tool, output: Any, *, failed: bool) -> StepCall:
    """``steps/toolCallResult``, recorded only: the call already ran."""
    acs_tool, components = _acs_tool(tool)
    payload = {
        "tool": acs_tool,
        "exit_status": "failure" if failed else "success",
        "outputs": [{"value": _base.text(output)}] if output is not None else [],
    }
    return StepCall(
        method="steps/toolCallResult",
        payload=payload,
        components=components,
        blocking=False,
        subject=tool.subject,
        **common,
    )


def user_prompt(common: Common, prompt: Any, *, blocking: bool = True) -> StepCall:
    """``steps/userMessage`` for a prompt the user submitted."""
    return StepCall(
        method="steps/userMessage",
        payload={"content": _base.text(prompt)},
        blocking=blocking,
        subject="prompt",
        **common,
    )


def session_start(common: Common, context: Mapping[str, Any]) -> StepCall:
    """``steps/sessionStart``, recorded only: no host lets a session-start hook stop it."""
    platform = {"runtime": common["runtime"]}
    platform.update({k: str(v)[:512] for k, v in context.items() if isinstance(v, str) and v})
    return StepCall(
        method="steps/sessionStart",
        payload={"platform_context": platform},
        blocking=False,
        subject="session",
        **common,
    )


def no_step(common: Common) -> StepCall:
    """An event with no ACS step: answered with the host's "no decision"."""
    return StepCall(method=None, payload={}, blocking=False, **common)


def skill_load(common: Common, event: Mapping[str, Any], name: str, *, trigger: str) -> StepCall:
    """``steps/skillRegister`` then ``steps/skillLoad`` of ``skill:NAME`` with the digest the
    hook process found; without its report (an HTTP hook), the load is denied."""
    name = name.strip().lstrip("/")
    skill_id = f"skill:{names.clean(name)}"
    info = _attached(event, name)
    if info is None:
        info = {
            "name": name,
            "found": False,
            "looked_in": [],
            "error": "the event carries no report of the skill's folder: the server reads no "
            f"folder an event names; run the command hook 'agbom hook {common['runtime']}', "
            "which reads it as the user",
        }
    return skill_load_call(skill_id, info, common["runtime"], trigger, f"skill {name}", common)


def needs_person(verdict: Verdict, call: StepCall) -> str:
    """The message for an ASK or DEFER on a host that cannot ask: refused, saying why."""
    said = verdict.question or verdict.message(call.subject)
    return f"{said} (this needs a person's approval, which {call.runtime} cannot ask for here)"


def _acs_tool(tool: names.Tool) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    if tool.server:
        components = _base.mcp_components(tool.server, tool.name)
        return {"name": tool.name, "provider": tool.server, "id": components[0]["id"]}, components
    return {"name": tool.name}, (_base.tool_component(tool.name),)


__all__ = [
    "HostAdapter",
    "arguments_of",
    "needs_person",
    "no_step",
    "session_start",
    "skill_load",
    "tool_request",
    "tool_result",
    "user_prompt",
]
