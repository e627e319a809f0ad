"""OpenTelemetry export: a served Guardian sends its decisions as spans over OTLP/HTTP to a
real receiver, which decodes the protobuf; names and attributes are checked against the ACS
v0.1.0 mapping (trace/otel-mapping.json). And the ServerHello's acs-trace profile."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.guardian import GuardianConfig, build_guardian
from tests.guardian.acs import SAMPLE_AGBOM, digest, hello, new_session_id, request
from tests.telemetry.otlp_receiver import Receiver, mapping
from tests.transports.served import Served, free_port, post

GITHUB_TOKEN = "ghp_" + "Z" * 36


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


def steps(sid: str) -> list[dict[str, Any]]:
    """One request for most steps the mapping names, with every source field present."""
    skill = {"skill_id": "deployer", "digest": digest()}
    return [
        request("steps/sessionStart", {"policy_mode": "enforce"}, session_id=sid),
        request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid),
        request("steps/agentTrigger", {"trigger_type": "scheduled"}, session_id=sid),
        request(
            "steps/turnStart", {"turn_id": "t1", "triggered_by": "user_message"}, session_id=sid
        ),
        request(
            "steps/userMessage",
            {
                "content": [
                    {"type": "text", "value": "read it", "provenance": {"origin": "user_input"}},
                    {
                        "type": "file",
                        "value": "notes.txt",
                        "provenance": {"origin": "external", "source_id": "drive:1"},
                    },
                ]
            },
            session_id=sid,
        ),
        request(
            "steps/toolCallRequest",
            {
                "tool": {"name": "read_file", "provider": "local", "version": "1.0.0"},
                "capability": "fs.read",
                "operation": "read",
                "arguments": {"path": {"value": "/tmp/x"}},
            },
            session_id=sid,
        ),
        request(
            "steps/toolCallResult",
            {
                "tool": {"name": "read_file"},
                "exit_status": "success",
                "outputs": [{"value": "ok"}],
                "duration_ms": 12,
            },
            session_id=sid,
        ),
        request(
            "steps/knowledgeRetrieval",
            {
                "query": "docs",
                "source": {"name": "wiki", "type": "vector_db"},
                "results": [{"value": "a"}, {"value": "b"}],
            },
            session_id=sid,
        ),
        request(
            "steps/memoryStore",
            {
                "memory_store": {"name": "prefs"},
                "operation": "create",
                "content": {"value": "likes tea"},
            },
            session_id=sid,
        ),
        request(
            "steps/skillLoad",
            {
                **skill,
                "load_trigger": "user",
                "load_path": [{"skill_id": "deployer"}],
            },
            session_id=sid,
        ),
        request("steps/agentResponse", {"content": f"your key is {GITHUB_TOKEN}"}, session_id=sid),
        request("steps/turnEnd", {"turn_id": "t1", "outcome": "completed"}, session_id=sid),
        request("steps/sessionEnd", {"reason": "completed"}, session_id=sid),
    ]


def test_decisions_reach_a_real_receiver_as_the_mapping_names_them(
    tmp_path: Path, receiver: Receiver
) -> None:
    otel = mapping("otel-mapping.json")["properties"]
    rows = otel["step_to_span"]["default"]
    event = otel["decision_event"]["properties"]
    server = Served(
        db=tmp_path / "store.db",
        log=tmp_path / "serve.log",
        extra=["--otlp-endpoint", receiver.url],
    ).start()
    sid = new_session_id()
    try:
        server_hello = post(
            server.url, hello(sid, profiles_supported=["acs-core", "acs-trace", "acs-crypto"])
        )["result"]
        sent = steps(sid)
        answers = [post(server.url, r) for r in sent]
    finally:
        server.stop()
    assert server_hello["profiles_accepted"] == ["acs-core", "acs-trace"]
    assert server_hello["trace_emission"] == {"otel_enabled": True, "ocsf_enabled": False}
    results = [a["result"] for a in answers]
    spans = receiver.wait_for(len(sent))
    assert len(spans) == len(sent)  # the handshake is no decision: no span
    assert receiver.content_types == {"application/x-protobuf"}
    by_request = {span.attributes["acs.request_id"]: span for span in spans}
    for req, result in zip(sent, results, strict=True):
        method = req["method"]
        span = by_request[req["params"]["request_id"]]
        row = rows[method]
        assert span.name == row["span_name"], method
        missing = set(row["required_attributes"]) - set(span.attributes)
        assert not missing, (method, missing)
        known = {
            "acs.request_id",
            "acs.session.id",
            "acs.provenance.origin",
            "acs.provenance.source_id",
            *row["required_attributes"],
            *row.get("optional_attributes", []),
        }
        assert set(span.attributes) <= known, (method, set(span.attributes) - known)
        assert span.attributes["acs.session.id"] == sid
        assert span.resource["service.name"] == "agbom-guardian"
        assert span.start_ns <= span.end_ns
        [(name, attributes)] = span.events
        assert name == event["event_name"]["const"]
        assert set(event["required_attributes"]["default"]) <= set(attributes)
        assert attributes["acs.decision"] == result["decision"]
        assert attributes["acs.evaluator"] == result["metadata"]["evaluator"]
        assert attributes["acs.evaluator_version"] == result["metadata"]["evaluator_version"]
        assert attributes["acs.chain_hash"] == result["chain_hash"]
        assert attributes.get("acs.reason_codes", []) == result.get("reason_codes", [])
        if "reasoning" in result:
            assert attributes["acs.reasoning"] == result["reasoning"]
        references = result.get("policy_references", [])
        if references:  # parallel arrays, "" where a reference lacks the field
            assert attributes["acs.policy.ids"] == [r["policy_id"] for r in references]
            assert attributes["acs.policy.rule_ids"] == [r["rule_id"] for r in references]
            assert attributes["acs.policy.versions"] == [
                r.get("policy_version", "") for r in references
            ]
        else:
            assert "acs.policy.ids" not in attributes
    values = {span.name: span.attributes for span in spans}
    assert values["gen_ai.tool.call"]["gen_ai.tool.name"] == "read_file"
    assert values["gen_ai.tool.call"]["acs.capability"] == ["fs.read"]
    assert values["gen_ai.tool.result"]["acs.exit_status"] == "success"
    assert values["gen_ai.tool.result"]["acs.duration_ms"] == 12
    assert values["acs.knowledge.retrieval"]["acs.results.count"] == 2
    assert values["acs.message.user"]["acs.content.types"] == ["text", "file"]
    assert values["acs.message.user"]["acs.provenance.origin"] == ["user_input", "external"]
    assert values["acs.message.user"]["acs.provenance.source_id"] == ["", "drive:1"]
    assert values["acs.agbom"]["acs.agbom.component_count"] == 2
    assert values["acs.agbom"]["acs.agbom.format"] == "canonical"
    assert values["acs.skill.load"]["acs.skill.load_path"] == ["deployer"]
    assert values["acs.session.end"]["acs.session.reason"] == "completed"
    # The skill load is denied (no approval): its reason codes and policy refs ride along.
    load_event = dict(by_request[sent[9]["params"]["request_id"]].events)["acs.decision"]
    assert load_event["acs.decision"] == "deny" and load_event["acs.reason_codes"]
    assert GITHUB_TOKEN not in repr(spans)


def test_an_unreachable_collector_changes_no_decision(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    server = Served(
        db=tmp_path / "store.db", log=tmp_path / "serve.log", extra=["--otlp-endpoint", dead]
    ).start()
    sid = new_session_id()
    try:
        assert "result" in post(server.url, hello(sid))
        answers = [post(server.url, r) for r in steps(sid)]
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200
    finally:
        server.stop()
    decisions = [a["result"]["decision"] for a in answers]
    assert decisions.count("allow") >= 10 and "error" not in repr(answers)


def test_profiles_accepted_follow_the_offer_and_the_configuration(tmp_path: Path) -> None:
    untraced = build_guardian(tmp_path / "a.db")
    sid = new_session_id()
    offered = ["acs-trace", "acs-core", "acs-audit"]
    answer = untraced.handle(hello(sid, profiles_supported=offered))["result"]
    assert answer["profiles_accepted"] == ["acs-core", "acs-audit"]  # no trace emitted
    assert "trace_emission" not in answer
    traced = build_guardian(
        tmp_path / "b.db", config=GuardianConfig(otlp_endpoint=f"http://127.0.0.1:{free_port()}")
    )
    try:
        answer = traced.handle(hello(new_session_id(), profiles_supported=offered))["result"]
        assert answer["profiles_accepted"] == ["acs-trace", "acs-core", "acs-audit"]
        assert answer["trace_emission"]["otel_enabled"] is True
        # Only what the client offered: acs-trace is not pressed on a client without it.
        answer = traced.handle(hello(new_session_id(), profiles_supported=["acs-core"]))["result"]
        assert answer["profiles_accepted"] == ["acs-core"]
        assert traced.handle(hello(new_session_id()))["result"]["profiles_accepted"] == []
    finally:
        assert traced.observer is not None
        traced.observer.close(1.0)  # type: ignore[attr-defined]


def test_serve_refuses_a_bad_otlp_endpoint(tmp_path: Path) -> None:
    from tests.transports.served import run_cli

    for bad in ("ftp://collector:21", "not a url", "http://:4318", "http://h:4318/?k=v"):
        done = run_cli("serve", "--db", str(tmp_path / "s.db"), "--otlp-endpoint", bad)
        assert done.returncode == 2, (bad, done.stderr)
        assert b"--otlp-endpoint" in done.stderr and b"Traceback" not in done.stderr


def test_credentials_never_reach_span_attributes() -> None:
    from agbom.guardian.decision import Decision
    from agbom.telemetry.otel import decision_attributes, span_attributes
    from agbom.telemetry.record import DecisionRecord

    params = request(
        "steps/toolCallRequest",
        {
            "tool": {"name": f"run {GITHUB_TOKEN}", "provider": "local"},
            "capability": ["fs.read", GITHUB_TOKEN],
            "arguments": {
                "q": {
                    "value": "x",
                    "provenance": {"origin": "tool_output", "source_id": GITHUB_TOKEN},
                }
            },
        },
        session_id="s-1",
    )["params"]
    decision = Decision.allow(reasoning=f"saw {GITHUB_TOKEN} " + "x" * 500)
    record = DecisionRecord.of("steps/toolCallRequest", params, decision, "d" * 64, 0.3, 1.0)
    assert record.clean is False
    spans = span_attributes(record)
    events = decision_attributes(record)
    assert GITHUB_TOKEN not in repr(spans) + repr(events)
    assert spans["gen_ai.tool.name"] == "<redacted>"
    assert spans["acs.capability"] == ["fs.read", "<redacted>"]
    assert spans["acs.provenance.source_id"] == ["<redacted>"]
    assert spans["acs.tool.provider"] == "local"
    assert events["acs.reasoning"] == "<redacted>"
    # A clean record is only clipped: a hostile megabyte string is cut, never copied whole.
    long = request("steps/toolCallRequest", {"tool": {"name": "n" * 100_000}}, session_id="s")
    clean = DecisionRecord.of("steps/toolCallRequest", long["params"], decision, "d" * 64, 0, 1)
    assert len(str(span_attributes(clean)["gen_ai.tool.name"])) <= 4097


def test_spans_a_collector_refuses_are_counted_as_dropped() -> None:
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from agbom.guardian.decision import Decision
    from agbom.telemetry.otlp import OtlpSpans

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(400)  # not retryable: the batch is refused at once
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sink = OtlpSpans(f"http://127.0.0.1:{server.server_address[1]}")
        sink.start()
        params = request("steps/userMessage", {"content": "hi"}, session_id="s")["params"]
        for _ in range(5):
            sink.offer(("steps/userMessage", params, Decision.allow(), "e" * 64, 0.1, time.time()))
        sink.close()
    finally:
        server.shutdown()
        server.server_close()
    stats = sink.stats()
    assert stats["spans_exported"] == 0
    assert stats["dropped"] == stats["spans_failed"] == 5
