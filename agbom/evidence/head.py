"""Signed chain heads: a Guardian's statement, verifiable by anyone with its public key, that
a session's audit chain ended at a given head after a given number of entries.

The statement is a JSON object signed by the §10 rule (:mod:`agbom.evidence.signed`)::

    {"statement": "agbom.chain-head/v1", "session_id": ..., "chain_hash": ...,
     "entry_count": N, "last_entry_id": ..., "sealed_at": "...Z",
     "signature": {"algorithm": "ML-DSA-65" | "Ed25519", "value": ..., "key_id": ...}}

Under the HMAC baseline the Guardian can rewrite a chain and re-sign its head (ACS §8.6);
with an asymmetric key a head it signed once binds it: a verifier holding only the chain,
the statement and the public key detects any rewrite, truncation or extension.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from agbom.evidence.interface import EvidenceInvalid
from agbom.evidence.keys import KeySet, PublicKey, SigningKey
from agbom.evidence.signed import sign_object, verify_object
from agbom.protocol.chain import is_chain_hash, verify_chain

HEAD_STATEMENT = "agbom.chain-head/v1"
_FIELDS = frozenset(
    {"statement", "session_id", "chain_hash", "entry_count", "last_entry_id", "sealed_at",
     "signature"}
)  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seal_chain(
    session_id: str,
    entries: Sequence[Mapping[str, Any]],
    key: SigningKey,
    *,
    sealed_at: str | None = None,
) -> dict[str, Any]:
    """The signed head statement of ``entries`` (the chain as stored, in order).

    The chain is verified first: agbom never signs a head it cannot recompute.
    """
    if not entries:
        raise EvidenceInvalid("chain_empty", f"session {session_id} has no audit chain to seal")
    failure = verify_chain(list(entries))
    if failure is not None:
        raise EvidenceInvalid(
            "chain_broken",
            f"refusing to seal: the chain is broken at entry index {failure.index}: "
            f"{failure.reason}",
        )
    last = entries[-1]
    return sign_head(
        session_id,
        chain_hash=last["entry_hash"],
        entry_count=len(entries),
        last_entry_id=str(last.get("entry_id")),
        key=key,
        sealed_at=sealed_at,
    )


def sign_head(
    session_id: str,
    *,
    chain_hash: str,
    entry_count: int,
    last_entry_id: str,
    key: SigningKey,
    sealed_at: str | None = None,
) -> dict[str, Any]:
    """The signed head statement of a chain whose head the caller already holds: the
    Guardian at ``sessionEnd``, which appended every entry itself and need not read the chain
    back (:func:`seal_chain` does, for a chain taken from a store)."""
    statement = {
        "statement": HEAD_STATEMENT,
        "session_id": session_id,
        "chain_hash": chain_hash,
        "entry_count": entry_count,
        "last_entry_id": last_entry_id,
        "sealed_at": sealed_at or _now(),
    }
    return sign_object(statement, key)


def verify_head(statement: Any, keys: KeySet) -> PublicKey:
    """Check a head statement's shape and signature; return the key that signed it."""
    if not isinstance(statement, Mapping) or statement.get("statement") != HEAD_STATEMENT:
        raise EvidenceInvalid("head_malformed", f"not a {HEAD_STATEMENT} statement")
    extra = set(statement) - _FIELDS
    if extra:
        raise EvidenceInvalid(
            "head_malformed", f"head statement has unknown fields {sorted(extra)}"
        )
    if not is_chain_hash(statement.get("chain_hash")):
        raise EvidenceInvalid("head_malformed", "head chain_hash is not a lowercase hex SHA-256")
    count = statement.get("entry_count")
    if type(count) is not int or count < 1:
        raise EvidenceInvalid("head_malformed", "head entry_count is not a positive integer")
    return verify_object(statement, keys)


def verify_sealed_chain(
    entries: Sequence[Mapping[str, Any]], statement: Mapping[str, Any], keys: KeySet
) -> PublicKey:
    """(1) the head's signature, (2) the chain recomputed link by link, (3) its last hash
    and length equal what the head states. Any rewrite, cut or addition fails."""
    key = verify_head(statement, keys)
    failure = verify_chain(list(entries), expected_head=statement["chain_hash"])
    if failure is not None:
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain does not match its signed head: entry index {failure.index}: "
            f"{failure.reason}",
        )
    if len(entries) != statement["entry_count"]:
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain has {len(entries)} entries; its signed head says "
            f"{statement['entry_count']}",
        )
    return key
