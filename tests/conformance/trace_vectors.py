"""The ACS-Trace members of ``agent-evidence-vectors`` that describe a record a Guardian emits.

Such a member gives a span or an OCSF event and says whether it follows the Trace mapping.
agbom's own records are judged by the member's rule instead. One ``agbom serve`` with
``--otlp-endpoint`` sends its spans to a real OTLP/HTTP receiver (tests/telemetry). Signed
traffic drives it into each situation the members name: an allow on a message step, a deny
with two policy references, an ask, a defer, a modify, a skill load, tool results with and
without ``request_id_ref``, provenance objects with and without ``source_id``, a snapshot and
a replay. ``agbom audit export --format ocsf`` then turns the same sessions into OCSF events.
Each member is judged on the matching record: an ``accept`` member passes when agbom's record
has the property the member shows, and a ``reject`` member passes when agbom's record does
not have the defect the member shows.

This runs once per corpus run (``TraceRecords.collect``). Members not judged here are in
``acs_core_vectors.NOT_APPLICABLE``, with the reason each one is not.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from tests.conformance.acs_core_vectors import (
    CORE_KEY_ID,
    DEFAULT_AGENT_ID,
    Deployment,
    Exchange,
    IdMap,
    Outcome,
    client_hello,
    from_v010,
    step,
    verdict_of,
)
from tests.guardian.acs import SAMPLE_AGBOM
from tests.telemetry.otlp_receiver import Receiver, Span, mapping
from tests.transports.served import run_cli

if TYPE_CHECKING:
    from tests.conformance.acs_core_vectors import Run

NO_ASK_AGENT = f"{DEFAULT_AGENT_ID}-no-ask"
# One tool that escalates (ask, or defer for an agent that cannot answer ASK), and one that
# two rules deny, so that the decision carries two policy references.
TRACE_PACK = """\
pack: vectors-trace
description: Policies the ACS-Trace members assume (an escalation, and two denials of one call).
rules:
  - id: VEC-ASK-001
    kind: ban
    severity: high
    action: ask
    message: "{component.name} needs an approver"
    match: {type: tool, name: records.lookup}
  - id: VEC-DENY-001
    kind: ban
    severity: high
    action: deny
    message: "{component.name} deletes files"
    match: {type: tool, name: files.delete}
  - id: VEC-DENY-002
    kind: ban
    severity: high
    action: deny
    message: "{component.name} is outside the egress policy"
    match: {type: tool, name: files.delete}
