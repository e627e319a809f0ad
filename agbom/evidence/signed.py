"""ACS §10 signatures made with an asymmetric key, over JSON objects and ACS envelopes.

One rule for everything agbom signs as evidence, the rule ACS §10 sets for envelopes: the
signed input is the RFC 8785 (JCS) UTF-8 form of the object with its ``signature`` member
removed, and the signature is ``{"algorithm", "value" (standard base64), "key_id"}``. For an
ACS envelope the member sits in ``params``/``result``/``error``; the input is exactly
:func:`agbom.protocol.signatures.signing_input`, so it matches the interop vectors byte for
byte whatever the algorithm.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from agbom.evidence.interface import ALGORITHMS, EvidenceInvalid
from agbom.evidence.keys import KeySet, PublicKey, SigningKey
from agbom.protocol.canonical import CanonicalizationFailed, canonical_bytes
from agbom.protocol.signatures import SignatureInvalid, signing_input


def _signature(key: SigningKey, data: bytes) -> dict[str, str]:
    value = base64.b64encode(key.sign(data)).decode("ascii")
    return {"algorithm": key.algorithm, "value": value, "key_id": key.key_id}


def object_signing_input(obj: Mapping[str, Any]) -> bytes:
    """The JCS bytes of ``obj`` without its top-level ``signature``."""
    try:
        return canonical_bytes({k: v for k, v in obj.items() if k != "signature"})
    except CanonicalizationFailed as exc:
        raise EvidenceInvalid("not_canonicalizable", f"cannot canonicalize: {exc}") from exc


def sign_object(obj: Mapping[str, Any], key: SigningKey) -> dict[str, Any]:
    """A copy of ``obj`` with a top-level ``signature`` by ``key`` (an old one replaced)."""
    unsigned = {k: v for k, v in obj.items() if k != "signature"}
    return {**unsigned, "signature": _signature(key, object_signing_input(unsigned))}


def check_signature(sig: object, data: bytes, keys: KeySet) -> PublicKey:
    """Verify the signature object ``sig`` over ``data`` with the key it names; return
    that key. :class:`EvidenceInvalid` for a missing, malformed, unknown or wrong one."""
    if sig is None:
        raise EvidenceInvalid("signature_missing", "there is no signature")
    if not isinstance(sig, Mapping):
        raise EvidenceInvalid("signature_malformed", "the signature is not an object")
    algorithm, value = sig.get("algorithm"), sig.get("value")
    if algorithm not in ALGORITHMS:
        raise EvidenceInvalid(
            "signature_algorithm_unsupported",
            f"signature algorithm {str(algorithm)[:40]!r} is not one of {', '.join(ALGORITHMS)}",
        )
    if not isinstance(value, str):
        raise EvidenceInvalid("signature_malformed", "signature value is not a string")
    key = keys.get(sig.get("key_id"))
    if key.algorithm != algorithm:
        # A key is used with its own algorithm only; a relabelled signature is refused.
        raise EvidenceInvalid(
            "signature_algorithm_mismatch",
            f"signature says {algorithm} but key {key.key_id} is {key.algorithm}",
        )
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EvidenceInvalid("signature_malformed", "signature value is not base64") from exc
    key.verify(raw, data)
    return key


def verify_object(obj: Mapping[str, Any], keys: KeySet) -> PublicKey:
    """Verify ``obj``'s top-level ``signature``; return the key that made it."""
    return check_signature(obj.get("signature"), object_signing_input(obj), keys)


_SLOTS = ("params", "result", "error")


def _slot(envelope: Mapping[str, Any]) -> str:
    slot = "params" if "method" in envelope else "result" if "result" in envelope else "error"
    if not isinstance(envelope.get(slot), Mapping):
        raise EvidenceInvalid("signature_malformed", "not an ACS request or response envelope")
    return slot


def sign_envelope(envelope: Mapping[str, Any], key: SigningKey) -> dict[str, Any]:
    """A copy of an ACS request/response envelope signed by ``key`` over the §10 input."""
    slot = _slot(envelope)
    inner = {k: v for k, v in envelope[slot].items() if k != "signature"}
    unsigned = {**envelope, slot: inner}
    try:
        data = signing_input(unsigned)
    except (SignatureInvalid, CanonicalizationFailed) as exc:
        raise EvidenceInvalid("signature_malformed", str(exc)) from exc
    return {**unsigned, slot: {**inner, "signature": _signature(key, data)}}


def verify_envelope(envelope: Mapping[str, Any], keys: KeySet) -> PublicKey:
    """Verify an ACS envelope's asymmetric signature; return the key that made it."""
    slot = _slot(envelope)
    try:
        data = signing_input(envelope)
    except (SignatureInvalid, CanonicalizationFailed) as exc:
        raise EvidenceInvalid("signature_malformed", str(exc)) from exc
    return check_signature(envelope[slot].get("signature"), data, keys)
