"""The ACS interop vectors, signed with ML-DSA-65 and Ed25519.

The vectors (agt-go ``envelope/testdata/vectors.json``) fix the §10 signing input byte for
byte; §10 makes that input the same for every algorithm. agbom's asymmetric signature over
each vector envelope must verify, with PyNaCl / dilithium-py, over the vector's own
``signing_input`` bytes, and Ed25519 (deterministic, RFC 8032) must equal libsodium's
signature of those bytes exactly.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import nacl.signing
import pytest
from dilithium_py.ml_dsa import ML_DSA_65

from agbom.evidence import EvidenceInvalid, KeySet, SigningKey, sign_envelope, verify_envelope
from tests.evidence import independent

ROOT = Path(__file__).resolve().parents[2]
# agt-go's internal/envelope/testdata/vectors.json, copied unchanged (source and licence in
# tests/protocol/vectors/README.md).
VECTORS = ROOT / "tests" / "protocol" / "vectors" / "envelope-vectors.json"
# RFC 8032 §7.1 TEST 1 secret key: a fixed Ed25519 key both libraries derive the same way.
RFC8032_SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC8032_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")


def vectors() -> dict:
    return json.loads(VECTORS.read_text())


def signature_slot(envelope: dict) -> dict:
    return envelope["params"] if "method" in envelope else envelope["result"]


def ed25519_key() -> SigningKey:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return SigningKey._of(ed25519.Ed25519PrivateKey.from_private_bytes(RFC8032_SEED))


def mldsa_key(seed: bytes) -> SigningKey:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    return SigningKey._of(mldsa.MLDSA65PrivateKey.from_seed_bytes(seed))


def test_the_fixed_keys_agree_across_implementations() -> None:
    assert (
        ed25519_key().public.raw
        == RFC8032_PUBLIC
        == bytes(nacl.signing.SigningKey(RFC8032_SEED).verify_key)
    )
    seed = bytes(range(32))
    assert mldsa_key(seed).public.raw == bytes(ML_DSA_65.key_derive(seed)[0])


@pytest.mark.parametrize("which", ["request", "response"])
def test_ed25519_over_a_vector_is_libsodiums_signature_of_its_signing_input(which: str) -> None:
    vector = vectors()[which]
    signed = sign_envelope(vector["signed"], ed25519_key())
    sig = signature_slot(signed)["signature"]
    assert sig["algorithm"] == "Ed25519"
    expected = (
        nacl.signing.SigningKey(RFC8032_SEED).sign(vector["signing_input"].encode()).signature
    )
    assert base64.b64decode(sig["value"]) == expected
    # The rest of the envelope is the vector's, untouched.
    rest = copy.deepcopy(signed)
    signature_slot(rest)["signature"] = signature_slot(vector["signed"])["signature"]
    assert rest == vector["signed"]


@pytest.mark.parametrize("which", ["request", "response"])
def test_ml_dsa_65_over_a_vector_verifies_with_dilithium_py(which: str) -> None:
    vector = vectors()[which]
    key = mldsa_key(bytes(range(32)))
    sig = signature_slot(sign_envelope(vector["signed"], key))["signature"]
    assert sig["algorithm"] == "ML-DSA-65" and sig["key_id"] == key.key_id
    raw = base64.b64decode(sig["value"])
    assert len(raw) == 3309
    data = vector["signing_input"].encode()
    assert ML_DSA_65.verify(key.public.raw, data, raw)
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x01
    assert not ML_DSA_65.verify(key.public.raw, bytes(flipped), raw)


@pytest.mark.parametrize("algorithm", ["Ed25519", "ML-DSA-65"])
def test_a_changed_field_fails_agbom_and_the_independent_check(algorithm: str) -> None:
    vector = vectors()["response"]
    key = ed25519_key() if algorithm == "Ed25519" else mldsa_key(bytes(32))
    signed = sign_envelope(vector["signed"], key)
    keys = KeySet([key.public])
    assert verify_envelope(signed, keys).key_id == key.key_id
    for path in (("result", "decision"), ("result", "chain_hash"), ("id",), ("result", "type")):
        tampered = copy.deepcopy(signed)
        holder = tampered
        for part in path[:-1]:
            holder = holder[part]
        holder[path[-1]] = holder[path[-1]][:-1] + ("x" if holder[path[-1]][-1] != "x" else "y")
        with pytest.raises(EvidenceInvalid):
            verify_envelope(tampered, keys)
        inner = {k: v for k, v in tampered["result"].items() if k != "signature"}
        data = independent.jcs({**tampered, "result": inner})
        raw = base64.b64decode(tampered["result"]["signature"]["value"])
        assert not independent.verifies(algorithm, key.public.raw, raw, data), path
