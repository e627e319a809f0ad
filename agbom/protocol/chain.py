"""The ACS audit hash chain (specification §8.2) and request hashes.

Formula, normative in ACS v0.1.0::

    entry_hash = hex(SHA-256(JCS(entry minus entry_hash and previous_hash) || raw32(previous_hash)))

where ``raw32`` is the 32 bytes that the previous entry's hex hash encodes, and nothing is
appended for the first entry (whose ``previous_hash`` is ``null``). A stored entry is a dict
holding the hashed fields plus ``previous_hash`` and ``entry_hash``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agbom.protocol.canonical import CanonicalizationFailed, canonical_bytes

_LINK_FIELDS = frozenset({"entry_hash", "previous_hash"})
_HEX64 = re.compile(r"[0-9a-f]{64}")


def is_chain_hash(value: object) -> bool:
    """True when ``value`` is a lowercase hex SHA-256 string, the only form ACS uses."""
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def request_hash(params: Mapping[str, Any]) -> str:
    """Hex SHA-256 of the canonical request ``params`` with ``signature`` left out.

    This is the ContextEntry ``request_hash`` (ACS-Audit requires it on every entry).
    """
    unsigned = {k: v for k, v in params.items() if k != "signature"}
    return hashlib.sha256(canonical_bytes(unsigned)).hexdigest()


def entry_hash(entry: Mapping[str, Any], previous_hash: str | None) -> str:
    """The ``entry_hash`` of ``entry`` chained after ``previous_hash`` (``None`` for the root).

    ``entry`` may be a stored entry: its own ``entry_hash`` and ``previous_hash`` keys are
    ignored. Raises ``ValueError`` when ``previous_hash`` is not 64 lowercase hex digits and
    :class:`~agbom.protocol.canonical.CanonicalizationFailed` when the content has no JCS form.
    """
    content = {k: v for k, v in entry.items() if k not in _LINK_FIELDS}
    digest = hashlib.sha256(canonical_bytes(content))
    if previous_hash is not None:
        if not is_chain_hash(previous_hash):
            raise ValueError("previous_hash must be 64 lowercase hex digits")
        digest.update(bytes.fromhex(previous_hash))
    return digest.hexdigest()


def link_entry(entry: Mapping[str, Any], previous_hash: str | None) -> dict[str, Any]:
    """A new stored entry: the content of ``entry`` plus ``previous_hash`` and ``entry_hash``."""
    content = {k: v for k, v in entry.items() if k not in _LINK_FIELDS}
    return {
        **content,
        "previous_hash": previous_hash,
        "entry_hash": entry_hash(content, previous_hash),
    }


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first place a stored chain fails verification.

    ``reason`` is one of ``malformed_entry``, ``root_not_null`` (the first entry has a
    previous_hash: entries were cut from the front), ``previous_hash_mismatch`` (an entry was
    deleted, inserted, or moved before ``index``), ``entry_hash_mismatch`` (the entry at
    ``index`` was edited) and ``head_mismatch`` (the last entry is not the expected head:
    entries were cut from the end).
    """

    index: int
    entry_id: str | None
    reason: str

    def describe(self) -> str:
        """One line naming the broken link."""
        where = f"entry {self.index}"
        if self.entry_id is not None:
            where += f" (entry_id {self.entry_id!r})"
        return f"audit chain broken at {where}: {self.reason}"


def verify_chain(
    entries: Sequence[Mapping[str, Any]], *, expected_head: str | None = None
) -> ChainBreak | None:
    """Check every link of ``entries`` in order; return the first break, or ``None``.

    Each entry's ``previous_hash`` must equal the stored ``entry_hash`` before it (``None``
    for the first), and its ``entry_hash`` must recompute from its content. Passing the
    published chain head as ``expected_head`` also catches entries removed from the end,
    which no link inside the chain can reveal.
    """
    previous: str | None = None
    for index, entry in enumerate(entries):
        entry_id = _entry_id(entry)
        if not isinstance(entry, Mapping) or not is_chain_hash(  # type: ignore[redundant-expr]
            entry.get("entry_hash")
        ):
            return ChainBreak(index, entry_id, "malformed_entry")
        if "previous_hash" not in entry:
            return ChainBreak(index, entry_id, "malformed_entry")
        stored_previous = entry["previous_hash"]
        if stored_previous != previous:
            reason = "root_not_null" if index == 0 else "previous_hash_mismatch"
            return ChainBreak(index, entry_id, reason)
        try:
            recomputed = entry_hash(entry, stored_previous)
        except (CanonicalizationFailed, ValueError):
            return ChainBreak(index, entry_id, "malformed_entry")
        if recomputed != entry["entry_hash"]:
            return ChainBreak(index, entry_id, "entry_hash_mismatch")
        previous = recomputed
    if expected_head is not None and previous != expected_head:
        return ChainBreak(max(len(entries) - 1, 0), _last_id(entries), "head_mismatch")
    return None


def _entry_id(entry: object) -> str | None:
    if isinstance(entry, Mapping):
        value = entry.get("entry_id")
        if isinstance(value, str):
            return value
    return None


def _last_id(entries: Sequence[Mapping[str, Any]]) -> str | None:
    return _entry_id(entries[-1]) if entries else None
