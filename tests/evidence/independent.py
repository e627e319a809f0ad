"""Checks of agbom's signatures by code agbom does not use to make them.

* Ed25519: PyNaCl (libsodium); agbom signs with ``cryptography`` (OpenSSL).
* ML-DSA-65: dilithium-py (pure-Python FIPS 204); agbom signs with ``cryptography``.
* Key files: the DER of PKCS#8 / SubjectPublicKeyInfo is taken apart here by its fixed
  prefixes (RFC 8410, RFC 9881 seed form), not by a parser agbom uses.
* JCS: the ``rfc8785`` reference serializer (agbom's fast path is orjson).

Every function returns a bool, so a test can assert that a tampered input fails.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import nacl.exceptions
import nacl.signing
import rfc8785
from dilithium_py.ml_dsa import ML_DSA_65

# DER prefixes: SEQUENCE { AlgorithmIdentifier { OID }, BIT STRING { key } } for the public
# key; the seed-only PKCS#8 form for the private one.
ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
MLDSA65_SPKI_PREFIX = bytes.fromhex("308207b2300b0609608648016503040312038207a100")
ED25519_PKCS8_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
MLDSA65_PKCS8_SEED_PREFIX = bytes.fromhex("3034020100300b060960864801650304031204228020")


def pem_body(pem: bytes) -> bytes:
    lines = [line for line in pem.decode("ascii").splitlines() if not line.startswith("-----")]
    return base64.b64decode("".join(lines))


def raw_public_key(pem: bytes) -> tuple[str, bytes]:
    der = pem_body(pem)
    for algorithm, prefix, size in (
        ("Ed25519", ED25519_SPKI_PREFIX, 32),
        ("ML-DSA-65", MLDSA65_SPKI_PREFIX, 1952),
    ):
        if der.startswith(prefix) and len(der) == len(prefix) + size:
            return algorithm, der[len(prefix) :]
    raise AssertionError(f"not an Ed25519 or ML-DSA-65 SubjectPublicKeyInfo: {der[:24].hex()}")


def private_seed(pem: bytes) -> tuple[str, bytes]:
    der = pem_body(pem)
    for algorithm, prefix in (
        ("Ed25519", ED25519_PKCS8_PREFIX),
        ("ML-DSA-65", MLDSA65_PKCS8_SEED_PREFIX),
    ):
        if der.startswith(prefix) and len(der) == len(prefix) + 32:
            return algorithm, der[len(prefix) :]
    raise AssertionError(f"not a seed-form Ed25519 or ML-DSA-65 PKCS#8: {der[:24].hex()}")


def public_from_seed(algorithm: str, seed: bytes) -> bytes:
    if algorithm == "Ed25519":
        return bytes(nacl.signing.SigningKey(seed).verify_key)
    public, _secret = ML_DSA_65.key_derive(seed)
    return bytes(public)


def verifies(algorithm: str, public: bytes, signature: bytes, data: bytes) -> bool:
    if algorithm == "Ed25519":
        try:
            nacl.signing.VerifyKey(public).verify(data, signature)
        except (nacl.exceptions.BadSignatureError, ValueError):
            return False
        return True
    if algorithm == "ML-DSA-65":
        return bool(ML_DSA_65.verify(public, data, signature))
    return False  # an algorithm name changed in transit verifies nothing


def jcs(value: Any) -> bytes:
    return rfc8785.dumps(value)


def key_id(public: bytes) -> str:
    """The documented key id, from the raw key: SHA-256 over its SPKI DER, 32 hex digits."""
    prefix = ED25519_SPKI_PREFIX if len(public) == 32 else MLDSA65_SPKI_PREFIX
    return "sha256:" + hashlib.sha256(prefix + public).hexdigest()[:32]


def acs_signature_verifies(obj: dict[str, Any], public: bytes) -> bool:
    """A §10-style signature: ``signature`` member over the JCS of the rest, naming the
    key (by its id) that the verifier trusts."""
    sig = obj.get("signature")
    if not isinstance(sig, dict):
        return False
    data = jcs({k: v for k, v in obj.items() if k != "signature"})
    try:
        raw = base64.b64decode(sig["value"], validate=True)
    except (ValueError, TypeError):
        return False
    if sig.get("key_id") != key_id(public):
        return False
    return verifies(sig["algorithm"], public, raw, data)


def chain_recomputes(entries: list[dict[str, Any]], head: str) -> bool:
    """ACS §8.2 from scratch: SHA-256(JCS(entry minus links) || raw32(previous))."""
    previous: str | None = None
    for entry in entries:
        if entry.get("previous_hash") != previous:
            return False
        content = {k: v for k, v in entry.items() if k not in ("entry_hash", "previous_hash")}
        digest = hashlib.sha256(jcs(content))
        if previous is not None:
            digest.update(bytes.fromhex(previous))
        if digest.hexdigest() != entry.get("entry_hash"):
            return False
        previous = entry["entry_hash"]
    return previous == head
