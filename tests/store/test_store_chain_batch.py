"""append_entries: a burst of audit entries committed together, with one-entry guarantees."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.protocol import entry_hash, verify_chain
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, SqliteStore, StoreError
from agbom.store.interface import utc_timestamp


def _chain(session_id: str, count: int, head: str | None = None, *, start: int = 1):
    """``count`` ChainAppends for one session, each hashed on the one before."""
    appends = []
    for n in range(start, start + count):
        entry = {"entry_id": str(n), "step_id": f"{session_id}-r{n}", "decision": "allow"}
        digest = entry_hash(entry, head)
        appends.append(
            ChainAppend(session_id, entry, digest, head, request_id=f"{session_id}-r{n}")
        )
        head = digest
    return appends


def _verified(entries: list[dict]) -> bool:
    """The stored entries (seq is the store's, not hashed) form an unbroken chain."""
    return verify_chain([{k: v for k, v in e.items() if k != "seq"} for e in entries]) is None


def _interleave(*chains: list[ChainAppend]) -> list[ChainAppend]:
    """Merge per-session chains, keeping each session's order (as a server would queue them)."""
    rng = random.Random(7)
    pending = [list(c) for c in chains]
    out = []
    while any(pending):
        lane = rng.choice([p for p in pending if p])
        out.append(lane.pop(0))
    return out


def test_interleaved_sessions_land_in_order_with_their_seqs(store: SqliteStore) -> None:
    a, b = _chain("s-a", 5), _chain("s-b", 4)
    batch = _interleave(a, b)
    outcomes = store.append_entries(batch)
    expected = {"s-a": 1, "s-b": 1}
    for item, outcome in zip(batch, outcomes, strict=True):
        assert outcome == expected[item.session_id]
        expected[item.session_id] += 1
    for session, chain in (("s-a", a), ("s-b", b)):
        stored = store.chain_entries(session)
        assert [e["entry_hash"] for e in stored] == [c.entry_hash for c in chain]
        assert _verified(stored)


def test_a_second_batch_continues_the_stored_chain(store: SqliteStore) -> None:
    first = _chain("s", 3)
    assert store.append_entries(first) == [1, 2, 3]
    second = _chain("s", 3, first[-1].entry_hash, start=4)
    assert store.append_entries(second) == [4, 5, 6]
    assert _verified(store.chain_entries("s"))


def test_a_repeated_request_id_refuses_that_entry_and_the_ones_chained_on_it(
    store: SqliteStore,
) -> None:
    store.append_entries(_chain("s", 2))
    head = store.chain_head("s")
    retry = _chain("s", 2, head, start=3)
    # The first new entry reuses an id already in the store (an old replay).
    replay = ChainAppend("s", retry[0].entry, retry[0].entry_hash, head, request_id="s-r1")
    other = _chain("t", 2)
    outcomes = store.append_entries([replay, other[0], retry[1], other[1]])
    assert isinstance(outcomes[0], DuplicateRequest)
    assert outcomes[1] == 1 and outcomes[3] == 2  # the other session is not held back
    assert isinstance(outcomes[2], ChainConflict)  # it chained on the refused entry
    assert len(store.chain_entries("s")) == 2
    assert [e["entry_hash"] for e in store.chain_entries("t")] == [o.entry_hash for o in other]


def test_a_stale_head_refuses_the_session_and_nothing_is_half_written(
    store: SqliteStore,
) -> None:
    store.append_entries(_chain("s", 2))
    stale = _chain("s", 2, head=None, start=3)  # chained on an empty chain: not the head
    outcomes = store.append_entries(stale)
    assert all(isinstance(o, ChainConflict) for o in outcomes)
    assert len(store.chain_entries("s")) == 2
    assert _verified(store.chain_entries("s"))


@pytest.mark.sqlite_only
def test_text_with_a_nul_takes_the_one_by_one_path_and_is_kept_exactly(
    store: SqliteStore,
) -> None:
    entry = {"entry_id": "1", "note": "a\u0000b"}
    digest = entry_hash(entry, None)
    outcomes = store.append_entries([ChainAppend("s", entry, digest, None, request_id="r\u00001")])
    assert outcomes == [1]
    assert store.chain_entries("s")[0]["note"] == "a\u0000b"


def test_invalid_arguments_raise_before_anything_is_written(store: SqliteStore) -> None:
    good = _chain("s", 1)[0]
    bad = ChainAppend("", good.entry, good.entry_hash, None)
    with pytest.raises(StoreError, match="session_id"):
        store.append_entries([good, bad])
    assert store.chain_entries("s") == []
    assert store.append_entries([]) == []


def test_a_closed_store_answers_every_entry_with_an_error(db_path: Path) -> None:
    opened = SqliteStore.open(db_path)
    opened.close()
    with pytest.raises(StoreError, match="closed"):
        opened.append_entries(_chain("s", 1))


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=4),
    split=st.integers(min_value=1, max_value=10),
)
def test_batches_store_what_one_at_a_time_would(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], split: int
) -> None:
    chains = [_chain(f"s{i}", n) for i, n in enumerate(sizes)]
    batch = _interleave(*chains)
    folder = tmp_path_factory.mktemp("batch")
    with (
        SqliteStore.open(folder / "batched.db") as batched,
        SqliteStore.open(folder / "single.db") as single,
    ):
        for start in range(0, len(batch), split):
            batched.append_entries(batch[start : start + split])
        for item in batch:
            single.append_entry(
                item.session_id,
                entry=item.entry,
                entry_hash=item.entry_hash,
                previous_hash=item.previous_hash,
                request_id=item.request_id,
                nonce=item.nonce,
            )
        for i in range(len(sizes)):
            got = batched.chain_entries(f"s{i}")
            assert got == single.chain_entries(f"s{i}")
            assert _verified(got)


