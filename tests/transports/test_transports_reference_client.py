"""A client shaped like the ACS reference TypeScript host adapter, against a real ``agbom serve``.

That adapter (behind the reference opencode and Claude Code shims) declares two methods,
offers no profile, never sends ``steps/sessionStart`` and may use host session ids that are not
UUIDs. Every step it sends must be decided, and its chain must verify.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agbom.protocol import KeyRing, sign_envelope, verify_envelope
from agbom.protocol.signatures import SignatureInvalid
from tests.guardian.acs import request
from tests.transports.served import Served, post, run_cli

pytestmark = pytest.mark.network

TWO_METHODS = ["steps/toolCallRequest", "steps/toolCallResult"]


def reference_hello(session_id: str, **extra: Any) -> dict[str, Any]:
    payload = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": TWO_METHODS,
        "transports_supported": ["http"],
        "provenance_producer": "none",
        "profiles_supported": [],
        **extra,
    }
    return request("handshake/hello", payload, session_id=session_id, agent_id="opencode")


def tool_call(session_id: str, command: str) -> dict[str, Any]:
    payload = {
        "tool": {"name": "Bash"},
        "arguments": {"command": {"value": command}},
        "raw_command": command,
    }
    return request("steps/toolCallRequest", payload, session_id=session_id, agent_id="opencode")


def tool_result(session_id: str, output: str) -> dict[str, Any]:
    payload = {"tool": {"name": "Bash"}, "exit_status": "success", "outputs": [{"value": output}]}
    return request("steps/toolCallResult", payload, session_id=session_id, agent_id="opencode")


def host_session_id() -> str:
    return f"ses_01J{uuid.uuid4().hex[:23].upper()}"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("reference-client")
    server = Served(db=folder / "store.db", log=folder / "serve.log").start()
    yield server
    server.stop()


def test_two_method_client_without_session_start_gets_decisions(plain: Served) -> None:
    sid = host_session_id()
    server_hello = post(plain.url, reference_hello(sid))["result"]
    assert server_hello["methods_evaluated"] == sorted(TWO_METHODS)
    assert server_hello["selected_transport"] == "http"
    assert server_hello["profiles_accepted"] == []
    heads = []
    for step in range(3):
        answer = post(plain.url, tool_call(sid, f"ls -la dir{step}"))
        assert "error" not in answer, answer
        assert answer["result"]["decision"] == "allow"
        assert isinstance(answer["result"]["metadata"]["evaluation_duration_ms"], int)
        heads.append(answer["result"]["chain_hash"])
        answer = post(plain.url, tool_result(sid, "total 0"))
        assert answer["result"]["decision"] == "allow", answer
        heads.append(answer["result"]["chain_hash"])
    assert len(set(heads)) == 6
    exported = run_cli("audit", "export", sid, "--db", str(plain.db))
    entries = json.loads(exported.stdout)
    assert entries[0]["previous_hash"] is None
    assert entries[0]["session_start"] == "implicit"
    assert all("session_start" not in e for e in entries[1:])
    verified = run_cli("audit", "verify", sid, "--expected-head", heads[-1], "--db", str(plain.db))
    assert verified.returncode == 0, verified.stderr
    # A head the client never received is a break (entries cut from the end are caught).
    cut = run_cli("audit", "verify", sid, "--expected-head", heads[-2], "--db", str(plain.db))
    assert cut.returncode == 1


def test_a_step_with_no_handshake_is_still_refused(plain: Served) -> None:
    sid = host_session_id()
    error = post(plain.url, tool_call(sid, "ls"))["error"]
    assert error["code"] == -32003 and error["data"]["reason"] == "no_handshake"


def test_a_method_the_client_did_not_declare_is_not_negotiated(plain: Served) -> None:
    sid = host_session_id()
    post(plain.url, reference_hello(sid))
    error = post(plain.url, request("steps/userMessage", {"content": "x"}, session_id=sid))
    assert error["error"]["code"] == -32003
    assert error["error"]["data"]["reason"] == "method_not_negotiated"


def test_a_hello_that_does_not_offer_http_is_refused_over_http(plain: Served) -> None:
    sid = host_session_id()
    error = post(plain.url, reference_hello(sid, transports_supported=["stdio"]))["error"]
    assert error["code"] == -32000 and error["data"]["reason"] == "transport_not_offered"


def test_session_end_seals_an_implicitly_opened_session(plain: Served) -> None:
    sid = host_session_id()
    methods = [*TWO_METHODS, "steps/sessionEnd"]
    post(plain.url, reference_hello(sid, methods_implemented=methods))
    post(plain.url, tool_call(sid, "pwd"))
    end = post(plain.url, request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))
    assert end["result"]["decision"] == "allow"
    after = post(plain.url, tool_call(sid, "pwd"))["error"]
    assert after["code"] == -32000 and after["data"]["reason"] == "session_closed"
    assert run_cli("audit", "verify", sid, "--db", str(plain.db)).returncode == 0


def test_require_session_start_restores_the_refusal(tmp_path: Path) -> None:
    server = Served(
        db=tmp_path / "s.db", log=tmp_path / "serve.log", extra=["--require-session-start"]
    ).start()
    try:
        sid = host_session_id()
        post(server.url, reference_hello(sid))
        error = post(server.url, tool_call(sid, "ls"))["error"]
        assert error["code"] == -32003 and error["data"]["reason"] == "no_session"
    finally:
        server.stop()


# -- signatures: key ids, rotation, signed errors ------------------------------------------------


@pytest.fixture(scope="module")
def rotated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, KeyRing]]:
    folder = tmp_path_factory.mktemp("rotated")
    keys = {"k1": "hex:" + "11" * 32, "k2": "hex:" + "22" * 32}
    keys_file = folder / "keys.json"
    keys_file.write_text(json.dumps(keys))
    keys_file.chmod(0o600)
    server = Served(
        db=folder / "store.db",
        log=folder / "serve.log",
        extra=["--keys-file", str(keys_file), "--key-id", "k2", "--require-signatures"],
    ).start()
    yield server, KeyRing.from_keys_file(keys_file)
    server.stop()


def signed_session(server: Served, ring: KeyRing, key_id: str) -> str:
    sid = host_session_id()
    reply = post(server.url, ring.sign(reference_hello(sid), sid, key_id))
    assert "result" in reply, reply
    assert reply["result"]["signature"]["key_id"] == key_id
    verify_envelope(reply, ring.session_key(sid, key_id))
    return sid


def test_secret_file_with_key_id_k1_authenticates(tmp_path: Path) -> None:
    secret = tmp_path / "deployment.key"
    secret.write_bytes(bytes(range(64)))
    secret.chmod(0o600)
    server = Served(
        db=tmp_path / "s.db",
        log=tmp_path / "serve.log",
        extra=["--secret-file", str(secret), "--key-id", "k1"],
    ).start()
    try:
        ring = KeyRing.from_file(secret, "k1")
        sid = signed_session(server, ring, "k1")
        answer = post(server.url, ring.sign(tool_call(sid, "ls"), sid))
        verify_envelope(answer, ring.session_key(sid))
        assert answer["result"]["decision"] == "allow"
        assert answer["result"]["signature"]["key_id"] == "k1"
        # The key id `default` is no longer what this deployment's key is called.
        other = KeyRing.from_file(secret)
        sid2 = host_session_id()
        error = post(server.url, other.sign(reference_hello(sid2), sid2))["error"]
        assert error["code"] == -32004 and error["data"]["reason"] == "signature_key_unknown"
        assert "signature" not in error  # no key of this deployment is named: nothing signs
    finally:
        server.stop()


@pytest.mark.parametrize("key_id", ["k1", "k2"])
def test_either_key_of_a_rotation_verifies_and_answers_in_kind(
    rotated: tuple[Served, KeyRing], key_id: str
) -> None:
    server, ring = rotated
    sid = signed_session(server, ring, key_id)
    answer = post(server.url, ring.sign(tool_call(sid, "ls"), sid, key_id))
    assert answer["result"]["signature"]["key_id"] == key_id
    verify_envelope(answer, ring.session_key(sid, key_id))
    other = "k2" if key_id == "k1" else "k1"
    with pytest.raises(SignatureInvalid):
        verify_envelope(answer, ring.session_key(sid, other))


def test_an_unknown_key_id_is_refused(rotated: tuple[Served, KeyRing]) -> None:
    server, ring = rotated
    sid = host_session_id()
    unknown = sign_envelope(reference_hello(sid), b"x" * 32, "k3")
    error = post(server.url, unknown)["error"]
    assert error["code"] == -32004 and error["data"]["reason"] == "signature_key_unknown"


def test_errors_of_a_signed_session_are_signed(rotated: tuple[Served, KeyRing]) -> None:
    server, ring = rotated
    sid = signed_session(server, ring, "k1")
    key = ring.session_key(sid, "k1")
    step = ring.sign(tool_call(sid, "ls"), sid, "k1")
    assert "result" in post(server.url, step)
    refusals = {
        # a replay
        -32005: step,
        # a method the client did not declare
        -32003: ring.sign(
            request("steps/userMessage", {"content": "x"}, session_id=sid), sid, "k1"
        ),
        # a payload that fails its schema
        -32602: ring.sign(
            request("steps/toolCallRequest", {"tool": {}}, session_id=sid, agent_id="opencode"),
            sid,
            "k1",
        ),
        # an unsigned request in a signed session, and a forged one: signed with the session's
        # key all the same, so the client can trust the refusal
        -32004: tool_call(sid, "ls"),
    }
    for code, body in refusals.items():
        error = post(server.url, body)
        assert error["error"]["code"] == code, error
        assert error["error"]["signature"]["key_id"] == "k1"
        verify_envelope(error, key)
    forged = ring.sign(tool_call(sid, "ls"), sid, "k1")
    forged["params"]["payload"]["raw_command"] = "rm -rf /"
    error = post(server.url, forged)
    assert error["error"]["data"]["reason"] == "signature_mismatch"
    verify_envelope(error, key)


def test_a_guardian_without_keys_answers_a_signed_hello_consistently(plain: Served) -> None:
    sid = host_session_id()
    signed_hello = sign_envelope(reference_hello(sid), b"k" * 32, "k1")
    server_hello = post(plain.url, signed_hello)["result"]
    assert server_hello["signature_algorithms_supported"] == []
    assert "signature" not in server_hello
    signed_step = sign_envelope(tool_call(sid, "ls"), b"k" * 32, "k1")
    error = post(plain.url, signed_step)["error"]
    assert error["code"] == -32004 and error["data"]["reason"] == "signing_not_configured"
    assert error["data"]["signature_algorithms_supported"] == []
    # Unsigned, as the hello advertised, the same step is decided.
    assert post(plain.url, tool_call(sid, "ls"))["result"]["decision"] == "allow"
