"""Signature failure modes, key derivation and key files."""

from __future__ import annotations

import base64
import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agbom.protocol import (
    SIGNATURE_INVALID,
    KeyMaterialError,
    KeyRing,
    SignatureInvalid,
    derive_session_key,
    parse_key_material,
    sign_envelope,
    signing_input,
    verify_envelope,
)

KEY = derive_session_key(b"k" * 32, "session-1")
HEX16 = bytes.fromhex("00112233445566778899aabbccddeeff")


def request() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "steps/toolCallRequest",
        "id": 7,
        "params": {
            "acs_version": "0.1.0",
            "request_id": "r1",
            "timestamp": "2026-09-19T10:00:00Z",
            "metadata": {"agent_id": "a", "session_id": "session-1"},
            "payload": {"tool": {"name": "Bash"}, "raw_command": "ls é"},
        },
    }


def test_round_trip_request_and_response() -> None:
    signed = sign_envelope(request(), KEY, "k1")
    assert signed["params"]["signature"]["key_id"] == "k1"
    verify_envelope(signed, KEY)
    response = {"jsonrpc": "2.0", "id": 7, "result": {"decision": "allow", "type": "final"}}
    verify_envelope(sign_envelope(response, KEY, "k1"), KEY)


def test_error_responses_are_signed_in_error() -> None:
    response = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Invalid params"}}
    signed = sign_envelope(response, KEY, "k1")
    assert "signature" in signed["error"]
    verify_envelope(signed, KEY)
    signed["error"]["code"] = -32600
    with pytest.raises(SignatureInvalid) as info:
        verify_envelope(signed, KEY)
    assert info.value.reason == "signature_mismatch"


def test_signature_is_not_part_of_the_signing_input() -> None:
    env = request()
    assert signing_input(sign_envelope(env, KEY, "k1")) == signing_input(env)


def _reason(env: dict[str, Any], key: bytes = KEY) -> str:
    with pytest.raises(SignatureInvalid) as info:
        verify_envelope(env, key)
    assert info.value.code == SIGNATURE_INVALID
    return info.value.reason


def test_missing_signature() -> None:
    assert _reason(request()) == "signature_missing"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("params", "payload", "raw_command"), "rm -rf /"),
        (("params", "metadata", "session_id"), "session-2"),
        (("method",), "steps/userMessage"),
        (("id",), 8),
    ],
)
def test_any_edit_breaks_the_signature(path: tuple[str, ...], value: Any) -> None:
    signed = sign_envelope(request(), KEY, "k1")
    target = signed
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    assert _reason(signed) == "signature_mismatch"


def test_wrong_key() -> None:
    signed = sign_envelope(request(), KEY, "k1")
    assert _reason(signed, derive_session_key(b"k" * 32, "session-2")) == "signature_mismatch"


@pytest.mark.parametrize("algorithm", ["ECDSA-P256", "ML-DSA-65", "hmac-sha256", "none"])
def test_unsupported_algorithm(algorithm: str) -> None:
    signed = sign_envelope(request(), KEY, "k1")
    signed["params"]["signature"]["algorithm"] = algorithm
    assert _reason(signed) == "signature_algorithm_unsupported"


@pytest.mark.parametrize(
    "value", ["not base64!!", "YWJj", base64.b64encode(b"x" * 31).decode(), "", 42]
)
def test_malformed_value(value: Any) -> None:
    signed = sign_envelope(request(), KEY, "k1")
    signed["params"]["signature"]["value"] = value
    assert _reason(signed) == "signature_malformed"


def test_signature_not_an_object() -> None:
    env = request()
    env["params"]["signature"] = "abc"
    assert _reason(env) == "signature_malformed"


def test_flipped_bit_in_value() -> None:
    signed = sign_envelope(request(), KEY, "k1")
    raw = bytearray(base64.b64decode(signed["params"]["signature"]["value"]))
    raw[0] ^= 1
    signed["params"]["signature"]["value"] = base64.b64encode(bytes(raw)).decode()
    assert _reason(signed) == "signature_mismatch"