"""
GITHUB_TOKEN = "ghp_" + "V" * 36  # what a MODIFY redacts from an agent response
STEP_METHODS = [
    "steps/userMessage",
    "steps/agentResponse",
    "steps/skillLoad",
    "agbom/snapshot",
]


@dataclass
class TraceRecords:
    """What one traced ``agbom serve`` emitted for the scenario, keyed by the request."""

    requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> envelope
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> answer
    spans: list[Span] = field(default_factory=list)
    ocsf: list[dict[str, Any]] = field(default_factory=list)
    ocsf_allow_findings: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None  # why the scenario could not be driven

    def request_id(self, label: str) -> str:
        return str(self.requests[label]["params"]["request_id"])

    def session_id(self, label: str) -> str:
        return str(self.requests[label]["params"]["metadata"]["session_id"])

    def spans_of(self, label: str) -> list[Span]:
        rid, sid = self.request_id(label), self.session_id(label)
        return [
            s
            for s in self.spans
            if s.attributes.get("acs.request_id") == rid
            and s.attributes.get("acs.session.id") == sid
        ]

    def span(self, label: str) -> Span | None:
        found = self.spans_of(label)
        return found[0] if len(found) == 1 else None

    def events_of(self, label: str, *, allow_findings: bool = False) -> list[dict[str, Any]]:
        rid, sid = self.request_id(label), self.session_id(label)
        events = self.ocsf_allow_findings if allow_findings else self.ocsf
        return [
            e
            for e in events
            if e["unmapped"]["acs"].get("request_id") == rid
            and e["unmapped"]["acs"].get("session_id") == sid
        ]

    def finding(self, label: str, *, allow_findings: bool = False) -> dict[str, Any] | None:
        found = [
            e
            for e in self.events_of(label, allow_findings=allow_findings)
            if e["class_uid"] == 2004
        ]
        return found[0] if len(found) == 1 else None

    def step_event(self, label: str) -> dict[str, Any] | None:
        found = [e for e in self.events_of(label) if e["class_uid"] != 2004]
        return found[0] if len(found) == 1 else None

    def decision_of(self, label: str) -> str:
        return verdict_of(self.answers[label])[2]


def _member_request(
    members: Mapping[str, Mapping[str, Any]], mid: str, ids: IdMap
) -> dict[str, Any]:
    """A member's own request, in the scenario's session, with fresh ids and time."""
    return from_v010(members[mid]["payload"]["request"], ids)


def collect(run: Run, members: Mapping[str, Mapping[str, Any]]) -> TraceRecords:
    """Drive the traced Guardian through every situation the judged members name."""
    records = TraceRecords()
    receiver = Receiver().start()
    rules = run.workdir / "trace-rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "trace.yaml").write_text(TRACE_PACK)
    dep = Deployment(
        "trace",
        {CORE_KEY_ID: run.core_secret},
        run.workdir / "trace",
        extra=["--otlp-endpoint", receiver.url, "--rules", str(rules), "--no-ask", NO_ASK_AGENT],
    )
    scratch = Outcome("trace", "acs-f-15..19", "scenario", "observation", "-")
    try:
        dep.start(run.flags)
        ex = Exchange(dep, scratch, CORE_KEY_ID)
        _drive(ex, records, members)
    finally:
        # The exporter process sends what it holds when the server stops: give it time on a
        # loaded machine rather than kill it with spans unsent.
        dep.stop(grace_s=90)
        receiver_spans = _wait(receiver, sum("result" in a for a in records.answers.values()))
        receiver.stop()
    records.spans = receiver_spans
    if records.problem is None and dep.server is not None:
        sessions = dict.fromkeys(records.session_id(label) for label in records.requests)
        for sid in sessions:
            records.ocsf += _ocsf(dep.server.db, sid)
            records.ocsf_allow_findings += _ocsf(dep.server.db, sid, "--allow-findings")
    return records


def _wait(receiver: Receiver, decided: int) -> list[Span]:
    """The spans of the decided steps (one each), or what arrived if fewer did: a member
    then fails on the missing span rather than the whole run on a wait."""
    try:
        return receiver.wait_for(decided, tries=6000)
    except AssertionError:
        return list(receiver.spans)


def _ocsf(db: Path, sid: str, *extra: str) -> list[dict[str, Any]]:
    done = run_cli("audit", "export", sid, "--db", str(db), "--format", "ocsf", *extra)
    if done.returncode != 0:
        raise RuntimeError(f"agbom audit export --format ocsf failed: {done.stderr!r}")
    lines = cast(bytes, done.stdout).splitlines()  # run_cli's CompletedProcess holds bytes
    return [orjson.loads(line) for line in lines]


def _drive(ex: Exchange, records: TraceRecords, members: Mapping[str, Mapping[str, Any]]) -> None:
    ids = IdMap()
    main = f"s-trace-{ids('main')[-8:]}"
    deferred = f"s-trace-{ids('no-ask')[-8:]}"
    inventory = f"s-trace-{ids('inventory')[-8:]}"

    def send(label: str, envelope: dict[str, Any], *, sign: bool = True) -> dict[str, Any]:
        records.requests[label] = envelope
        answer = ex.send(envelope, sign=sign)
        records.answers[label] = answer
        return answer

    for sid, agent in ((main, DEFAULT_AGENT_ID), (deferred, NO_ASK_AGENT), (inventory, None)):
        hello = client_hello(sid, STEP_METHODS, agent or DEFAULT_AGENT_ID)
        if verdict_of(ex.send(hello))[0] != "allow":
            records.problem = f"handshake refused: {ex.outcome.answers[-1]}"
            return
    send("message", step("steps/userMessage", main, {"content": "summarise the notes"}))
    read = _member_request(members, "v934c6c4f64dc3142", ids)  # two provenance objects
    read["params"]["metadata"]["session_id"] = main
    send("provenance", read)
    # The two members share one request_id: each gets ids of its own, as in any corpus run.
    ref = _member_request(members, "v4cfeaa01784088e3", IdMap())
    no_ref = _member_request(members, "vf53a8639739cf0ca", IdMap())
    for label, result in (("result-with-ref", ref), ("result-without-ref", no_ref)):
        result["params"]["metadata"]["session_id"] = main
        payload = result["params"]["payload"]
        # The members' results name no tool and give outputs as an object; every hook draft
        # requires a tool and an array of {value} items. The span's shape turns on neither.
        payload.setdefault("tool", {"name": "files.read"})
        if isinstance(payload.get("outputs"), dict):
            payload["outputs"] = [{"value": payload["outputs"]}]
        if "request_id_ref" in payload:  # refer to the call this session did make
            payload["request_id_ref"] = records.request_id("provenance")
        send(label, result)
    tool = {"arguments": {"id": {"value": "42"}}}
    send("ask", step("steps/toolCallRequest", main, {"tool": {"name": "records.lookup"}, **tool}))
    send("deny", step("steps/toolCallRequest", main, {"tool": {"name": "files.delete"}, **tool}))
    send("modify", step("steps/agentResponse", main, {"content": f"the key is {GITHUB_TOKEN}"}))
    skill = _member_request(members, "v8a5f343c721f2f14", ids)
    skill["params"]["metadata"]["session_id"] = main
    # The member spells load_path as bare skill ids and the trigger "agent_request"; the
    # v0.1.0 skillLoad schema has {skill_id} items and "agent_decision". The span's
    # acs.skill.load_path (skill ids, root first) is the same either way.
    load = skill["params"]["payload"]
    load["load_path"] = [{"skill_id": s} if isinstance(s, str) else s for s in load["load_path"]]
    if load.get("load_trigger") == "agent_request":
        load["load_trigger"] = "agent_decision"
    send("skill-load", skill)
    email = {"tool": {"name": "email.send"}, "arguments": {"to": {"value": "ops@example.org"}}}
    original = step("steps/toolCallRequest", main, email)
    send("replayed", original)
    # The same request again: same session, same request_id, a fresh signature over it.
    records.requests["replay"] = original
    records.answers["replay"] = ex.send(copy.deepcopy(original))
    send(
        "defer",
        step(
            "steps/toolCallRequest",
            deferred,
            {"tool": {"name": "records.lookup"}, **tool},
            NO_ASK_AGENT,
        ),
    )
    send("snapshot", step("agbom/snapshot", inventory, {"agbom": SAMPLE_AGBOM}))


# --------------------------------------------------------------------------------------------
# Judging: one rule per requirement, over the record of the situation the member names.
# Each returns whether agbom's record follows the rule, and what it was.

Verdict = tuple[bool, str]


def _decision_event(span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    found = [attributes for name, attributes in span.events if name == "acs.decision"]
    return found[0] if len(found) == 1 else None


def _missing(what: str, label: str, records: TraceRecords) -> Verdict:
    return False, f"no single {what} for the {label} step ({records.decision_of(label)})"


def request_id_ref_present(records: TraceRecords) -> Verdict:
    """ACS-R-039/R-059: a toolCallResult with request_id_ref has acs.request_id_ref."""
    span = records.span("result-with-ref")
    if span is None:
        return _missing("span", "result-with-ref", records)
    sent = records.requests["result-with-ref"]["params"]["payload"]["request_id_ref"]
    got = span.attributes.get("acs.request_id_ref")
    return got == sent, f"acs.request_id_ref {got!r} for request_id_ref {sent!r}"


def request_id_ref_absent(records: TraceRecords) -> Verdict:
    """ACS-R-039: a toolCallResult without request_id_ref has no acs.request_id_ref."""
    span = records.span("result-without-ref")
    if span is None:
        return _missing("span", "result-without-ref", records)
    present = "acs.request_id_ref" in span.attributes
    shown = repr(span.attributes.get("acs.request_id_ref"))
    return not present, f"acs.request_id_ref {shown}" if present else "acs.request_id_ref omitted"


def every_span_carries_the_pair(records: TraceRecords) -> Verdict:
    """ACS-R-040: every step span carries acs.request_id and acs.session.id, the step's own."""
    decided = [label for label, a in records.answers.items() if "result" in a]
    without = [label for label in decided if records.span(label) is None]
    unpaired = [
        s.name
        for s in records.spans
        if not s.attributes.get("acs.request_id") or not s.attributes.get("acs.session.id")
    ]
    ok = not without and not unpaired and len(records.spans) == len(decided)
    return ok, (
        f"{len(records.spans)} spans for {len(decided)} decided steps; "
        f"steps without their pair's span: {without or 'none'}; spans lacking it: "
        f"{unpaired or 'none'}"
    )


