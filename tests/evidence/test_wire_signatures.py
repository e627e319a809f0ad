"""ACS-Crypto on the wire: a real ``agbom serve --signing-key`` on 127.0.0.1, its responses
checked over HTTP by code agbom does not use (dilithium-py for ML-DSA-65, PyNaCl for
Ed25519, the ``rfc8785`` reference serializer for the §10 input), its public keys read from
``GET /v1/keys``, and the head it sealed at sessionEnd from the store and the bundle."""

from __future__ import annotations

import base64
import copy
import hmac
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.evidence import SigningKey, sign_object
from tests.evidence import independent
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post, run_cli

SECRET = b"wire-signature-test-secret-0123456789"
TOOL_CALL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "x"}}}


def _keys(tmp_path: Path, algorithm: str, name: str) -> tuple[Path, bytes]:
    prefix = tmp_path / name
    done = run_cli("keys", "generate", "-a", algorithm, "--out", str(prefix))
    assert done.returncode == 0, done.stderr
    _, raw = independent.raw_public_key(prefix.with_suffix(".pub").read_bytes())
    return prefix.with_suffix(".key"), raw


def _signing_and_hmac_server(tmp_path: Path, signing_key: Path) -> Served:
    """A server (not started) that signs answers with ``signing_key`` and verifies HMAC
    requests with :data:`SECRET`."""
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    return Served(
        db=tmp_path / "agbom.db",
        log=tmp_path / "serve.log",
        extra=["--signing-key", str(signing_key), "--secret-file", str(secret)],
    )


def _response_verifies(response: dict[str, Any], public: bytes) -> bool:
    """ACS §10 for a response: the signature sits in ``result`` (or ``error``); the input is
    the JCS of the whole envelope without it."""
    slot = "result" if "result" in response else "error"
    sig = response[slot].get("signature")
    if not isinstance(sig, dict) or sig.get("key_id") != independent.key_id(public):
        return False
    unsigned = {**response, slot: {k: v for k, v in response[slot].items() if k != "signature"}}
    raw = base64.b64decode(sig["value"], validate=True)
    return independent.verifies(sig["algorithm"], public, raw, independent.jcs(unsigned))


def _tampered_fails(response: dict[str, Any], public: bytes) -> None:
    """One changed value anywhere in the signed answer fails the independent check."""
    slot = "result" if "result" in response else "error"
    for field in [k for k in response[slot] if k != "signature"][:6]:
        changed = copy.deepcopy(response)
        value = changed[slot][field]
        changed[slot][field] = value + "x" if isinstance(value, str) else ["changed"]
        assert not _response_verifies(changed, public), field
    moved = copy.deepcopy(response)
    moved["id"] = 999_999
    assert not _response_verifies(moved, public)
    flipped = copy.deepcopy(response)
    sig = base64.b64decode(flipped[slot]["signature"]["value"])
    flipped[slot]["signature"]["value"] = base64.b64encode(bytes([sig[0] ^ 1]) + sig[1:]).decode()
    assert not _response_verifies(flipped, public)


@pytest.fixture
def crypto_server(tmp_path: Path) -> Iterator[tuple[Served, bytes, bytes]]:
    """Serving with an ML-DSA-65 key (first: it signs) and an Ed25519 one (published)."""
    ml_key, ml_raw = _keys(tmp_path, "ML-DSA-65", "guardian-ml")
    ed_key, ed_raw = _keys(tmp_path, "Ed25519", "guardian-ed")
    server = Served(
        db=tmp_path / "agbom.db",
        log=tmp_path / "serve.log",
        extra=["--signing-key", str(ml_key), "--signing-key", str(ed_key)],
    ).start()
    try:
        yield server, ml_raw, ed_raw
    finally:
        server.stop()


