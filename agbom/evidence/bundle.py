"""The evidence bundle: one signed JSON file an auditor checks offline with a public key.

It holds a session's audit chain, the signed head of that chain, every AgBOM version the
session submitted (accepted or refused) and the approval history of each skill digest a
decision named. The whole bundle is signed too (§10 rule, :mod:`agbom.evidence.signed`), so
the parts the chain does not hash (the AgBOM documents, the approvals) cannot be swapped
either. docs/evidence.md describes the format and the checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agbom.evidence.head import seal_chain, verify_sealed_chain
from agbom.evidence.interface import EvidenceInvalid
from agbom.evidence.keys import KeySet, PublicKey, SigningKey
from agbom.evidence.signed import sign_object, verify_object

BUNDLE_TYPE = "agbom.evidence-bundle/v1"
MAX_AGBOM_VERSIONS = 10_000
_SESSION_FIELDS = (
    "session_id", "agent_id", "tenant_id", "parent_session_id", "status", "started_at",
    "ended_at", "sealed_head",
)  # fmt: skip


class EvidenceSource(Protocol):
    """What a bundle is read from: the parts of the store it uses."""

    def chain_entries(self, session_id: str, *, after: int = 0) -> list[dict[str, Any]]: ...

    def get_session(self, session_id: str) -> dict[str, Any] | None: ...

    def agbom_version(
        self, session_id: str, version: int | None = None
    ) -> dict[str, Any] | None: ...

    def history(self, skill_id: str, digest: Any = None) -> list[dict[str, Any]]: ...

    def signed_head(self, session_id: str) -> dict[str, Any] | None: ...


def _hashed(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "seq"}  # the store's row number


def _skill_refs(entries: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """Each distinct (skill_id, algorithm, digest) a chain entry names, in first-seen order."""
    seen: dict[tuple[str, str, str], None] = {}
    for entry in entries:
        skill = entry.get("skill")
        if isinstance(skill, Mapping):
            ref = (skill.get("skill_id"), skill.get("algorithm"), skill.get("value"))
            if all(isinstance(part, str) for part in ref):
                seen[ref] = None  # type: ignore[index]
    return list(seen)


def _agbom_versions(source: EvidenceSource, session_id: str) -> list[dict[str, Any]]:
    versions = []
    for number in range(1, MAX_AGBOM_VERSIONS + 1):
        record = source.agbom_version(session_id, number)
        if record is None:
            break
        versions.append(
            {
                "version": number,
                "agbom_hash": record.get("agbom_hash"),
                "accepted": record.get("accepted", True),
                "created_at": record.get("created_at"),
                "document": record.get("document"),
            }
        )
    return versions


def build_bundle(
    source: EvidenceSource, session_id: str, key: SigningKey, *, created_at: str | None = None
) -> dict[str, Any]:
    """The signed evidence bundle of ``session_id``; :class:`EvidenceInvalid` when the
    session has no chain or its chain is broken (agbom does not sign a broken chain)."""
    from agbom.store.interface import Digest

    entries = [_hashed(e) for e in source.chain_entries(session_id)]
    head = seal_chain(session_id, entries, key, sealed_at=created_at)  # checks the chain
    sealed = source.signed_head(session_id)
    if sealed is not None:
        # The Guardian signed this head at sessionEnd (agbom/guardian/signing.py): that
        # statement is the evidence, not one made now. A chain that no longer ends where it
        # said was changed since, and no bundle hides that behind a fresh seal.
        if (sealed.get("chain_hash"), sealed.get("entry_count")) != (
            head["chain_hash"],
            head["entry_count"],
        ):
            raise EvidenceInvalid(
                "chain_mismatch",
                f"session {session_id}'s stored chain does not end at the head the Guardian "
                f"signed at sessionEnd ({sealed.get('entry_count')} entries, "
                f"{str(sealed.get('chain_hash'))[:16]}…): it was changed after the seal",
            )
        head = sealed
    session = source.get_session(session_id) or {"session_id": session_id}
    approvals = []
    for skill_id, algorithm, value in _skill_refs(entries):
        digest = Digest(algorithm=algorithm, value=value)
        approvals.append(
            {
                "skill_id": skill_id,
                "digest": f"{algorithm}:{value}",
                "history": source.history(skill_id, digest),
            }
        )
    bundle = {
        "bundle_type": BUNDLE_TYPE,
        "session": {name: session.get(name) for name in _SESSION_FIELDS},
        "chain": entries,
        "head": head,
        "agbom_versions": _agbom_versions(source, session_id),
        "approvals": approvals,
        "public_key": key.public.to_jwk(),
    }
    return sign_object(bundle, key)


def verify_bundle(bundle: Any, keys: KeySet) -> list[str]:
    """Check a bundle against trusted ``keys``; return what was checked, one line each.

    (1) the bundle's own signature, by a trusted key (the ``public_key`` the bundle carries
    is a hint only, never trusted); (2) the head statement's signature; (3) the chain
    recomputed against the head; (4) every AgBOM hash a chain entry names is among the
    bundled versions, and every approval names a skill digest a chain entry names.
    """
    if not isinstance(bundle, Mapping) or bundle.get("bundle_type") != BUNDLE_TYPE:
        raise EvidenceInvalid("bundle_malformed", f"not an {BUNDLE_TYPE} document")
    # (1) the whole bundle
    outer = verify_object(bundle, keys)
    chain, head = bundle.get("chain"), bundle.get("head")
    if not isinstance(chain, list) or not isinstance(head, Mapping):
        raise EvidenceInvalid("bundle_malformed", "bundle has no chain list or head object")
    session = bundle.get("session")
    session_id = session.get("session_id") if isinstance(session, Mapping) else None
    if head.get("session_id") != session_id:
        raise EvidenceInvalid("bundle_malformed", "the head is of another session")
    # (2) + (3) the head and the chain under it
    inner: PublicKey = verify_sealed_chain(chain, head, keys)
    # (4) the parts the decisions relied on
    versions = bundle.get("agbom_versions")
    approvals = bundle.get("approvals")
    if not isinstance(versions, list) or not isinstance(approvals, list):
        raise EvidenceInvalid("bundle_malformed", "agbom_versions and approvals must be lists")
    bundled = {v.get("agbom_hash") for v in versions if isinstance(v, Mapping)}
    named = {e.get("agbom_hash") for e in chain if e.get("agbom_hash")}
    missing = named - bundled
    if missing:
        raise EvidenceInvalid(
            "bundle_incomplete", f"chain names AgBOM {sorted(map(str, missing))[0]} not bundled"
        )
    refs = {f"{a}:{v}" for _, a, v in _skill_refs(chain)}
    for approval in approvals:
        if not isinstance(approval, Mapping) or approval.get("digest") not in refs:
            raise EvidenceInvalid("bundle_malformed", "an approval names no digest of the chain")
    return [
        f"bundle signature: {outer.algorithm} key {outer.key_id}",
        f"head signature: {inner.algorithm} key {inner.key_id}",
        f"chain: {len(chain)} entries, head {head['chain_hash']}",
        f"agbom versions: {len(versions)} ({len(named)} named by the chain, all bundled)",
        f"approvals: {len(approvals)} skill digest(s)",
    ]
