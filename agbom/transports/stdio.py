"""JSON-RPC over stdio with ``Content-Length`` framing (as LSP and MCP's stdio transport)."""

from __future__ import annotations

from typing import BinaryIO

import orjson

from agbom.protocol import INVALID_REQUEST, AcsError, error_response
from agbom.transports.interface import Limits, RequestHandler, handle_body

MAX_HEADER_BYTES = 8192


class FramingError(ValueError):
    """The input is not ``Content-Length`` framed JSON-RPC; the message says where."""


def _read_message(stream: BinaryIO, limits: Limits, number: int) -> bytes | None:
    """One framed message body; ``None`` at the end of input between messages.

    Raises :class:`FramingError` for input that is not framed: a line that is no header (raw
    JSON lines, for example), a header section without ``Content-Length``, or input that ends
    inside a header section or a body. Oversized bodies are skipped and answered as too large.
    """
    length: int | None = None
    header_bytes = 0
    headers = 0
    while True:
        line = stream.readline(MAX_HEADER_BYTES + 1)
        if not line:
            if headers:
                raise FramingError(f"message {number}: input ended inside its header section")
            return None
        header_bytes += len(line)
        if header_bytes > MAX_HEADER_BYTES:
            raise FramingError(f"message {number}: header section over {MAX_HEADER_BYTES} bytes")
        if line in (b"\r\n", b"\n"):
            if not headers:
                continue  # tolerate blank lines between messages
            if length is None:
                raise FramingError(f"message {number}: headers without a Content-Length")
            break
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon or not name.strip() or not name.strip().replace("-", "").isalnum():
            shown = line[:40].decode("utf-8", "replace").rstrip("\r\n")
            hint = " (JSON lines? use agbom replay)" if line.lstrip()[:1] in (b"{", b"[") else ""
            raise FramingError(
                f"message {number}: expected a 'Content-Length: N' header, got {shown!r}{hint}"
            )
        headers += 1
        if name.strip().lower() == "content-length":
            value = value.strip()
            if not (value.isascii() and value.isdigit()) or len(value) > 12:
                raise FramingError(f"message {number}: bad Content-Length {value[:20]!r}")
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
    if len(body) < length:
        raise FramingError(
            f"message {number}: input ended after {len(body)} of its {length} body bytes"
        )
    return body


def _write_message(stream: BinaryIO, body: bytes) -> None:
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body))
    stream.write(body)
    stream.flush()


def serve_stdio(
    handler: RequestHandler, stdin: BinaryIO, stdout: BinaryIO, limits: Limits
) -> tuple[int, str | None]:
    """Answer framed requests until the end of input.

    Returns how many messages were answered and, when the input was not framed, what was
    wrong with it: that is answered with one ``-32600 bad_framing`` error, and then the
    transport stops (no reliable way to find the next message).
    """
    count = 0
    while True:
        try:
            body = _read_message(stdin, limits, count + 1)
        except FramingError as exc:
            error = AcsError(INVALID_REQUEST, "bad_framing", str(exc))
            _write_message(stdout, orjson.dumps(error_response(None, error)))
            return count, str(exc)
        if body is None:
            return count, None
        _write_message(stdout, handle_body(handler, body, limits))
        count += 1
