"""ACS v0.1.0 wire error codes and the one exception that carries them.

The codes live here, apart from any logic, so the table in ``docs/protocol.md`` and the
values on the wire have a single source. :class:`AcsError` is what every check in this
package raises when the answer to the client must be a JSON-RPC error object; the transport
turns it into a response with :func:`error_response`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.protocol.interface import ProtocolError

# Standard JSON-RPC 2.0 codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# ACS registry (-32000..-32099 reserved by the specification, §17).
SESSION_REFUSED = -32000
UNSUPPORTED_VERSION = -32001
PROVENANCE_REQUIRED = -32002
CAPABILITY_NOT_NEGOTIATED = -32003
SIGNATURE_INVALID = -32004
REPLAY_DETECTED = -32005
TIMESTAMP_OUT_OF_WINDOW = -32006
CHAIN_MISMATCH = -32007

ERROR_NAMES: Mapping[int, str] = {
    PARSE_ERROR: "PARSE_ERROR",
    INVALID_REQUEST: "INVALID_REQUEST",
    METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
    INVALID_PARAMS: "INVALID_PARAMS",
    INTERNAL_ERROR: "INTERNAL_ERROR",
    SESSION_REFUSED: "SESSION_REFUSED",
    UNSUPPORTED_VERSION: "UNSUPPORTED_VERSION",
    PROVENANCE_REQUIRED: "PROVENANCE_REQUIRED",
    CAPABILITY_NOT_NEGOTIATED: "CAPABILITY_NOT_NEGOTIATED",
    SIGNATURE_INVALID: "SIGNATURE_INVALID",
    REPLAY_DETECTED: "REPLAY_DETECTED",
    TIMESTAMP_OUT_OF_WINDOW: "TIMESTAMP_OUT_OF_WINDOW",
    CHAIN_MISMATCH: "CHAIN_MISMATCH",
}
"""Symbolic name of every code agbom emits."""

# Short, fixed JSON-RPC ``message`` per code; the specific explanation goes in data.message.
_TITLES: Mapping[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    SESSION_REFUSED: "Session refused",
    UNSUPPORTED_VERSION: "Unsupported version",
    PROVENANCE_REQUIRED: "Provenance required",
    CAPABILITY_NOT_NEGOTIATED: "Capability not negotiated",
    SIGNATURE_INVALID: "Signature invalid",
    REPLAY_DETECTED: "Replay detected",
    TIMESTAMP_OUT_OF_WINDOW: "Timestamp out of window",
    CHAIN_MISMATCH: "Chain mismatch",
}


class AcsError(ProtocolError):
    """A refusal that goes back to the client as a JSON-RPC error object.

    ``reason`` is a stable snake_case string clients and tests may match on; ``message`` is
    the human explanation; ``data`` holds extra machine-readable fields defined per code
    (``supported_versions`` for -32001, ``method`` for -32003, ``skew_window_ms`` for -32006).
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.data: dict[str, Any] = dict(data) if data else {}

    @property
    def title(self) -> str:
        """The fixed JSON-RPC ``message`` for this code."""
        return _TITLES.get(self.code, "Error")

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member: ``{"code", "message", "data": {"reason", "message"}}``.

        Extra data comes first so that it can never overwrite ``reason`` or ``message``.
        """
        data = {**self.data, "reason": self.reason, "message": self.message}
        return {"code": self.code, "message": self.title, "data": data}

    def diagnostics(self) -> str:
        """One line for a user: the code's name, the reason and the explanation."""
        name = ERROR_NAMES.get(self.code, str(self.code))
        return f"{name} ({self.code}) {self.reason}: {self.message}"

    def __repr__(self) -> str:
        return f"AcsError({self.code}, {self.reason!r}, {self.message!r})"


def error_response(id: str | int | float | None, err: AcsError) -> dict[str, Any]:  # noqa: A002
    """A complete JSON-RPC error response for request ``id`` (``None`` when unknown)."""
    return {"jsonrpc": "2.0", "id": id, "error": err.to_error()}
