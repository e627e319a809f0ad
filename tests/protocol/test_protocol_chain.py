"""Tamper detection of the audit chain: every kind of damage is located at its first link."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agbom.protocol import ChainBreak, entry_hash, link_entry, verify_chain


def build_chain(n: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    previous = None
    for i in range(n):
        entry = link_entry(
            {
                "entry_id": f"e{i}",
                "step_id": f"step-{i}",
                "step_type": "steps/toolCallRequest" if i else "steps/sessionStart",
                "timestamp": f"2026-09-19T10:00:{i:02d}Z",
            },
            previous,
        )
        entries.append(entry)
        previous = entry["entry_hash"]
    return entries


def test_intact_chain_verifies() -> None:
    chain = build_chain(6)
    assert verify_chain(chain) is None
    assert verify_chain(chain, expected_head=chain[-1]["entry_hash"]) is None
    assert verify_chain([]) is None


def test_each_hash_depends_on_the_previous_one() -> None:
    a = {"entry_id": "x", "step_id": "s", "step_type": "steps/turnEnd"}
    root = entry_hash(a, None)
    chained = entry_hash(a, "0" * 64)
    assert root != chained
    assert len(root) == 64 and root == root.lower()


@pytest.mark.parametrize("index", [0, 2, 5])
def test_edited_entry_is_located(index: int) -> None:
    chain = build_chain(6)
    chain[index]["timestamp"] = "2030-01-01T00:00:00Z"
    assert verify_chain(chain) == ChainBreak(index, f"e{index}", "entry_hash_mismatch")


def test_edited_and_rehashed_entry_breaks_the_next_link() -> None:
    chain = build_chain(6)
    chain[2]["step_type"] = "steps/userMessage"
    chain[2]["entry_hash"] = entry_hash(chain[2], chain[2]["previous_hash"])
    assert verify_chain(chain) == ChainBreak(3, "e3", "previous_hash_mismatch")


def test_added_field_is_detected() -> None:
    chain = build_chain(4)
    chain[1]["decision"] = "allow"
    brk = verify_chain(chain)
    assert brk is not None and (brk.index, brk.reason) == (1, "entry_hash_mismatch")


@pytest.mark.parametrize("index", [1, 3])
def test_deleted_entry_is_located(index: int) -> None:
    chain = build_chain(6)
    del chain[index]
    # the entry that followed the deleted one now sits at ``index`` and points at a ghost
    assert verify_chain(chain) == ChainBreak(index, f"e{index + 1}", "previous_hash_mismatch")


def test_deleted_root_is_located() -> None:
    chain = build_chain(4)
    del chain[0]
    assert verify_chain(chain) == ChainBreak(0, "e1", "root_not_null")


def test_deleted_tail_needs_the_head() -> None:
    chain = build_chain(5)
    head = chain[-1]["entry_hash"]
    del chain[-1]
    assert verify_chain(chain) is None  # no internal link can show a cut tail
    assert verify_chain(chain, expected_head=head) == ChainBreak(3, "e3", "head_mismatch")


def test_reordered_entries_are_located() -> None:
    chain = build_chain(6)
    chain[2], chain[3] = chain[3], chain[2]
    assert verify_chain(chain) == ChainBreak(2, "e3", "previous_hash_mismatch")


def test_wrong_root_is_located() -> None:
    chain = build_chain(3)
    chain[0]["previous_hash"] = "a" * 64
    assert verify_chain(chain) == ChainBreak(0, "e0", "root_not_null")


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: e.pop("entry_hash"),
        lambda e: e.pop("previous_hash"),
        lambda e: e.update(entry_hash="XYZ"),
        lambda e: e.update(entry_hash=e["entry_hash"].upper()),
        lambda e: e.update(payload=float("nan")),
    ],
)
def test_malformed_entry_is_reported(damage: Any) -> None:
    chain = build_chain(3)
    damage(chain[1])
    brk = verify_chain(chain)
    assert brk is not None and brk.index == 1 and brk.reason == "malformed_entry"


def test_non_mapping_entry_is_malformed() -> None:
    chain: list[Any] = build_chain(2)
    chain.append("not an entry")
    assert verify_chain(chain) == ChainBreak(2, None, "malformed_entry")


def test_entry_hash_rejects_bad_previous_hash() -> None:
    with pytest.raises(ValueError, match="64 lowercase hex"):
        entry_hash({"entry_id": "x"}, "ABC")


def test_verify_does_not_modify_entries() -> None:
    chain = build_chain(3)
    before = copy.deepcopy(chain)
    verify_chain(chain)
    assert chain == before


def test_describe_names_the_entry() -> None:
    assert "e3" in ChainBreak(3, "e3", "entry_hash_mismatch").describe()
