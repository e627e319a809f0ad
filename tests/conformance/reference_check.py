"""The reference conformance package's external-Guardian check, re-expressed in Python.

What it does is the reference's (``reference-implementations/agt/packages/conformance``,
``checkExternalGuardian``): ten probes over HTTP, every request after the first signed with
HMAC-SHA256 under an HKDF session key, every answer's signature verified. How it reads the key
matters most here: ``readFileSync(secretFile)``, the file's bytes as they are, a trailing
newline included, and at least 32 of them. So does its default key id, ``conformance``.

Signing uses this package's own implementation (:mod:`tests.conformance.acs_core_vectors`:
RFC 8785 from ``rfc8785``, RFC 5869 written out), not agbom's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conformance.acs_core_vectors import session_key, signed, verifies

DEFAULT_KEY_ID = "conformance"
AGENT_ID = "conformance-observed-agent"
Post = Callable[[dict[str, Any]], dict[str, Any]]


def read_secret(path: Path) -> bytes:
    """The key as the reference reads it: the raw file bytes, refused under 32 of them."""
    secret = path.read_bytes()
    if len(secret) < 32:
        raise ValueError("external Guardian HMAC secret is shorter than 32 bytes")
    return secret


def _now() -> str:
    # JavaScript's Date.toISOString(): milliseconds and an upper-case Z.
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _envelope(method: str, session_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    request_id = str(uuid.uuid4())
    return {
        "jsonrpc": "2.0",
        "method": method,
        "id": request_id,
        "params": {
            "acs_version": "0.1.0",
            "request_id": request_id,
            "timestamp": _now(),
            "metadata": {"agent_id": AGENT_ID, "session_id": session_id},
            "payload": payload,
        },
    }


def _hello(session_id: str, methods: list[str], transports: list[str]) -> dict[str, Any]:
    return _envelope(
        "handshake/hello",
        session_id,
        {
            "acs_versions_supported": ["0.1.0"],
            "methods_implemented": methods,
            "transports_supported": transports,
            "provenance_producer": "none",
            "profiles_supported": ["acs-core"],
        },
    )


def _bash(session_id: str) -> dict[str, Any]:
    payload = {
        "tool": {"name": "Bash"},
        "arguments": {"command": {"value": "ls -la"}},
        "raw_command": "ls -la",
    }
    return _envelope("steps/toolCallRequest", session_id, payload)


@dataclass
class Score:
    """How far the check got: probes passed (of 10), and why it stopped, if it did."""

    passed: int = 0
    failure: str | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)


class _Failed(Exception):
    pass


def run_check(send: Post, secret: bytes, key_id: str = DEFAULT_KEY_ID) -> Score:
    """The ten probes, in the reference's order; the first that fails stops the check."""
    score = Score()

    def signed_post(request: dict[str, Any], session_id: str) -> dict[str, Any]:
        key = session_key(secret, session_id)
        answer = send(signed(request, key, key_id))
        score.answers.append(answer)
        if answer.get("jsonrpc") != "2.0" or answer.get("id") != request["id"]:
            raise _Failed(f"uncorrelated response: {answer}")
        holder = answer.get("error" if "error" in answer else "result") or {}
        signature = holder.get("signature") or {}
        if signature.get("algorithm") != "HMAC-SHA256" or signature.get("key_id") != key_id:
            raise _Failed(f"no usable signature: {answer}")
        if not verifies(answer, key):
            raise _Failed("response signature does not verify")
        return answer

    def expect_error(answer: dict[str, Any], code: int) -> None:
        error = answer.get("error")
        if not isinstance(error, dict) or error.get("code") != code or "result" in answer:
            raise _Failed(f"expected error {code}, got {answer}")
        score.passed += 1

    def expect_decision(answer: dict[str, Any], disposition: str, request_id: str) -> None:
        result = answer.get("result") or {}
        if "error" in answer or result.get("decision") != disposition:
            raise _Failed(f"expected {disposition}, got {answer}")
        if result.get("request_id") != request_id:
            raise _Failed(f"uncorrelated decision: {answer}")
        score.passed += 1

    try:
        bad = send({"jsonrpc": "1.0", "method": "steps/toolCallRequest", "id": "bad", "params": {}})
        score.answers.append(bad)
        expect_error(bad, -32600)

        before = str(uuid.uuid4())
        expect_error(signed_post(_bash(before), before), -32003)

        stdio_only = str(uuid.uuid4())
        hello = _hello(stdio_only, ["steps/toolCallRequest"], ["stdio"])
        expect_error(signed_post(hello, stdio_only), -32000)

        sid = str(uuid.uuid4())
        methods = ["steps/toolCallRequest", "steps/toolCallResult"]
        server_hello = signed_post(_hello(sid, methods, ["http"]), sid).get("result") or {}
        if server_hello.get("negotiated_version") != "0.1.0" or not isinstance(
            server_hello.get("methods_evaluated"), list
        ):
            raise _Failed(f"invalid ServerHello: {server_hello}")
        score.passed += 1

        allowed = _bash(sid)
        expect_decision(signed_post(allowed, sid), "allow", allowed["id"])
        expect_error(signed_post(allowed, sid), -32005)

        invalid = _envelope("steps/toolCallRequest", sid, {"tool": {"name": "Bash"}})
        expect_error(signed_post(invalid, sid), -32602)
        expect_error(signed_post(invalid, sid), -32005)

        unnegotiated = _envelope(
            "steps/userMessage", sid, {"content": [{"type": "text", "value": "hello"}]}
        )
        expect_error(signed_post(unnegotiated, sid), -32003)
        expect_error(signed_post(unnegotiated, sid), -32005)
    except _Failed as exc:
        score.failure = str(exc)
    return score
