"""How ``agbom serve`` writes answers and keeps its deadlines (issue 16 section 5).

The front joins the bytes of one loop turn into one send per connection, and one timer watches
every request's deadline. Both are checked here for what a client can see: every answer whole
and in order, nothing lost when the connection closes, every stuck request answered.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from tests.guardian.acs import request
from tests.transports.served import Served, open_session, post

pytestmark = pytest.mark.network

TOOL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "x"}}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("writes")
    server = Served(db=folder / "s.db", log=folder / "serve.log").start()
    yield server
    server.stop()


def _http(port: int, body: bytes, *, close: bool = False) -> bytes:
    connection = b"Connection: close\r\n" if close else b""
    return (
        b"POST /acs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"%sContent-Length: %d\r\n\r\n%s" % (port, connection, len(body), body)
    )


def _responses(data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The complete ``(head, body)`` responses at the start of ``data``, and what is left."""
    out = []
    while True:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            return out, data
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
        length = int(fields[b"content-length"])
        if len(rest) < length:
            return out, data
        out.append((head, rest[:length]))
        data = rest[length:]


def _read(sock: socket.socket, count: int) -> list[tuple[bytes, bytes]]:
    data = b""
    answers: list[tuple[bytes, bytes]] = []
    while len(answers) < count:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {len(answers)} of {count} answers"
        complete, data = _responses(data + chunk)
        answers += complete
    assert data == b""
    return answers


def test_requests_sent_in_one_write_are_answered_whole_and_in_order(served: Served) -> None:
    sid = open_session(served.url)
    sent = [request("steps/toolCallRequest", TOOL, session_id=sid) for _ in range(5)]
    with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
        sock.sendall(b"".join(_http(served.port, orjson.dumps(item)) for item in sent))
        answers = _read(sock, len(sent))
        # The connection stays usable after a burst.
        again = request("steps/toolCallRequest", TOOL, session_id=sid)
        sock.sendall(_http(served.port, orjson.dumps(again)))
        answers += _read(sock, 1)
    for (head, body), item in zip(answers, [*sent, again], strict=True):
        assert head.startswith(b"HTTP/1.1 200 ")
        reply = orjson.loads(body)
        assert reply["id"] == item["id"]
        assert reply["result"]["decision"] == "allow"


def test_a_closing_connection_gets_its_whole_answer_first(served: Served) -> None:
    sid = open_session(served.url)
    item = request("steps/toolCallRequest", TOOL, session_id=sid)
    with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
        sock.sendall(_http(served.port, orjson.dumps(item), close=True))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    answers, rest = _responses(data)
    assert rest == b""
    ((head, body),) = answers
    assert b"connection: close" in head.lower()
    assert orjson.loads(body)["result"]["decision"] == "allow"


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_every_request_held_by_a_stuck_decision_process_is_answered(tmp_path: Path) -> None:
    served = Served(
        db=tmp_path / "s.db", log=tmp_path / "serve.log", extra=["--decision-timeout", "1"]
    ).start()
    try:
        sid = open_session(served.url)
        (worker,) = _children(served.proc.pid)  # type: ignore[union-attr]
        os.kill(worker, signal.SIGSTOP)
        with ThreadPoolExecutor(4) as pool:
            held = list(
                pool.map(
                    lambda _: post(
                        served.url, request("steps/toolCallRequest", TOOL, session_id=sid)
                    ),
                    range(4),
                )
            )
        assert [r["error"]["data"]["reason"] for r in held] == ["guardian_unavailable"] * 4
        # The replacement answers, and its requests are watched by the deadline timer again.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            reply = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
            if "result" in reply:
                break
            time.sleep(0.2)
        assert reply["result"]["decision"] == "allow"
        (replacement,) = _children(served.proc.pid)  # type: ignore[union-attr]
        os.kill(replacement, signal.SIGSTOP)
        stuck = post(served.url, request("steps/toolCallRequest", TOOL, session_id=sid))
        assert stuck["error"]["data"]["reason"] == "guardian_unavailable"
    finally:
        served.stop()