@given(st.floats(min_value=0, max_value=253402300799.0, allow_nan=False))
def test_utc_timestamp_is_the_datetime_text(ts: float) -> None:
    expected = datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert utc_timestamp(ts) == expected


def _steady_writes(path: Path, wal_limit_bytes: int, cycles: int = 60) -> tuple[int, int]:
    """Writes that a checkpoint never catches up with, in a fixed order, with no timer.

    Under steady writes a PASSIVE checkpoint always finds frames newer than what it could
    copy, so SQLite never starts the WAL over on its own. Here a reader holds a snapshot from
    before the second batch of each cycle while the checkpoint runs, which stops it at the
    same place every time, however loaded the machine is. The first batch of the next cycle
    is then written with no reader, as a server's writes are between two short reads.
    Returns the most frames the WAL held and its file size.
    """
    most = 0
    with SqliteStore.open(path) as opened:
        opened.start_background_checkpoints(interval_s=3600)  # its timer never fires here
        reader = sqlite3.connect(path, isolation_level=None)
        head = None
        n = 0

        def write() -> None:
            nonlocal head, n
            batch = _chain("s", 10, head, start=1 + 10 * n)
            assert all(isinstance(o, int) for o in opened.append_entries(batch))
            head, n = batch[-1].entry_hash, n + 1

        try:
            for _ in range(cycles):
                write()
                reader.execute("BEGIN")
                reader.execute("SELECT COUNT(*) FROM chain_entries").fetchone()
                write()
                frames = opened.checkpoint(wal_limit_bytes)
                assert frames > 0
                most = max(most, frames)
                reader.execute("COMMIT")
        finally:
            reader.close()
        wal_bytes = Path(f"{path}-wal").stat().st_size
        assert _verified(opened.chain_entries("s"))
        assert len(opened.chain_entries("s")) == 20 * cycles
    return most, wal_bytes


def test_the_wal_starts_over_under_steady_writes(tmp_path: Path) -> None:
    """Once a checkpoint finds more than the limit in the WAL, the next write starts it over.

    The WAL then holds at most the limit, plus one cycle's frames before the checkpoint that
    sees it, plus one batch's before the restart: 40 frames of 4 KiB here, every run, since
    nothing depends on timing. The bound, 4 times the limit, leaves room for page layouts."""
    limit = 64 << 10
    most, wal_bytes = _steady_writes(tmp_path / "wal.db", limit)
    assert most * 4096 <= 4 * limit, most
    assert wal_bytes <= 4 * limit, wal_bytes


def test_without_the_limit_the_same_writes_grow_the_wal(tmp_path: Path) -> None:
    """The loop above does reproduce the problem: with a limit it never reaches, the WAL
    grows with every batch, to many times the bound the other test holds it to."""
    most, wal_bytes = _steady_writes(tmp_path / "wal.db", wal_limit_bytes=1 << 40)
    assert most >= 2 * 60  # at least one new frame per batch, none ever reused
    assert wal_bytes > 20 * (64 << 10), wal_bytes
