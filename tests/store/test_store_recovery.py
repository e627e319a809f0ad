"""A store that could not write for a while takes writes again by itself once it can.

Two real ways to make SQLite writes fail, one per test: the files made unwritable (``chattr
+i`` as root, whom file modes do not stop; ``chmod a-w`` otherwise), and another connection
holding an exclusive lock past the busy timeout. The first is the one that used to stick: a
connection that opens a file it may not write opens it read-only, and stays so after the file
is writable again.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agbom.protocol import entry_hash, verify_chain
from agbom.store import ChainAppend, SqliteStore, StoreError
from tests.store.store_helpers import make_digest, register
from tests.store.unwritable import store_files, unwritable


def _append(store: SqliteStore, n: int, head: str | None) -> tuple[int | Exception, str]:
    entry = {"entry_id": str(n), "step_id": f"r{n}", "decision": "allow"}
    digest = entry_hash(entry, head)
    (outcome,) = store.append_entries([ChainAppend("s", entry, digest, head, request_id=f"r{n}")])
    return outcome, digest


def _verified(store: SqliteStore) -> bool:
    entries = [{k: v for k, v in e.items() if k != "seq"} for e in store.chain_entries("s")]
    return verify_chain(entries) is None


KILLED_WRITER = """
import os, signal, sys
from agbom.protocol import entry_hash
from agbom.store import ChainAppend, SqliteStore
store = SqliteStore.open(sys.argv[1])
store.start_background_checkpoints()
entry = {"entry_id": "1", "step_id": "r1", "decision": "allow"}
digest = entry_hash(entry, None)
assert store.append_entries([ChainAppend("s", entry, digest, None, request_id="r1")]) == [1]
print(digest, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _left_by_a_killed_writer(path: Path) -> str:
    """A store as a killed server leaves it (its -wal and -shm files in place); its head."""
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert len(store_files(path)) == 3
    return done.stdout.strip()


def test_a_store_opened_while_read_only_writes_once_the_files_are_writable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ro.db"
    head = _left_by_a_killed_writer(path)
    with unwritable(path):
        # What the restarted decision process does: open the store while it cannot write.
        store = SqliteStore.open(path)
    try:
        with unwritable(path):
            store.start_background_checkpoints(interval_s=0.01)
            assert store.write_failure is None  # nothing has tried to write yet
            refused, _ = _append(store, 2, head)
            assert isinstance(refused, Exception) and "read-only" in str(refused)
            assert store.write_failure is not None and "read-only" in store.write_failure
            assert "read-only" in (store.check_writable() or "")
            with pytest.raises(StoreError, match="read-only"):
                register(store, "sk", make_digest("sk"))
            assert store.chain_head("s") == head  # reads still work
        assert store.check_writable() is None
        assert store.write_failure is None
        seq, head = _append(store, 2, head)
        assert seq == 2
        assert register(store, "sk", make_digest("sk")) is not None
        assert _verified(store)
    finally:
        store.close()
    with SqliteStore.open(path) as reopened:
        assert reopened.chain_head("s") == head
        assert len(reopened.chain_entries("s")) == 2


def test_the_next_write_recovers_without_a_probe(tmp_path: Path) -> None:
    """The write itself replaces the read-only connection: nothing else has to run first."""
    path = tmp_path / "ro.db"
    head = _left_by_a_killed_writer(path)
    with unwritable(path):
        store = SqliteStore.open(path)
        try:
            refused, _ = _append(store, 2, head)
            assert isinstance(refused, Exception)
        except BaseException:
            store.close()
            raise
    try:
        seq, head = _append(store, 2, head)
        assert seq == 2 and store.write_failure is None
        assert _verified(store)
    finally:
        store.close()


def test_a_lock_held_past_the_busy_timeout_is_a_write_failure_until_released(
    tmp_path: Path,
) -> None:
    path = tmp_path / "busy.db"
    with SqliteStore.open(path, busy_timeout=0.2) as store:
        _, head = _append(store, 1, None)
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            refused, _ = _append(store, 2, head)
            assert isinstance(refused, Exception) and "busy" in str(refused)
            assert store.write_failure is not None
            assert store.check_writable() is not None
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert store.check_writable() is None and store.write_failure is None
        seq, _ = _append(store, 2, head)
        assert seq == 2
        assert _verified(store)


def test_a_refused_row_is_not_a_write_failure(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "dup.db") as store:
        _, head = _append(store, 1, None)
        entry = {"entry_id": "2", "step_id": "r1", "decision": "allow"}
        repeated = ChainAppend("s", entry, entry_hash(entry, head), head, request_id="r1")
        (outcome,) = store.append_entries([repeated])
        assert isinstance(outcome, Exception)
        assert store.write_failure is None