def empty_reason_codes_omitted(records: TraceRecords) -> Verdict:
    """ACS-R-039: acs.reason_codes is the answer's reason_codes, omitted when that is empty."""
    wrong, empty = [], 0
    for label, answer in records.answers.items():
        if "result" not in answer:
            continue
        codes = answer["result"].get("reason_codes") or []
        event = _decision_event(records.span(label))
        if event is None:
            wrong.append(f"{label}: no acs.decision event")
            continue
        empty += not codes
        if codes and event.get("acs.reason_codes") != codes:
            wrong.append(f"{label}: {event.get('acs.reason_codes')} for {codes}")
        if not codes and "acs.reason_codes" in event:
            wrong.append(f"{label}: {event['acs.reason_codes']!r} for none")
    ok = not wrong and empty > 0
    return ok, f"{empty} decisions without reason codes, attribute omitted" if ok else str(wrong)


def policy_arrays_by_position(records: TraceRecords) -> Verdict:
    """ACS-R-060: acs.policy.ids/.versions/.rule_ids have the length and order of
    policy_references, with "" where a reference has no version."""
    references = (records.answers["deny"].get("result") or {}).get("policy_references") or []
    event = _decision_event(records.span("deny"))
    if event is None or len(references) < 2:
        return False, f"deny with {len(references)} policy references, event {event}"
    expected = {
        "acs.policy.ids": [r["policy_id"] for r in references],
        "acs.policy.versions": [r.get("policy_version", "") for r in references],
        "acs.policy.rule_ids": [r["rule_id"] for r in references],
    }
    got = {name: event.get(name) for name in expected}
    return got == expected, f"{len(references)} references: {got}"


