"""JSON-RPC over stdio with ``Content-Length`` framing (as LSP and MCP's stdio transport)."""

from __future__ import annotations

from typing import BinaryIO

import orjson

from agbom.protocol import INVALID_REQUEST, AcsError, error_response
from agbom.transports.interface import Limits, RequestHandler, handle_body

MAX_HEADER_BYTES = 8192


def _read_message(stream: BinaryIO, limits: Limits) -> bytes | None:
    """One framed message body; ``None`` at end of input. Oversized bodies are skipped."""
    length: int | None = None
    header_bytes = 0
    while True:
        line = stream.readline(MAX_HEADER_BYTES + 1)
        if not line:
            return None
        header_bytes += len(line)
        if header_bytes > MAX_HEADER_BYTES:
            raise ValueError("header section too large")
        if line in (b"\r\n", b"\n"):
            if length is None:
                continue  # tolerate blank lines between messages
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            value = value.strip()
            if not value.isdigit():
                raise ValueError("bad Content-Length")
            length = int(value)
    if length > limits.max_body_bytes:
        remaining = length
        while remaining > 0:
            chunk = stream.read(min(remaining, 65536))
            if not chunk:
                break
            remaining -= len(chunk)
        return b" " * (limits.max_body_bytes + 1)
    body = stream.read(length)
    return body


def _write_message(stream: BinaryIO, body: bytes) -> None:
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body))
    stream.write(body)
    stream.flush()


def serve_stdio(handler: RequestHandler, stdin: BinaryIO, stdout: BinaryIO, limits: Limits) -> int:
    """Answer framed requests until end of input. Returns the number of messages handled."""
    count = 0
    while True:
        try:
            body = _read_message(stdin, limits)
        except ValueError as exc:
            error = AcsError(INVALID_REQUEST, "bad_framing", str(exc))
            _write_message(stdout, orjson.dumps(error_response(None, error)))
            return count
        if body is None:
            return count
        _write_message(stdout, handle_body(handler, body, limits))
        count += 1
