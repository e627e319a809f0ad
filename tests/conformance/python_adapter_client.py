"""An ACS client that reads its key file and signs as the public Python ACS adapters do.

Re-expressed from the behaviour of GenAI-Security-Project/agent-control-standard,
``adapters/_common/acs_common.py`` (commit 3d4bdb3e84665e6db13835bc075ee8ec876bc14b), which
the Claude Code, Cursor, Codex and NAT adapters share, not from agbom's reading of it:

* the key file named by ``ACS_HMAC_SECRET_FILE`` is read as bytes with trailing CR, LF, tab
  and space removed (``load_hmac_secret``), and nothing is decoded; its docstring recommends
  ``openssl rand -hex 32 > FILE``, so the key is the 64 hex digits, without the newline;
* the session key is HKDF-SHA256 with no salt and the session id as ``info``;
* a request is signed in ``params`` with ``key_id: "default"`` over the RFC 8785 form of the
  envelope without its signature; an answer must carry ``HMAC-SHA256`` and verify under the
  same session key, or the adapter fails closed;
* the ClientHello carries ``metadata.platform`` and the payload fields the adapters send.

HKDF, JCS and HMAC come from :mod:`tests.conformance.acs_core_vectors` (``rfc8785`` and RFC
5869 written out), not from agbom.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conformance.acs_core_vectors import session_key, signed, verifies

KEY_ID = "default"
STRIPPED = b"\r\n\t "
Post = Callable[[dict[str, Any]], dict[str, Any]]


def read_secret(path: Path) -> bytes:
    """The key as the adapters read it: the file's bytes without trailing whitespace."""
    return path.read_bytes().rstrip(STRIPPED)


def _now() -> str:
    # isoformat(timespec="milliseconds") with Z, as the adapters write it.
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(method: str, session_id: str, payload: dict[str, Any], **metadata: Any) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": method,
        "params": {
            "acs_version": "0.1.0",
            "request_id": str(uuid.uuid4()),
            "timestamp": _now(),
            "metadata": {"agent_id": "claude-code", "session_id": session_id, **metadata},
            "payload": payload,
        },
    }


def client_hello(session_id: str, methods: list[str]) -> dict[str, Any]:
    return envelope(
        "handshake/hello",
        session_id,
        {
            "acs_versions_supported": ["0.1.0"],
            "methods_implemented": methods,
            "transports_supported": ["http", "stdio"],
            "max_payload_size_bytes": 1_000_000,
            "provenance_producer": "none",
            "wrapped_protocols": [],
            "profiles_supported": ["acs-core"],
            "signature_algorithms_supported": ["HMAC-SHA256"],
        },
        platform="claude-code",
    )


class AnswerRefused(AssertionError):
    """The adapter would fail closed on this answer (unsigned, another algorithm, forged)."""


def exchange(send: Post, secret: bytes, message: dict[str, Any]) -> dict[str, Any]:
    """Sign ``message`` as the adapters do, send it, and check the answer as they do."""
    sid = message["params"]["metadata"]["session_id"]
    key = session_key(secret, sid)
    answer = send(signed(message, key, KEY_ID))
    if answer.get("id") != message["id"]:
        raise AnswerRefused(f"uncorrelated answer: {answer}")
    holder = answer.get("error" if "error" in answer else "result") or {}
    signature = holder.get("signature") or {}
    if signature.get("algorithm") != "HMAC-SHA256" or not verifies(answer, key):
        raise AnswerRefused(f"answer signature does not verify: {answer}")
    return answer