def test_unsignable_envelope() -> None:
    with pytest.raises(SignatureInvalid):
        signing_input({"jsonrpc": "2.0", "id": 1})
    with pytest.raises(SignatureInvalid):
        signing_input({"jsonrpc": "2.0", "method": "x", "params": [1]})


def test_sign_does_not_modify_input() -> None:
    env = request()
    before = copy.deepcopy(env)
    sign_envelope(env, KEY, "k1")
    assert env == before


def test_hkdf_rfc5869_case_3() -> None:
    # RFC 5869 test case 3 (SHA-256, empty salt and info), truncated to 32 bytes.
    okm = derive_session_key(bytes.fromhex("0b" * 22), "")
    expected = "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
    assert okm.hex() == expected


def test_session_keys_differ_per_session() -> None:
    ring = KeyRing(b"s" * 32, "k1")
    assert ring.session_key("a") != ring.session_key("b")
    assert ring.session_key("a") is ring.session_key("a")  # cached


def test_keyring_sign_and_verify_checks_key_id() -> None:
    ring = KeyRing(b"s" * 32, "k1")
    signed = ring.sign(request(), "session-1")
    ring.verify(signed, "session-1")
    other = KeyRing(b"s" * 32, "k2")
    with pytest.raises(SignatureInvalid) as info:
        other.verify(signed, "session-1")
    assert info.value.reason == "signature_key_unknown"
    with pytest.raises(SignatureInvalid, match="no signature"):
        ring.verify(request(), "session-1")


def test_keyring_cache_is_bounded() -> None:
    ring = KeyRing(b"s" * 32, max_cached=3)
    for i in range(10):
        ring.session_key(str(i))
    assert len(ring._cache) <= 3


def test_keyring_repr_hides_the_secret() -> None:
    ring = KeyRing(b"supersecretmaterial!", "k1")
    assert "supersecret" not in repr(ring) and "k1" in repr(ring)


OPENSSL_HEX = b"00112233445566778899aabbccddeeff" * 2 + b"\n"  # as `openssl rand -hex 32`


@pytest.mark.parametrize(
    ("content", "encoding", "expected"),
    [
        # raw (the default): the bytes exactly, a trailing newline and hex digits included.
        (OPENSSL_HEX, "raw", OPENSSL_HEX),
        (b"  a long passphrase, not hex  \n", "raw", b"  a long passphrase, not hex  \n"),
        (b"\x00\x01\x02binary\xff\xfe" * 3, "raw", b"\x00\x01\x02binary\xff\xfe" * 3),
        (b"hex:00112233445566778899AABBCCDDEEFF", "raw", b"hex:00112233445566778899AABBCCDDEEFF"),
        (OPENSSL_HEX, "hex", HEX16 * 2),
        (b" 00112233445566778899AABBCCDDEEFF\r\n", "hex", HEX16),
        (base64.b64encode(b"z" * 20) + b"\n", "base64", b"z" * 20),
    ],
)
def test_key_file_encodings(tmp_path: Path, content: bytes, encoding: str, expected: bytes) -> None:
    assert parse_key_material(content, encoding) == expected
    path = tmp_path / "secret"
    path.write_bytes(content)
    path.chmod(0o600)  # a secret: its owner's alone, or it is refused
    ring = KeyRing.from_file(path, "k9", encoding=encoding)
    assert ring.key_id == "k9"
    assert ring.session_key("s") == derive_session_key(expected, "s")
    if encoding == "raw":  # the default
        assert KeyRing.from_file(path, "k9").session_key("s") == ring.session_key("s")


