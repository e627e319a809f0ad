"""Claude Code command/HTTP hooks.

Event → ACS step (→ what a deny answers):

- ``PreToolUse`` → steps/toolCallRequest; of the ``Skill`` tool, skillRegister then skillLoad
  (→ ``permissionDecision: deny``);
- ``UserPromptExpansion`` → a typed ``/skill``: skillRegister then skillLoad; a built-in or
  legacy command, an MCP prompt: steps/userMessage (→ ``decision: block``);
- ``UserPromptSubmit`` → steps/userMessage, gated first by the load of a typed ``/skill``
  found on the machine, for builds without UserPromptExpansion (→ ``decision: block``);
- ``ConfigChange`` of source ``skills`` → steps/skillRegister of the changed folder
  (→ ``decision: block``, which keeps the change out of the session);
- ``PostToolUse``, ``PostToolUseFailure`` → steps/toolCallResult (→ ``decision: block``);
- ``SessionStart`` → agbom/snapshot of what the session can load, then steps/sessionStart
  (→ ``continue: false``);
- ``Stop``, ``SubagentStop`` → steps/agentResponse, observe-only (→ a ``systemMessage``);
- others (``SessionEnd``) → none: answered ``{}``.

An allow is answered ``{}``: agbom adds its verdict to Claude Code's own permission rules rather
than replacing them (an explicit ``permissionDecision: allow`` would skip the user's prompts).
An ASK becomes ``permissionDecision: ask`` with the Guardian's question, so the user is the
approver; so does a DEFER, which Claude Code cannot resume. MCP tools arrive as
``mcp__<server>__<tool>`` and are recorded as that server's tool. A skill load, by the model
(the ``Skill`` tool, filtered on ``tool_input.skill`` here: Claude Code's ``if`` filter is not
relied on) or typed by the user, is checked against the approvals by ``(skill_id, digest)``
with the digest that the hook process computed from the skill's folder and attached to the
event (agbom/adapters/skill_files.py); the registration declares the capabilities its
``allowed-tools`` grant, as ``agbom scan`` reads them. At ``SessionStart`` the hook attaches
what the session can load (agbom/adapters/claude_inventory.py), recorded as the session's
AgBOM (agbom/adapters/claude_snapshot.py). The adapter itself reads no folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agbom.adapters import _base, claude_inventory, claude_snapshot, replies, skill_files
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


def skill_load_call(
    skill_id: str,
    info: Mapping[str, Any],
    runtime: str,
    trigger: str,
    subject: str,
    common: Mapping[str, Any],
) -> StepCall:
    """The ``steps/skillLoad`` of a skill, preceded by its registration (:func:`skill_steps`
    on the hook's report of its folder, ``info``): every host's skill gate ends here."""
    before, digest, note = skill_steps(skill_id, info, runtime=runtime)
    payload = {
        "skill_id": skill_id,
        "digest": {"algorithm": "sha256", "value": digest},
        "load_trigger": trigger,
        "load_path": [{"skill_id": skill_id}],
    }
    return StepCall(
        method="steps/skillLoad",
        payload=payload,
        subject=subject,
        before=before,
        note=note,
        **common,
    )


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
    return (
        (("steps/skillRegister", registration(skill_id, info, runtime=runtime)),),
        str(info["digest"]),
        "",
    )


def registration(skill_id: str, info: Mapping[str, Any], *, runtime: str) -> dict[str, Any]:
    """The skillRegister payload of a found skill folder: its files for the review page, and
    the capabilities its ``SKILL.md``'s ``allowed-tools`` grant (read as ``agbom scan`` reads
    them: ``Bash`` is ``process.execute``), so that an approval covers exactly those."""
    files = info.get("files") or []
    skill_md = next(
        (f.get("text") for f in files if isinstance(f, dict) and f.get("path") == "SKILL.md"),
        None,
    )
    fields = claude_snapshot.skill_fields(skill_md)
    scope = info.get("scope") if info.get("scope") in ("managed", "user", "project") else None
    plugin = info.get("plugin") if isinstance(info.get("plugin"), str) else None
    name = str(info["name"])
    return {
        "skill_id": skill_id,
        "definition": {
            "ref": claude_snapshot.skill_ref(runtime, scope or "plugin", name, plugin),
            "digest": {"algorithm": "sha256", "value": str(info["digest"])},
            "body": {"files": files},
        },
        "declared_capabilities": list(fields.get("declared_capabilities") or []),
    }


_BUILT_IN_SOURCES = ("builtin", "built-in", "bundled")


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
                return self._skill_tool(event, tool_input, common)
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
            prompt = StepCall(
                method="steps/userMessage",
                payload={"content": _base.text(event.get("prompt"))},
                subject="prompt",
                **common,
            )
            typed = skill_files.typed_command(event.get("prompt"))
            info = _attached(event, typed) if typed else None
            if typed is None or info is None or info.get("found") is not True:
                return prompt  # a built-in command, a legacy one, or no command at all
            # A typed /skill on a build without UserPromptExpansion: the load is gated first,
            # then the prompt it arrives in (rules on its text) as any other.
            load = self._skill_load(event, typed, "user", common=common)
            return replace(
                prompt,
                before=load.before,
                gates=((str(load.method), load.payload),),
                subject=load.subject,
                note=load.note,
            )
        if name == "UserPromptExpansion":
            return self._expansion(event, common)
        if name == "ConfigChange":
            return self._config_change(event, common)
        if name == "SessionStart":
            context: dict[str, Any] = {"runtime": "claude-code"}
            for key in ("source", "model", "agent_type", "permission_mode"):
                value = _base.opt_str(event, key)
                if value:
                    context[key] = value
            inventory, summary = claude_snapshot.snapshot(
                self.name, event.get(claude_inventory.EVENT_KEY)
            )
            if summary:
                context["inventory"] = summary
            return StepCall(
                method="steps/sessionStart",
                payload={"platform_context": context},
                subject="session",
                before=(("agbom/snapshot", inventory),) if inventory is not None else (),
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

    def _skill_tool(
        self, event: Mapping[str, Any], tool_input: Mapping[str, Any], common: dict[str, Any]
    ) -> StepCall:
        # Filtered here on tool_input.skill, not by the hook's "if": Claude Code ignores
        # "if": "Skill(name)" (anthropics/claude-code#95819), so every Skill call arrives.
        skill = _base.opt_str(tool_input, "skill") or _base.opt_str(tool_input, "command")
        if skill is None:
            raise MalformedEvent("Claude Code Skill call: 'tool_input.skill' is missing")
        return self._skill_load(event, skill.strip().lstrip("/"), "agent_decision", common=common)

    def _skill_load(
        self,
        event: Mapping[str, Any],
        skill: str,
        trigger: str,
        *,
        common: dict[str, Any],
        info: Mapping[str, Any] | None = None,
    ) -> StepCall:
        skill_id = f"skill:{skill}"
        info = info if info is not None else _attached(event, skill)
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
        return skill_load_call(skill_id, info, self.name, trigger, f"skill {skill}", common)

    def _expansion(self, event: Mapping[str, Any], common: dict[str, Any]) -> StepCall:
        """A typed slash command or MCP prompt about to be expanded into the prompt."""
        kind = _base.opt_str(event, "expansion_type") or "slash_command"
        command = _base.opt_str(event, "command_name")
        text = _base.text(
            event.get("prompt") or f"/{command or ''} {event.get('command_args') or ''}"
        )
        prompt = StepCall(
            method="steps/userMessage",
            payload={"content": text},
            subject=f"/{command}" if command else "prompt",
            **common,
        )
        if kind != "slash_command" or command is None:
            return prompt  # an MCP server's prompt: its text is judged as a prompt
        command = command.strip().lstrip("/")
        info = _attached(event, command)
        source = (_base.opt_str(event, "command_source") or "").lower()
        if info is not None and info.get("found") is not True:
            if info.get("command_file") or any(s in source for s in _BUILT_IN_SOURCES):
                # A built-in command, or a legacy .claude/commands file: no folder to pin
                # (recorded as a prompt; docs/adapters.md lists this path as open).
                return prompt
        return self._skill_load(event, command, "user", common=common)

    def _config_change(self, event: Mapping[str, Any], common: dict[str, Any]) -> StepCall:
        """A skill folder changed on disk mid-session: registered again, and the change kept
        out of the session (``decision: block``) until that folder is approved."""
        if _base.opt_str(event, "source") != "skills":
            return StepCall(method=None, payload={}, blocking=False, **common)
        report = event.get(skill_files.EVENT_KEY)
        if isinstance(report, dict) and report.get("removed") is True:
            # A skill folder removed (or its SKILL.md): nothing new can be loaded from it.
            return StepCall(method=None, payload={}, blocking=False, **common)
        name = report.get("name") if isinstance(report, dict) else None
        info = _attached(event, name) if isinstance(name, str) and name else None
        if info is None:
            info = {
                "name": str(name or "unknown")[:255],
                "found": False,
                "looked_in": [],
                "error": "the event carries no report of the changed skill folder: the server "
                "reads no folder an event names; use the command hook 'agbom hook claude-code "
                "--server URL'",
            }
        skill = str(info["name"])
        subject = f"skill {skill} (changed on disk)"
        if info.get("found") is not True:
            load = self._skill_load(event, skill, "system", common=common, info=info)
            return replace(load, subject=subject)
        return StepCall(
            method="steps/skillRegister",
            payload=registration(f"skill:{skill}", info, runtime=self.name),
            subject=subject,
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