def provenance_arrays_by_position(records: TraceRecords) -> Verdict:
    """ACS-R-061: acs.provenance.source_id is as long as acs.provenance.origin, "" where an
    object has no source_id, each position naming the same object."""
    span = records.span("provenance")
    if span is None:
        return _missing("span", "provenance", records)
    arguments = records.requests["provenance"]["params"]["payload"]["arguments"]
    sent = sorted(
        (a["provenance"]["origin"], a["provenance"].get("source_id", ""))
        for a in arguments.values()
    )
    origins = span.attributes.get("acs.provenance.origin") or []
    sources = span.attributes.get("acs.provenance.source_id") or []
    paired = len(origins) == len(sources) and sorted(zip(origins, sources, strict=False)) == sent
    return paired, f"origin {origins}, source_id {sources}"


def skill_load_row(records: TraceRecords) -> Verdict:
    """ACS-R-058: an acs.skill.load span carries every required attribute of its row."""
    span = records.span("skill-load")
    if span is None:
        return _missing("span", "skill-load", records)
    row = mapping("otel-mapping.json")["properties"]["step_to_span"]["default"]["steps/skillLoad"]
    missing = sorted(set(row["required_attributes"]) - set(span.attributes))
    path = span.attributes.get("acs.skill.load_path")
    ok = span.name == row["span_name"] and not missing and path == ["root-skill", "report-writer"]
    return ok, f"{span.name}, missing {missing or 'nothing'}, acs.skill.load_path {path}"


def no_substitution_on_guardian_spans(records: TraceRecords) -> Verdict:
    """ACS-R-068: acs.decision.substituted is the Observed Agent's; a Guardian span (here the
    modify's, above all) carries only its acs.decision event."""
    span = records.span("modify")
    if span is None or _decision_event(span) is None:
        return _missing("span with an acs.decision event", "modify", records)
    names = sorted({name for s in records.spans for name, _ in s.events})
    return names == ["acs.decision"], f"event names on agbom's spans: {names}"


def replay_emits_no_failure_event(records: TraceRecords) -> Verdict:
    """ACS-R-046: a replay refused with REPLAY_DETECTED emits no acs.decision.failure, which
    would land on the earlier request's pair."""
    code = verdict_of(records.answers["replay"])[1]
    original = records.spans_of("replayed")
    events = [name for s in original for name, _ in s.events]
    failures = [name for s in records.spans for name, _ in s.events if "failure" in name]
    ok = code == -32005 and len(original) == 1 and events == ["acs.decision"] and not failures
    return ok, (
        f"replay answered {code}; the pair's spans: {len(original)} with events {events}; "
        f"failure events: {len(failures)}"
    )


