"""The evidence bundle: one signed JSON file an auditor checks offline with a public key.

It holds a session's audit chain, the signed head of that chain, every AgBOM version the
session submitted (accepted or refused) and the approval history of each skill digest a
decision named. The whole bundle is signed too (§10 rule, :mod:`agbom.evidence.signed`), so
the parts the chain does not hash (the AgBOM documents, the approvals) cannot be swapped
either. docs/evidence.md describes the format and the checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agbom.evidence.head import seal_chain, stored_head_is_earlier, verify_sealed_chain
from agbom.evidence.interface import EvidenceInvalid, KeyFileError
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
    source: EvidenceSource,
    session_id: str,
    key: SigningKey,
    *,
    head_key: SigningKey | None = None,
    created_at: str | None = None,
) -> dict[str, Any]:
    """The evidence bundle of ``session_id``, signed by ``key`` (the exporter's).

    Its head is the one the Guardian signed at sessionEnd when the store holds it; else one
    ``head_key`` (the Guardian's key, which must not be the exporter's) signs now. Without
    either, :class:`EvidenceInvalid` (``head_unsigned``): a head the exporter signed itself
    would attest nothing. Also when the session has no chain or its chain is broken (agbom
    does not sign a broken chain)."""
    from agbom.store.interface import Digest

    if head_key is not None and head_key.key_id == key.key_id:
        raise KeyFileError(
            "the head key and the bundle's signing key are the same key: a key has one role "
            "(the Guardian signs heads, an exporter signs bundles)"
        )
    entries = [_hashed(e) for e in source.chain_entries(session_id)]
    sealed = source.signed_head(session_id)
    if sealed is not None and entries and stored_head_is_earlier(entries, sealed):
        # A checkpoint ('agbom audit seal' of the open session) that the session went on
        # past: it attests less than the chain holds, so it is not the bundle's head.
        if head_key is None:
            raise EvidenceInvalid(
                "head_unsigned",
                f"session {session_id}'s stored head is a checkpoint of "
                f"{sealed.get('entry_count')} of its {len(entries)} entries: seal it again "
                "(agbom audit seal) or give the Guardian's key as --head-key",
            )
        sealed = None
    if sealed is None and head_key is None:
        seal_chain(session_id, entries, key, sealed_at=created_at)  # checks the chain first
        raise EvidenceInvalid(
            "head_unsigned",
            f"session {session_id} has no chain head the Guardian signed (it has not ended, or "
            "the Guardian had no signing key): give the Guardian's key as --head-key to seal "
            "its chain as it stands",
        )
    head = seal_chain(session_id, entries, head_key or key, sealed_at=created_at)
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


@dataclass(frozen=True, slots=True)
class BundleKeys:
    """Who a verifier trusts for what: the Guardian's keys for the chain head (the Guardian's
    own statement of where the chain ended), an exporter's for the bundle around it. A key
    has one role: one given in both is refused (:class:`KeyFileError`), and a signature by
    a key of the other role fails (``key_role``)."""

    guardian: KeySet
    exporter: KeySet

    def __post_init__(self) -> None:
        both = set(self.guardian.key_ids) & set(self.exporter.key_ids)
        if both:
            raise KeyFileError(
                f"key {sorted(both)[0]} is given both as the Guardian's and as an exporter's: "
                "a key has one role (the Guardian signs heads, an exporter signs bundles)"
            )


def _in_role(signed: Mapping[str, Any], role: KeySet, other: KeySet, what: str, who: str) -> None:
    sig = signed.get("signature")
    key_id = sig.get("key_id") if isinstance(sig, Mapping) else None
    if key_id in other.key_ids and key_id not in role.key_ids:
        raise EvidenceInvalid(
            "key_role",
            f"the {what} is signed by key {key_id}, which is given in another role: a {what} "
            f"verifies only against {who}",
        )


def _recomputed_agbom_hash(version: Mapping[str, Any]) -> str:
    from agbom.inventory import AgBOM, InvalidAgBOM

    document = version.get("document")
    if not isinstance(document, Mapping):
        raise EvidenceInvalid("bundle_malformed", f"AgBOM version {version.get('version')} has "
                              "no document")  # fmt: skip
    try:
        return AgBOM.from_document(dict(document), source="bundled AgBOM").agbom_hash
    except InvalidAgBOM as exc:
        raise EvidenceInvalid(
            "hash_mismatch", f"AgBOM version {version.get('version')} is not a valid AgBOM: {exc}"
        ) from None


def verify_bundle(bundle: Any, keys: BundleKeys, *, open_session: bool = False) -> list[str]:
    """Check a bundle against trusted keys by role; return what was checked, one line each.

    (1) the bundle's own signature, by an exporter's key (the ``public_key`` the bundle
    carries is a hint only, never trusted); (2) the head statement's signature, by the
    Guardian's key; (3) the chain recomputed against the head; (4) every AgBOM version's
    ``agbom_hash`` recomputed from its document, every hash a chain entry names among them,
    and every approval naming a skill digest a chain entry names; (5) what the bundle says of
    the session agrees with the chain: a chain that ends with ``sessionEnd`` is a sealed
    session (``closed``, sealed at that head); one that does not is a checkpoint of an open
    session, which the Guardian's head attests only up to its last entry, accepted only with
    ``open_session`` (an exporter could otherwise pass an older head off as the end).
    """
    if not isinstance(bundle, Mapping) or bundle.get("bundle_type") != BUNDLE_TYPE:
        raise EvidenceInvalid("bundle_malformed", f"not an {BUNDLE_TYPE} document")
    # (1) the whole bundle, by an exporter
    _in_role(bundle, keys.exporter, keys.guardian, "bundle", "an exporter's key")
    outer = verify_object(bundle, keys.exporter)
    chain, head = bundle.get("chain"), bundle.get("head")
    if not isinstance(chain, list) or not isinstance(head, Mapping):
        raise EvidenceInvalid("bundle_malformed", "bundle has no chain list or head object")
    if not all(isinstance(entry, Mapping) for entry in chain):
        raise EvidenceInvalid("bundle_malformed", "a chain entry is not an object")
    session = bundle.get("session")
    if not isinstance(session, Mapping):
        raise EvidenceInvalid("bundle_malformed", "bundle has no session object")
    session_id = session.get("session_id")
    if head.get("session_id") != session_id:
        raise EvidenceInvalid("bundle_malformed", "the head is of another session")
    # (2) + (3) the head, by the Guardian, and the chain under it
    _in_role(head, keys.guardian, keys.exporter, "chain head", "the Guardian's key")
    inner: PublicKey = verify_sealed_chain(chain, head, keys.guardian)
    # (4) the parts the decisions relied on, every hash recomputed
    versions = bundle.get("agbom_versions")
    approvals = bundle.get("approvals")
    if not isinstance(versions, list) or not isinstance(approvals, list):
        raise EvidenceInvalid("bundle_malformed", "agbom_versions and approvals must be lists")
    bundled = set()
    for version in versions:
        if not isinstance(version, Mapping):
            raise EvidenceInvalid("bundle_malformed", "an AgBOM version is not an object")
        recomputed = _recomputed_agbom_hash(version)
        if recomputed != version.get("agbom_hash"):
            raise EvidenceInvalid(
                "hash_mismatch",
                f"AgBOM version {version.get('version')} states {version.get('agbom_hash')}, "
                f"its document hashes to {recomputed}",
            )
        bundled.add(recomputed)
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
    # (5) the session as the chain has it
    ended = chain[-1].get("step_type") == "steps/sessionEnd"
    status, sealed = session.get("status"), session.get("sealed_head")
    if ended and status != "closed":
        raise EvidenceInvalid(
            "session_mismatch",
            f"the bundle says the session is {str(status)[:20]!r}, but its chain ends with "
            "sessionEnd: it was sealed",
        )
    if sealed is not None and sealed != head["chain_hash"]:
        raise EvidenceInvalid(
            "session_mismatch",
            f"the session was sealed at {str(sealed)[:16]}…, not at the bundled head",
        )
    if not ended and not open_session:
        raise EvidenceInvalid(
            "head_not_final",
            f"the chain does not end with sessionEnd: the Guardian's head attests it only up "
            f"to entry {head['entry_count']}, not that the session ended there (a later seal "
            "may exist); verify with --open to accept a checkpoint of an open session",
        )
    return [
        f"bundle signature: {outer.algorithm} key {outer.key_id} (exporter)",
        f"head signature: {inner.algorithm} key {inner.key_id} (Guardian)",
        f"chain: {len(chain)} entries, head {head['chain_hash']}"
        + (", ended with sessionEnd" if ended else ", open: a checkpoint, not the session's end"),
        f"agbom versions: {len(versions)}, each hash recomputed ({len(named)} named by the "
        "chain, all bundled)",
        f"approvals: {len(approvals)} skill digest(s)",
    ]
