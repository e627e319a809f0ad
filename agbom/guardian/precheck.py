"""Checks of a request that depend on the request alone, so another process can run them.

`agbom serve` answers over HTTP in a front process and decides in one decision process, which
every decision waits on (docs/architecture.md, "Processes of `agbom serve`"). The front has
CPU to spare; the decision process does not. So for the steps decided on the hot path (the
pipelined steps, :data:`~agbom.guardian.pipelined.PIPELINED_METHODS`), the front runs the
checks here on the request it forwards: the envelope and the payload schemas, and the request
hash. The decision process then receives the request with its hash (a :class:`Prechecked`)
and does not run them again.

Nothing that depends on the Guardian's state is done ahead: signature, session, replay, clock
skew, policy and the chain all stay in the decision process. A request that fails a check
here is forwarded as it came; the decision process checks it again and answers the failure as
it always did, so the answer, and what is remembered of a refused request, never depend on
where a check ran. Whoever hands a :class:`Prechecked` to ``Guardian.submit`` vouches that it
was made from that request (the decision process trusts only its own front, over a socket
pair no one else holds); the Guardian applies it to that request's ``params`` object alone,
not to the other requests it may decide meanwhile (queued ones decided again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from agbom.guardian.pipelined import PIPELINED_METHODS
from agbom.protocol import lookup, request_hash, validate_envelope, validate_payload

PRECHECK_MAX_BYTES = 64 * 1024
"""Larger bodies are left to the decision process: the front's event loop serves every other
connection meanwhile, and hot-path steps are a few hundred bytes."""

HASH_BYTES = 64
"""A request hash travels as 64 lowercase hex digits, ahead of the request body."""


@dataclass(frozen=True, slots=True)
class Prechecked:
    """A request whose envelope and payload are valid, and its ``request_hash``."""

    request_hash: str


def precheck(message: Any, *, max_json_depth: int) -> Prechecked | None:
    """The checks done ahead for ``message`` (a parsed JSON-RPC request), or ``None`` when it
    is not a pipelined step or fails one of them (then the decision process runs them)."""
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    if method not in PIPELINED_METHODS:
        return None
    spec = lookup(method)
    if spec is None:
        return None
    try:
        validate_envelope(message, max_depth=max_json_depth)
        params = message["params"]
        validate_payload(spec, params["payload"])
        return Prechecked(request_hash(params))
    except Exception:  # noqa: BLE001 - any failure is the decision process's to answer
        return None


def precheck_body(body: bytes, *, max_json_depth: int) -> bytes | None:
    """The request hash of the request in ``body`` when :func:`precheck` passes, as the
    :data:`HASH_BYTES` ASCII bytes that go ahead of it; ``None`` otherwise."""
    if len(body) > PRECHECK_MAX_BYTES:
        return None
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    checked = precheck(message, max_json_depth=max_json_depth)
    return None if checked is None else checked.request_hash.encode("ascii")


def split_prechecked(payload: bytes) -> tuple[Prechecked, bytes] | None:
    """The inverse of ``hash + body``; ``None`` when the hash is not 64 lowercase hex digits."""
    digest = payload[:HASH_BYTES]
    if len(digest) != HASH_BYTES or digest.strip(b"0123456789abcdef"):
        return None
    return Prechecked(digest.decode("ascii")), payload[HASH_BYTES:]
