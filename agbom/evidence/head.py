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


SESSION_END = "steps/sessionEnd"


def _sealed_at_end(entries: Sequence[Mapping[str, Any]], count: int) -> bool:
    return entries[count - 1].get("step_type") == SESSION_END


def stored_head_is_earlier(entries: Sequence[Mapping[str, Any]], stored: Mapping[str, Any]) -> bool:
    """Whether the head stored for a session (``stored``) is an earlier head of its chain as
    it now stands, one that a head sealed now may replace: a checkpoint of an open session,
    sealed before the entries that followed it. False when it is this very head.

    Raises ``chain_mismatch`` when the chain no longer passes through the stored head (it
    was changed after that seal, which a new seal must not hide), or when it goes on past
    the ``sessionEnd`` entry the stored head sealed."""
    count, chain_hash = stored.get("entry_count"), stored.get("chain_hash")
    if (
        type(count) is not int
        or not 1 <= count <= len(entries)
        or entries[count - 1].get("entry_hash") != chain_hash
    ):
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain no longer passes through the head sealed at {stored.get('sealed_at')} "
            f"({count} entries, {str(chain_hash)[:16]}…): it was changed after the seal, and "
            "a new seal would hide that",
        )
    if count == len(entries):
        return False
    if _sealed_at_end(entries, count):
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain goes on for {len(entries) - count} entries after the sessionEnd entry "
            "its seal covers",
        )
    return True


def verify_sealed_prefix(
    entries: Sequence[Mapping[str, Any]], statement: Mapping[str, Any], keys: KeySet
) -> tuple[PublicKey, int]:
    """Check a stored chain against its stored head, where the head may be a checkpoint of
    a session that went on (``agbom audit seal`` of an open session): the head's signature,
    every link of the whole chain, and the head's hash at its position. Returns the key and
    how many entries follow the sealed ones (unsigned, for the caller to say so). A chain
    cut before the head, changed under it, or going on past a sealed ``sessionEnd`` fails
    with ``chain_mismatch``."""
    key = verify_head(statement, keys)
    failure = verify_chain(list(entries))
    if failure is not None:
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain is broken at entry index {failure.index}: {failure.reason}",
        )
    count = statement["entry_count"]
    if count > len(entries) or entries[count - 1].get("entry_hash") != statement["chain_hash"]:
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain ({len(entries)} entries) does not pass through its signed head "
            f"({count} entries, {statement['chain_hash'][:16]}…)",
        )
    if count < len(entries) and _sealed_at_end(entries, count):
        raise EvidenceInvalid(
            "chain_mismatch",
            f"the chain goes on for {len(entries) - count} entries after the sessionEnd entry "
            "its signed head covers",
        )
    return key, len(entries) - count
