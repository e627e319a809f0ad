"""Thin mode's exchange with the server: the address it takes (``--server``), the request it
sends and the answer it passes on, byte for byte; and its test for a typed ``/command``."""

from __future__ import annotations

import json
import random
import re
import socket
import threading
import urllib.parse
import uuid

import pytest
from hook_helpers import run_hook

from agbom.adapters import replies, thin


def _claude(event: str, **fields: object) -> bytes:
    doc = {"session_id": str(uuid.uuid4()), "cwd": "/tmp", "hook_event_name": event, **fields}
    return json.dumps(doc).encode()


# -- the server's address ------------------------------------------------------------------------

ACCEPTED = [
    "http://127.0.0.1:8787",
    "http://127.0.0.1:8787/",
    "HTTP://LocalHost:8787/agbom/",
    "https://agbom.example.com",
    "https://agbom.example.com/a/b//",
    "http://[::1]:8787/p",
    "http://[::FFFF:127.0.0.1]",
    "http://under_score.internal:80",
    "http://host:/x",
    "http://h:00080",
    "http://h/%7Euser/a;b=c,d:e@f",
]
# {addr} is a listening loopback port: none of these may reach it.
REFUSED = [
    "ftp://{addr}",
    "http//{addr}",
    "http:/{addr}",
    "http://",
    "http://:8787",
    "http:///path",
    "http://user:pw@{addr}/",
    "http://{addr}/?q=1",
    "http://{addr}?q=1",
    "http://{addr}/#frag",
    "http://{addr}/a b",
    "http://{addr}/a\tb",
    "http://{addr}\n/",
    "http://{addr}/\r\nX-Evil: 1",
    "http://{addr}\\@evil/",
    'http://{addr}/"',
    "http://{addr}/<script>",
    "http://{addr}/" + "a" * 3000,
    "http://host:8x/",
    "http://host:99999/",
    "http://host:0/",
    "http://host:1:2/",
    "http://[::1/",
    "http://[::1]x/",
    "http://[not-an-address]/",
    "http://[fe80::1%25eth0]/",
    "http://bücher.example/",
]


def test_the_address_is_what_urllib_makes_of_it() -> None:
    for url in ACCEPTED:
        parts = urllib.parse.urlsplit(url)
        default = 443 if parts.scheme == "https" else 80
        expected = (parts.scheme, parts.hostname, parts.port or default, parts.path.rstrip("/"))
        assert thin._split_server(url) == expected, url


def test_an_address_with_anything_else_is_a_usage_error_and_nothing_is_sent() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        for template in REFUSED:
            url = template.format(addr=f"127.0.0.1:{port}")
            with pytest.raises(thin._Usage):
                thin._split_server(url)
            res = run_hook(["claude-code", "--server", url], _claude("PreToolUse"))
            assert res.code == 2 and res.stdout == b"", url
            assert "--server" in res.stderr, url
        with pytest.raises(BlockingIOError):
            listener.accept()  # no hook ever connected


def _one_answer(reply: bytes) -> tuple[int, list[bytes]]:
    """A server that records one request and answers ``reply``; (port, [request])."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
            while len(body) < length:
                body += conn.recv(65536)
            got.append(head + b"\r\n\r\n" + body)
            conn.sendall(reply)
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], got


def test_the_request_and_the_answer_on_the_wire() -> None:
    body = b'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'
    reply = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-agbom-runtime: claude-code\r\n"
        b"x-agbom-exit-code: 0\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )
    port, got = _one_answer(reply)
    event = _claude("PreToolUse", tool_name="Read", tool_input={"file_path": "/etc/hosts"})
    url = f"HTTP://LocalHost:{port}/Prefix/"
    done = run_hook(["claude-code", "--server", url, "--agent-id", "a-1"], event)
    # The host gets the server's body as it is, and its exit code.
    assert (done.code, done.stdout) == (0, body + b"\n")
    head, _, sent = got[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[:6] == [
        b"POST /Prefix/hooks/claude-code HTTP/1.1",
        b"Host: localhost:%d" % port,
        b"Content-Type: application/json",
        b"Content-Length: %d" % len(event),
        b"Connection: close",
        b"User-Agent: agbom-hook",
    ]
    fields = dict(line.split(b": ", 1) for line in lines[6:])
    assert fields[b"x-agbom-agent-id"] == b"a-1"
    assert fields[b"x-agbom-fail-open"] == b"false"
    assert sent == event


# -- the prompt test without re ------------------------------------------------------------------


def test_a_typed_slash_command_is_found_as_the_pattern_found_it() -> None:
    pattern = re.compile(rb'"prompt"\s*:\s*"\s*/')
    rng = random.Random(7)
    pieces = [b'"prompt"', b":", b'"', b"/", b" ", b"\t", b"\n", b"\x0b", b"\x0c", b"\r", b"x"]
    pieces += [b'"prompt":"', b"UserPromptSubmit", b"\\", b"\xa0", b"{", b"}"]
    corpus = [b"".join(rng.choice(pieces) for _ in range(rng.randrange(12))) for _ in range(20000)]
    corpus += [
        _claude("UserPromptSubmit", prompt="/deploy"),
        _claude("UserPromptSubmit", prompt="  /deploy"),
        _claude("UserPromptSubmit", prompt="deploy /now"),
        b'{"hook_event_name":"UserPromptSubmit","prompt" :\n"\t/x"}',
        b'{"hook_event_name":"UserPromptSubmit","prompt":"x","prompt":"/y"}',
    ]
    differ = [
        raw
        for raw in corpus
        if replies.claude_needs_local_read(b"UserPromptSubmit" + raw)
        != (pattern.search(raw) is not None)
    ]
    assert differ == []
    assert any(pattern.search(raw) for raw in corpus)