def test_an_acs_crypto_session_is_signed_with_ml_dsa_65_end_to_end(
    crypto_server: tuple[Served, bytes, bytes], tmp_path: Path
) -> None:
    server, ml_raw, ed_raw = crypto_server
    # The published keys: each kid is the key id computed from the key itself.
    published = httpx.get(server.url + "/v1/keys", timeout=10)
    assert published.status_code == 200
    assert published.headers["content-type"].startswith("application/jwk-set+json")
    jwks = published.json()["keys"]
    assert [k["kid"] for k in jwks] == [independent.key_id(ml_raw), independent.key_id(ed_raw)]
    assert base64.urlsafe_b64decode(jwks[0]["pub"] + "==") == ml_raw
    assert base64.urlsafe_b64decode(jwks[1]["x"] + "=") == ed_raw
    assert all("d" not in k and "priv" not in k for k in jwks)  # never private material

    session = "crypto-1"
    answer = post(server.url, hello(session, profiles_supported=["acs-core", "acs-crypto"]))
    server_hello = answer["result"]
    assert server_hello["profiles_accepted"] == ["acs-core", "acs-crypto"]
    # What requests may be signed with (none: no HMAC secret); what signs the answers is in
    # the extension member (issue 42 N2).
    assert server_hello["signature_algorithms_supported"] == []
    assert server_hello["agbom_signatures"]["responses"] == ["ML-DSA-65"]
    assert server_hello["signature"]["algorithm"] == "ML-DSA-65"
    assert _response_verifies(answer, ml_raw)
    assert not _response_verifies(answer, ed_raw)
    _tampered_fails(answer, ml_raw)

    steps = [
        request("steps/sessionStart", {"session_reason": "new"}, session_id=session),
        request("steps/toolCallRequest", TOOL_CALL, session_id=session),
        request("steps/sessionEnd", {"reason": "completed"}, session_id=session),
        # After the end: refused (-32003), and the error answer is signed too.
        request("steps/userMessage", {"message": "late"}, session_id=session),
    ]
    answers = [post(server.url, step) for step in steps]
    assert [a["result"]["decision"] for a in answers[:3]] == ["allow"] * 3
    assert "error" in answers[-1]
    for reply in answers:
        assert _response_verifies(reply, ml_raw), reply
    _tampered_fails(answers[1], ml_raw)
    _tampered_fails(answers[-1], ml_raw)

    # The head sealed at sessionEnd is in the store, signed with the same key.
    with sqlite3.connect(server.db) as conn:
        (statement,) = conn.execute(
            "SELECT statement FROM signed_heads WHERE session_id = ?", (session,)
        ).fetchone()
    head = json.loads(statement)
    assert independent.acs_signature_verifies(head, ml_raw)
    assert head["chain_hash"] == answers[2]["result"]["chain_hash"]

    # agbom audit verify --public-key checks the stored chain against it, with no secret.
    ml_pub, ed_pub = (tmp_path / f"guardian-{n}.pub" for n in ("ml", "ed"))
    ok = run_cli("audit", "verify", session, "--db", str(server.db), "--public-key", str(ml_pub))
    assert ok.returncode == 0 and b"signed ML-DSA-65" in ok.stdout, ok.stderr
    wrong = run_cli("audit", "verify", session, "--db", str(server.db), "--public-key", str(ed_pub))
    assert wrong.returncode == 1 and b"signature_key_unknown" in wrong.stdout

    # The bundle carries that very statement; chain and head check out independently.
    exporter, exporter_raw = _keys(tmp_path, "Ed25519", "auditor")
    out = tmp_path / "bundle.json"
    done = run_cli(
        "audit", "export", session, "--db", str(server.db), "--bundle", str(out),
        "--signing-key", str(exporter),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    bundle = json.loads(out.read_text())
    assert bundle["head"] == head
    assert independent.acs_signature_verifies(bundle, exporter_raw)
    assert independent.chain_recomputes(bundle["chain"], head["chain_hash"])
    assert head["entry_count"] == len(bundle["chain"])
    assert head["last_entry_id"] == bundle["chain"][-1]["entry_id"]


def test_a_rewritten_chain_after_the_seal_cannot_be_bundled(
    crypto_server: tuple[Served, bytes, bytes], tmp_path: Path
) -> None:
    server, _, _ = crypto_server
    session = "crypto-2"
    post(server.url, hello(session, profiles_supported=["acs-crypto"]))
    for step in (
        request("steps/sessionStart", {"session_reason": "new"}, session_id=session),
        request("steps/sessionEnd", {"reason": "completed"}, session_id=session),
    ):
        post(server.url, step)
    server.stop()
    # Someone with write access drops the last entry: the chain is still well linked.
    with sqlite3.connect(server.db) as conn:
        conn.execute("DROP TRIGGER IF EXISTS chain_entries_no_delete")
        conn.execute(
            "DELETE FROM chain_entries WHERE session_id = ? AND seq = "
            "(SELECT MAX(seq) FROM chain_entries WHERE session_id = ?)",
            (session, session),
        )
    public = str(tmp_path / "guardian-ml.pub")
    check = run_cli("audit", "verify", session, "--db", str(server.db), "--public-key", public)
    assert check.returncode == 1 and b"chain_mismatch" in check.stdout
    exporter, _ = _keys(tmp_path, "Ed25519", "auditor")
    done = run_cli(
        "audit", "export", session, "--db", str(server.db), "--bundle",
        str(tmp_path / "b.json"), "--signing-key", str(exporter),
    )  # fmt: skip
    assert done.returncode == 1
    stderr = done.stderr.decode()
    assert "changed after the seal" in stderr and "Traceback" not in stderr


def test_ed25519_signs_unsigned_traffic_and_hmac_sessions_keep_hmac(tmp_path: Path) -> None:
    ed_key, ed_raw = _keys(tmp_path, "Ed25519", "guardian-ed")
    server = _signing_and_hmac_server(tmp_path, ed_key).start()
    try:
        # acs-crypto needs ML-DSA-65: an Ed25519-only Guardian does not accept it.
        answer = post(server.url, hello("plain", profiles_supported=["acs-core", "acs-crypto"]))
        assert answer["result"]["profiles_accepted"] == ["acs-core"]
        # Ed25519 is not a registered name: never in the standard field (issue 42 N3).
        assert answer["result"]["signature_algorithms_supported"] == ["HMAC-SHA256"]
        assert answer["result"]["agbom_signatures"]["responses"] == ["Ed25519", "HMAC-SHA256"]
        assert answer["result"]["signature"]["algorithm"] == "Ed25519"
        assert _response_verifies(answer, ed_raw)
        _tampered_fails(answer, ed_raw)
        start = post(
            server.url, request("steps/sessionStart", {"session_reason": "new"}, session_id="plain")
        )
        assert _response_verifies(start, ed_raw)

        # A client that signs with HMAC is answered with HMAC, which it can check.
        signed = _hmac_signed(hello("hmac", profiles_supported=["acs-core"]), "hmac")
        answer = post(server.url, signed)
        sig = answer["result"]["signature"]
        assert sig["algorithm"] == "HMAC-SHA256"
        assert not _response_verifies(answer, ed_raw)
    finally:
        server.stop()


def _hmac_signed(envelope: dict[str, Any], session_id: str) -> dict[str, Any]:
    """§10 HMAC baseline, computed here: HKDF-SHA256(secret, no salt, info=session_id)."""
    import hashlib

    prk = hmac.new(bytes(32), SECRET, hashlib.sha256).digest()
    key = hmac.new(prk, session_id.encode() + b"\x01", hashlib.sha256).digest()
    data = independent.jcs(envelope)
    value = base64.b64encode(hmac.new(key, data, hashlib.sha256).digest()).decode()
    params = {**envelope["params"]}
    params["signature"] = {"algorithm": "HMAC-SHA256", "value": value, "key_id": "default"}
    return {**envelope, "params": params}


def test_a_key_file_others_can_read_is_refused_before_serving(tmp_path: Path) -> None:
    key, _ = _keys(tmp_path, "ML-DSA-65", "loose")
    os.chmod(key, 0o644)
    done = run_cli(
        "serve", "--db", str(tmp_path / "agbom.db"), "--port", "0", "--signing-key", str(key)
    )
    assert done.returncode == 1  # agbom's exit code for a bad input file
    stderr = done.stderr.decode()
    assert "chmod 600" in stderr and "Traceback" not in stderr
    assert b"PRIVATE KEY" not in done.stderr + done.stdout


def test_a_retired_key_stays_published_so_its_evidence_still_verifies(tmp_path: Path) -> None:
    old_key, old_raw = _keys(tmp_path, "Ed25519", "old")
    # Evidence the old key signed before the rotation: a sealed head.
    head = tmp_path / "head.json"
    statement = {
        "statement": "agbom.chain-head/v1", "session_id": "before", "chain_hash": "a" * 64,
        "entry_count": 1, "last_entry_id": "1", "sealed_at": "2026-12-01T00:00:00.000000Z",
    }  # fmt: skip
    head.write_text(json.dumps(sign_object(statement, SigningKey.from_file(old_key))))
    old_key.unlink()  # the private half is destroyed at the rotation
    new_key, new_raw = _keys(tmp_path, "ML-DSA-65", "new")
    server = Served(
        db=tmp_path / "agbom.db",
        log=tmp_path / "serve.log",
        extra=["--signing-key", str(new_key), "--retired-key", str(tmp_path / "old.pub")],
    ).start()
    try:
        jwks = httpx.get(server.url + "/v1/keys", timeout=10).json()
        answer = post(server.url, hello("after"))
    finally:
        server.stop()
    assert [k["kid"] for k in jwks["keys"]] == [
        independent.key_id(new_raw),
        independent.key_id(old_raw),
    ]
    assert _response_verifies(answer, new_raw)  # the new key signs
    (tmp_path / "keys.json").write_text(json.dumps(jwks))
    ok = run_cli("verify", str(head), "--jwks", str(tmp_path / "keys.json"))
    assert ok.returncode == 0, ok.stderr
    assert independent.acs_signature_verifies(json.loads(head.read_text()), old_raw)


def test_an_acs_crypto_session_keeps_its_key_across_a_restart(tmp_path: Path) -> None:
    """A client that signs with HMAC in an acs-crypto session: its answers are ML-DSA-65
    before and after the decision process restarts (the key is recorded in the store)."""
    ml_key, ml_raw = _keys(tmp_path, "ML-DSA-65", "guardian-ml")
    server = _signing_and_hmac_server(tmp_path, ml_key)
    session = "crypto-hmac"
    server.start()
    try:
        offer = hello(session, profiles_supported=["acs-core", "acs-crypto"])
        answer = post(server.url, _hmac_signed(offer, session))
        assert answer["result"]["profiles_accepted"] == ["acs-core", "acs-crypto"]
        assert _response_verifies(answer, ml_raw)
        start = request("steps/sessionStart", {"session_reason": "new"}, session_id=session)
        assert _response_verifies(post(server.url, _hmac_signed(start, session)), ml_raw)
    finally:
        server.stop()
    server.start()  # a new decision process, nothing in memory
    try:
        step = request("steps/toolCallRequest", TOOL_CALL, session_id=session)
        after = post(server.url, _hmac_signed(step, session))
        assert "result" in after, after
        assert after["result"]["signature"]["algorithm"] == "ML-DSA-65"
        assert _response_verifies(after, ml_raw)
        # An ACS-Core session on the same server still gets HMAC answers to HMAC requests.
        plain = post(
            server.url, _hmac_signed(hello("core", profiles_supported=["acs-core"]), "core")
        )
        assert plain["result"]["signature"]["algorithm"] == "HMAC-SHA256"
    finally:
        server.stop()
