"""Every shipped schema is valid Draft-07; every method's payload schema accepts and rejects
the conformance cases in payload_cases.json; the request envelope schema is strict where the
specification is and lenient where it says unknown fields are ignored."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from agbom._schema import load_schema
from agbom.protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MCP_METHOD,
    METHODS,
    AcsError,
    lookup,
    validate_envelope,
    validate_payload,
)

CASES: dict[str, Any] = json.loads(
    (Path(__file__).parent / "payload_cases.json").read_text(encoding="utf-8")
)
SCHEMA_DIR = resources.files("agbom.protocol").joinpath("schemas")
SHIPPED = sorted(p.name for p in SCHEMA_DIR.iterdir() if p.name.endswith(".json"))


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_schema_is_valid_draft7(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"].endswith("/" + name)
    Draft7Validator.check_schema(schema)


@pytest.mark.parametrize("name", [n for n in SHIPPED if n.startswith("step-")])
def test_payload_schemas_stay_open(name: str) -> None:
    # Unknown fields are ignored per the specification, so no payload schema may close itself.
    assert "additionalProperties" not in load_schema(name)


def test_every_method_has_cases() -> None:
    covered = {lookup(m).name for m in CASES}  # type: ignore[union-attr]
    assert covered == {*METHODS, MCP_METHOD.name}
    for method, case in CASES.items():
        assert case["valid"] and case["invalid"], method


def _cases(kind: str) -> list[Any]:
    out = []
    for method, case in CASES.items():
        for i, item in enumerate(case[kind]):
            ident = f"{method}-{item['note'] if kind == 'invalid' else i}"
            out.append(pytest.param(method, item, id=ident))
    return out


@pytest.mark.parametrize(("method", "payload"), _cases("valid"))
def test_valid_payloads(method: str, payload: Any) -> None:
    spec = lookup(method)
    assert spec is not None
    validate_payload(spec, payload)


@pytest.mark.parametrize(("method", "case"), _cases("invalid"))
def test_invalid_payloads(method: str, case: dict[str, Any]) -> None:
    spec = lookup(method)
    assert spec is not None
    with pytest.raises(AcsError) as info:
        validate_payload(spec, case["payload"])
    err = info.value
    assert (err.code, err.reason) == (INVALID_PARAMS, "invalid_payload")
    assert err.to_error()["data"]["method"] == spec.name
    if case["field"]:
        assert case["field"] in err.message


def test_payload_without_schema_must_be_an_object() -> None:
    from agbom.protocol import MethodSpec

    spec = MethodSpec("x/y", frozenset(), payload_schema=None)
    validate_payload(spec, {"anything": 1})
    with pytest.raises(AcsError, match="object"):
        validate_payload(spec, [1])


def _envelope() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "steps/toolCallRequest",
        "id": "8d0b6b0e",
        "params": {
            "acs_version": "0.1.0",
            "request_id": "8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10",
            "timestamp": "2026-09-19T10:00:00Z",
            "nonce": "0123456789abcdef",
            "metadata": {"agent_id": "agent", "session_id": "5c3f1b8e", "vendor_hint": 1},
            "payload": {"tool": {"name": "Bash"}},
            "signature": {"algorithm": "HMAC-SHA256", "value": "abc=", "key_id": "k1"},
            "future_field": {"ignored": True},
        },
    }


def test_valid_envelope() -> None:
    validate_envelope(_envelope())
    numeric = _envelope()
    numeric["id"] = 42
    validate_envelope(numeric)


def _set(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    for part in parts[:-1]:
        obj = obj[part]
    if value is _DELETE:
        del obj[parts[-1]]
    else:
        obj[parts[-1]] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        ("jsonrpc", "1.0", "jsonrpc"),
        ("method", "tools/call", "method"),
        ("method", "steps/", "method"),
        ("id", None, "id"),
        ("id", True, "id"),
        ("extra_top_level", 1, "extra_top_level"),
        ("params.acs_version", "0.1", "params.acs_version"),
        ("params.timestamp", "yesterday", "params.timestamp"),
        ("params.timestamp", "2026-09-19T10:00:00", "params.timestamp"),
        ("params.nonce", "short", "params.nonce"),
        ("params.nonce", "x" * 65, "params.nonce"),
        ("params.metadata.agent_id", _DELETE, "agent_id"),
        ("params.metadata.session_id", _DELETE, "session_id"),
        ("params.metadata.environment", "moon", "params.metadata.environment"),
        ("params.payload", [], "params.payload"),
        ("params.request_id", _DELETE, "request_id"),
        ("params.signature.algorithm", "MD5", "params.signature.algorithm"),
        ("params.signature.key_id", _DELETE, "key_id"),
        ("params", "x", "params"),
    ],
)
def test_invalid_envelopes(path: str, value: Any, needle: str) -> None:
    env = copy.deepcopy(_envelope())
    _set(env, path, value)
    with pytest.raises(AcsError) as info:
        validate_envelope(env)
    assert (info.value.code, info.value.reason) == (INVALID_REQUEST, "invalid_envelope")
    assert needle in info.value.message


@pytest.mark.parametrize("value", [None, [], "x", 1])
def test_envelope_must_be_an_object(value: Any) -> None:
    with pytest.raises(AcsError, match="invalid request envelope"):
        validate_envelope(value)
