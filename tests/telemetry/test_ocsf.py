"""``agbom audit export --format ocsf``: the chain as OCSF events, in the classes ACS's
trace/ocsf-mapping.json names, each valid against the OCSF schema (ocsf-json-schema carries
the schema exports; its newest is 1.8.0), plus the decision rules of the Trace Events prose."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from ocsf_json_schema import OcsfJsonSchemaEmbedded, get_ocsf_schema

from agbom.guardian import build_guardian
from tests.guardian.acs import hello, new_session_id, request
from tests.telemetry.otlp_receiver import mapping
from tests.telemetry.test_otlp import GITHUB_TOKEN, steps
from tests.transports.served import run_cli

SCHEMA_VERSION = "1.8.0"


@cache
def ocsf_schemas() -> OcsfJsonSchemaEmbedded:
    return OcsfJsonSchemaEmbedded(get_ocsf_schema(version=SCHEMA_VERSION))


@cache
def class_validator(class_uid: int, profiles: tuple[str, ...]) -> jsonschema.Draft202012Validator:
    schemas = ocsf_schemas()
    name = schemas.lookup_class_name_from_uid(class_uid=class_uid)
    schema = schemas.get_class_schema(class_name=name, profiles=list(profiles))
    return jsonschema.Draft202012Validator(schema)


def schema_errors(event: dict[str, Any]) -> list[str]:
    """Where ``event`` breaks its class's OCSF schema. ``evidences[].ai_agent`` is the one
    object ACS takes from OCSF 1.9, which the packaged 1.8.0 schema does not have yet: it is
    checked by the prose rules below instead."""
    event = orjson.loads(orjson.dumps(event))
    for evidence in event.get("evidences", []):
        evidence.pop("ai_agent", None)
    validator = class_validator(event["class_uid"], tuple(event["metadata"].get("profiles", [])))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(event)]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str, list[dict[str, Any]]]:
    db = tmp_path / "store.db"
    guardian = build_guardian(db)
    sid = new_session_id()
    guardian.handle(hello(sid))
    answers = [guardian.handle(r) for r in steps(sid)]
    guardian.store.close()
    return db, sid, [a["result"] for a in answers]


def export(db: Path, sid: str, *extra: str) -> list[dict[str, Any]]:
    done = run_cli("audit", "export", sid, "--db", str(db), "--format", "ocsf", *extra)
    assert done.returncode == 0, done.stderr
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def test_every_chain_entry_becomes_the_events_the_mapping_names(
    recorded: tuple[Path, str, list[dict[str, Any]]],
) -> None:
    db, sid, results = recorded
    ocsf = mapping("ocsf-mapping.json")["properties"]
    classes = ocsf["step_to_class"]["default"]
    severities = ocsf["severity_mapping"]["default"]
    finding_class = ocsf["decision_class"]["properties"]["class_uid"]["const"]
    events = export(db, sid)
    steps_seen = [e for e in events if e["class_uid"] != finding_class]
    findings = [e for e in events if e["class_uid"] == finding_class]
    assert len(steps_seen) == len(results)
    assert len(findings) == sum(r["decision"] != "allow" for r in results) > 0
    for event in events:
        assert not schema_errors(event), (event["unmapped"]["acs"]["method"], schema_errors(event))
        acs = event["unmapped"]["acs"]
        assert acs["session_id"] == sid
        assert event["metadata"]["correlation_uid"] == f"{sid}:{acs['request_id']}"
        assert event["metadata"]["version"] == "1.9.0"
        assert event["type_uid"] == event["class_uid"] * 100 + event["activity_id"]
        assert event["category_uid"] == event["class_uid"] // 1000
    by_request = {r["request_id"]: r for r in results}
    for event in steps_seen:
        acs = event["unmapped"]["acs"]
        row = classes[acs["method"]]
        assert event["class_uid"] == row["class_uid"], acs["method"]
        if "activity_id" in row:
            assert event["activity_id"] == row["activity_id"], acs["method"]
        assert (
            event["class_name"]
            == ocsf_schemas().get_class_schema(
                class_name=ocsf_schemas().lookup_class_name_from_uid(class_uid=event["class_uid"]),
                profiles=[],
            )["title"]
        )
        assert acs["decision"] == by_request[acs["request_id"]]["decision"]
        assert acs["chain_hash"] == by_request[acs["request_id"]]["chain_hash"]
    required = ocsf["decision_class"]["properties"]["required_fields"]["default"]
    for finding in findings:
        acs = finding["unmapped"]["acs"]
        result = by_request[acs["request_id"]]
        # The mapping's required fields, by their OCSF 1.1+ names (finding became
        # finding_info); verdict_id is left to whoever triages (Trace Events: SHOULD NOT set).
        assert required == ["finding.title", "finding.uid", "evidences", "verdict_id"]
        assert finding["finding_info"]["title"] and finding["finding_info"]["uid"]
        assert "verdict_id" not in finding and "status_id" not in finding
        assert finding["severity_id"] == severities[result["decision"]]
        assert "security_control" in finding["metadata"]["profiles"]
        [evidence] = finding["evidences"]
        assert evidence["ai_agent"]["uid"] == "agent-1"
        assert evidence["actor"]["session"]["uid"] == sid
        assert finding["is_alert"] is (finding["severity_id"] >= 3)
        assert finding["finding_info"]["types"] == result.get("reason_codes", [result["decision"]])
    deny = next(f for f in findings if f["unmapped"]["acs"]["decision"] == "deny")
    assert (deny["action_id"], deny["disposition_id"], deny["action"]) == (2, 2, "Denied")
    modify = next(f for f in findings if f["unmapped"]["acs"]["decision"] == "modify")
    assert (modify["action_id"], modify["disposition_id"], modify["disposition"]) == (
        4,
        99,
        "modify",
    )
    assert GITHUB_TOKEN not in repr(events)


def test_allows_are_findings_only_when_asked(
    recorded: tuple[Path, str, list[dict[str, Any]]],
) -> None:
    db, sid, results = recorded
    events = export(db, sid, "--allow-findings")
    findings = [e for e in events if e["class_uid"] == 2004]
    assert len(findings) == len(results)
    allow = next(f for f in findings if f["unmapped"]["acs"]["decision"] == "allow")
    assert (allow["action_id"], allow["disposition_id"], allow["is_alert"]) == (1, 1, False)
    assert allow["severity_id"] == 1
    assert all(not schema_errors(e) for e in findings)


def test_a_live_decision_carries_policies_reasoning_and_provenance(tmp_path: Path) -> None:
    from agbom.guardian.decision import Decision, PolicyReference
    from agbom.protocol import Disposition
    from agbom.telemetry.ocsf import Step, step_events
    from agbom.telemetry.record import DecisionRecord

    params = request(
        "steps/toolCallRequest",
        {
            "tool": {"name": "deploy"},
            "arguments": {"to": {"value": "prod", "provenance": {"origin": "user_input"}}},
        },
        session_id="s-1",
    )["params"]
    decision = Decision(
        disposition=Disposition.ASK,
        reasoning="deploys need a human",
        reason_codes=("approval_required",),
        policy_references=(
            PolicyReference(policy_id="team", rule_id="ASK-DEPLOY", policy_version="3"),
            PolicyReference(policy_id="default", rule_id="AGB-1"),
        ),
    )
    record = DecisionRecord.of(
        "steps/toolCallRequest", params, decision, "c" * 64, 1.5, 1_790_000_000.0
    )
    step_event, finding = step_events(Step.from_record(record))
    assert not schema_errors(step_event) and not schema_errors(finding)
    assert step_event["process"]["name"] == "deploy"
    assert finding["evidences"][0]["api"] == {"operation": "deploy"}
    assert finding["finding_info"]["desc"] == "deploys need a human"
    assert finding["authorizations"] == [
        {"policy": {"uid": "team", "version": "3"}},
        {"policy": {"uid": "default"}},
    ]
    assert (finding["action_id"], finding["disposition_id"], finding["is_alert"]) == (99, 99, True)
    assert finding["action"] == finding["disposition"] == "ask"
    assert finding["enrichments"][0]["name"] == "acs_provenance_origin"
    assert finding["enrichments"][0]["data"] == {"origin": ["user_input"]}
    assert finding["time"] == 1_790_000_000_000


def test_format_errors_are_one_line(recorded: tuple[Path, str, list[dict[str, Any]]]) -> None:
    db, sid, _ = recorded
    bad = run_cli("audit", "export", sid, "--db", str(db), "--format", "cef")
    assert bad.returncode == 2 and b"--format" in bad.stderr and b"Traceback" not in bad.stderr
    lone = run_cli("audit", "export", sid, "--db", str(db), "--allow-findings")
    assert lone.returncode == 2 and b"--allow-findings" in lone.stderr
    unknown = run_cli("audit", "export", "nope", "--db", str(db), "--format", "ocsf")
    assert unknown.returncode == 1
    assert unknown.stderr.decode().strip().splitlines() == [
        f"agbom: error: no audit chain for session nope in {db}"
    ]
