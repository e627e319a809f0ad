"""Agent-chosen identifiers that a person will read, compare or copy must look like what they
are.

A skill id, an agent id, a session id, a tool or server name ends up on a review page, in a
table, in a decision log and in the approve command a reviewer types. Two ids that differ only
in a line break, a bidi override or a zero-width character render the same, so a reviewer who
approves one can approve the other (the review page's hidden form field was such a case: the
browser turned ``\\n`` into ``\\r\\n``). Such ids are refused where they enter: at the wire
(-32602), in an AgBOM component, on the command line and in the read API.

What is refused is :func:`agbom._identifiers.identifier_problem`'s to say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agbom._identifiers import identifier_problem
from agbom.protocol.errors import INVALID_PARAMS, AcsError


def refuse(field: str, text: str, problem: str) -> AcsError:
    return AcsError(
        INVALID_PARAMS,
        "invalid_identifier",
        f"{field} {text!r} {problem}; identifiers may not hold control, line-break, bidi or "
        "other invisible characters",
        {"field": field},
    )


def check_identifier(field: str, text: Any) -> None:
    """Raise -32602 / ``invalid_identifier`` when ``text`` is not an acceptable identifier."""
    problem = identifier_problem(text)
    if problem is not None:
        raise refuse(field, text, problem)


def _each(field: str, values: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(values, list):
        for index, value in enumerate(values):
            yield f"{field}[{index}]", value


def _tool_fields(payload: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    tool = payload.get("tool")
    if isinstance(tool, Mapping):
        yield "payload.tool.name", tool.get("name")
        yield "payload.tool.id", tool.get("id")
        yield "payload.tool.provider", tool.get("provider")


def _skill_fields(payload: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    yield "payload.skill_id", payload.get("skill_id")
    path = payload.get("load_path")
    if isinstance(path, list):
        for index, hop in enumerate(path):
            if isinstance(hop, Mapping):
                yield f"payload.load_path[{index}].skill_id", hop.get("skill_id")
    composition = payload.get("composition")
    if isinstance(composition, Mapping):
        for key in ("tools", "mcp_servers", "a2a_peers", "models", "composed_skills"):
            yield from _each(f"payload.composition.{key}", composition.get(key))


def _wrapped_fields(payload: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    # A wrapped MCP message: the tool a tools/call names.
    params = payload.get("params")
    if isinstance(params, Mapping):
        yield "payload.params.name", params.get("name")


_PAYLOAD_FIELDS = {
    "steps/skillRegister": _skill_fields,
    "steps/skillLoad": _skill_fields,
    "steps/skillUnload": _skill_fields,
    "steps/toolCallRequest": _tool_fields,
    "steps/toolCallResult": _tool_fields,
}


def check_envelope_identifiers(params: Mapping[str, Any]) -> None:
    """The ids an envelope carries: session, agent, tenant, user, turn, MCP server."""
    metadata = params.get("metadata")
    if isinstance(metadata, Mapping):
        check_identifier("params.metadata.session_id", metadata.get("session_id"))
        check_identifier("params.metadata.agent_id", metadata.get("agent_id"))
        check_identifier("params.metadata.turn_id", metadata.get("turn_id"))
        check_identifier("params.metadata.mcp_server", metadata.get("mcp_server"))
        user = metadata.get("user_context")
        if isinstance(user, Mapping):
            check_identifier("params.metadata.user_context.user_id", user.get("user_id"))
    check_identifier("params.tenant_id", params.get("tenant_id"))


def check_payload_identifiers(method: str, payload: Any) -> None:
    """The agent-chosen ids of ``method``'s payload (skills, tools, servers)."""
    if not isinstance(payload, Mapping):
        return
    if method.startswith(("protocols/MCP/", "wrapped:")):
        fields = _wrapped_fields(payload)
    else:
        walker = _PAYLOAD_FIELDS.get(method)
        if walker is None:
            return
        fields = walker(payload)
    for field, value in fields:
        check_identifier(field, value)