def snapshot_is_collect(records: TraceRecords) -> Verdict:
    """ACS-R-056: agbom/snapshot is Device Inventory Info (5001) with activity_id 2, Collect."""
    event = records.step_event("snapshot")
    if event is None:
        return _missing("OCSF event", "snapshot", records)
    got = (event["class_uid"], event["activity_id"], event["type_uid"])
    return got == (5001, 2, 500102), f"class_uid, activity_id, type_uid {got}"


def _finding_verdict(label: str, *, allow_findings: bool = False) -> Callable[..., Verdict]:
    def judge(records: TraceRecords) -> Verdict:
        finding = records.finding(label, allow_findings=allow_findings)
        if finding is None:
            return _missing("Detection Finding", label, records)
        decision = finding["unmapped"]["acs"]["decision"]
        severity = mapping("ocsf-mapping.json")["properties"]["severity_mapping"]["default"]
        got = (finding["severity_id"], finding["is_alert"])
        ok = got == (severity[decision], severity[decision] >= 3)
        return ok, f"{decision}: severity_id {got[0]}, is_alert {got[1]}"

    judge.__doc__ = (
        f"ACS-R-050: an on-time {label} is at the mapping's severity, and alerts exactly when "
        "that is 3 or more."
    )
    return judge


def _correlation(label: str, *, step: bool = False) -> Callable[..., Verdict]:
    def judge(records: TraceRecords) -> Verdict:
        event = records.step_event(label) if step else records.finding(label)
        if event is None:
            return _missing("OCSF event", label, records)
        pair = f"{records.session_id(label)}:{records.request_id(label)}"
        acs = event["unmapped"]["acs"]
        got = event["metadata"].get("correlation_uid")
        ok = got == pair and (acs.get("session_id"), acs.get("request_id")) == tuple(
            pair.split(":", 1)
        )
        return ok, f"correlation_uid {'session:request' if got == pair else repr(got)}"

    judge.__doc__ = (
        "ACS-R-054/R-066/R-067: correlation_uid is session id, colon, request id, and "
        "unmapped.acs holds both."
    )
    return judge


def _verdict_text(label: str, expected: tuple[Any, ...]) -> Callable[..., Verdict]:
    def judge(records: TraceRecords) -> Verdict:
        finding = records.finding(label)
        if finding is None:
            return _missing("Detection Finding", label, records)
        fields = ("action_id", "action", "disposition_id", "disposition", "severity_id")
        got = tuple(finding.get(f) for f in (*fields, "is_alert"))
        return got == expected, f"{dict(zip((*fields, 'is_alert'), got, strict=True))}"

    judge.__doc__ = (
        f"ACS-R-049/R-055: a {label} is action and disposition 99 named {label!r}, at "
        "severity 3, alerting."
    )
    return judge


def message_allow(*checks: str) -> Callable[..., Verdict]:
    """ACS-R-062..R-067: an allowed message step is class 6002, Application Lifecycle, at
    severity 1, with the disposition in unmapped.acs.decision."""

    def judge(records: TraceRecords) -> Verdict:
        event = records.step_event("message")
        if event is None:
            return _missing("OCSF event", "message", records)
        acs = event["unmapped"]["acs"]
        facts = {
            "class": (event["class_uid"], event["class_name"]) == (6002, "Application Lifecycle"),
            "severity": event["severity_id"] == 1,
            "decision": acs.get("decision") == "allow",
            "pair": _correlation("message", step=True)(records)[0],
        }
        failed = [name for name in checks if not facts[name]]
        shown = (
            f"{event['class_uid']} {event['class_name']!r}, severity {event['severity_id']}, "
            f"decision {acs.get('decision')!r}, correlation_uid "
            f"{event['metadata'].get('correlation_uid')!r}"
        )
        return not failed, shown + (f"; fails {failed}" if failed else "")

    return judge


def allow_as_finding(records: TraceRecords) -> Verdict:
    """ACS-R-064/R-050: with --allow-findings an allow is a Detection Finding, action and
    disposition 1, Allowed, at severity 1, not alerting."""
    finding = records.finding("message", allow_findings=True)
    if finding is None:
        return _missing("Detection Finding (--allow-findings)", "message", records)
    fields = ("action_id", "action", "disposition_id", "disposition", "severity_id", "is_alert")
    got = tuple(finding.get(f) for f in fields)
    return got == (1, "Allowed", 1, "Allowed", 1, False), str(dict(zip(fields, got, strict=True)))


