"""Transport vocabulary: limits, and the one place that maps failures to JSON-RPC errors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from agbom.errors import AgbomError
from agbom.protocol import INVALID_REQUEST, PARSE_ERROR, AcsError, check_depth, error_response


class TransportError(AgbomError):
    """A transport could not start or serve (bad address, unreadable input)."""


class RequestHandler(Protocol):
    def handle(self, request: Any) -> dict[str, Any]: ...


class PipelinedHandler(Protocol):
    def submit(
        self, request: Any, reply: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any] | None: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what one message may cost before the Guardian even looks at it."""

    max_body_bytes: int = 1024 * 1024
    max_depth: int = 64
    max_batch: int = 100


def error_body(code: int, reason: str, message: str) -> bytes:
    """A JSON-RPC error response with a null id: the answer when no request can be read."""
    return orjson.dumps(error_response(None, AcsError(code, reason, message)))


def too_large(limits: Limits) -> bytes:
    """The answer to a body over ``limits.max_body_bytes`` (which need not be read whole)."""
    return error_body(
        INVALID_REQUEST, "payload_too_large", f"request body exceeds {limits.max_body_bytes} bytes"
    )


def parse_message(body: bytes, limits: Limits) -> Any:
    """The JSON-RPC message in ``body``, or the bytes of the error answering it."""
    if len(body) > limits.max_body_bytes:
        return too_large(limits)
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return error_body(PARSE_ERROR, "parse_error", f"invalid JSON: {exc}")
    if isinstance(message, list):
        # A single request's depth is checked by the Guardian's envelope validation; a batch
        # is walked here once so an over-deep batch is refused as a whole.
        try:
            check_depth(message, limits.max_depth)
        except AcsError as exc:
            return orjson.dumps(error_response(None, exc))
        if not message:
            return error_body(INVALID_REQUEST, "empty_batch", "a batch must not be empty")
        if len(message) > limits.max_batch:
            return error_body(
                INVALID_REQUEST, "batch_too_large", f"a batch may hold {limits.max_batch} requests"
            )
    return message


def handle_body(handler: RequestHandler, body: bytes, limits: Limits) -> bytes:
    """Parse one JSON-RPC message (single or batch) and answer it, never raising."""
    message = parse_message(body, limits)
    if isinstance(message, bytes):
        return message
    if isinstance(message, list):
        return orjson.dumps([handler.handle(item) for item in message])
    return orjson.dumps(handler.handle(message))


async def handle_body_pipelined(handler: PipelinedHandler, body: bytes, limits: Limits) -> bytes:
    """:func:`handle_body` for an event loop, through :meth:`Guardian.submit`.

    While this request waits for its chain entry to be committed, the loop decides others.
    Batch items are answered in order, each after the previous one's entry is committed.
    """
    message = parse_message(body, limits)
    if isinstance(message, bytes):
        return message
    if isinstance(message, list):
        return orjson.dumps([await _submit(handler, item) for item in message])
    return orjson.dumps(await _submit(handler, message))


async def _submit(handler: PipelinedHandler, request: Any) -> dict[str, Any]:
    waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def reply(response: dict[str, Any]) -> None:
        if not waiter.done():  # the client may have gone and the wait been cancelled
            waiter.set_result(response)

    response = handler.submit(request, reply)
    if response is not None:
        return response
    return await waiter
