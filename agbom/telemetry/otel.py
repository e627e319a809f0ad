"""ACS-Trace's OpenTelemetry vocabulary: span names and attributes for a decided step.

Follows ``trace/otel-mapping.json`` of ACS v0.1.0 and its prose (Trace Events): each step is a
span named by the mapping, carrying ``acs.request_id``, ``acs.session.id`` and the step's
attributes; the decision is an ``acs.decision`` event on that span. A conditional attribute is
set when its source field is present and left out when it is absent (an empty array counts as
absent). Pure data: no OpenTelemetry import here (see :mod:`agbom.telemetry.otlp`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agbom.guardian.decision import EVALUATOR_VERSION
from agbom.telemetry.record import EVALUATOR, DecisionRecord

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int]
Attributes = dict[str, AttributeValue]

SPAN_NAMES: dict[str, str] = {
    "steps/sessionStart": "acs.session",
    "steps/agentTrigger": "acs.agent.trigger",
    "steps/userMessage": "acs.message.user",
    "steps/agentResponse": "acs.message.agent",
    "steps/toolCallRequest": "gen_ai.tool.call",
    "steps/toolCallResult": "gen_ai.tool.result",
    "steps/knowledgeRetrieval": "acs.knowledge.retrieval",
    "steps/memoryStore": "acs.memory.store",
    "steps/memoryContextRetrieval": "acs.memory.retrieval",
    "steps/sessionEnd": "acs.session.end",
    "steps/turnStart": "acs.turn",
    "steps/turnEnd": "acs.turn.end",
    "steps/preCompact": "acs.compact",
    "steps/postCompact": "acs.compact.complete",
    "steps/subagentStart": "acs.subagent",
    "steps/subagentStop": "acs.subagent.end",
    "steps/skillRegister": "acs.skill.register",
    "steps/skillLoad": "acs.skill.load",
    "steps/skillUnload": "acs.skill.unload",
    "agbom/snapshot": "acs.agbom",
    "agbom/changed": "acs.agbom",
}
DECISION_EVENT = "acs.decision"
MAX_PROVENANCE = 256
"""Provenance objects carried onto a span at most (a hostile payload may attach millions)."""


def span_name(method: str) -> str:
    """The span name of ``method``; a wrapped protocol method (no mapping row) keeps its own
    name, so it is still told apart."""
    return SPAN_NAMES.get(method, method)


def _put(attributes: Attributes, key: str, value: Any) -> None:
    """Set ``key`` from a source value when present: strings (made safe at the end), lists
    of strings as string arrays (empty ones left out), booleans and integers as they are."""
    if isinstance(value, bool | int) and not isinstance(value, float):
        attributes[key] = value
    elif isinstance(value, str):
        if value:
            attributes[key] = value
    elif isinstance(value, list | tuple):
        items = [v for v in value if isinstance(v, str)]
        if items:
            attributes[key] = items


def _get(payload: Mapping[str, Any], *path: str) -> Any:
    node: Any = payload
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _count(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else None


def _content_types(content: Any) -> list[str]:
    if isinstance(content, str):
        return ["text"]
    if isinstance(content, list):
        return list(
            dict.fromkeys(
                str(part["type"])
                for part in content
                if isinstance(part, Mapping) and isinstance(part.get("type"), str)
            )
        )
    return []


def _components(payload: Mapping[str, Any]) -> int | None:
    document = payload.get("agbom") if isinstance(payload.get("agbom"), Mapping) else payload
    return _count(document.get("components")) if isinstance(document, Mapping) else None


def _step_attributes(record: DecisionRecord) -> Attributes:  # noqa: C901 - one row per step
    method, payload, attributes = record.method, record.payload, Attributes()
    if method == "steps/sessionStart":
        _put(attributes, "acs.tenant_id", record.tenant_id)
        user = payload.get("user_identity")
        if isinstance(user, Mapping):
            _put(attributes, "acs.user.id", user.get("id") or user.get("user_id"))
        _put(attributes, "acs.policy_mode", payload.get("policy_mode"))
    elif method == "steps/agentTrigger":
        _put(attributes, "acs.agent.id", record.agent_id)
        _put(attributes, "acs.trigger.type", payload.get("trigger_type"))
    elif method == "steps/userMessage":
        _put(attributes, "acs.content.types", _content_types(payload.get("content")))
    elif method == "steps/agentResponse":
        _put(attributes, "acs.agent.id", record.agent_id)
    elif method == "steps/toolCallRequest":
        _put(attributes, "gen_ai.tool.name", _get(payload, "tool", "name"))
        capability = payload.get("capability")
        _put(
            attributes,
            "acs.capability",
            [capability] if isinstance(capability, str) else capability,
        )
        _put(attributes, "acs.tool.provider", _get(payload, "tool", "provider"))
        _put(attributes, "acs.tool.version", _get(payload, "tool", "version"))
        _put(attributes, "acs.operation", payload.get("operation"))
    elif method == "steps/toolCallResult":
        _put(attributes, "gen_ai.tool.name", _get(payload, "tool", "name"))
        _put(attributes, "acs.exit_status", payload.get("exit_status"))
        _put(attributes, "acs.request_id_ref", payload.get("request_id_ref"))
        _put(attributes, "acs.duration_ms", payload.get("duration_ms"))
    elif method == "steps/knowledgeRetrieval":
        _put(attributes, "acs.source.type", _get(payload, "source", "type"))
        _put(attributes, "acs.results.count", _count(payload.get("results")))
    elif method == "steps/memoryStore":
        _put(attributes, "acs.memory_store.name", _get(payload, "memory_store", "name"))
        _put(attributes, "acs.operation", payload.get("operation"))
    elif method == "steps/memoryContextRetrieval":
        _put(attributes, "acs.memory_store.name", _get(payload, "memory_store", "name"))
        _put(attributes, "acs.results.count", _count(payload.get("results")))
    elif method == "steps/sessionEnd":
        _put(
            attributes, "acs.session.reason", payload.get("reason") or payload.get("session_reason")
        )
    elif method == "steps/turnStart":
        _put(attributes, "acs.turn.id", payload.get("turn_id"))
        _put(attributes, "acs.turn.triggered_by", payload.get("triggered_by"))
        _put(attributes, "acs.turn.parent_id", payload.get("parent_turn_id"))
    elif method == "steps/turnEnd":
        _put(attributes, "acs.turn.id", payload.get("turn_id"))
        _put(attributes, "acs.turn.outcome", payload.get("outcome"))
        _put(attributes, "acs.turn.step_count", payload.get("step_count"))
    elif method == "steps/preCompact":
        _put(attributes, "acs.compact.entry_count", _count(payload.get("entries_to_compact")))
        _put(attributes, "acs.compact.triggered_by", payload.get("triggered_by"))
        _put(
            attributes, "acs.compact.estimated_input_tokens", payload.get("estimated_input_tokens")
        )
    elif method == "steps/postCompact":
        _put(attributes, "acs.compact.entry_count", _count(payload.get("entries_compacted")))
        _put(attributes, "acs.compact.lineage_depth_after", payload.get("lineage_depth_after"))
    elif method == "steps/subagentStart":
        _put(attributes, "acs.subagent.session_id", payload.get("subagent_session_id"))
        _put(
            attributes,
            "acs.subagent.parent_session_id",
            payload.get("parent_session_id") or record.session_id,
        )
        _put(attributes, "acs.subagent.intent_derivation", payload.get("intent_derivation"))
    elif method == "steps/subagentStop":
        _put(attributes, "acs.subagent.session_id", payload.get("subagent_session_id"))
        _put(attributes, "acs.subagent.outcome", payload.get("outcome"))
        _put(attributes, "acs.subagent.final_chain_hash", payload.get("final_chain_hash"))
    elif method in ("steps/skillRegister", "steps/skillLoad", "steps/skillUnload"):
        _skill_attributes(method, payload, attributes)
    elif method in ("agbom/snapshot", "agbom/changed"):
        # The Observed Agent always sends the canonical form (Trace Events, AgBOM rows).
        attributes["acs.agbom.format"] = "canonical"
        if method == "agbom/snapshot":
            _put(attributes, "acs.agbom.component_count", _components(payload))
        else:
            _put(attributes, "acs.agbom.change_reason", payload.get("change_reason"))
    return attributes


def _skill_attributes(method: str, payload: Mapping[str, Any], attributes: Attributes) -> None:
    _put(attributes, "acs.skill.id", payload.get("skill_id"))
    if method == "steps/skillUnload":
        _put(attributes, "acs.skill.reason", payload.get("reason"))
        _put(attributes, "acs.skill.replaced_by", payload.get("replaced_by"))
        return
    digest = (
        payload.get("digest")
        if method == "steps/skillLoad"
        else _get(payload, "definition", "digest")
    )
    if isinstance(digest, Mapping):
        _put(attributes, "acs.skill.digest.algorithm", digest.get("algorithm"))
        _put(attributes, "acs.skill.digest.value", digest.get("value"))
    if method == "steps/skillRegister":
        _put(attributes, "acs.skill.declared_capabilities", payload.get("declared_capabilities"))
        return
    _put(attributes, "acs.skill.load_trigger", payload.get("load_trigger"))
    path = payload.get("load_path")
    if isinstance(path, list):
        _put(
            attributes,
            "acs.skill.load_path",
            [hop.get("skill_id") for hop in path if isinstance(hop, Mapping)],
        )
    _put(attributes, "acs.skill.digest_verified", payload.get("digest_verified"))
    _put(attributes, "acs.skill.registration_ref", payload.get("registration_ref"))


def provenance_objects(payload: Any) -> list[Mapping[str, Any]]:
    """Provenance objects attached anywhere in ``payload``, in document order (bounded)."""
    found: list[Mapping[str, Any]] = []
    stack: list[Any] = [payload]
    visited = 0
    while stack and len(found) < MAX_PROVENANCE and visited < 20_000:
        node = stack.pop()
        visited += 1
        if isinstance(node, Mapping):
            for key, child in node.items():
                if key in ("provenance", "registration_provenance") and isinstance(child, Mapping):
                    found.append(child)
                elif isinstance(child, Mapping | list):
                    stack.append(child)
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def _provenance_attributes(record: DecisionRecord, attributes: Attributes) -> None:
    objects = [p for p in provenance_objects(record.payload) if isinstance(p.get("origin"), str)]
    if not objects:
        return
    attributes["acs.provenance.origin"] = [p["origin"] for p in objects]
    sources = [p.get("source_id") for p in objects]
    if any(isinstance(s, str) and s for s in sources):
        # Same length and order as the origins, "" where an object has none (Trace Events).
        attributes["acs.provenance.source_id"] = [s if isinstance(s, str) else "" for s in sources]


def span_attributes(record: DecisionRecord) -> Attributes:
    """The attributes of ``record``'s step span (every string made safe: ``record.text``)."""
    attributes: Attributes = {"acs.request_id": record.request_id}
    attributes["acs.session.id"] = record.session_id
    attributes.update(_step_attributes(record))
    _provenance_attributes(record, attributes)
    return _safe(attributes, record)