_ALLOW_ALL = message_allow("class", "severity", "decision", "pair")
JUDGES: dict[str, Callable[[TraceRecords], Verdict]] = {
    # acs-f-15: a replay refused with -32005 leaves no failure event on the earlier pair.
    "v6b9826ebb2401bb8": replay_emits_no_failure_event,
    "v7cdac6c8af6db2fe": replay_emits_no_failure_event,
    # acs-f-16: span shapes.
    "v4cfeaa01784088e3": lambda r: _both(request_id_ref_present, every_span_carries_the_pair, r),
    "ve7274cd800b89ef2": request_id_ref_present,
    "veed45c58b4e3a95b": request_id_ref_absent,
    "vf53a8639739cf0ca": request_id_ref_absent,
    "v4f1f941aca13438d": every_span_carries_the_pair,
    "vc0ee2db9cf47e0c1": every_span_carries_the_pair,
    "v3a740f95d71db4bb": empty_reason_codes_omitted,
    "v9d271115ecc2144a": empty_reason_codes_omitted,
    "v142a717729cabcc7": policy_arrays_by_position,
    "v36627efbb93cdb48": policy_arrays_by_position,
    "v934c6c4f64dc3142": provenance_arrays_by_position,
    "vbf0b0f4b67a00b59": provenance_arrays_by_position,
    "v9c3c0467f619607e": skill_load_row,
    "v8a5f343c721f2f14": skill_load_row,
    # acs-f-17: decision findings.
    "v1bf79e310bf7ab30": snapshot_is_collect,
    "va216214d32d8d5f7": snapshot_is_collect,
    "v28a228c72a0a72e8": _finding_verdict("ask"),
    "vb2374eaafd283548": _finding_verdict("modify"),
    "vd4d655cdc5da676f": lambda r: _both(_finding_verdict("deny"), _correlation("deny"), r),
    "v31ce9cd718b96f51": _correlation("deny"),
    "vf0317aa29d78b3c1": _verdict_text("defer", (99, "defer", 99, "defer", 3, True)),
    "v573876edff0016da": _verdict_text("defer", (99, "defer", 99, "defer", 3, True)),
    "vac8eb35a1249aefc": _verdict_text("ask", (99, "ask", 99, "ask", 3, True)),
    # acs-f-18: an allowed message step as 6002, and as a finding when asked.
    "v37ab95af193da84e": _ALLOW_ALL,
    "v0118a9be95bc651c": message_allow("decision"),
    "v0e394a2a77fc7e8d": message_allow("pair"),
    "va26320f07c64f16d": message_allow("severity"),
    "vc5e61899449daf41": message_allow("class"),
    "vdddfe7d991c3f2cc": message_allow("pair"),
    "v85f225380d40f147": allow_as_finding,
    "vc97666f6b2388930": allow_as_finding,
    # acs-f-19: the substitution event is the Observed Agent's, never on a Guardian span.
    "v95efcfe1aeba3995": no_substitution_on_guardian_spans,
}


def _both(
    first: Callable[[TraceRecords], Verdict],
    second: Callable[[TraceRecords], Verdict],
    records: TraceRecords,
) -> Verdict:
    (ok1, got1), (ok2, got2) = first(records), second(records)
    return ok1 and ok2, f"{got1}; {got2}"


