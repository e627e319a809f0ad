"""Signed skills at the Guardian (``serve --skill-signers FILE``): the OMS signature a
registration carries, verified against the signers the operator trusts; the trust policy that
approves a named signer's skills; and the check that a load's signature still verifies.

A registration's ``definition.body`` may carry the folder's file list and texts
(agbom/review/definition.py). When the list hashes to the registered digest and holds
``skill.oms.sig`` with its text, the signature is verified over that list
(:func:`agbom.scan.skill_signatures.verify_text`): the same answer ``agbom scan
--skill-signers`` gives for the folder on disk. The carried body is kept in the store, so a
load is judged again against the signers file as it is then: a signer removed from it, or a
signature that no longer verifies, denies the load. An approval made with ``skills approve
--require-signer IDENTITY`` holds only while that signer's signature verifies
(:func:`signer_denial`), and is denied when no signers file is configured.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from agbom.scan.skill_signatures import SIGNATURE_FILE, Signers, SignersError, signers_at

TRUST_POLICY_ACTOR = "trust-policy"


def signers_of(path: str | None) -> Signers | str | None:
    """The signers file at ``path`` (re-read when it changes), the reason it cannot be used,
    or ``None`` when none is configured."""
    if path is None:
        return None
    try:
        return signers_at(path)
    except (OSError, SignersError) as exc:
        return f"the signers file cannot be read ({exc})"


def signature_of(body: Any, digest: Any, signers: Signers | str) -> dict[str, Any] | None:
    """The ``skill_signature`` record of what a registration carried (``body``) for
    ``digest``; ``None`` when it carried no signature and nothing requires one."""
    from agbom.review.definition import parse_body, verify

    if isinstance(signers, str):
        return {"status": "unverifiable", "reason": signers}
    parsed = parse_body(body) if body is not None else None
    files = parsed.files if parsed is not None else None
    signature = next((f for f in files or () if f.path == SIGNATURE_FILE), None)
    if signature is None:
        if signers.require_signature:
            return {"status": "unsigned", "reason": f"{signers.source} requires a signature"}
        return None
    assert parsed is not None and files is not None
    if verify(parsed, digest.algorithm, digest.value).files_match is not True:
        return _unverifiable("the carried file list does not hash to the registered digest")
    text = signature.text
    if text is None or hashlib.sha256(text.encode("utf-8")).hexdigest() != signature.sha256:
        return _unverifiable("the registration did not carry the signature's text")
    from agbom.scan.skill_signatures import available, verify_text

    if not available():
        return _unverifiable("the model-signing library is not installed (agbom[signatures])")
    return verify_text(text, {f.path: f.sha256 for f in files}, signers)


def _unverifiable(reason: str) -> dict[str, Any]:
    return {"format": "oms", "file": SIGNATURE_FILE, "status": "unverifiable", "reason": reason}


def stored_signature(
    store: Any, skill_id: str, digest: Any, signers: Signers | str
) -> dict[str, Any] | None:
    """:func:`signature_of` the definition the store kept for the pair (judged now)."""
    kept = store.skill_definition(skill_id, digest)
    return signature_of(kept, digest, signers) if kept is not None else None


def auto_approver(record: Mapping[str, Any] | None, signers: Signers | str | None) -> str | None:
    """The signer whose skills the trust policy approves, when ``record`` is theirs."""
    if record is None or not isinstance(signers, Signers) or record.get("status") != "signed":
        return None
    signer = record.get("signer")
    return signer if isinstance(signer, str) and signer in signers.auto_approve else None


def shown(record: Mapping[str, Any]) -> str:
    """A signature record in words, for reasoning and findings."""
    status = record.get("status")
    signer = record.get("signer")
    who = f" by {signer}" if signer else ""
    why = f" ({record['reason']})" if record.get("reason") else ""
    return f"signature {status}{who}{why}"


def unmet_signer(
    required: str, said: Mapping[str, Any] | None, signers: Signers | str | None
) -> str | None:
    """What stands in the way of an approval that requires ``required``'s signature
    (``skills approve --require-signer``), in words; ``None`` when the signature the pair
    carries verifies as ``signed`` by exactly that signer. Fails closed: without a signers
    file, or one that cannot be read, nothing can be verified."""
    if signers is None:
        return "the Guardian has no signers file (serve --skill-signers) to verify a signature with"
    if isinstance(signers, str):
        return signers
    if said is None:
        return "the skill is unsigned"
    if said.get("status") == "signed" and said.get("signer") == required:
        return None
    found = f"it is signed by {said.get('signer')}" if said.get("status") == "signed" else (
        shown(said))  # fmt: skip
    if not any(s.name == required for s in signers.signers):
        found += f"; {required} is not a signer {signers.source} trusts"
    return found


def signer_denial(
    store: Any,
    skill_id: str,
    digest: Any,
    required: str,
    signers_path: str | None,
    body: Any = None,
) -> str | None:
    """The reason a pair approved only under ``required``'s signature is denied now, or
    ``None`` when that signature verifies. The signature judged is the one ``body`` (what a
    registration carries) holds, else the one the store kept for the pair."""
    trust = signers_of(signers_path)
    said = None
    if trust is not None:
        said = signature_of(body, digest, trust) if body is not None else None
        if said is None:
            said = stored_signature(store, skill_id, digest, trust)
    unmet = unmet_signer(required, said, trust)
    if unmet is None:
        return None
    return f"skill {skill_id} {digest} is approved only while signed by {required}: {unmet}"
