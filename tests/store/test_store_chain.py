"""Audit chain storage: ordering, head checks, replay detection, exact text."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import orjson
import pytest

from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, SqliteStore, StoreError


def fake_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def append(store: SqliteStore, session: str, n: int, previous: str | None, **kw) -> str:
    entry_hash = fake_hash(f"{session}-{n}")
    kw.setdefault("request_id", f"req-{n}")
    kw.setdefault("nonce", None)
    store.append_entry(
        session,
        entry={"entry_id": f"e{n}", "step_type": "toolCallRequest", "n": n},
        entry_hash=entry_hash,
        previous_hash=previous,
        **kw,
    )
    return entry_hash


def test_chain_appends_in_order(store: SqliteStore) -> None:
    assert store.chain_head("s1") is None
    h1 = append(store, "s1", 1, None)
    h2 = append(store, "s1", 2, h1)
    h3 = append(store, "s1", 3, h2)
    other = append(store, "s2", 1, None)
    assert store.chain_head("s1") == h3
    assert store.chain_tip("s1") == (3, h3)
    assert store.chain_tip("nope") is None
    assert store.chain_head("s2") == other
    entries = store.chain_entries("s1")
    assert [e["seq"] for e in entries] == [1, 2, 3]
    assert [e["previous_hash"] for e in entries] == [None, h1, h2]
    assert [e["entry_hash"] for e in entries] == [h1, h2, h3]
    assert entries[1]["entry_id"] == "e2" and entries[1]["n"] == 2
    assert store.chain_session_ids() == ["s1", "s2"]


def test_head_mismatch_is_a_conflict_and_writes_nothing(store: SqliteStore) -> None:
    h1 = append(store, "s1", 1, None)
    append(store, "s1", 2, h1)
    with pytest.raises(ChainConflict, match="not the chain head"):
        append(store, "s1", 3, h1)  # stale head
    with pytest.raises(ChainConflict):
        append(store, "s1", 4, None)  # a second root
    with pytest.raises(ChainConflict):
        append(store, "fresh", 1, "deadbeef")  # non-root on an empty chain
    assert len(store.chain_entries("s1")) == 2
    assert store.chain_entries("fresh") == []


def test_duplicate_request_id_and_nonce(store: SqliteStore) -> None:
    h1 = append(store, "s1", 1, None, request_id="r-1", nonce="n-1")
    with pytest.raises(DuplicateRequest, match="request_id 'r-1'") as repeated_id:
        append(store, "s1", 2, h1, request_id="r-1", nonce="n-2")
    assert repeated_id.value.field == "request_id"
    with pytest.raises(DuplicateRequest, match="nonce 'n-1'") as repeated_nonce:
        append(store, "s1", 2, h1, request_id="r-2", nonce="n-1")
    assert repeated_nonce.value.field == "nonce"
    # The same ids are fine in another session; entries without ids never collide.
    append(store, "s2", 1, None, request_id="r-1", nonce="n-1")
    h2 = append(store, "s1", 2, h1, request_id=None, nonce=None)
    append(store, "s1", 3, h2, request_id=None, nonce=None)
    assert len(store.chain_entries("s1")) == 3
    assert append(store, "s1", 4, store.chain_head("s1"), request_id="r-9", nonce="n-9")
    # Which one repeated comes from the index, never from the text of the id.
    h3 = append(store, "s3", 1, None, request_id="nonce-7", nonce=None)
    with pytest.raises(DuplicateRequest) as named_like_a_nonce:
        append(store, "s3", 2, h3, request_id="nonce-7", nonce=None)
    assert named_like_a_nonce.value.field == "request_id"


def test_text_entries_are_kept_byte_for_byte(store: SqliteStore) -> None:
    text = '{"b":1,"a":"\u00e9","n":1.0}'
    store.append_entry(
        "s1", entry=text, entry_hash="h", previous_hash=None, request_id=None, nonce=None
    )
    assert store.chain_entry_text("s1", 1) == text
    assert store.chain_entries("s1")[0]["a"] == "\u00e9"
    mapping = {"z": 1, "a": [1, 2]}
    store.append_entry(
        "s1", entry=mapping, entry_hash="h2", previous_hash="h", request_id=None, nonce=None
    )
    assert store.chain_entry_text("s1", 2) == orjson.dumps(mapping).decode()


@pytest.mark.parametrize("bad", ["[1, 2]", "{not json", b"\xff"])
def test_bad_entry_text_is_refused(store: SqliteStore, bad) -> None:
    with pytest.raises(StoreError):
        store.append_entry(
            "s1", entry=bad, entry_hash="h", previous_hash=None, request_id=None, nonce=None
        )
    assert store.chain_head("s1") is None


def test_two_connections_cannot_fork_a_chain(db_path) -> None:
    with SqliteStore.open(db_path) as one, SqliteStore.open(db_path) as two:
        root = append(one, "s", 1, None)
        append(one, "s", 2, root)
        with pytest.raises(ChainConflict):
            append(two, "s", 3, root)  # two read the head before one appended
        assert [e["seq"] for e in two.chain_entries("s")] == [1, 2]


def test_a_head_a_handle_wrote_itself_still_loses_to_another_writer(store_factory) -> None:
    # A handle that appended the head may chain the next entry on it without looking it up;
    # once another handle has appended after it, that entry must still be refused, alone or
    # in a batch, and a replayed id must still read as a replay.
    one, two = store_factory(), store_factory()
    root = append(one, "s", 1, None)
    second = append(one, "s", 2, root)
    third = append(two, "s", 3, second)  # one's remembered head is now stale
    with pytest.raises(ChainConflict, match="not the chain head"):
        append(one, "s", 4, second, request_id="req-3")  # stale first, then a replay
    with pytest.raises(ChainConflict, match="not the chain head"):
        append(one, "s", 4, second)
    [outcome] = one.append_entries(
        [ChainAppend("s", {"n": 5}, fake_hash("s-5"), second, request_id="req-5")]
    )
    assert isinstance(outcome, ChainConflict)
    with pytest.raises(DuplicateRequest):
        append(two, "s", 6, third, request_id="req-2")
    assert append(two, "s", 7, third) == fake_hash("s-7")
    assert [e["seq"] for e in one.chain_entries("s")] == [1, 2, 3, 4]
    assert [e["n"] for e in one.chain_entries("s")] == [1, 2, 3, 7]
    # A batch whose first entry is refused: every later entry of the session chained on it.
    head = fake_hash("s-7")
    outcomes = two.append_entries(
        [
            ChainAppend("s", {"n": 8}, fake_hash("s-8"), head, request_id="req-1"),
            ChainAppend("s", {"n": 9}, fake_hash("s-9"), fake_hash("s-8"), request_id="r9"),
            ChainAppend("s", {"n": 10}, fake_hash("s-10"), head, request_id="r10"),
        ]
    )
    assert isinstance(outcomes[0], DuplicateRequest)
    assert isinstance(outcomes[1], ChainConflict)
    assert outcomes[2] == 5
    assert one.chain_head("s") == fake_hash("s-10")


def test_threads_sharing_one_store_and_threads_with_their_own(db_path) -> None:
    import threading

    from store_helpers import make_digest

    errors: list[BaseException] = []

    def approve_many(store: SqliteStore, prefix: str) -> None:
        try:
            for i in range(25):
                store.set_status(f"{prefix}-{i}", make_digest(prefix), "approved", actor=prefix)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    def own_store(prefix: str) -> None:
        with SqliteStore.open(db_path) as mine:
            approve_many(mine, prefix)

    with SqliteStore.open(db_path) as shared:
        threads = [threading.Thread(target=approve_many, args=(shared, f"s{n}")) for n in range(3)]
        threads += [threading.Thread(target=own_store, args=(f"o{n}",)) for n in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(shared.list_skills("approved")) == 6 * 25


def test_background_checkpoints_copy_the_wal_into_the_database(tmp_path: Path) -> None:
    path = tmp_path / "bg.db"
    store = SqliteStore.open(path)
    try:
        store.start_background_checkpoints(interval_s=0.05)
        assert store._require().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        before = path.stat().st_size
        head = None
        for i in range(400):
            entry = {"entry_id": str(i), "payload": "x" * 200}
            digest = f"{i:064x}"
            store.append_entry(
                "s",
                entry=entry,
                entry_hash=digest,
                previous_hash=head,
                request_id=f"r{i}",
                nonce=None,
            )
            head = digest
        # The writer never checkpoints now; only the background thread can grow the main file.
        deadline = time.monotonic() + 5
        while path.stat().st_size <= before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.stat().st_size > before
        assert len(store.chain_entries("s")) == 400
    finally:
        store.close()
    reopened = SqliteStore.open(path)
    assert reopened.chain_head("s") == head
    reopened.close()
