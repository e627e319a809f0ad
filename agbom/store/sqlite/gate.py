"""One writer at a time per store file within a process, the decisions first.

SQLite lets one connection write at a time. When another connection of the same process
holds the write lock, ``BEGIN IMMEDIATE`` does not queue: SQLite's busy handler retries
after sleeps that grow to 100 ms (1, 2, 5, 10, 15, 20, 25... ms), so a decision that
arrives while the decision process's bulk thread writes a big snapshot's component bodies
waits for the next retry that happens to find the lock free, often tens of milliseconds
after it was released (issue 27 §5: the p99 of small requests while big snapshots arrive).

A :class:`WriterGate` is shared by every handle on one file in a process
(:func:`gate_for`). Writers wait on it instead, and are woken the moment the holder is
done. A background writer (the bulk thread's :meth:`prepare_document` chunks) also steps
aside while a foreground writer waits, so decisions go first between chunks.

The gate only orders this process's writers; other processes still meet SQLite's own
lock, as before. It never waits longer than the store's busy timeout: past it, the writer
goes on to ``BEGIN IMMEDIATE`` and SQLite decides, as it did without the gate. A thread
that already holds the gate (a write inside a write, on another handle) does not wait for
itself either.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["WriterGate", "gate_for"]


class WriterGate:
    """The in-process write turn on one store file (see the module's docs)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._holder: int | None = None
        self._foreground_waiting = 0

    @contextlib.contextmanager
    def turn(self, *, timeout_s: float, background: bool = False) -> Iterator[None]:
        """Hold the write turn for the body of the ``with``; wait at most ``timeout_s``."""
        me = threading.get_ident()
        deadline = time.monotonic() + timeout_s
        with self._cond:
            if self._holder == me:
                held = False  # a write inside a write: SQLite answers that one
            else:
                if not background:
                    self._foreground_waiting += 1
                try:
                    while self._holder is not None or (background and self._foreground_waiting):
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        self._cond.wait(left)
                finally:
                    if not background:
                        self._foreground_waiting -= 1
                held = self._holder is None
                if held:
                    self._holder = me
                else:
                    self._cond.notify_all()  # a background writer waiting on us may go
        try:
            yield
        finally:
            if held:
                with self._cond:
                    self._holder = None
                    self._cond.notify_all()


_GATES: dict[str, WriterGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(path: Path) -> WriterGate:
    """The gate every handle on ``path`` in this process shares."""
    try:
        key = str(path.resolve())
    except OSError:
        key = str(path.absolute())
    with _GATES_LOCK:
        gate = _GATES.get(key)
        if gate is None:
            gate = _GATES[key] = WriterGate()
        return gate
