"""Checks the HTTP front runs ahead of the decision process (agbom/guardian/precheck.py).

The front of ``agbom serve`` validates a hot-path step and hashes it before forwarding it; the
decision process then skips those checks. These tests hold that the answers and the chain are
what they would be without it: the stored request hashes are recomputed here with the
``rfc8785`` library and hashlib, and every refusal still reads as before.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import rfc8785

from agbom.guardian import build_guardian
from agbom.guardian.precheck import Prechecked, precheck, precheck_body, split_prechecked
from agbom.protocol import verify_chain
from agbom.store import SqliteStore
from agbom.transports.decision_wire import KIND_ACS_CHECKED
from tests.guardian.acs import hello, new_session_id, request
from tests.transports.served import Served, open_session, post
from tests.transports.test_transports_worker import (  # noqa: F401 - a fixture
    TOOL,
    decision_socket,
    frame,
    read_replies,
)


def independent_request_hash(params: dict) -> str:
    unsigned = {key: value for key, value in params.items() if key != "signature"}
    return hashlib.sha256(rfc8785.dumps(unsigned)).hexdigest()


def test_what_the_front_checks_ahead_and_what_it_leaves() -> None:
    sid = new_session_id()
    step = request("steps/toolCallRequest", TOOL, session_id=sid)
    checked = precheck(step, max_json_depth=64)
    assert checked == Prechecked(independent_request_hash(step["params"]))
    body = orjson.dumps(step)
    digest = precheck_body(body, max_json_depth=64)
    assert digest == checked.request_hash.encode()
    assert split_prechecked(digest + body) == (checked, body)
    left = [
        request("steps/toolCallRequest", {"arguments": {}}, session_id=sid),  # no tool
        {**step, "jsonrpc": "1.0"},  # envelope
        request("steps/skillLoad", {"skill_id": "s"}, session_id=sid),  # reads the store
        request("agbom/snapshot", {}, session_id=sid),
        hello(sid),
        [step],  # a batch
        request("steps/userMessage", {"content": [[[["deep"]]]]}, session_id=sid),
    ]
    assert [precheck(message, max_json_depth=4) for message in left] == [None] * len(left)
    assert precheck_body(b"{not json", max_json_depth=64) is None
    assert precheck_body(b" " * (64 * 1024 + 1), max_json_depth=64) is None
    assert split_prechecked(b"z" * 64 + body) is None
    assert split_prechecked(b"ab") is None


def test_served_answers_and_chain_are_as_without_the_front_checks(tmp_path: Path) -> None:
    served = Served(tmp_path / "store.db", tmp_path / "serve.log").start()
    try:
        sid = open_session(served.url)
        sent = [
            request("steps/toolCallRequest", TOOL, session_id=sid, turn_id="t1"),
            request("steps/userMessage", {"content": "héllo ✓"}, session_id=sid),
            request("steps/toolCallRequest", TOOL, session_id=sid, nonce="n" * 20),
        ]
        for message in sent:
            reply = post(served.url, message)
            assert reply["result"]["decision"] == "allow", reply
        # A payload the front finds invalid goes through as it came and is refused as before;
        # the refused id is remembered, so sending it again is a replay.
        bad = request("steps/toolCallRequest", {"tool": {}}, session_id=sid)
        refused = post(served.url, bad)
        assert refused["error"]["code"] == -32602, refused
        assert post(served.url, bad)["error"]["code"] == -32005
        replayed = post(served.url, sent[0])
        assert replayed["error"]["code"] == -32005
        assert replayed["error"]["data"]["reason"] == "duplicate_request_id"
    finally:
        served.stop()
    with SqliteStore.open(tmp_path / "store.db") as store:
        entries = store.chain_entries(sid)
    assert verify_chain([{k: v for k, v in e.items() if k != "seq"} for e in entries]) is None
    by_step = {entry["step_id"]: entry for entry in entries}
    for message in sent:
        params = message["params"]
        assert by_step[params["request_id"]]["request_hash"] == independent_request_hash(params)


def test_a_checked_frame_decides_with_the_hash_it_carries(decision_socket) -> None:  # noqa: F811
    sock, db = decision_socket
    sid = new_session_id()
    for tag, message in enumerate([hello(sid), request("steps/sessionStart", {}, session_id=sid)]):
        sock.sendall(frame(tag, 1, orjson.dumps(message)))
        read_replies(sock, 1)
    step = request("steps/toolCallRequest", TOOL, session_id=sid)
    body = orjson.dumps(step)
    digest = precheck_body(body, max_json_depth=64)
    assert digest is not None
    sock.sendall(frame(7, KIND_ACS_CHECKED, digest + body))
    reply = orjson.loads(read_replies(sock, 1)[7])
    assert reply["result"]["decision"] == "allow", reply
    with SqliteStore.open(db) as store:
        [entry] = [
            e for e in store.chain_entries(sid) if e["step_id"] == step["params"]["request_id"]
        ]
    assert entry["request_hash"] == independent_request_hash(step["params"])


def test_a_checked_frame_without_a_hash_ends_the_link(decision_socket) -> None:  # noqa: F811
    sock, _ = decision_socket
    sock.sendall(frame(1, KIND_ACS_CHECKED, b"not a hash"))
    sock.settimeout(10)
    assert sock.recv(1024) == b""  # the decision process closed the socket


def test_a_prechecked_decision_is_the_decision_without_it(tmp_path: Path) -> None:
    # The same requests through two Guardians, one told what the front checked: the same
    # answers and the same request hashes in the chain.
    plain = build_guardian(tmp_path / "plain.db")
    told = build_guardian(tmp_path / "told.db")
    sid = new_session_id()
    steps = [
        hello(sid),
        request("steps/sessionStart", {}, session_id=sid),
        request("steps/toolCallRequest", TOOL, session_id=sid),
        request("steps/userMessage", {"content": "ünïcode"}, session_id=sid, nonce="m" * 20),
        request("steps/toolCallRequest", {"tool": {}}, session_id=sid),  # invalid: not checked
    ]
    for message in steps:
        checked = precheck(message, max_json_depth=64)
        ours = told.submit(message, lambda response: None, checked=checked)
        theirs = plain.submit(message, lambda response: None)
        assert ours is not None and theirs is not None
        assert ("error" in ours) == ("error" in theirs)
        if "error" in ours:
            assert ours["error"]["code"] == theirs["error"]["code"] == -32602
        else:
            assert ours["result"].get("decision") == theirs["result"].get("decision")
    hashes = [
        [e["request_hash"] for e in guardian.store.chain_entries(sid)] for guardian in (plain, told)
    ]
    assert hashes[0] == hashes[1] and len(hashes[0]) == 3
    plain.store.close()
    told.store.close()


def test_a_precheck_handed_with_a_request_without_params_is_not_applied(tmp_path: Path) -> None:
    guardian = build_guardian(tmp_path / "store.db")
    checked = Prechecked("0" * 64)
    for broken in ({"jsonrpc": "2.0", "method": "steps/toolCallRequest", "id": 1}, [1, 2]):
        answer = guardian.submit(broken, lambda response: None, checked=checked)
        assert answer is not None and answer["error"]["code"] == -32600, answer
    guardian.store.close()
