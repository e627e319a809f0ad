"""Signed skills at the Guardian (``serve --skill-signers FILE``): the OMS signature or the
Sigstore bundle a registration carries, verified against the signers the operator trusts; the
trust policy that approves a named signer's skills; and the check that a load's signature
still verifies.

A registration's ``definition.body`` may carry the folder's file list and texts
(agbom/review/definition.py). When the list hashes to the registered digest and holds
``skill.oms.sig`` with its text, the signature is verified over that list
(:func:`agbom.scan.skill_signatures.verify_text`); when it holds ``skill.sigstore.json`` with
its text, the bundle is verified over the digest of that list less the bundle, offline against
``serve --sigstore-trust-root`` (:func:`agbom.scan.skill_sigstore.verify_bundle`): the same
answers ``agbom scan --skill-signers --sigstore-trust-root`` gives for the folder on disk. With
both, the weaker outcome is the record. The carried body is kept in the store, so a
load is judged again against the signers file as it is then: a signer removed from it, or a
signature that no longer verifies, denies the load. An approval made with ``skills approve
--require-signer IDENTITY`` holds only while that signer's signature verifies
(:func:`signer_denial`), and is denied when no signers file is configured.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agbom.scan.skill_signatures import (
    SIGNATURE_FILE,
    STATUS_ORDER,
    Signers,
    SignersError,
    signers_at,
)

TRUST_POLICY_ACTOR = "trust-policy"


def signers_of(path: str | None, trust_root: str | None = None) -> Signers | str | None:
    """The signers file at ``path`` (re-read when it changes) with the Sigstore trust root
    ``trust_root`` (``serve --sigstore-trust-root``), the reason it cannot be used, or
    ``None`` when none is configured."""
    if path is None:
        return None
    try:
        signers = signers_at(path)
    except (OSError, SignersError) as exc:
        return f"the signers file cannot be read ({exc})"
    if trust_root is None:
        return signers
    return dataclasses.replace(signers, sigstore_trust_root=Path(trust_root))


def signature_of(body: Any, digest: Any, signers: Signers | str) -> dict[str, Any] | None:
    """The ``skill_signature`` record of what a registration carried (``body``) for
    ``digest``; ``None`` when it carried no signature and nothing requires one."""
    from agbom.review.definition import parse_body, verify
    from agbom.scan.skill_sigstore import BUNDLE_FILE

    if isinstance(signers, str):
        return {"status": "unverifiable", "reason": signers}
    parsed = parse_body(body) if body is not None else None
    files = parsed.files if parsed is not None else None
    carried = {f.path: f for f in files or () if f.path in (SIGNATURE_FILE, BUNDLE_FILE)}
    if not carried:
        if signers.require_signature:
            return {"status": "unsigned", "reason": f"{signers.source} requires a signature"}
        return None
    assert parsed is not None and files is not None
    if verify(parsed, digest.algorithm, digest.value).files_match is not True:
        reason = "the carried file list does not hash to the registered digest"
        return min((_unverifiable(name, reason) for name in carried), key=_weakest)
    outcomes = []
    for name, entry in sorted(carried.items()):
        text = entry.text
        if text is None or hashlib.sha256(text.encode("utf-8")).hexdigest() != entry.sha256:
            outcomes.append(_unverifiable(name, "the registration did not carry its text"))
        elif name == SIGNATURE_FILE:
            outcomes.append(_oms(text, files, signers))
        else:
            outcomes.append(_sigstore(text, files, signers))
    return min(outcomes, key=_weakest)


def _weakest(record: Mapping[str, Any]) -> int:
    return STATUS_ORDER.get(str(record.get("status")), 0)


def _oms(text: str, files: Any, signers: Signers) -> dict[str, Any]:
    from agbom.scan.skill_signatures import available, verify_text

    if not available():
        reason = "the model-signing library is not installed (agbom[signatures])"
        return _unverifiable(SIGNATURE_FILE, reason)
    return verify_text(text, {f.path: f.sha256 for f in files}, signers)


def _sigstore(text: str, files: Any, signers: Signers) -> dict[str, Any]:
    """The carried bundle verified over the digest of the carried list less the bundle.
    Fails closed: without a trust root, or with one that cannot be loaded now, it is
    ``unchecked`` (never ``signed``), and a load of the pair is then denied."""
    from agbom.inventory.skill_digest import SkillFile
    from agbom.scan.skill_sigstore import (
        BUNDLE_FILE,
        MAX_BUNDLE_BYTES,
        TrustRootError,
        signed_payload,
        sigstore_available,
        verify_bundle,
    )

    def unchecked(reason: str) -> dict[str, Any]:
        return {"format": "sigstore", "file": BUNDLE_FILE, "status": "unchecked",
                "reason": reason}  # fmt: skip

    if signers.sigstore_trust_root is None:
        return unchecked("no serve --sigstore-trust-root to verify it against")
    if not sigstore_available():
        return unchecked("the sigstore library is not installed (agbom[signatures])")
    data = text.encode("utf-8")
    if len(data) > MAX_BUNDLE_BYTES:
        return {"format": "sigstore", "file": BUNDLE_FILE, "status": "invalid",
                "reason": f"larger than {MAX_BUNDLE_BYTES // 1024} KiB"}  # fmt: skip
    listed = [SkillFile(path=f.path, size=f.size, executable=f.executable, sha256=f.sha256,
                        symlink=f.target is not None, target=f.target)
              for f in files]  # fmt: skip
    try:
        return verify_bundle(data, signed_payload(listed), signers.signers,
                             signers.sigstore_trust_root)  # fmt: skip
    except TrustRootError as exc:
        return unchecked(f"the trust root cannot be used ({exc})")


def _unverifiable(name: str, reason: str) -> dict[str, Any]:
    kind = "oms" if name == SIGNATURE_FILE else "sigstore"
    return {"format": kind, "file": name, "status": "unverifiable", "reason": reason}


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
    trust_root: str | None = None,
) -> str | None:
    """The reason a pair approved only under ``required``'s signature is denied now, or
    ``None`` when that signature verifies. The signature judged is the one ``body`` (what a
    registration carries) holds, else the one the store kept for the pair."""
    trust = signers_of(signers_path, trust_root)
    said = None
    if trust is not None:
        said = signature_of(body, digest, trust) if body is not None else None
        if said is None:
            said = stored_signature(store, skill_id, digest, trust)
    unmet = unmet_signer(required, said, trust)
    if unmet is None:
        return None
    return f"skill {skill_id} {digest} is approved only while signed by {required}: {unmet}"
