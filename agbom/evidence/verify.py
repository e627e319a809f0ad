"""One entry point for ``agbom verify``: recognize what a document is, then check it.

Each format is recognized positively by its own marker; anything else is refused, never
guessed at.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.evidence.bom import DSSE_PAYLOAD_TYPE, dsse_verify, jsf_verify
from agbom.evidence.bundle import BUNDLE_TYPE
from agbom.evidence.head import HEAD_STATEMENT, verify_head
from agbom.evidence.interface import EvidenceInvalid
from agbom.evidence.keys import KeySet
from agbom.evidence.signed import verify_envelope


def kind_of(document: object) -> str:
    """``bundle``, ``head``, ``dsse``, ``cyclonedx-jsf`` or ``acs-envelope``."""
    if isinstance(document, Mapping):
        if document.get("bundle_type") == BUNDLE_TYPE:
            return "bundle"
        if document.get("statement") == HEAD_STATEMENT:
            return "head"
        if document.get("payloadType") == DSSE_PAYLOAD_TYPE:
            return "dsse"
        if document.get("bomFormat") == "CycloneDX":
            return "cyclonedx-jsf"
        if document.get("jsonrpc") == "2.0":
            return "acs-envelope"
    raise EvidenceInvalid(
        "unrecognized",
        "not an evidence bundle, chain head, DSSE envelope, CycloneDX BOM or ACS envelope",
    )


def verify_document(document: Any, keys: KeySet) -> tuple[str, list[str]]:
    """Verify ``document`` with trusted ``keys``; return its kind and what was checked."""
    kind = kind_of(document)
    if kind == "bundle":
        raise EvidenceInvalid(
            "key_role",
            "an evidence bundle is checked with keys by role (the Guardian's for its head, an "
            "exporter's for the bundle): agbom audit verify --bundle FILE --guardian-key G.pub "
            "--exporter-key E.pub",
        )
    if kind == "head":
        key = verify_head(document, keys)
        return kind, [
            f"head signature: {key.algorithm} key {key.key_id}",
            f"session {document['session_id']}: {document['entry_count']} entries, "
            f"head {document['chain_hash']}",
        ]
    if kind == "dsse":
        key, statement = dsse_verify(document, keys)
        names = ", ".join(str(s.get("name")) for s in statement["subject"])
        return kind, [f"DSSE signature: {key.algorithm} key {key.key_id}", f"subject: {names}"]
    if kind == "cyclonedx-jsf":
        key = jsf_verify(document, keys)
        return kind, [f"JSF signature: {key.algorithm} key {key.key_id}"]
    key = verify_envelope(document, keys)
    return kind, [f"envelope signature: {key.algorithm} key {key.key_id}"]
