"""Big snapshots are prepared beside the decision loop: other sessions are decided meanwhile,
and the snapshot's own session keeps its order. Against a real ``agbom serve``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.guardian.acs import request
from tests.transports.served import Served, open_session, post, run_cli

pytestmark = pytest.mark.network

COMPONENTS = 6000  # about 1.2 MB of JSON: seconds of validation, modelling and rules


def big_inventory(tag: str) -> dict[str, Any]:
    components = [
        {
            "id": f"{tag}-tool-{i}",
            "type": "tool",
            "name": f"{tag}-tool-{i}",
            "version": "1.0.0",
            "provider": "local",
            "capability": "fs.read",
            "registration_provenance": {"origin": "system"},
        }
        for i in range(COMPONENTS)
    ]
    return {"agent": {"id": "agent-1"}, "components": components}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("bulk")
    served = Served(
        db=folder / "store.db",
        log=folder / "serve.log",
        extra=["--max-body-bytes", str(8 * 1024 * 1024), "--strict"],
    ).start()
    yield served
    served.stop()


def call(sid: str, tool: str) -> dict[str, Any]:
    return request(
        "steps/toolCallRequest", {"tool": {"name": tool}, "arguments": {}}, session_id=sid
    )


def test_a_step_sent_after_its_sessions_snapshot_is_decided_after_it(server: Served) -> None:
    sid = open_session(server.url)
    snapshot = orjson.dumps(
        request("agbom/snapshot", {"agbom": big_inventory("a")}, session_id=sid)
    )
    answers: dict[str, Any] = {}

    def send_snapshot() -> None:
        answers["snapshot"] = post(server.url, snapshot)

    sender = threading.Thread(target=send_snapshot)
    sender.start()
    time.sleep(0.2)  # the snapshot is on its way; the order holds whatever the timing
    # The tool exists only in the snapshot: under --strict it is allowed only if the snapshot
    # was decided first.
    answers["call"] = post(server.url, call(sid, "a-tool-17"))
    sender.join(120)
    assert answers["snapshot"]["result"]["decision"] == "allow", answers["snapshot"]
    assert answers["call"]["result"]["decision"] == "allow", answers["call"]
    exported = run_cli("audit", "export", sid, "--db", str(server.db))
    steps = [e["step_type"] for e in orjson.loads(exported.stdout)]
    assert steps == ["steps/sessionStart", "agbom/snapshot", "steps/toolCallRequest"]


def test_other_sessions_are_decided_while_a_big_snapshot_is_prepared(server: Served) -> None:
    big_sid, small_sid = open_session(server.url), open_session(server.url)
    snapshot = orjson.dumps(
        request("agbom/snapshot", {"agbom": big_inventory("b")}, session_id=big_sid)
    )
    done = threading.Event()
    finished_at: dict[str, float] = {}

    def send_snapshot() -> None:
        post(server.url, snapshot)
        finished_at["snapshot"] = time.monotonic()
        done.set()

    sender = threading.Thread(target=send_snapshot)
    sender.start()
    answered_before = 0
    with httpx.Client() as client:
        for _ in range(2000):  # bounded in count, and by the snapshot's end
            if done.is_set():
                break
            answer = post(server.url, call(small_sid, "ls"), client=client)
            assert "result" in answer, answer
            if not done.is_set():
                answered_before += 1
    sender.join(120)
    assert done.is_set()
    # Small decisions went on while the snapshot was being prepared (before, every one of them
    # waited behind it).
    assert answered_before >= 3, answered_before


def test_a_big_snapshot_that_fails_its_schema_is_refused(server: Served) -> None:
    sid = open_session(server.url)
    inventory = big_inventory("c")
    inventory["components"][4000]["type"] = "not-a-type"
    answer = post(server.url, request("agbom/snapshot", {"agbom": inventory}, session_id=sid))
    assert answer["error"]["code"] == -32602
    # The refused snapshot left the session's inventory as it was: the tool is unknown.
    denied = post(server.url, call(sid, "c-tool-1"))
    assert denied["result"]["decision"] == "deny"
