"""One key file, one key: a real ``agbom serve`` given a key file scores 10 of 10 on the
reference conformance check, which reads that same file its own way (the raw bytes).

The files are the ones operators make: ``openssl rand -hex 32 > key`` (what agbom's docs
recommend; 64 hex digits and a newline), ``openssl rand -base64 32``, 32 random bytes, a
passphrase typed into an editor. With ``--secret-encoding hex`` agbom decodes the hex file to
32 bytes, the reference does not, and the mismatch answer says how agbom read the key.
"""

from __future__ import annotations

import base64
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conformance.reference_check import DEFAULT_KEY_ID, read_secret, run_check
from tests.transports.served import Served

pytestmark = pytest.mark.network


def _openssl(*args: str) -> bytes | None:
    tool = shutil.which("openssl")
    if tool is None:
        return None
    return subprocess.run([tool, "rand", *args], capture_output=True, check=True).stdout


def key_file_bytes(kind: str) -> bytes:
    """The content of a key file made the usual way (openssl when installed, else the same
    format written here: its output is the digits and one newline)."""
    if kind == "openssl-hex":
        return _openssl("-hex", "32") or (secrets.token_hex(32) + "\n").encode()
    if kind == "openssl-base64":
        return _openssl("-base64", "32") or base64.b64encode(secrets.token_bytes(32)) + b"\n"
    if kind == "binary":
        return secrets.token_bytes(32)
    return b"correct horse battery staple, a long passphrase\n"


def serve(folder: Path, key: Path, *extra: str) -> Served:
    return Served(
        db=folder / "agbom.db",
        log=folder / "serve.log",
        extra=["--secret-file", str(key), "--key-id", DEFAULT_KEY_ID, *extra],
    ).start()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


def sender(server: Served, client: httpx.Client) -> Any:
    def send(body: dict[str, Any]) -> dict[str, Any]:
        reply = client.post(
            f"{server.url}/acs",
            content=orjson.dumps(body),
            headers={"content-type": "application/json"},  # as the reference's fetch sends
        )
        answer: dict[str, Any] = orjson.loads(reply.content)
        return answer

    return send


@pytest.mark.parametrize("kind", ["openssl-hex", "openssl-base64", "binary", "passphrase"])
def test_the_reference_check_scores_ten_of_ten_on_the_same_key_file(
    tmp_path: Path, client: httpx.Client, kind: str
) -> None:
    key = tmp_path / "key"
    key.write_bytes(key_file_bytes(kind))
    key.chmod(0o600)
    server = serve(tmp_path, key)
    try:
        score = run_check(sender(server, client), read_secret(key))
    finally:
        server.stop()
    assert (score.passed, score.failure) == (10, None), server.logs()


def test_a_mismatched_encoding_is_named_in_the_refusal(
    tmp_path: Path, client: httpx.Client
) -> None:
    key = tmp_path / "key"
    key.write_bytes(key_file_bytes("openssl-hex"))
    key.chmod(0o600)
    server = serve(tmp_path, key, "--secret-encoding", "hex")
    try:
        score = run_check(sender(server, client), read_secret(key))
    finally:
        server.stop()
    # The first signed probe is refused: agbom's key is the 32 decoded bytes, the
    # reference's the 65 bytes of text.
    assert score.passed == 1 and score.failure is not None
    error = score.answers[-1]["error"]
    assert error["code"] == -32004 and error["data"]["reason"] == "signature_mismatch"
    assert "decoded from hex (32 bytes)" in error["data"]["message"]
    assert "--secret-encoding" in error["data"]["message"]
    assert key.read_text().strip() not in orjson.dumps(score.answers).decode()


def test_serve_refuses_an_unknown_encoding(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(key_file_bytes("binary"))
    key.chmod(0o600)
    with pytest.raises(RuntimeError, match="secret-encoding"):
        serve(tmp_path, key, "--secret-encoding", "rot13")
