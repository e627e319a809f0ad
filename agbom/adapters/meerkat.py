"""Meerkat command/HTTP hooks: ``HookInvocation`` in, ``RuntimeHookResponse`` out.

Hook point → ACS step:

======================  ========================  ==========
Meerkat point           ACS step                  blocking
======================  ========================  ==========
run_started             steps/userMessage         yes
pre_tool_execution      steps/toolCallRequest     yes
post_tool_execution     steps/toolCallResult      yes
post_llm_response       steps/agentResponse       yes
others                  (none: answered ``{}``)
======================  ========================  ==========

Meerkat rejects any key it does not know and fails the run on invalid output, a non-zero exit or
a non-2xx status, so every answer here is one of ``{}``, ``{"decision":{"decision":"allow"}}`` or
a Deny with exactly ``hook_id``, ``reason_code``, ``message`` and an optional ``payload``, always
exit 0 and HTTP 200, and never larger than the 128 KiB payload bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, replies
from agbom.adapters.interface import MalformedEvent, StepCall, Verdict

DEFAULT_AGENT_ID = "meerkat"


def _prompt_text(event: Mapping[str, Any]) -> str:
    prompt = event.get("prompt")
    if isinstance(prompt, str):
        return _base.text(prompt)
    run_input = event.get("prompt_input")
    if isinstance(run_input, dict):
        content = run_input.get("content")
        if isinstance(content, str):
            return _base.text(content)
        if isinstance(content, list):
            parts = [
                b["text"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            ]
            return _base.text("\n".join(parts))
    return ""


def _tool(event: Mapping[str, Any], key: str, point: str) -> tuple[str, str | None, dict[str, Any]]:
    call = event.get(key)
    if not isinstance(call, dict):
        raise MalformedEvent(f"Meerkat {point}: missing '{key}' object")
    name = _base.req_str(call, "name", f"Meerkat {point} {key}")
    provenance = call.get("provenance")
    server = None
    if isinstance(provenance, dict) and provenance.get("kind") == "mcp":
        server = _base.opt_str(provenance, "source_id")
    return name, server, call


class MeerkatAdapter(_base.BaseAdapter):
    """``agbom hook meerkat`` and ``POST /hooks/meerkat``."""

    name = replies.MEERKAT

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        point = _base.req_str(event, "point", "Meerkat HookInvocation")
        session_id = _base.req_str(event, "session_id", "Meerkat HookInvocation")
        common: dict[str, Any] = {
            "runtime": self.name,
            "event": point,
            "session_id": session_id,
            "agent_id": env.get(_base.AGENT_ID_ENV) or DEFAULT_AGENT_ID,
        }
        if point in ("pre_tool_execution", "post_tool_execution"):
            key = "tool_call" if point == "pre_tool_execution" else "tool_result"
            name, server, call = _tool(event, key, point)
            tool: dict[str, Any] = {"name": name}
            if server:
                tool["provider"] = server
            provenance = call.get("provenance")
            components = (
                _base.mcp_components(server, name) if server else (_base.tool_component(name),)
            )
            subject = f"{server}/{name}" if server else name
            if server:
                # The id tells same-named tools of different servers apart.
                tool["id"] = components[0]["id"]
            if isinstance(provenance, dict) and provenance.get("kind") not in (None, "mcp"):
                tool["provider"] = str(provenance.get("kind"))
            if point == "pre_tool_execution":
                args = call.get("args")
                if args is not None and not isinstance(args, dict):
                    raise MalformedEvent("Meerkat pre_tool_execution: 'args' must be an object")
                return StepCall(
                    method="steps/toolCallRequest",
                    payload={"tool": tool, "arguments": _base.arguments(args)},
                    components=components,
                    subject=subject,
                    **common,
                )
            content = call.get("content")
            payload = {
                "tool": tool,
                "exit_status": "failure" if call.get("is_error") is True else "success",
                "outputs": [{"value": _base.text(content)}] if content else [],
            }
            return StepCall(
                method="steps/toolCallResult",
                payload=payload,
                components=components,
                subject=subject,
                **common,
            )
        if point == "run_started":
            return StepCall(
                method="steps/userMessage",
                payload={"content": _prompt_text(event)},
                subject="prompt",
                **common,
            )
        if point == "post_llm_response":
            response = event.get("llm_response")
            if not isinstance(response, dict):
                raise MalformedEvent("Meerkat post_llm_response: missing 'llm_response' object")
            return StepCall(
                method="steps/agentResponse",
                payload={"content": _base.text(response.get("assistant_text"))},
                subject="response",
                **common,
            )
        # turn_boundary, pre_llm_request, run_completed/failed and committed-fact observations
        # have no ACS step to decide: answered with no decision.
        return StepCall(method=None, payload={}, blocking=False, **common)

    def render(self, verdict: Verdict | None, call: StepCall, *, hook_id: str) -> replies.Reply:
        if verdict is None:
            return replies.meerkat_empty()
        if verdict.disposition == "allow" or not call.blocking:
            return replies.meerkat_allow()
        if verdict.disposition == "ask":
            message = verdict.question or verdict.message(call.subject)
            message = f"approval required but Meerkat hooks cannot ask: {message}"
        else:
            message = verdict.message(call.subject)
        payload: dict[str, Any] = {"disposition": verdict.disposition}
        if verdict.reason_codes:
            payload["reason_codes"] = list(verdict.reason_codes)
        if verdict.rule_ids:
            payload["rules"] = list(dict.fromkeys(verdict.rule_ids))
        if verdict.chain_hash:
            payload["chain_hash"] = verdict.chain_hash
        return replies.meerkat_deny(
            message, reason_code="policy_violation", hook_id=hook_id, payload=payload
        )