@pytest.mark.parametrize(
    ("content", "encoding", "match"),
    [
        (b"", "raw", "empty"),
        (b"   \n", "raw", "empty"),
        (b"0011223344", "raw", "at least 16"),
        (b"0011223344556677\n", "hex", "at least 16"),
        (b"short", "raw", "at least 16"),
        (b"zz" * 16, "hex", "not hex"),
        (b"001122334455667788990", "hex", "not hex"),  # an odd number of digits
        (b"\xff\xfe" * 16, "hex", "not hex"),
        (b"***" * 8, "base64", "not base64"),
        (b"x" * 32, "rot13", "unknown secret encoding"),
    ],
)
def test_bad_key_files(tmp_path: Path, content: bytes, encoding: str, match: str) -> None:
    path = tmp_path / "secret"
    path.write_bytes(content)
    path.chmod(0o600)  # a secret: its owner's alone, or it is refused
    with pytest.raises(KeyMaterialError, match=match) as info:
        KeyRing.from_file(path, encoding=encoding)
    # the error names the file but never echoes its content
    message = str(info.value).replace(str(path), "<path>")
    if len(content.strip()) > 4:
        assert content.strip().decode(errors="replace") not in message


def test_keys_file_entries_follow_their_prefix_or_the_encoding(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    text = "passphrase of the third key, as is"
    path.write_text(
        json.dumps(
            {
                "k1": "hex:" + "11" * 32,
                "k2": "base64:" + base64.b64encode(b"22" * 8).decode(),
                "k3": text,
            }
        )
    )
    path.chmod(0o600)
    ring = KeyRing.from_keys_file(path)
    assert ring.session_key("s", "k1") == derive_session_key(b"\x11" * 32, "s")
    assert ring.session_key("s", "k2") == derive_session_key(b"22" * 8, "s")
    assert ring.session_key("s", "k3") == derive_session_key(text.encode(), "s")
    path.write_text(json.dumps({"k1": "33" * 32}))
    hexed = KeyRing.from_keys_file(path, encoding="hex")
    assert hexed.session_key("s", "k1") == derive_session_key(b"\x33" * 32, "s")


@pytest.mark.parametrize(
    ("content", "encoding", "says"),
    [
        (OPENSSL_HEX, "raw", "read as the file's raw bytes (65, a trailing newline included)"),
        (OPENSSL_HEX, "hex", "decoded from hex (32 bytes)"),
    ],
)
def test_a_mismatch_says_how_the_key_file_was_read(
    tmp_path: Path, content: bytes, encoding: str, says: str
) -> None:
    path = tmp_path / "secret"
    path.write_bytes(content)
    path.chmod(0o600)  # a secret: its owner's alone, or it is refused
    ring = KeyRing.from_file(path, "k1", encoding=encoding)
    other = "hex" if encoding == "raw" else "raw"
    sender = KeyRing(parse_key_material(content, other), "k1")
    envelope = sender.sign(
        {"jsonrpc": "2.0", "method": "system/ping", "id": 1, "params": {"x": 1}}, "s"
    )
    with pytest.raises(SignatureInvalid) as caught:
        ring.verify(envelope, "s")
    assert caught.value.reason == "signature_mismatch"
    assert says in str(caught.value) and "--secret-encoding" in str(caught.value)
    assert content.strip().decode() not in str(caught.value)  # never the key itself


def test_missing_and_oversized_key_files(tmp_path: Path) -> None:
    with pytest.raises(KeyMaterialError, match="does not exist"):
        KeyRing.from_file(tmp_path / "nope")
    big = tmp_path / "big"
    big.write_bytes(os.urandom(70 * 1024))
    big.chmod(0o600)
    with pytest.raises(KeyMaterialError, match="is over 65536 bytes"):
        KeyRing.from_file(big)


def test_short_material_in_constructor() -> None:
    with pytest.raises(KeyMaterialError, match="at least 16"):
        KeyRing(b"x" * 15)
    with pytest.raises(KeyMaterialError, match="key_id"):
        KeyRing(b"x" * 16, "")
