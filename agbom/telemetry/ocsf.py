"""ACS-Trace's OCSF vocabulary: a decided step as OCSF events (OCSF 1.9.0).

Follows ``trace/ocsf-mapping.json`` of ACS v0.1.0 and its prose (Trace Events, OCSF event
classes): every step is one event of the class the mapping names for its method, and every
decision other than ``allow`` is also a Detection Finding (2004) whose severity, action,
disposition and alert flag come from the disposition. Both carry ``metadata.correlation_uid``
``<session_id>:<request_id>`` so a SIEM joins them on native fields, and ``unmapped.acs`` keeps
the ACS fields under their own names.

The source is a :class:`Step`: built from an audit chain entry (``agbom audit export --format
ocsf``), which holds the method, disposition, reason codes and hashes but no payload, or from
a live decision record, which also has the reasoning, policy references, tool and provenance.
A Guardian does not set ``verdict_id`` nor the finding's ``status_id``: both belong to whoever
triages the finding (Trace Events prose; the mapping's older ``required_fields`` lists
``verdict_id``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agbom.telemetry.record import EVALUATOR, DecisionRecord, clean_of, clip, safe_strings, scrub

OCSF_VERSION = "1.9.0"
PRODUCT = {"name": "agbom", "vendor_name": "agbom", "feature": {"name": "ACS Guardian"}}

# class_uid, class_name, activity_id (None: 99 Other, named after the method) per method. The
# uids and activities are the mapping's; the names are OCSF's own (the mapping calls 6002 by its
# category's name, Application Activity, and 5001 Inventory Info), which SIEM content matches.
STEP_CLASSES: dict[str, tuple[int, str, int | None]] = {
    "steps/sessionStart": (3002, "Authentication", 1),
    "steps/sessionEnd": (3002, "Authentication", 2),
    "steps/userMessage": (6002, "Application Lifecycle", None),
    "steps/agentResponse": (6002, "Application Lifecycle", None),
    "steps/agentTrigger": (6002, "Application Lifecycle", None),
    "steps/turnStart": (6002, "Application Lifecycle", None),
    "steps/turnEnd": (6002, "Application Lifecycle", None),
    "steps/toolCallRequest": (1007, "Process Activity", None),
    "steps/toolCallResult": (1007, "Process Activity", None),
    "steps/knowledgeRetrieval": (6005, "Datastore Activity", None),
    "steps/memoryStore": (6005, "Datastore Activity", None),
    "steps/memoryContextRetrieval": (6005, "Datastore Activity", None),
    "steps/preCompact": (6005, "Datastore Activity", 99),
    "steps/postCompact": (6005, "Datastore Activity", 99),
    "steps/subagentStart": (3002, "Authentication", 1),
    "steps/subagentStop": (3002, "Authentication", 2),
    "steps/skillRegister": (5001, "Device Inventory Info", 2),
    "steps/skillLoad": (1005, "Module Activity", 1),
    "steps/skillUnload": (1005, "Module Activity", 2),
    "agbom/snapshot": (5001, "Device Inventory Info", 2),
    "agbom/changed": (5001, "Device Inventory Info", 2),
}
OTHER_STEP = (6002, "Application Lifecycle", None)
"""A method the mapping has no row for (a wrapped MCP message): application activity."""
CATEGORY_NAMES = {
    1: "System Activity",
    2: "Findings",
    3: "Identity & Access Management",
    5: "Discovery",
    6: "Application Activity",
}
FINDING_CLASS = (2004, "Detection Finding")
SEVERITY = {"allow": 1, "modify": 2, "ask": 3, "defer": 3, "deny": 4}
SEVERITY_NAMES = {1: "Informational", 2: "Low", 3: "Medium", 4: "High"}
# action_id, action, disposition_id, disposition, is_alert (Trace Events prose table).
VERDICTS: dict[str, tuple[int, str, int, str, bool]] = {
    "allow": (1, "Allowed", 1, "Allowed", False),
    "deny": (2, "Denied", 2, "Blocked", True),
    "modify": (4, "Modified", 99, "modify", False),
    "ask": (99, "ask", 99, "ask", True),
    "defer": (99, "defer", 99, "defer", True),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """What OCSF events are made of: one decided ACS step."""

    session_id: str
    request_id: str
    agent_id: str
    method: str
    decision: str
    time_ms: int
    chain_hash: str
    tenant_id: str | None = None
    previous_hash: str | None = None
    request_hash: str | None = None
    reason_codes: tuple[str, ...] = ()
    reasoning: str | None = None
    policy_references: tuple[Mapping[str, str], ...] = ()
    tool_name: str | None = None
    turn_id: str | None = None
    datastore: str | None = None  # the memory store or knowledge source, when known
    provenance: tuple[Mapping[str, Any], ...] = field(default=())
    clean: bool = False  # nothing credential-shaped in it: strings are only clipped

    def text(self, value: Any) -> str:
        return clip(value) if self.clean else scrub(value)

    @classmethod
    def from_entry(cls, session: Mapping[str, Any], entry: Mapping[str, Any]) -> Step:
        """A step from a stored chain entry of ``session`` (a store's session record)."""
        codes = entry.get("reason_codes")
        return cls(
            session_id=str(session.get("session_id", "")),
            request_id=str(entry.get("step_id", "")),
            agent_id=str(session.get("agent_id") or ""),
            tenant_id=session.get("tenant_id") or None,
            method=str(entry.get("step_type", "")),
            decision=str(entry.get("decision", "")),
            time_ms=_epoch_ms(entry.get("timestamp")),
            chain_hash=str(entry.get("entry_hash", "")),
            previous_hash=entry.get("previous_hash"),
            request_hash=entry.get("request_hash"),
            reason_codes=tuple(str(c) for c in codes) if isinstance(codes, list) else (),
            turn_id=entry.get("turn_id"),
            clean=clean_of(entry, session.get("agent_id"), session.get("tenant_id")),
        )

    @classmethod
    def from_record(cls, record: DecisionRecord) -> Step:
        """A step from a live decision (it also knows the reasoning, policies and tool)."""
        from agbom.telemetry.otel import provenance_objects

        decision = record.decision
        return cls(
            session_id=record.session_id,
            request_id=record.request_id,
            agent_id=record.agent_id,
            tenant_id=record.tenant_id,
            method=record.method,
            decision=decision.disposition.value,
            time_ms=int(record.committed_at * 1000),
            chain_hash=record.chain_hash,
            reason_codes=tuple(dict.fromkeys(decision.reason_codes)),
            reasoning=decision.reasoning,
            policy_references=tuple(r.to_json() for r in decision.policy_references),
            tool_name=record.tool_name,
            datastore=_datastore(record.payload),
            provenance=tuple(provenance_objects(record.payload)),
            clean=record.clean,
        )


def _datastore(payload: Mapping[str, Any]) -> str | None:
    for key in ("memory_store", "source"):
        named = payload.get(key)
        if isinstance(named, Mapping) and isinstance(named.get("name"), str) and named["name"]:
            return str(named["name"])
    return None


def _epoch_ms(timestamp: Any) -> int:
    if isinstance(timestamp, str):
        try:
            return int(datetime.fromisoformat(timestamp).timestamp() * 1000)
        except ValueError:
            pass
    return 0


def _agent_user(step: Step) -> dict[str, Any]:
    return {"uid": step.agent_id, "type": "AI agent", "type_id": 99}


def _agent_device(step: Step) -> dict[str, Any]:
    return {
        "uid": step.agent_id,
        "name": step.agent_id,
        "type_id": 99,
        "type": "AI agent",
    }


def _actor(step: Step) -> dict[str, Any]:
    return {
        "app_name": step.agent_id,
        "user": _agent_user(step),
        "session": {"uid": step.session_id},
    }


def _unmapped(step: Step) -> dict[str, Any]:
    acs: dict[str, Any] = {
        "request_id": step.request_id,
        "session_id": step.session_id,
        "method": step.method,
        "decision": step.decision,
        "chain_hash": step.chain_hash,
        "metadata": {"agent_id": step.agent_id, "evaluator": EVALUATOR},
    }
    if step.tenant_id:
        acs["metadata"]["tenant_id"] = step.tenant_id
    if step.turn_id:
        acs["metadata"]["turn_id"] = step.turn_id
    if step.previous_hash:
        acs["previous_hash"] = step.previous_hash
    if step.request_hash:
        acs["request_hash"] = step.request_hash
    if step.reason_codes:
        acs["reason_codes"] = list(step.reason_codes)
    if step.reasoning:
        acs["reasoning"] = step.reasoning
    if step.policy_references:
        acs["policy_references"] = [dict(ref) for ref in step.policy_references]
    return {"acs": acs}


def _metadata(step: Step, *, profiles: Sequence[str] = ()) -> dict[str, Any]:
    from agbom import __version__

    metadata: dict[str, Any] = {
        "version": OCSF_VERSION,
        "product": {**PRODUCT, "version": __version__},
        "correlation_uid": f"{step.session_id}:{step.request_id}",
        "log_name": "acs-audit-chain",
    }
    if profiles:
        metadata["profiles"] = list(profiles)
    return metadata


def _enrichments(step: Step) -> list[dict[str, Any]]:
    origins = [p for p in step.provenance if isinstance(p.get("origin"), str)]
    if not origins:
        return []
    out: list[dict[str, Any]] = [
        {
            "name": "acs_provenance_origin",
            "value": ",".join(p["origin"] for p in origins),
            "data": {"origin": [p["origin"] for p in origins]},
        }
    ]
    sources = [p.get("source_id") for p in origins]
    if any(isinstance(s, str) and s for s in sources):
        values = [s if isinstance(s, str) else "" for s in sources]
        out.append(
            {
                "name": "acs_provenance_source_id",
                "value": ",".join(values),
                "data": {"source_id": values},
            }
        )
    return out


def step_event(step: Step) -> dict[str, Any]:
    """The OCSF event of the step itself, in the class the mapping names for its method."""
    class_uid, class_name, activity = STEP_CLASSES.get(step.method, OTHER_STEP)
    activity_id = 99 if activity is None else activity
    severity = 1  # a step is informational; its decision (below) carries the severity
    event: dict[str, Any] = {
        "class_uid": class_uid,
        "class_name": class_name,
        "category_uid": class_uid // 1000,
        "category_name": CATEGORY_NAMES[class_uid // 1000],
        "activity_id": activity_id,
        "type_uid": class_uid * 100 + activity_id,
        "time": step.time_ms,
        "severity_id": severity,
        "severity": SEVERITY_NAMES[severity],
        "metadata": _metadata(step),
        "unmapped": _unmapped(step),
    }
    if activity is None or activity == 99:
        event["activity_name"] = step.method
    # The objects each class requires, from what the step knows: the agent is the actor (or
    # the device, the app, the endpoint: OCSF has no agent object in these classes).
    if class_uid == 3002:  # Authentication: the agent's session opens (logon) or closes
        event["user"] = _agent_user(step)
        event["session"] = {"uid": step.session_id}
        event["service"] = {"name": "agbom"}
    elif class_uid == 6002:  # Application Lifecycle: the agent is the application
        event["app"] = {"name": step.agent_id, "vendor_name": "unknown"}
    else:
        event["actor"] = _actor(step)
        if class_uid in (1007, 1005, 5001):
            event["device"] = _agent_device(step)
        if class_uid == 1007:  # Process Activity: the tool call is the process
            event["process"] = {"uid": step.request_id}
            if step.tool_name:
                event["process"]["name"] = step.tool_name
        elif class_uid == 1005:  # Module Activity: the skill is the module
            event["module"] = {"type": "skill", "load_type_id": 99, "load_type": step.method}
        elif class_uid == 6005:  # Datastore Activity: the agent is where the request came from
            event["src_endpoint"] = {"uid": step.agent_id, "name": step.agent_id}
            kind = "knowledge source" if step.method == "steps/knowledgeRetrieval" else "memory"
            event["database"] = {"type_id": 99, "type": kind, "name": step.datastore or kind}
    enrichments = _enrichments(step)
    if enrichments:
        event["enrichments"] = enrichments
    return dict(safe_strings(event, step.text))


def finding_event(step: Step) -> dict[str, Any]:
    """The Detection Finding (2004) of a decision, whatever its disposition."""
    class_uid, class_name = FINDING_CLASS
    severity = SEVERITY.get(step.decision, 1)
    action_id, action, disposition_id, disposition, is_alert = VERDICTS.get(
        step.decision, (99, step.decision, 99, step.decision, True)
    )
    evidence: dict[str, Any] = {
        "ai_agent": {"uid": step.agent_id},
        "actor": {"session": {"uid": step.session_id}},
    }
    if step.method in ("steps/toolCallRequest", "steps/toolCallResult") and step.tool_name:
        evidence["api"] = {"operation": step.tool_name}
    info: dict[str, Any] = {
        "title": f"ACS {step.method}: {step.decision}",
        "uid": step.chain_hash,  # the decision's chain entry: unique, and it proves nothing alone
        "types": list(step.reason_codes) or [step.decision],
        "analytic": {"name": "agbom rules and approvals", "type_id": 1, "type": "Rule"},
    }
    if step.reasoning:
        info["desc"] = step.reasoning
    event: dict[str, Any] = {
        "class_uid": class_uid,
        "class_name": class_name,
        "category_uid": 2,
        "category_name": CATEGORY_NAMES[2],
        "activity_id": 1,
        "activity_name": "Create",
        "type_uid": class_uid * 100 + 1,
        "time": step.time_ms,
        "severity_id": severity,
        "severity": SEVERITY_NAMES[severity],
        "action_id": action_id,
        "action": action,
        "disposition_id": disposition_id,
        "disposition": disposition,
        "is_alert": is_alert,
        "finding_info": info,
        "evidences": [evidence],
        "metadata": _metadata(step, profiles=("security_control",)),
        "unmapped": _unmapped(step),
    }
    if step.policy_references:
        # One entry per policy reference, in order; no policy object without a uid or name.
        event["authorizations"] = [_authorization(ref) for ref in step.policy_references]
    enrichments = _enrichments(step)
    if enrichments:
        event["enrichments"] = enrichments
    return dict(safe_strings(event, step.text))


def _authorization(reference: Mapping[str, str]) -> dict[str, Any]:
    policy: dict[str, str] = {}
    for source, target in (
        ("policy_id", "uid"),
        ("policy_version", "version"),
        ("policy_name", "name"),
    ):
        if reference.get(source):
            policy[target] = reference[source]
    return {"policy": policy} if "uid" in policy or "name" in policy else {}


def step_events(step: Step, *, allow_findings: bool = False) -> list[dict[str, Any]]:
    """The step's event, then its Detection Finding unless it was allowed (``allow_findings``
    records allows as findings too, for full audit symmetry)."""
    events = [step_event(step)]
    if step.decision != "allow" or allow_findings:
        events.append(finding_event(step))
    return events


def chain_events(
    session: Mapping[str, Any],
    entries: Sequence[Mapping[str, Any]],
    *,
    allow_findings: bool = False,
) -> list[dict[str, Any]]:
    """Every OCSF event of a session's audit chain, in chain order."""
    return [
        event
        for entry in entries
        for event in step_events(Step.from_entry(session, entry), allow_findings=allow_findings)
    ]