def observe_trace(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """Judge agbom's own span or OCSF event for the situation ``member`` names."""
    if run.trace is None:
        members = {m["id"]: m for m in run.members}
        run.trace = collect(run, members)
    records: TraceRecords = run.trace
    if records.problem is not None:
        outcome.got, outcome.passed = records.problem, False
        return
    passed, got = JUDGES[member["id"]](records)
    outcome.got, outcome.passed = got, passed


# Which step of the scenario each member's record stands for.
LABELS: dict[str, str] = {
    "v6b9826ebb2401bb8": "replayed",
    "v7cdac6c8af6db2fe": "replayed",
    "v4cfeaa01784088e3": "result-with-ref",
    "ve7274cd800b89ef2": "result-with-ref",
    "v4f1f941aca13438d": "result-with-ref",
    "vc0ee2db9cf47e0c1": "result-with-ref",
    "veed45c58b4e3a95b": "result-without-ref",
    "vf53a8639739cf0ca": "result-without-ref",
    "v3a740f95d71db4bb": "message",
    "v9d271115ecc2144a": "message",
    "v142a717729cabcc7": "deny",
    "v36627efbb93cdb48": "deny",
    "v934c6c4f64dc3142": "provenance",
    "vbf0b0f4b67a00b59": "provenance",
    "v9c3c0467f619607e": "skill-load",
    "v8a5f343c721f2f14": "skill-load",
    "v1bf79e310bf7ab30": "snapshot",
    "va216214d32d8d5f7": "snapshot",
    "v28a228c72a0a72e8": "ask",
    "vac8eb35a1249aefc": "ask",
    "vb2374eaafd283548": "modify",
    "vd4d655cdc5da676f": "deny",
    "v31ce9cd718b96f51": "deny",
    "vf0317aa29d78b3c1": "defer",
    "v573876edff0016da": "defer",
    "v95efcfe1aeba3995": "modify",
    **dict.fromkeys(
        (
            "v37ab95af193da84e",
            "v0118a9be95bc651c",
            "v0e394a2a77fc7e8d",
            "va26320f07c64f16d",
            "vc5e61899449daf41",
            "vdddfe7d991c3f2cc",
            "v85f225380d40f147",
            "vc97666f6b2388930",
        ),
        "message",
    ),
}


def substitute(records: TraceRecords, member: Mapping[str, Any]) -> TraceRecords:
    """``records`` with the member's own record (and its request or response) in place of
    agbom's for the step it stands for, its session and request ids renamed to that step's.
    A judge must then give the member's own verdict: this is how the judges are checked."""
    label = LABELS[member["id"]]
    out = copy.deepcopy(records)
    payload = member["payload"]
    record = payload.get("record") or {}
    member_request = payload.get("request") or {}
    names = _member_pair(payload)
    pair = (records.session_id(label), records.request_id(label))

    def renamed(value: Any) -> Any:
        text = orjson.dumps(value).decode()
        for old, new in zip(names, pair, strict=True):
            if old:
                text = text.replace(old, new)
        return orjson.loads(text)

    if member_request:
        out.requests[label] = renamed(member_request)
    response = payload.get("response") or payload.get("guardian_response")
    if response is not None:
        out.answers["replay" if "guardian_response" in payload else label] = renamed(response)
    spans = []
    if "otel_span" in record:
        spans = [record["otel_span"]]
    elif "trace" in record:
        spans = record["trace"]["guardian"]
    elif "guardian_trace_events" in payload:
        spans = payload["guardian_trace_events"]
    if spans or "guardian_trace_events" in payload:
        keep = [s for s in out.spans if s not in records.spans_of(label)]
        if "guardian_trace_events" in payload:  # what the replay adds to the original's
            keep = list(out.spans)
        out.spans = keep + [
            Span(
                name=s["name"],
                attributes=renamed(s["attributes"]),
                events=[(e["name"], renamed(e["attributes"])) for e in s["events"]],
                resource={},
                start_ns=0,
                end_ns=0,
            )
            for s in spans
        ]
    if "ocsf" in record:
        event = renamed(record["ocsf"])
        finding = event["class_uid"] == 2004
        allow_findings = finding and event["unmapped"]["acs"].get("decision") == "allow"
        target = out.ocsf_allow_findings if allow_findings else out.ocsf
        original = (
            records.finding(label, allow_findings=allow_findings)
            if finding
            else records.step_event(label)
        )
        target[:] = [e for e in target if e != original] + [event]
    return out


def _member_pair(payload: Mapping[str, Any]) -> tuple[str, str]:
    """The session and request id a member's record is about."""
    request = payload.get("request") or {}
    if request:
        params = request["params"]
        return params["metadata"]["session_id"], params["request_id"]
    record = payload.get("record") or {}
    if "ocsf" in record:
        acs = record["ocsf"]["unmapped"]["acs"]
        correlation = record["ocsf"]["metadata"].get("correlation_uid", "")
        sid = acs.get("session_id") or ""
        rid = acs.get("request_id") or correlation.replace(sid, "").strip(":")
        return sid, rid
    spans = (
        [record["otel_span"]]
        if "otel_span" in record
        else record["trace"]["guardian"]
        if "trace" in record
        else payload.get("guardian_trace_events") or []
    )
    attributes = spans[0]["attributes"] if spans else {}
    return attributes.get("acs.session.id", ""), attributes.get("acs.request_id", "")
