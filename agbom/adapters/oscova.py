"""Oscova configured command/HTTP hooks (envelope ``schema_version`` 1).

Event → ACS step:

=================  =========================  ==========
Oscova event       ACS step                   blocking
=================  =========================  ==========
SessionStart       steps/sessionStart         no
UserPromptSubmit   steps/userMessage          yes
PreToolUse         steps/toolCallRequest      yes
PostToolUse        steps/toolCallResult       no
TaskStart          steps/agentTrigger         yes
TaskComplete       steps/sessionEnd           no
TaskFailed         steps/sessionEnd           no
=================  =========================  ==========

Answers: ``{"decision":"allow"}`` with exit 0, or ``{"decision":"deny","reason":..,"message":..}``
with exit 2 (exit 3 with reason ``deferral_not_supported`` for a deferral). Observe-only events
are always answered allow. A confidential agent's envelope has no content fields; the step is
then decided on identity and tool name alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, replies
from agbom.adapters.interface import MalformedEvent, StepCall, Verdict

SUPPORTED_SCHEMA_VERSIONS = (1, "1")
DEFAULT_AGENT_ID = "oscova"

# OSCOVA_HOOK_* variable → envelope field it mirrors.
ENV_FIELDS = {
    "OSCOVA_HOOK_EVENT_NAME": "hook_event_name",
    "OSCOVA_HOOK_RUN_ID": "hook_run_id",
    "OSCOVA_HOOK_USER_ID": "user_id",
    "OSCOVA_HOOK_AGENT_ID": "agent_id",
    "OSCOVA_HOOK_CHAT_THREAD_ID": "chat_thread_id",
    "OSCOVA_HOOK_TASK_ID": "task_id",
    "OSCOVA_HOOK_TASK_RUN_ID": "task_run_id",
    "OSCOVA_HOOK_EXECUTION_KIND": "execution_kind",
}

_TRIGGER_TYPES = {
    "schedule": "scheduled",
    "scheduled": "scheduled",
    "manual": "user_message",
    "chained": "system",
    "chain": "system",
    "webhook": "external_event",
    "external": "external_event",
}


# PostToolUse result_kind → toolCallResult exit_status
_EXIT_STATUS = {"succeeded": "success", "failed": "failure", "denied": "blocked"}


class OscovaAdapter(_base.BaseAdapter):
    """``agbom hook oscova`` and ``POST /hooks/oscova``."""

    name = replies.OSCOVA

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        version = event.get("schema_version", 1)
        if isinstance(version, bool) or version not in SUPPORTED_SCHEMA_VERSIONS:
            raise MalformedEvent(f"unsupported Oscova schema_version {version!r} (supported: 1)")
        # Envelope fields win; the OSCOVA_HOOK_* variables fill what the envelope leaves out.
        ctx = {field: _base.opt_str(event, field) for field in ENV_FIELDS.values()}
        for var, field in ENV_FIELDS.items():
            if ctx[field] is None and env.get(var):
                ctx[field] = env[var]
        name = ctx["hook_event_name"]
        if name is None:
            raise MalformedEvent("Oscova envelope: missing 'hook_event_name'")
        body = event.get("event")
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise MalformedEvent(f"Oscova {name}: 'event' must be an object")
        for field in ("agent_id", "chat_thread_id", "task_id", "task_run_id", "execution_kind"):
            if ctx[field] is None:
                ctx[field] = _base.opt_str(body, field)
        agent_id = ctx["agent_id"] or env.get(_base.AGENT_ID_ENV) or DEFAULT_AGENT_ID
        session_id = (
            ctx["chat_thread_id"] or ctx["task_run_id"] or ctx["task_id"] or ctx["hook_run_id"]
        )
        if session_id is None:
            raise MalformedEvent(
                f"Oscova {name}: no chat_thread_id, task_run_id, task_id or hook_run_id"
            )
        common: dict[str, Any] = {
            "runtime": self.name,
            "event": name,
            "session_id": session_id,
            "agent_id": agent_id,
        }
        platform = {
            "runtime": "oscova",
            "execution_kind": ctx["execution_kind"] or "unknown",
            "hook_run_id": ctx["hook_run_id"],
        }
        if name == "PreToolUse":
            tool = _base.req_str(body, "tool_name", "Oscova PreToolUse event")
            payload: dict[str, Any] = {"tool": {"name": tool}, "arguments": {}}
            # Confidential agents: 'arguments' is omitted, the call is decided on its name.
            if "arguments" in body:
                payload["arguments"] = _base.arguments(body["arguments"])
            return StepCall(
                method="steps/toolCallRequest",
                payload=payload,
                components=(_base.tool_component(tool),),
                subject=tool,
                **common,
            )
        if name == "PostToolUse":
            tool = _base.req_str(body, "tool_name", "Oscova PostToolUse event")
            kind = _base.opt_str(body, "result_kind") or "succeeded"
            payload = {
                "tool": {"name": tool},
                "exit_status": _EXIT_STATUS.get(kind, "failure"),
                "outputs": [],
            }
            if body.get("error_message"):
                payload["outputs"] = [{"value": _base.text(body["error_message"])}]
            return StepCall(
                method="steps/toolCallResult",
                payload=payload,
                blocking=False,
                components=(_base.tool_component(tool),),
                subject=tool,
                **common,
            )
        if name == "UserPromptSubmit":
            # Confidential agents: prompt_text is omitted; the message is recorded without content.
            content = _base.text(body.get("prompt_text"))
            return StepCall(
                method="steps/userMessage",
                payload={"content": content},
                subject="prompt",
                **common,
            )
        if name == "SessionStart":
            return StepCall(
                method="steps/sessionStart",
                payload={"platform_context": platform},
                blocking=False,
                **common,
            )
        if name == "TaskStart":
            trigger = (_base.opt_str(body, "trigger_source") or "").lower()
            source: dict[str, Any] = {"task_id": ctx["task_id"], "trigger": trigger or None}
            if body.get("task_name"):
                source["task_name"] = _base.text(body["task_name"], limit=512)
            return StepCall(
                method="steps/agentTrigger",
                payload={
                    "trigger_type": _TRIGGER_TYPES.get(trigger, "external_event"),
                    "trigger_source": {k: v for k, v in source.items() if v is not None},
                },
                subject=f"task {source.get('task_name') or ctx['task_id'] or ''}".strip(),
                **common,
            )
        if name in ("TaskComplete", "TaskFailed"):
            status = (_base.opt_str(body, "status") or "").lower()
            if name == "TaskComplete":
                reason = "completed"
            else:
                reason = "cancelled" if "cancel" in status else "error"
            return StepCall(
                method="steps/sessionEnd",
                payload={"reason": reason},
                blocking=False,
                **common,
            )
        # An event newer than this adapter: answered allow, not recorded.
        return StepCall(method=None, payload={}, blocking=False, **common)

    def render(self, verdict: Verdict | None, call: StepCall, *, hook_id: str) -> replies.Reply:
        if verdict is None or not call.blocking or verdict.disposition == "allow":
            return replies.oscova_allow()
        message = verdict.message(call.subject)
        if verdict.disposition == "defer":
            return replies.oscova_deny(
                "deferral_not_supported",
                message,
                exit_code=replies.OSCOVA_EXIT_DEFERRAL_UNSUPPORTED,
            )
        if verdict.disposition == "ask":
            # No approver channel in Oscova hooks: an ASK becomes a deny (ACS §9.2 substitution).
            return replies.oscova_deny("approver_unavailable", verdict.question or message)
        if verdict.disposition == "modify":
            return replies.oscova_deny("modify_unsupported", message)
        return replies.oscova_deny(verdict.code, message)
