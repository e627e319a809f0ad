"""Evidence a third party verifies with a public key: asymmetric keys (ML-DSA-65, Ed25519),
§10 signatures over objects and ACS envelopes, signed chain heads, evidence bundles and
signed BOMs (CycloneDX JSF, DSSE/in-toto). See docs/evidence.md.

Data flows one way: this layer reads ``protocol``, ``inventory`` and ``store`` and is used
by ``export`` and ``cli``.
"""

from agbom.evidence.bom import dsse_sign, dsse_verify, jsf_sign, jsf_verify
from agbom.evidence.bundle import BundleKeys, build_bundle, verify_bundle
from agbom.evidence.head import (
    seal_chain,
    sign_head,
    stored_head_is_earlier,
    verify_head,
    verify_sealed_chain,
    verify_sealed_prefix,
)
from agbom.evidence.interface import (
    ALGORITHMS,
    ED25519,
    ML_DSA_65,
    EvidenceError,
    EvidenceInvalid,
    KeyFileError,
)
from agbom.evidence.keys import KeySet, PublicKey, SigningKey, jwks, write_key_pair
from agbom.evidence.signed import sign_envelope, sign_object, verify_envelope, verify_object
from agbom.evidence.verify import kind_of, verify_document

__all__ = [
    "BundleKeys",
    "ALGORITHMS",
    "ED25519",
    "ML_DSA_65",
    "EvidenceError",
    "EvidenceInvalid",
    "KeyFileError",
    "KeySet",
    "PublicKey",
    "SigningKey",
    "build_bundle",
    "dsse_sign",
    "dsse_verify",
    "jsf_sign",
    "jsf_verify",
    "jwks",
    "kind_of",
    "seal_chain",
    "sign_envelope",
    "sign_head",
    "sign_object",
    "stored_head_is_earlier",
    "verify_bundle",
    "verify_document",
    "verify_envelope",
    "verify_head",
    "verify_object",
    "verify_sealed_chain",
    "verify_sealed_prefix",
    "write_key_pair",
]
