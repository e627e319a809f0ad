"""Long polls of the OPA bundle never take every connection (issue 38 item 4).

A waiting long poll is a complete request, which the connection cap never pushes out. At
most a quarter of the cap may wait; a poll past that is answered at once (200 with the
bundle as ``application/gzip``, which moves OPA's downloader to periodic polling instead
of asking again at once), so decisions always find a connection.

Through a real ``agbom serve`` whose cap is 64 (``--max-connections 64``, or the file
descriptor limit lowering the default), 64 polls (``If-None-Match`` + ``Prefer: wait=60``)
are sent on 64 raw sockets; then ``/healthz`` and an ACS hello must be answered within a
bound far under the polls' 60 s. On the old code every connection waited, and both were
refused.
"""

from __future__ import annotations

import resource
import select
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from agbom.transports.bundle import BUNDLE_PATH, LONG_POLL_MEDIA_TYPE
from agbom.transports.connections import FD_RESERVE
from tests.guardian.acs import hello
from tests.transports.served import Served, run_cli

CAP = 64
WAITERS = CAP // 4
ANSWER_BOUND_S = 15.0
"""Far under the polls' 60 s: the bound says "answered while the polls still wait"."""


def _limit_descriptors() -> None:
    # The default --max-connections (1024), lowered by the descriptor limit to CAP.
    resource.setrlimit(resource.RLIMIT_NOFILE, (CAP + FD_RESERVE, CAP + FD_RESERVE))


@pytest.fixture(params=["--max-connections", "descriptor-limit"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    db = tmp_path / "s.db"
    digest = "sha256:" + "ab" * 32
    done = run_cli("skills", "deny", "acme/x", "--digest", digest, "--db", str(db), "--reason", "t")
    assert done.returncode == 0, done.stderr
    extra: list[str] = []
    preexec: Callable[[], None] | None = None
    if request.param == "--max-connections":
        extra = ["--max-connections", str(CAP)]
    else:
        preexec = _limit_descriptors
    server = Served(db=db, log=tmp_path / "serve.log", extra=extra, preexec_fn=preexec).start()
    try:
        yield server
    finally:
        server.stop()


def _poll(server: Served, etag: str, wait: int = 60) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(
        f"GET {BUNDLE_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"If-None-Match: {etag}\r\nPrefer: wait={wait}\r\n\r\n".encode()
    )
    return sock


def _answered(socks: list[socket.socket], expected: int, within_s: float) -> dict[int, bytes]:
    """The first bytes each socket received within ``within_s`` (stops at ``expected``)."""
    got: dict[int, bytes] = {}
    deadline = time.monotonic() + within_s
    while len(got) < expected and (left := deadline - time.monotonic()) > 0:
        pending = [s for s in socks if s.fileno() not in got]
        readable, _, _ = select.select(pending, [], [], min(left, 0.5))
        for sock in readable:
            got[sock.fileno()] = sock.recv(65536)
    return got


def test_sixty_four_long_polls_leave_connections_for_decisions(served: Served) -> None:
    first = httpx.get(served.url + BUNDLE_PATH, timeout=30)
    assert first.status_code == 200
    etag = first.headers["etag"]
    socks = [_poll(served, etag) for _ in range(CAP)]
    try:
        # Past the waiters' bound, each poll is answered at once.
        answers = _answered(socks, CAP - WAITERS, within_s=ANSWER_BOUND_S)

        started = time.monotonic()
        health = httpx.get(served.url + "/healthz", timeout=ANSWER_BOUND_S)
        reply = httpx.post(
            served.url + "/acs",
            content=orjson.dumps(hello("waiters-session")),
            headers={"content-type": "application/json"},
            timeout=ANSWER_BOUND_S,
        )
        elapsed = time.monotonic() - started
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        assert reply.status_code == 200 and "result" in reply.json(), reply.text
        assert elapsed < ANSWER_BOUND_S

        assert len(answers) == CAP - WAITERS, len(answers)
        for head in answers.values():
            status, _, rest = head.partition(b"\r\n")
            assert status == b"HTTP/1.1 200 OK", head[:200]
            headers = rest.lower()
            assert b"content-type: application/gzip" in headers, head[:400]
            assert LONG_POLL_MEDIA_TYPE.encode() not in headers
            assert f"etag: {etag}".encode() in headers
        # The others still wait, and health probes keep being answered.
        waiting = [s for s in socks if s.fileno() not in answers]
        assert not _answered(waiting, 1, within_s=1)
        for _ in range(5):
            assert httpx.get(served.url + "/healthz", timeout=ANSWER_BOUND_S).status_code == 200

        # A poller that goes away frees its place at once, not when its wait would end: new
        # polls (of 4 s) wait in the places of the closed ones (any answered at once came
        # before the server saw a close, and is sent again), and one more is answered at once.
        for sock in waiting:
            sock.close()
        fresh: list[socket.socket] = []
        deadline = time.monotonic() + ANSWER_BOUND_S
        while len(fresh) < WAITERS and time.monotonic() < deadline:
            sent = [_poll(served, etag, wait=4) for _ in range(WAITERS - len(fresh))]
            early = _answered(sent, len(sent), within_s=1)
            for sock in sent:
                (socks if sock.fileno() in early else fresh).append(sock)
        socks.extend(fresh)
        assert len(fresh) == WAITERS
        extra = _poll(served, etag)
        socks.append(extra)
        assert _answered([extra], 1, within_s=ANSWER_BOUND_S)
        ended = _answered(fresh, WAITERS, within_s=4 + ANSWER_BOUND_S)
        assert [head.partition(b"\r\n")[0] for head in ended.values()] == [
            b"HTTP/1.1 304 Not Modified"
        ] * WAITERS  # they waited their 4 s: each held a place
    finally:
        for sock in socks:
            sock.close()
