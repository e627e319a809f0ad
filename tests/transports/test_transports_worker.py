"""The decision process behind ``agbom serve``: its frames, its failures, its lifetime."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from agbom.guardian import GuardianConfig, build_guardian
from agbom.protocol import verify_chain
from agbom.store import SqliteStore
from agbom.transports.decision_loop import DecisionServer
from agbom.transports.decision_wire import (
    CONTROL_TAG,
    KIND_ACS,
    KIND_HOOK,
    META,
    READY,
    REPLY,
    REQUEST,
    WorkerSpec,
    decode_hook_reply,
)
from agbom.transports.interface import Limits, TransportError
from tests.guardian.acs import hello, new_session_id, request
from tests.transports.served import Served, open_session, post

TOOL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "a"}}}


def frame(tag: int, kind: int, payload: bytes) -> bytes:
    return REQUEST.pack(len(payload), tag, kind) + payload


def read_replies(sock: socket.socket, count: int) -> dict[int, bytes]:
    buffer, replies = b"", {}
    while len(replies) < count:
        chunk = sock.recv(1 << 16)
        assert chunk, "the decision process closed the socket"
        buffer += chunk
        while len(buffer) >= REPLY.size:
            length, tag = REPLY.unpack_from(buffer)
            if len(buffer) < REPLY.size + length:
                break
            replies[tag] = buffer[REPLY.size : REPLY.size + length]
            buffer = buffer[REPLY.size + length :]
    return replies


@pytest.fixture
def decision_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, Path]]:
    """A DecisionServer on one end of a real socket pair, served from a thread."""
    import threading

    db = tmp_path / "store.db"
    guardian = build_guardian(db)
    ours, theirs = socket.socketpair()
    server = DecisionServer(guardian, Limits(max_body_bytes=4096))
    thread = threading.Thread(target=server.serve, args=(theirs,), daemon=True)
    thread.start()
    assert read_replies(ours, 1) == {CONTROL_TAG: READY}
    yield ours, db
    ours.close()
    thread.join(10)
    theirs.close()
    guardian.store.close()


def test_frames_split_anywhere_are_answered_after_their_entries_commit(
    decision_socket: tuple[socket.socket, Path],
) -> None:
    sock, db = decision_socket
    sid = new_session_id()
    opening = frame(1, KIND_ACS, orjson.dumps(hello(sid))) + frame(
        2, KIND_ACS, orjson.dumps(request("steps/sessionStart", {}, session_id=sid))
    )
    sock.sendall(opening)
    assert set(read_replies(sock, 2)) == {1, 2}
    steps = b"".join(
        frame(
            10 + i, KIND_ACS, orjson.dumps(request("steps/toolCallRequest", TOOL, session_id=sid))
        )
        for i in range(6)
    )
    for cut in range(0, len(steps), 37):  # arrives in pieces that split headers and bodies
        sock.sendall(steps[cut : cut + 37])
        time.sleep(0.001)
    replies = read_replies(sock, 6)
    hashes = [orjson.loads(replies[10 + i])["result"]["chain_hash"] for i in range(6)]
    with SqliteStore.open(db) as store:
        entries = store.chain_entries(sid)
    assert [e["entry_hash"] for e in entries][-6:] == hashes
    assert verify_chain([{k: v for k, v in e.items() if k != "seq"} for e in entries]) is None


def test_a_batch_and_bad_json_in_frames(decision_socket: tuple[socket.socket, Path]) -> None:
    sock, _ = decision_socket
    sid = new_session_id()
    batch = [hello(sid), request("steps/sessionStart", {}, session_id=sid)]
    sock.sendall(frame(1, KIND_ACS, orjson.dumps(batch)) + frame(2, KIND_ACS, b"{nope"))
    replies = read_replies(sock, 2)
    assert [r["id"] for r in orjson.loads(replies[1])] == [m["id"] for m in batch]
    assert orjson.loads(replies[2])["error"]["code"] == -32700


def test_a_hook_event_is_decided_in_the_decision_process(
    decision_socket: tuple[socket.socket, Path],
) -> None:
    sock, db = decision_socket
    event = {
        "session_id": "hook-session",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    meta = orjson.dumps({"runtime": "claude-code", "env": {}, "fail_open": False})
    sock.sendall(frame(5, KIND_HOOK, META.pack(len(meta)) + meta + orjson.dumps(event)))
    reply = decode_hook_reply(read_replies(sock, 1)[5])
    assert reply.http_status == 200 and reply.exit_code == 0, reply  # `ls` is allowed
    # The decision is in the session's chain: the hook went through the Guardian.
    with SqliteStore.open(db) as store:
        steps = [e["step_type"] for e in store.chain_entries("hook-session")]
    assert steps[-1] == "steps/toolCallRequest"


def test_an_oversized_frame_closes_the_link(decision_socket: tuple[socket.socket, Path]) -> None:
    sock, _ = decision_socket
    sock.sendall(REQUEST.pack(50 << 20, 9, KIND_ACS))
    sock.settimeout(10)
    assert sock.recv(100) == b""  # the decision process stopped reading and closed


def test_spec_round_trip_keeps_the_guardian_settings(tmp_path: Path) -> None:
    config = GuardianConfig(strict_inventory=True, skew_window_ms=1234)
    spec = WorkerSpec.of(
        tmp_path / "s.db", None, mode="observe", secret_file=None, config=config, limits=Limits()
    )
    again = WorkerSpec.from_json(spec.to_json())
    assert again == spec
    assert again.guardian_config() == config
    with pytest.raises(TransportError):
        DecisionServer(build_guardian(tmp_path / "s.db"), Limits()).answer_frames(
            bytearray(REQUEST.pack(1, 1, 99) + b"x")
        )


# -- through `agbom serve` -------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie is gone for our purposes: it no longer runs
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_killed_decision_process_fails_closed_then_comes_back(tmp_path: Path) -> None:
    served = Served(db=tmp_path / "s.db", log=tmp_path / "serve.log").start()
    try:
        sid = open_session(served.url)
        first = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
        assert first["result"]["decision"] == "allow"
        (worker,) = _children(served.proc.pid)
        os.kill(worker, signal.SIGKILL)
        answers, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline:
            reply = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
            answers.append(reply)
            if "result" in reply:
                break
            time.sleep(0.05)
        failures = [a for a in answers if "error" in a]
        # Never an allow without a Guardian: the gap is answered with an error...
        assert failures and all(
            a["error"]["data"]["reason"] == "guardian_unavailable" for a in failures
        )
        # ...and the restarted process continues the same session's chain.
        assert answers[-1]["result"]["decision"] == "allow"
        assert _children(served.proc.pid) != [worker]
        assert httpx.get(f"{served.url}/healthz", timeout=5).status_code == 200
    finally:
        served.stop()
    with SqliteStore.open(tmp_path / "s.db") as store:
        entries = store.chain_entries(sid)
    assert entries[-1]["entry_hash"] == answers[-1]["result"]["chain_hash"]
    assert verify_chain([{k: v for k, v in e.items() if k != "seq"} for e in entries]) is None
    assert "restarting" in served.logs()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("how", ["terminate", "kill"])
def test_the_decision_process_never_outlives_the_server(tmp_path: Path, how: str) -> None:
    served = Served(db=tmp_path / "s.db", log=tmp_path / "serve.log").start()
    (worker,) = _children(served.proc.pid)
    if how == "kill":
        served.kill()  # SIGKILL: the socket closes, the decision process sees it and exits
    else:
        served.stop()
    assert _gone(worker)


def test_single_process_mode_serves_a_full_session(tmp_path: Path) -> None:
    served = Served(db=tmp_path / "s.db", log=tmp_path / "serve.log", extra=["--single-process"])
    served.start()
    try:
        assert _children(served.proc.pid) == [] or not Path("/proc").exists()
        sid = open_session(served.url)
        reply = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
        assert reply["result"]["decision"] == "allow"
        end = post(served.url, request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))
        assert end["result"]["decision"] == "allow"
    finally:
        served.stop()


def test_a_hook_event_that_cannot_be_decided_blocks(
    decision_socket: tuple[socket.socket, Path],
) -> None:
    sock, _ = decision_socket
    meta = orjson.dumps({"runtime": "no-such-runtime", "env": {}, "fail_open": True})
    sock.sendall(frame(7, KIND_HOOK, META.pack(len(meta)) + meta + b"{}"))
    reply = decode_hook_reply(read_replies(sock, 1)[7])
    assert reply.http_status == 500 and reply.exit_code == 2


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_stuck_decision_process_is_answered_for_then_replaced(tmp_path: Path) -> None:
    served = Served(
        db=tmp_path / "s.db", log=tmp_path / "serve.log", extra=["--decision-timeout", "1"]
    ).start()
    try:
        sid = open_session(served.url)
        (worker,) = _children(served.proc.pid)
        os.kill(worker, signal.SIGSTOP)  # alive, holding its socket, answering nothing
        started = time.monotonic()
        stuck = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
        assert stuck["error"]["data"]["reason"] == "guardian_unavailable"
        assert 0.9 < time.monotonic() - started < 10
        assert _gone(worker)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            reply = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
            if "result" in reply:
                break
            time.sleep(0.1)
        assert reply["result"]["decision"] == "allow"
    finally:
        served.stop()
    assert "answered nothing for 1 s" in served.logs()
