"""Structural checks of ACS requests: envelope, payload, nesting depth, timestamps.

Validators are compiled once per process (:func:`agbom._schema.compiled_validator` is
cached) so that a check costs microseconds on the decision path. Every failure is an
:class:`~agbom.protocol.errors.AcsError` whose message names the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import fastjsonschema

from agbom._schema import compiled_validator, describe_failure
from agbom.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, AcsError
from agbom.protocol.identifiers import check_envelope_identifiers, check_payload_identifiers
from agbom.protocol.methods import MCP_METHOD, METHODS, MethodSpec
from agbom.protocol.timestamps import parse_rfc3339, timestamp_seconds

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a request."""

REQUEST_SCHEMA = "request-envelope.json"
RESPONSE_SCHEMA = "response-envelope.json"


_CONTAINERS = (dict, list, tuple)


def check_depth(obj: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``-32600`` / ``nesting_too_deep`` when arrays and objects nest deeper than
    ``max_depth``. Walks level by level without recursion, so hostile input cannot exhaust
    the interpreter stack."""
    containers = _CONTAINERS
    level = [obj] if isinstance(obj, containers) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            raise AcsError(
                INVALID_REQUEST,
                "nesting_too_deep",
                f"JSON nests deeper than {max_depth} levels",
                {"max_depth": max_depth},
            )
        below: list[Any] = []
        keep = below.append
        for value in level:
            for child in value.values() if isinstance(value, dict) else value:
                # Most children are parsed scalars: identity tests on their exact type rule
                # them out before the isinstance call (cheaper than a set lookup per child).
                kind = type(child)
                if kind is str or kind is int or kind is bool or kind is float or child is None:
                    continue
                if isinstance(child, containers):
                    keep(child)
        level = below


def _run(validator: Any, obj: Any) -> str | None:
    try:
        validator(obj)
    except fastjsonschema.JsonSchemaValueException as exc:
        return describe_failure(exc)
    return None


def validate_envelope(obj: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Check that ``obj`` is a well-formed ACS request envelope (depth first, then schema).

    Raises ``-32600`` with reason ``nesting_too_deep`` or ``invalid_envelope``; the message
    names the field, for example ``field 'params.metadata' missing required field: agent_id``.
    """
    check_depth(obj, max_depth)
    problem = _run(compiled_validator(REQUEST_SCHEMA), obj)
    if problem is not None:
        raise AcsError(INVALID_REQUEST, "invalid_envelope", f"invalid request envelope: {problem}")
    # The schema's date-time format check is looser than RFC 3339 (and stricter than
    # nothing): the timestamp is read here, once, by the grammar, so that a value the skew
    # check could not read is refused as invalid (-32600), never as clock skew.
    timestamp_seconds(obj["params"]["timestamp"])
    # -32602: the envelope is well formed, but an id in it cannot be shown faithfully.
    check_envelope_identifiers(obj["params"])


def validate_payload(spec: MethodSpec, payload: Any) -> None:
    """Check ``params.payload`` against the method's payload schema.

    Raises ``-32602`` / ``invalid_payload``. A method without a payload schema only needs an
    object. Unknown fields are always accepted, as the specification requires. The
    agent-chosen ids in it (skills, tools, servers) are then checked: -32602 /
    ``invalid_identifier`` (:mod:`agbom.protocol.identifiers`).
    """
    if spec.payload_schema is None:
        if not isinstance(payload, Mapping):
            raise AcsError(INVALID_PARAMS, "invalid_payload", "payload must be an object")
    else:
        problem = _run(compiled_validator(spec.payload_schema), payload)
        if problem is not None:
            raise AcsError(
                INVALID_PARAMS,
                "invalid_payload",
                f"invalid {spec.name} payload: {problem}",
                {"method": spec.name},
            )
    check_payload_identifiers(spec.name, payload)


def validate_response(obj: Any) -> None:
    """Check a decision or error response the Guardian is about to send (used in tests and
    as a debug guard). Raises ``-32603`` / ``invalid_response``."""
    problem = _run(compiled_validator(RESPONSE_SCHEMA), obj)
    if problem is not None:
        raise AcsError(INTERNAL_ERROR, "invalid_response", f"invalid response: {problem}")


def parse_timestamp(value: str) -> datetime:
    """Parse an RFC 3339 ``params.timestamp`` into an aware UTC datetime.

    Raises ``-32600`` / ``invalid_timestamp`` for anything else (naive times included); the
    grammar, lower-case ``t`` and ``z`` included, is :mod:`agbom.protocol.timestamps`'.
    """
    return parse_rfc3339(value)


def warm_up() -> None:
    """Compile every shipped ACS validator now, so the first request pays nothing."""
    compiled_validator(REQUEST_SCHEMA)
    compiled_validator(RESPONSE_SCHEMA)
    for spec in (*METHODS.values(), MCP_METHOD):
        if spec.payload_schema is not None:
            compiled_validator(spec.payload_schema)
