"""``system/ping`` is answered allow whatever its signature holds (ACS §13: "regardless of
policy, signature, or session state", so liveness can be probed during a key or algorithm
mismatch), by a real ``agbom serve`` that requires signed requests (issue 42 N6).

On d6d3b4e a ping signed with a name outside the §10.1 registry was -32600: the envelope
schema's enum refused the signature before the ping was recognised.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conformance.acs_core_vectors import session_key, signed
from tests.guardian.acs import request
from tests.transports.served import Served, post

pytestmark = pytest.mark.network

SECRET = b"ping-test-secret-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("ping")
    secret = folder / "secret"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    server = Served(
        db=folder / "agbom.db",
        log=folder / "serve.log",
        extra=["--secret-file", str(secret), "--key-id", "k1", "--require-signatures"],
    ).start()
    yield server
    server.stop()


def _ping(signature: Any, *, sid: str | None = None) -> dict[str, Any]:
    message = request("system/ping", {"echo": "alive?"}, session_id=sid or str(uuid.uuid4()))
    message["params"]["signature"] = signature
    return message


SIGNATURES = {
    "unregistered algorithm": {"algorithm": "Ed25519", "value": "AAAA", "key_id": "k1"},
    "made-up algorithm": {"algorithm": "SHA1-RSA", "value": "AAAA", "key_id": "k1"},
    "registered, not verified": {"algorithm": "ML-DSA-65", "value": "AAAA", "key_id": "x"},
    "empty object": {},
    "not an object": "HMAC-SHA256:deadbeef",
    "no value": {"algorithm": "HMAC-SHA256", "key_id": "k1"},
    "wrong HMAC": {"algorithm": "HMAC-SHA256", "value": "A" * 43 + "=", "key_id": "k1"},
    "unknown key": {"algorithm": "HMAC-SHA256", "value": "A" * 43 + "=", "key_id": "nope"},
}


@pytest.mark.parametrize("kind", SIGNATURES)
def test_a_ping_is_allowed_whatever_its_signature(served: Served, kind: str) -> None:
    answer = post(served.url, _ping(SIGNATURES[kind]))
    assert "result" in answer, answer
    assert answer["result"]["decision"] == "allow"
    assert answer["result"]["payload"]["status"] == "ok"
    assert answer["result"]["payload"]["echo"] == "alive?"


def test_a_ping_is_allowed_signed_and_unsigned_and_other_requests_are_not(served: Served) -> None:
    sid = str(uuid.uuid4())
    message = request("system/ping", {}, session_id=sid)
    assert post(served.url, message)["result"]["decision"] == "allow"  # unsigned
    good = signed(request("system/ping", {}, session_id=sid), session_key(SECRET, sid), "k1")
    assert post(served.url, good)["result"]["decision"] == "allow"
    # The exemption is the ping's alone: the same signature on a hello is still refused.
    hello = request(
        "handshake/hello",
        {
            "acs_versions_supported": ["0.1.0"],
            "methods_implemented": ["steps/sessionStart"],
            "transports_supported": ["http"],
            "provenance_producer": "none",
        },
        session_id=sid,
    )
    hello["params"]["signature"] = SIGNATURES["unregistered algorithm"]
    assert post(served.url, hello)["error"]["code"] == -32600
    hello["params"]["signature"] = SIGNATURES["wrong HMAC"]
    assert post(served.url, hello)["error"]["code"] == -32004


def test_a_ping_whose_envelope_is_broken_elsewhere_is_still_invalid(served: Served) -> None:
    message = _ping(SIGNATURES["unregistered algorithm"])
    del message["params"]["request_id"]
    error = post(served.url, message)["error"]
    assert error["code"] == -32600
    assert error["data"]["reason"] == "invalid_envelope"
