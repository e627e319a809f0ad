"""One key file serves the Python ACS adapters and the TypeScript conformance harness at once
(issue 42 N1), against a real ``agbom serve --secret-file FILE`` with its default reading.

The adapters read the file without its trailing whitespace
(:mod:`tests.conformance.python_adapter_client`), the harness reads its raw bytes
(:mod:`tests.conformance.reference_check`); for ``openssl rand -hex 32 > FILE``, which the
adapters recommend, that is 64 bytes against 65. agbom holds a raw-read file that ends in
whitespace both ways and answers each session the way its client signed. A client that reads
the file a third way (hex-decoded) is refused with a signature failure that names the likely
cause, never allowed. On main the adapters' client was refused on its first signed request.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conformance import python_adapter_client as adapter
from tests.conformance.acs_core_vectors import session_key, signed
from tests.conformance.reference_check import read_secret as harness_secret
from tests.conformance.reference_check import run_check
from tests.conformance.test_reference_key_file import key_file_bytes, sender
from tests.transports.served import Served

pytestmark = pytest.mark.network

METHODS = ["steps/toolCallRequest", "steps/toolCallResult"]
BASH = {"tool": {"name": "Bash"}, "arguments": {"command": {"value": "ls -la"}}}


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


def _serve(folder: Path, content: bytes, *extra: str) -> tuple[Served, Path]:
    key = folder / "hmac.key"
    key.write_bytes(content)
    key.chmod(0o600)
    server = Served(
        db=folder / "agbom.db",
        log=folder / "serve.log",
        extra=["--secret-file", str(key), "--key-id", adapter.KEY_ID, *extra],
    ).start()
    return server, key


def _adapter_session(send: Any, secret: bytes) -> list[dict[str, Any]]:
    """A handshake, a tool call and its result, as an adapter sends them."""
    sid = str(uuid.uuid4())
    answers = [adapter.exchange(send, secret, adapter.client_hello(sid, METHODS))]
    call = adapter.envelope("steps/toolCallRequest", sid, BASH)
    answers.append(adapter.exchange(send, secret, call))
    result = {
        "tool": {"name": "Bash"},
        "exit_status": "success",
        "outputs": [{"value": "total 0"}],
        "request_id_ref": call["params"]["request_id"],
    }
    answers.append(
        adapter.exchange(send, secret, adapter.envelope("steps/toolCallResult", sid, result))
    )
    return answers


KINDS = ["openssl-hex", "openssl-base64", "passphrase", "binary-then-newline"]


def _content(kind: str) -> bytes:
    if kind == "binary-then-newline":
        return secrets.token_bytes(32).rstrip(adapter.STRIPPED) + b"\n"
    return key_file_bytes(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_the_adapters_and_the_harness_are_served_by_the_same_file(
    tmp_path: Path, client: httpx.Client, kind: str
) -> None:
    server, key = _serve(tmp_path, _content(kind))
    send = sender(server, client)
    try:
        assert adapter.read_secret(key) != harness_secret(key)  # the two readings differ
        answers = _adapter_session(send, adapter.read_secret(key))
        assert "negotiated_version" in answers[0]["result"]
        assert [a["result"]["decision"] for a in answers[1:]] == ["allow", "allow"]
        # The harness, on the same server and file, meanwhile: ten of ten.
        score = run_check(send, harness_secret(key), key_id=adapter.KEY_ID)
        assert (score.passed, score.failure) == (10, None), server.logs()
        # And the adapter again, after the harness: each session keeps its own reading.
        assert _adapter_session(send, adapter.read_secret(key))[1]["result"]["decision"] == (
            "allow"
        )
    finally:
        server.stop()


def test_a_client_that_decodes_the_file_is_refused_with_the_likely_cause(
    tmp_path: Path, client: httpx.Client
) -> None:
    server, key = _serve(tmp_path, key_file_bytes("openssl-hex"))
    send = sender(server, client)
    decoded = bytes.fromhex(key.read_text().strip())
    try:
        sid = str(uuid.uuid4())
        hello = adapter.client_hello(sid, METHODS)
        answer = send(signed(hello, session_key(decoded, sid), adapter.KEY_ID))
        # After a refused hello the session has no handshake; a signed step is refused too.
        call = adapter.envelope("steps/toolCallRequest", sid, BASH)
        second = send(signed(call, session_key(decoded, sid), adapter.KEY_ID))
    finally:
        server.stop()
    for reply in (answer, second):
        assert "result" not in reply, reply
        error = reply["error"]
        assert error["code"] == -32004 and error["data"]["reason"] == "signature_mismatch"
        message = error["data"]["message"]
        assert "raw bytes (65, a trailing newline included)" in message
        assert "without its trailing whitespace (64 bytes" in message
        assert "decoded from hex or base64" in message and "--secret-encoding" in message
    text = orjson.dumps([answer, second]).decode()
    assert key.read_text().strip() not in text and decoded.hex() not in text


def test_a_file_without_trailing_whitespace_is_one_key_for_everyone(
    tmp_path: Path, client: httpx.Client
) -> None:
    """The setting that needs no detection, as docs/protocol.md recommends it: a key file
    without a final newline reads the same raw and stripped."""
    server, key = _serve(tmp_path, key_file_bytes("openssl-hex").rstrip(b"\n"))
    send = sender(server, client)
    try:
        assert adapter.read_secret(key) == harness_secret(key)
        assert _adapter_session(send, adapter.read_secret(key))[1]["result"]["decision"] == (
            "allow"
        )
        score = run_check(send, harness_secret(key), key_id=adapter.KEY_ID)
        assert (score.passed, score.failure) == (10, None)
    finally:
        server.stop()
