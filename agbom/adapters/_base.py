"""The pipeline every adapter shares: bounded parse → translate → observe → decide → reply.

Each runtime module only supplies ``translate`` (event → :class:`StepCall`) and ``render``
(:class:`Verdict` → wire reply); how input is bounded, how failures are answered and how the
Guardian is called is decided once, here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson

from agbom.adapters import identity, replies
from agbom.adapters.headers import MAX_EVENT_BYTES, TOO_LARGE_CODE, too_large_reason
from agbom.adapters.interface import HookReply, MalformedEvent, StepCall, Verdict
from agbom.errors import AgbomError

log = logging.getLogger("agbom.adapters")
# The CLI reports on stderr itself; servers that configure logging still receive these records.
log.addHandler(logging.NullHandler())

# MAX_EVENT_BYTES (imported above) is shared with thin mode and the server's /hooks endpoint.
MAX_EVENT_DEPTH = 64
# Tool outputs and prompt text kept in the audit record are clipped to this many characters.
MAX_TEXT_IN_STEP = 16 * 1024

AGENT_ID_ENV = "AGBOM_AGENT_ID"
HOOK_ID_ENV = "AGBOM_HOOK_ID"


class EventTooLarge(MalformedEvent):
    """An event over :data:`MAX_EVENT_BYTES`: always denied, whatever the failure mode."""


def parse_event(raw: bytes) -> dict[str, Any]:
    """The event object in ``raw``: bounded in size and depth, or :class:`MalformedEvent`."""
    if len(raw) > MAX_EVENT_BYTES:
        raise EventTooLarge(too_large_reason())
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise MalformedEvent("empty input (expected one JSON object)")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise MalformedEvent(f"not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    if not isinstance(doc, dict):
        raise MalformedEvent(f"expected a JSON object, got {type(doc).__name__}")
    _check_depth(doc)
    return doc


def _check_depth(doc: Any) -> None:
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_EVENT_DEPTH:
            raise MalformedEvent(f"event nested deeper than {MAX_EVENT_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))


def text(value: Any, *, limit: int = MAX_TEXT_IN_STEP) -> str:
    """A bounded string from a JSON value (strings as is, anything else as compact JSON)."""
    if value is None:
        return ""
    out = value if isinstance(value, str) else orjson.dumps(value).decode("utf-8", "replace")
    return out if len(out) <= limit else out[:limit] + f"…[{len(out) - limit} more characters]"


def opt_str(doc: Mapping[str, Any], key: str) -> str | None:
    """``doc[key]`` when it is a non-empty string, else None (wrong types are tolerated)."""
    value = doc.get(key)
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def req_str(doc: Mapping[str, Any], key: str, where: str) -> str:
    """``doc[key]`` as a non-empty string, or :class:`MalformedEvent` naming the field."""
    value = opt_str(doc, key)
    if value is None:
        raise MalformedEvent(f"{where}: missing or empty '{key}'")
    return value


def arguments(value: Any) -> dict[str, Any]:
    """Tool arguments in the ACS shape: each argument a ``{"value": ...}`` object."""
    if isinstance(value, dict):
        return {str(k): {"value": v} for k, v in value.items()}
    if value is None:
        return {}
    return {"input": {"value": value}}


def tool_component(name: str, *, provider: str | None = None) -> dict[str, Any]:
    """An observed tool component (capability unknown until a scan or snapshot says)."""
    cid = f"tool:{provider}/{name}" if provider else f"tool:{name}"
    return {
        "id": cid,
        "type": "tool",
        "name": name,
        "version": None,
        "provider": provider,
        "capability": None,
        "registration_provenance": {"origin": "system", "source_id": "agbom-hook"},
    }


def mcp_server_component(server: str, tool_ids: list[str]) -> dict[str, Any]:
    """An observed MCP server component listing the tools seen called through it."""
    return {
        "id": f"mcp_server:{server}",
        "type": "mcp_server",
        "name": server,
        "version": None,
        "endpoint": None,
        "tools": tool_ids,
        "registration_provenance": {"origin": "system", "source_id": "agbom-hook"},
    }


def mcp_components(server: str, tool: str) -> tuple[dict[str, Any], ...]:
    """The tool and its MCP server, as observed from one call."""
    t = tool_component(tool, provider=server)
    return (t, mcp_server_component(server, [t["id"]]))


class BaseAdapter:
    """Shared :meth:`handle`; subclasses implement ``translate`` and ``render``."""

    name = ""

    # -- to be provided by each runtime ---------------------------------------------------------

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        """The ACS step for ``event`` (raise :class:`MalformedEvent` when it cannot be read)."""
        raise NotImplementedError

    def render(self, verdict: Verdict | None, call: StepCall, *, hook_id: str) -> replies.Reply:
        """The runtime's reply to ``verdict`` (None: the event had no ACS step to decide)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------------

    def malformed(
        self,
        reason: str,
        *,
        fail_open: bool,
        event: str | None = None,
        code: str = "malformed_input",
        hook_id: str = replies.DEFAULT_HOOK_ID,
    ) -> HookReply:
        """The reply to input or a failure that left no decision, per the failure mode."""
        body, exit_code = replies.failure(
            self.name, reason, fail_open=fail_open, event=event, code=code, hook_id=hook_id
        )
        mode = "fail-open" if fail_open else "fail-closed"
        line = f"agbom: {self.name} hook: {reason} ({mode})"
        log.warning("%s", line)
        return HookReply(body=body, exit_code=exit_code, stderr=line, http_status=200)

    def who(self, call: StepCall, env: Mapping[str, str]) -> StepCall:
        """``call`` with the user and machine behind it (agbom/adapters/identity.py).

        An adapter leaves the agent id as its runtime's name when neither the event nor
        ``--agent-id`` names one; here that id becomes ``RUNTIME/USER@HOST`` (or
        ``RUNTIME/claimed:USER@HOST`` when the server could not check the claim), so the
        fleet shows one agent per developer and machine whatever the runtime. A session
        start records the identity and how it was established in ``user_identity``.
        """
        if call.agent_id == self.name and not env.get(AGENT_ID_ENV):
            agent = identity.agent_id(self.name, env)
            if agent != call.agent_id:
                call = replace(call, agent_id=agent)
        if call.method == "steps/sessionStart":
            described = identity.describe(env)
            if described and "user_identity" not in call.payload:
                call = replace(call, payload={**call.payload, "user_identity": described})
        return call

    def handle(
        self, raw: bytes, guardian: Any, *, env: Mapping[str, str], fail_open: bool
    ) -> HookReply:
        """Answer one hook event. Never raises: every failure becomes the runtime's reply."""
        hook_id = env.get(HOOK_ID_ENV) or replies.DEFAULT_HOOK_ID
        # (1) bounded parse and (2) translation: a bad event is answered per the failure mode.
        try:
            call = self.translate(parse_event(raw), env=env)
        except EventTooLarge as exc:
            # A deny in both failure modes: fail-open is for agbom's own failures, and padding
            # an event must not buy an allow. The event was not read whole, so its name is
            # unknown and each runtime gets its blocking failure reply.
            return self.malformed(str(exc), fail_open=False, code=TOO_LARGE_CODE, hook_id=hook_id)
        except MalformedEvent as exc:
            event = replies.event_name(self.name, raw[:MAX_EVENT_BYTES])
            return self.malformed(str(exc), fail_open=fail_open, event=event, hook_id=hook_id)
        call = self.who(call, env)
        if call.method is None:
            body, exit_code = self.render(None, call, hook_id=hook_id)
            return HookReply(body=body, exit_code=exit_code)
        started = time.perf_counter()
        try:
            # (3) observed inventory: what the event shows the agent using joins its AgBOM.
            for component in call.components:
                guardian.observe_component(call.session_id, call.agent_id, component)
            for method, payload in call.before:
                guardian.decide(
                    method,
                    payload,
                    session_id=call.session_id,
                    agent_id=call.agent_id,
                    turn_id=call.turn_id,
                )
            decision = None
            for method, payload in call.gates:
                gate = guardian.decide(
                    method,
                    payload,
                    session_id=call.session_id,
                    agent_id=call.agent_id,
                    turn_id=call.turn_id,
                )
                if Verdict.from_decision(gate).disposition != "allow":
                    decision = gate
                    break
            if decision is None:
                # (4) the same decision pipeline as an ACS request: rules, approvals, chain.
                decision = guardian.decide(
                    call.method,
                    call.payload,
                    session_id=call.session_id,
                    agent_id=call.agent_id,
                    turn_id=call.turn_id,
                )
        except AgbomError as exc:
            return self.malformed(
                f"{call.event}: no decision: {exc.diagnostics()}",
                fail_open=fail_open,
                event=call.event,
                code="agbom_error",
                hook_id=hook_id,
            )
        except Exception as exc:  # noqa: BLE001 - a hook must always answer its runtime
            log.exception("hook decision failed")
            return self.malformed(
                f"{call.event}: internal error: {type(exc).__name__}: {exc}",
                fail_open=fail_open,
                event=call.event,
                code="internal_error",
                hook_id=hook_id,
            )
        verdict = Verdict.from_decision(decision)
        if call.note and verdict.disposition != "allow":
            said = verdict.reasoning or verdict.code
            verdict = replace(verdict, reasoning=f"{said}; {call.note}")
        # (5) translation out.
        body, exit_code = self.render(verdict, call, hook_id=hook_id)
        stderr = ""
        if verdict.disposition != "allow":
            elapsed = (time.perf_counter() - started) * 1000
            note = "" if call.blocking else " [observe-only event: not enforced]"
            stderr = f"{verdict.message(call.subject or call.event)}{note} ({elapsed:.1f} ms)"
        return HookReply(body=body, exit_code=exit_code, stderr=stderr)
