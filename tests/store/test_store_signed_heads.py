"""Signed chain heads in the store (sessionEnd seals, agbom/guardian/signing.py), on every
backend: kept once per session, read back as written, refused when not a statement."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agbom.evidence import SigningKey, sign_head, verify_head
from agbom.evidence.keys import KeySet
from agbom.store import Store, StoreError

Factory = Callable[[], Store]


def _statement(key: SigningKey, session_id: str, count: int) -> dict[str, object]:
    return sign_head(
        session_id,
        chain_hash=f"{count:064x}",
        entry_count=count,
        last_entry_id=str(count),
        key=key,
    )


def test_the_first_signed_head_of_a_session_stands_across_handles(store_factory: Factory) -> None:
    one, two = store_factory(), store_factory()
    key = SigningKey.generate("ML-DSA-65")
    assert one.signed_head("s-1") is None
    first = _statement(key, "s-1", 3)
    one.save_signed_head("s-1", first)
    two.save_signed_head("s-1", _statement(key, "s-1", 4))  # a later seal changes nothing
    stored = two.signed_head("s-1")
    assert stored == first
    assert verify_head(stored, KeySet([key.public])).key_id == key.key_id
    assert one.signed_head("s-2") is None


def test_what_is_not_a_head_statement_of_that_session_is_refused(store: Store) -> None:
    key = SigningKey.generate("Ed25519")
    with pytest.raises(StoreError):
        store.save_signed_head("other", _statement(key, "s-1", 1))
    unsigned = {k: v for k, v in _statement(key, "s-1", 1).items() if k != "signature"}
    with pytest.raises(StoreError):
        store.save_signed_head("s-1", unsigned)
    assert store.signed_head("s-1") is None


def test_the_key_of_an_acs_crypto_session_is_seen_by_every_handle(store_factory: Factory) -> None:
    one, two = store_factory(), store_factory()
    assert two.response_key("s-1") is None
    one.save_response_key("s-1", "sha256:" + "1" * 32)
    assert two.response_key("s-1") == "sha256:" + "1" * 32
    two.save_response_key("s-1", "sha256:" + "2" * 32)  # a later handshake's key replaces it
    assert one.response_key("s-1") == "sha256:" + "2" * 32
    assert one.response_key("s-2") is None


def test_a_later_head_replaces_only_the_head_it_was_checked_against(
    store_factory: Factory,
) -> None:
    """``replace_signed_head`` is a compare and set (``agbom audit seal`` of an open session,
    then the Guardian's seal at its end): of two handles replacing the same checkpoint, one
    wins and the other is told; a replacement naming a head that is not stored does nothing."""
    one, two = store_factory(), store_factory()
    key = SigningKey.generate("Ed25519")
    checkpoint, later, rival = (_statement(key, "s-1", n) for n in (2, 5, 6))
    assert not one.replace_signed_head("s-1", later, checkpoint)  # nothing stored yet
    assert one.signed_head("s-1") is None
    one.save_signed_head("s-1", checkpoint)
    assert one.replace_signed_head("s-1", later, checkpoint)
    assert not two.replace_signed_head("s-1", rival, checkpoint)  # no longer the stored one
    assert two.signed_head("s-1") == later
    assert not two.replace_signed_head("s-2", _statement(key, "s-2", 3), _statement(key, "s-2", 1))
    assert two.signed_head("s-2") is None
    with pytest.raises(StoreError):
        one.replace_signed_head("s-1", _statement(key, "other", 7), later)
    assert one.signed_head("s-1") == later
