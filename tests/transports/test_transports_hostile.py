"""``agbom serve`` against hostile clients: browser pages, DNS rebinding, slow connections, and
an accidental exposure of the read API (issue 13, items 8, 10 and 17). Every server here is a
real subprocess on 127.0.0.1."""

from __future__ import annotations

import os
import resource
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.guardian.acs import request
from tests.transports.served import Served, free_port, open_session, post, run_cli

pytestmark = pytest.mark.network

# -- Host, Origin and Content-Type (item 8) -----------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("front")
    token = folder / "token"
    token.write_text("front-token-" + "y" * 20)
    token.chmod(0o600)
    server = Served(
        db=folder / "s.db",
        log=folder / "serve.log",
        extra=[
            "--allowed-origin",
            "https://console.example",
            "--allowed-host",
            "agbom.internal",
            "--api-token-file",
            str(token),
        ],
    ).start()
    yield server
    server.stop()


def _raw(port: int, data: bytes, *, timeout: float = 30) -> bytes:
    """One HTTP exchange on a fresh connection, read until the server closes or answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        out = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return out
            out += chunk
            head, sep, body = out.partition(b"\r\n\r\n")
            if sep and b"content-length:" in head.lower():
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(body) >= length:
                    return out


JSON = {"Content-Type": "application/json"}


def _end_session(sid: str) -> bytes:
    return orjson.dumps(request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))


def _still_open(served: Served, sid: str) -> bool:
    """Whether the session still takes steps (an ended session refuses them)."""
    reply = post(served.url, request("steps/userMessage", {"content": "more"}, session_id=sid))
    return reply.get("result", {}).get("decision") == "allow"


@pytest.mark.parametrize(
    ("headers", "status", "reason"),
    [
        # A browser page's "simple" cross-site request: text/plain needs no preflight.
        ({"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
        ({**JSON, "Origin": "https://evil.example"}, 403, "origin_refused"),
        ({**JSON, "Origin": "null"}, 403, "origin_refused"),
        # DNS rebinding: the page's own name resolves to 127.0.0.1, its Host header stays.
        ({**JSON, "Host": "evil.example:{port}"}, 421, "misdirected_host"),
        ({**JSON, "Host": "127.0.0.1:1"}, 421, "misdirected_host"),
    ],
)
def test_cross_site_and_rebound_requests_cannot_end_a_session(
    served: Served, headers: dict[str, str], status: int, reason: str
) -> None:
    sid = open_session(served.url)
    sent = {k: v.format(port=served.port) for k, v in headers.items()}
    reply = httpx.post(f"{served.url}/acs", content=_end_session(sid), headers=sent, timeout=30)
    assert reply.status_code == status
    assert reply.json()["error"] == reason
    assert _still_open(served, sid)
    # The same body through the hook endpoint is refused the same way.
    hook = httpx.post(f"{served.url}/hooks/claude-code", content=b"{}", headers=sent, timeout=30)
    assert hook.status_code == status


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json"},
        {"Content-Type": "application/json; charset=utf-8"},
        {"Content-Type": "Application/JSON", "Host": "localhost:{port}"},
        {"Content-Type": "application/json", "Host": "agbom.internal"},
        {"Content-Type": "application/json", "Host": "AGBOM.internal:{port}"},
        {"Content-Type": "application/json", "Origin": "https://console.example"},
    ],
)
def test_allowed_clients_are_answered(served: Served, headers: dict[str, str]) -> None:
    sid = open_session(served.url)
    sent = {k: v.format(port=served.port) for k, v in headers.items()}
    reply = httpx.post(f"{served.url}/acs", content=_end_session(sid), headers=sent, timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["decision"] == "allow"
    assert not _still_open(served, sid)


def test_the_read_api_checks_host_and_origin_too(served: Served) -> None:
    auth = {"Authorization": "Bearer front-token-" + "y" * 20}
    url = f"{served.url}/v1/skills/nothing-{uuid.uuid4().hex}"
    assert httpx.get(url, headers=auth).status_code == 404  # reached the handler
    rebound = httpx.get(url, headers={**auth, "Host": f"evil.example:{served.port}"})
    assert rebound.status_code == 421
    assert httpx.get(url, headers={**auth, "Origin": "https://evil.example"}).status_code == 403
    # A health probe need not know the server's name.
    assert httpx.get(f"{served.url}/healthz", headers={"Host": "10.0.0.7:80"}).status_code == 200


def test_a_refusal_reads_the_body_so_the_client_gets_the_answer(served: Served) -> None:
    body = b"x" * (512 * 1024)  # bigger than the socket buffers: unread, it would reset
    head = (
        f"POST /acs HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    answer = _raw(served.port, head + body)
    assert answer.startswith(b"HTTP/1.1 415 ")


def test_an_oversized_acs_body_is_a_413_with_the_json_rpc_error(served: Served) -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "y" * 1_100_000})
    head = (
        f"POST /acs HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    answer = _raw(served.port, head + body)
    status, _, rest = answer.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 413 ")
    error = orjson.loads(rest.partition(b"\r\n\r\n")[2])["error"]
    assert error["code"] == -32600 and error["data"]["reason"] == "payload_too_large"


# -- the read API on a non-loopback address (item 17) -------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "agbom.example"])
def test_a_network_address_without_a_read_api_token_is_refused(tmp_path: Path, host: str) -> None:
    port = free_port()
    done = run_cli("serve", "--host", host, "--port", str(port), "--db", str(tmp_path / "s.db"))
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "--api-token-file" in lines[0] and "--public-read-api" in lines[0]
    assert not (tmp_path / "s.db").exists()  # refused before the store was opened


# -- slow clients (item 10) ---------------------------------------------------------------------


def _ping(port: int) -> bool:
    """A legitimate client: one ACS ping on a fresh connection."""
    message = orjson.dumps(request("system/ping", {"n": 1}, session_id=str(uuid.uuid4())))
    try:
        reply = httpx.post(
            f"http://127.0.0.1:{port}/acs",
            content=message,
            headers={"Content-Type": "application/json"},
            timeout=20,
        )
    except httpx.HTTPError:
        return False
    return reply.status_code == 200 and "result" in reply.json()


def _limit_fds(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="sets a resource limit in the child")
def test_slow_clients_cannot_starve_legitimate_ones(tmp_path: Path) -> None:
    fd_limit, attackers, probes = 512, 1000, 18
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = attackers + 200
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"needs {needed} file descriptors in the test process")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    served = Served(
        db=tmp_path / "s.db",
        log=tmp_path / "serve.log",
        preexec_fn=lambda: _limit_fds(fd_limit),
    ).start()
    held: list[socket.socket] = []
    try:
        for number in range(attackers):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
            held.append(sock)
            if number % 2:  # half stall in their headers, half in a body that never comes
                sock.sendall(b"POST /acs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            else:
                sock.sendall(
                    f"POST /acs HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{".encode()
                )
        served_probes = sum(_ping(served.port) for _ in range(probes))
        assert served_probes == probes, f"{served_probes} of {probes} legitimate probes served"
        assert served.proc is not None and served.proc.poll() is None
    finally:
        for sock in held:
            sock.close()
        served.stop()
        if soft < needed:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert "at most 448 connections" in served.logs()


def test_stalled_headers_and_bodies_are_timed_out(tmp_path: Path) -> None:
    served = Served(
        db=tmp_path / "s.db",
        log=tmp_path / "serve.log",
        extra=["--header-timeout", "1", "--body-timeout", "1"],
    ).start()
    try:
        stalled_headers = b"POST /acs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        stalled_body = (
            f"POST /acs HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 50\r\n\r\n{"
        ).encode()
        for partial in (stalled_headers, stalled_body):
            answer = _raw(served.port, partial, timeout=60)
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
        assert _ping(served.port)  # and the server is none the worse
    finally:
        served.stop()