def decision_attributes(record: DecisionRecord) -> Attributes:
    """The attributes of the ``acs.decision`` event on ``record``'s span."""
    decision = record.decision
    attributes: Attributes = {
        "acs.decision": decision.disposition.value,
        "acs.evaluator": EVALUATOR,
        "acs.evaluator_version": EVALUATOR_VERSION,
        "acs.chain_hash": record.chain_hash,
    }
    if decision.reasoning:
        attributes["acs.reasoning"] = decision.reasoning
    if decision.reason_codes:
        attributes["acs.reason_codes"] = list(dict.fromkeys(decision.reason_codes))
    references = decision.policy_references
    if references:
        # Parallel arrays, one position per policy reference, "" where a field is missing.
        attributes["acs.policy.ids"] = [r.policy_id for r in references]
        attributes["acs.policy.versions"] = [r.policy_version or "" for r in references]
        attributes["acs.policy.rule_ids"] = [r.rule_id for r in references]
    return _safe(attributes, record)


def _safe(attributes: Attributes, record: DecisionRecord) -> Attributes:
    text = record.text
    for key, value in attributes.items():
        if isinstance(value, str):
            attributes[key] = text(value)
        elif isinstance(value, list) and value and isinstance(value[0], str):
            attributes[key] = [text(v) if isinstance(v, str) else v for v in value]
    return attributes
