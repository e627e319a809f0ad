"""Wire error objects, depth limits, timestamps and response validation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agbom.errors import AgbomError
from agbom.protocol import (
    CHAIN_MISMATCH,
    ERROR_NAMES,
    INVALID_REQUEST,
    TIMESTAMP_OUT_OF_WINDOW,
    UNSUPPORTED_VERSION,
    AcsError,
    CanonicalizationFailed,
    ProtocolError,
    SignatureInvalid,
    check_depth,
    error_response,
    parse_timestamp,
    validate_envelope,
    validate_response,
)
from agbom.protocol import errors as codes

SPEC_CODES = {
    "PARSE_ERROR": -32700,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INVALID_PARAMS": -32602,
    "INTERNAL_ERROR": -32603,
    "SESSION_REFUSED": -32000,
    "UNSUPPORTED_VERSION": -32001,
    "PROVENANCE_REQUIRED": -32002,
    "CAPABILITY_NOT_NEGOTIATED": -32003,
    "SIGNATURE_INVALID": -32004,
    "REPLAY_DETECTED": -32005,
    "TIMESTAMP_OUT_OF_WINDOW": -32006,
    "CHAIN_MISMATCH": -32007,
}


def test_codes_match_the_specification() -> None:
    for name, value in SPEC_CODES.items():
        assert getattr(codes, name) == value
        assert ERROR_NAMES[value] == name
    assert len(ERROR_NAMES) == len(SPEC_CODES)


def test_error_object_shape() -> None:
    err = AcsError(
        UNSUPPORTED_VERSION,
        "unsupported_version",
        "ACS 1.0.0 is not spoken here",
        {"supported_versions": ["0.1.0"], "reason": "cannot override"},
    )
    assert err.to_error() == {
        "code": -32001,
        "message": "Unsupported version",
        "data": {
            "supported_versions": ["0.1.0"],
            "reason": "unsupported_version",
            "message": "ACS 1.0.0 is not spoken here",
        },
    }
    assert error_response("r1", err) == {"jsonrpc": "2.0", "id": "r1", "error": err.to_error()}
    assert error_response(None, err)["id"] is None


def test_hierarchy() -> None:
    for cls in (AcsError, CanonicalizationFailed, SignatureInvalid):
        assert issubclass(cls, ProtocolError) and issubclass(cls, AgbomError)
    err = AcsError(CHAIN_MISMATCH, "chain_mismatch", "client head differs")
    assert "CHAIN_MISMATCH (-32007) chain_mismatch" in err.diagnostics()


def test_error_responses_validate() -> None:
    err = AcsError(
        TIMESTAMP_OUT_OF_WINDOW, "timestamp_out_of_window", "late", {"skew_window_ms": 300000}
    )
    validate_response(error_response(1, err))


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth - 1):
        value = [value] if i % 2 else {"k": value}
    return {"k": value}


def test_check_depth_bounds() -> None:
    check_depth(_nested(64))
    with pytest.raises(AcsError) as info:
        check_depth(_nested(65))
    assert (info.value.code, info.value.reason) == (INVALID_REQUEST, "nesting_too_deep")
    check_depth(_nested(10), max_depth=10)
    with pytest.raises(AcsError):
        check_depth(_nested(11), max_depth=10)
    check_depth("scalar", max_depth=0)


def test_check_depth_survives_hostile_nesting() -> None:
    value: Any = []
    for _ in range(200_000):
        value = [value]
    with pytest.raises(AcsError, match="deeper than 64"):
        check_depth(value)


def test_validate_envelope_checks_depth_first() -> None:
    env = {"jsonrpc": "2.0", "method": "steps/userMessage", "id": 1, "params": _nested(80)}
    with pytest.raises(AcsError) as info:
        validate_envelope(env)
    assert info.value.reason == "nesting_too_deep"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-09-19T10:00:00Z", datetime(2026, 9, 19, 10, tzinfo=UTC)),
        ("2026-09-19T12:00:00.500+02:00", datetime(2026, 9, 19, 10, 0, 0, 500000, tzinfo=UTC)),
    ],
)
def test_parse_timestamp(text: str, expected: datetime) -> None:
    assert parse_timestamp(text) == expected


@pytest.mark.parametrize("text", ["2026-09-19T10:00:00", "soon", "", 5])
def test_parse_timestamp_rejects(text: Any) -> None:
    with pytest.raises(AcsError) as info:
        parse_timestamp(text)
    assert info.value.reason == "invalid_timestamp"


def _result(**fields: Any) -> dict[str, Any]:
    base = {"type": "final", "acs_version": "0.1.0", "request_id": "r", "decision": "allow"}
    return {"jsonrpc": "2.0", "id": 1, "result": {**base, **fields}}


@pytest.mark.parametrize(
    "response",
    [
        _result(),
        _result(decision="deny", reasoning="banned", reason_codes=["banned_tool"]),
        _result(decision="modify", reasoning="r", modifications={"redactions": []}),
        _result(decision="ask", reasoning="r", ask_details={"question": "ok?"}),
        _result(decision="defer", reasoning="r", defer_details={"reason": "low_confidence"}),
        _result(chain_hash="14e6d50a913e8295606bc0d86ee9cde870040e0e0a319b13ae15836128d0d111"),
    ],
)
def test_valid_responses(response: dict[str, Any]) -> None:
    validate_response(response)


@pytest.mark.parametrize(
    "response",
    [
        _result(decision="deny"),  # reasoning is required
        _result(decision="modify", reasoning="r"),
        _result(decision="ask", reasoning="r"),
        _result(decision="defer", reasoning="r"),
        _result(decision="maybe"),
        _result(chain_hash="ABC"),
        {"jsonrpc": "2.0", "id": 1},
        {**_result(), "error": {"code": 1, "message": "x"}},
    ],
)
def test_invalid_responses(response: dict[str, Any]) -> None:
    with pytest.raises(AcsError) as info:
        validate_response(response)
    assert info.value.reason == "invalid_response"
