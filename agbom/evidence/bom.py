"""Signed BOMs: CycloneDX JSON with an enveloped JSF signature, or a DSSE envelope holding
an in-toto Statement whose predicate is the BOM.

JSF (JSON Signature Format 0.82, the ``signature`` member CycloneDX 1.6 defines): the signed
data is the JCS form of the whole BOM with its ``signature`` object in place minus that
object's ``value``; ``value`` is base64url without padding.

* Ed25519 is in the schema's algorithm list: ``{"algorithm": "Ed25519", "publicKey": {OKP
  JWK}, "value"}``; any JSF verifier can check it with the key the signature carries (and
  must still decide whether it trusts that key).
* ML-DSA-65 is not; the schema allows a URI for other algorithms, so agbom writes
  ``"algorithm": "urn:agbom:jsf:ML-DSA-65"`` with ``keyId`` (the schema's public key types
  have no ML-DSA form, so the key itself is not embedded). A verifier must know that name.

DSSE (the in-toto attestation envelope): ``payloadType`` ``application/vnd.in-toto+json``, the
payload an in-toto Statement v1 with the BOM as predicate (predicateType
``https://cyclonedx.org/bom``) and, as subject, the SHA-256 of the BOM's JCS bytes; the
signature is over DSSE's PAE of type and payload.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from agbom.evidence.interface import ED25519, ML_DSA_65, EvidenceInvalid
from agbom.evidence.keys import KeySet, PublicKey, SigningKey, _b64url, _b64url_decode
from agbom.protocol.canonical import CanonicalizationFailed, canonical_bytes

JSF_ML_DSA_65 = "urn:agbom:jsf:ML-DSA-65"
_JSF_NAMES = {ED25519: ED25519, ML_DSA_65: JSF_ML_DSA_65}
_FROM_JSF = {name: algorithm for algorithm, name in _JSF_NAMES.items()}
DSSE_PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
CYCLONEDX_PREDICATE = "https://cyclonedx.org/bom"


def _canonical(value: Any, what: str) -> bytes:
    try:
        return canonical_bytes(value)
    except CanonicalizationFailed as exc:
        raise EvidenceInvalid("not_canonicalizable", f"{what} has no JCS form: {exc}") from exc


def _check_bom(bom: object) -> Mapping[str, Any]:
    if not isinstance(bom, Mapping) or bom.get("bomFormat") != "CycloneDX":
        raise EvidenceInvalid("bom_malformed", "not a CycloneDX JSON BOM (no bomFormat)")
    return bom


def jsf_sign(bom: Mapping[str, Any], key: SigningKey) -> dict[str, Any]:
    """A copy of the CycloneDX ``bom`` with an enveloped JSF signature by ``key``."""
    unsigned = {k: v for k, v in _check_bom(bom).items() if k != "signature"}
    signer: dict[str, Any] = {"algorithm": _JSF_NAMES[key.algorithm]}
    if key.algorithm == ED25519:
        signer["publicKey"] = {"kty": "OKP", "crv": "Ed25519", "x": _b64url(key.public.raw)}
    else:
        signer["keyId"] = key.key_id
    data = _canonical({**unsigned, "signature": signer}, "the BOM")
    return {**unsigned, "signature": {**signer, "value": _b64url(key.sign(data))}}


def jsf_signing_input(bom: Mapping[str, Any]) -> bytes:
    """The bytes a JSF signature of ``bom`` covers (the BOM minus ``signature.value``)."""
    sig = bom.get("signature")
    if not isinstance(sig, Mapping):
        raise EvidenceInvalid("signature_missing", "the BOM carries no JSF signature")
    return _canonical(
        {**bom, "signature": {k: v for k, v in sig.items() if k != "value"}}, "the BOM"
    )


def jsf_verify(bom: Mapping[str, Any], keys: KeySet) -> PublicKey:
    """Verify a BOM's JSF signature against trusted ``keys`` (an embedded public key must
    also be one of them: a key that came with the document proves nothing)."""
    sig = _check_bom(bom).get("signature")
    if not isinstance(sig, Mapping):
        raise EvidenceInvalid("signature_missing", "the BOM carries no JSF signature")
    algorithm = _FROM_JSF.get(sig.get("algorithm"))  # type: ignore[arg-type]
    if algorithm is None:
        raise EvidenceInvalid(
            "signature_algorithm_unsupported",
            f"JSF algorithm {str(sig.get('algorithm'))[:60]!r} is not one agbom verifies",
        )
    if "publicKey" in sig:
        embedded = sig["publicKey"]
        if not isinstance(embedded, Mapping):
            raise EvidenceInvalid("signature_malformed", "JSF publicKey is not an object")
        key = keys.get(PublicKey.from_jwk({k: v for k, v in embedded.items() if k != "kid"}).key_id)
    else:
        key = keys.get(sig.get("keyId"))
    if key.algorithm != algorithm:
        raise EvidenceInvalid("signature_algorithm_mismatch", "JSF algorithm is not the key's")
    value = sig.get("value")
    if not isinstance(value, str):
        raise EvidenceInvalid("signature_malformed", "JSF value is not a string")
    try:
        raw = _b64url_decode(value)
    except (binascii.Error, ValueError) as exc:
        raise EvidenceInvalid("signature_malformed", "JSF value is not base64url") from exc
    key.verify(raw, jsf_signing_input(bom))
    return key


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what a DSSE signature covers."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def in_toto_statement(bom: Mapping[str, Any], name: str) -> dict[str, Any]:
    digest = hashlib.sha256(_canonical(_check_bom(bom), "the BOM")).hexdigest()
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digest}}],
        "predicateType": CYCLONEDX_PREDICATE,
        "predicate": dict(bom),
    }


def dsse_sign(bom: Mapping[str, Any], key: SigningKey, *, name: str) -> dict[str, Any]:
    """A DSSE envelope of an in-toto Statement about ``bom`` (subject ``name``)."""
    payload = orjson.dumps(in_toto_statement(bom, name))
    sig = key.sign(pae(DSSE_PAYLOAD_TYPE, payload))
    return {
        "payloadType": DSSE_PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": key.key_id, "sig": base64.b64encode(sig).decode("ascii")}],
    }


def dsse_verify(envelope: Mapping[str, Any], keys: KeySet) -> tuple[PublicKey, dict[str, Any]]:
    """Verify a DSSE envelope (at least one signature by a trusted key, and every signature
    by a trusted key valid); return the key and the in-toto Statement it carries."""
    payload_type, text, sigs = (
        envelope.get("payloadType"), envelope.get("payload"), envelope.get("signatures")
    )  # fmt: skip
    if payload_type != DSSE_PAYLOAD_TYPE or not isinstance(text, str):
        raise EvidenceInvalid("envelope_malformed", f"not a DSSE {DSSE_PAYLOAD_TYPE} envelope")
    if not isinstance(sigs, list) or not sigs:
        raise EvidenceInvalid("signature_missing", "the DSSE envelope carries no signature")
    try:
        payload = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EvidenceInvalid("envelope_malformed", "DSSE payload is not base64") from exc
    signed = pae(payload_type, payload)
    trusted: PublicKey | None = None
    for entry in sigs:
        if not isinstance(entry, Mapping) or entry.get("keyid") not in keys.key_ids:
            continue  # others' signatures: not ours to judge
        try:
            raw = base64.b64decode(str(entry.get("sig")), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise EvidenceInvalid("signature_malformed", "DSSE sig is not base64") from exc
        key = keys.get(entry["keyid"])
        key.verify(raw, signed)
        trusted = key
    if trusted is None:
        raise EvidenceInvalid("signature_key_unknown", "no DSSE signature by a trusted key")
    try:
        statement = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise EvidenceInvalid("envelope_malformed", "DSSE payload is not JSON") from exc
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise EvidenceInvalid("envelope_malformed", "DSSE payload is not an in-toto Statement")
    predicate = statement.get("predicate")
    subjects = statement.get("subject")
    expected = hashlib.sha256(_canonical(_check_bom(predicate), "the BOM")).hexdigest()
    if not (
        isinstance(subjects, list)
        and subjects
        and all(
            isinstance(s, Mapping)
            and isinstance(s.get("digest"), Mapping)
            and s["digest"].get("sha256") == expected
            for s in subjects
        )
    ):
        raise EvidenceInvalid("subject_mismatch", "the Statement's subject is not its BOM")
    return trusted, statement
