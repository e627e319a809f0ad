"""Writers of one store file in one process take turns at a gate, the decisions first, instead
of meeting in SQLite's busy handler (agbom/store/sqlite/gate.py, issue 27 §5)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from agbom.store import SqliteStore
from agbom.store.sqlite.gate import WriterGate, gate_for

WAIT_S = 10.0


def _run(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_a_waiting_decision_goes_before_a_waiting_background_chunk() -> None:
    gate = WriterGate()
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with gate.turn(timeout_s=WAIT_S):
            holding.set()
            release.wait(WAIT_S)
            order.append("holder")

    def writer(name: str, background: bool, queued: threading.Event) -> None:
        queued.set()
        with gate.turn(timeout_s=WAIT_S, background=background):
            order.append(name)

    first = _run(holder)
    assert holding.wait(WAIT_S)
    queued_bulk, queued_decision = threading.Event(), threading.Event()
    bulk = _run(lambda: writer("bulk", True, queued_bulk))
    assert queued_bulk.wait(WAIT_S)
    decision = _run(lambda: writer("decision", False, queued_decision))
    assert queued_decision.wait(WAIT_S)
    # The decision registers as waiting before it blocks; give it the moment to do so.
    for _ in range(1000):
        if gate._foreground_waiting:
            break
        threading.Event().wait(0.001)
    release.set()
    for thread in (first, bulk, decision):
        thread.join(WAIT_S)
    assert order == ["holder", "decision", "bulk"]


def test_a_writer_gives_up_the_gate_after_the_timeout_and_sqlite_decides(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db", busy_timeout=0.2)
    other = store.reopen()
    gate = gate_for(tmp_path / "s.db")
    try:
        with gate.turn(timeout_s=WAIT_S):  # another thread of this process would hold it so
            failed: list[BaseException] = []

            def write() -> None:
                try:
                    with other._write() as conn:
                        conn.execute("SELECT 1")
                except BaseException as exc:  # noqa: BLE001 - what the test looks at
                    failed.append(exc)

            thread = _run(write)
            thread.join(WAIT_S)
            assert not thread.is_alive(), "a writer waited past its busy timeout"
            # Nothing held SQLite's lock, so past the gate's wait the write went through.
            assert failed == []
    finally:
        other.close()
        store.close()


def test_a_write_inside_a_write_on_another_handle_is_sqlites_to_refuse(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db", busy_timeout=0.2)
    other = store.reopen()
    try:
        with store._write():
            # The same thread holds the gate: the inner write does not wait for itself; SQLite
            # refuses it after its own busy timeout, as it did before the gate.
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                with other._write() as conn:
                    conn.execute("SELECT 1")
    finally:
        other.close()
        store.close()


def test_every_handle_on_a_file_shares_one_gate(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    other = store.reopen()
    try:
        assert store._gate is other._gate is gate_for(tmp_path / "." / "s.db")
        assert gate_for(tmp_path / "t.db") is not store._gate
    finally:
        other.close()
        store.close()
