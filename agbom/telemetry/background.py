"""A sink that does its work on a thread of its own, fed by a bounded queue.

The decision thread only offers a record: a non-blocking put, and a counted drop when the queue
is full. Whatever the sink does next (serialize, write, export) can be slow or fail without a
decision waiting for it; ACS-Trace requires that a trace sink never changes nor delays what the
Observed Agent is told.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Final

from agbom.telemetry.record import DecisionRecord, Offered

DEFAULT_CAPACITY = 10_000
"""Records a sink may hold before it drops new ones (a few MB at most)."""
BATCH = 1024
"""Records a sink takes from its queue at once (one write, one lock round)."""
LINGER_S = 0.05
"""How long a sink waits, after the first record of a batch, for others to join it. Waking the
thread for every record costs the decisions more (the GIL changes hands each time) than a
line written 50 ms later."""
_STOP: Final = object()


class BackgroundSink:
    """Base of the sinks: :meth:`offer` from any thread, :meth:`handle` on the sink's thread."""

    name = "sink"

    def __init__(self, *, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self._queue: queue.Queue[object] = queue.Queue(maxsize=capacity)
        self._lock = threading.Lock()
        self._queue_dropped = 0
        self._thread: threading.Thread | None = None
        self._closed = False

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work, name=f"agbom-{self.name}", daemon=True
            )
            self._thread.start()

    def offer(self, offered: Offered) -> None:
        """Queue a decision without waiting; count it as dropped when the queue is full. The
        record is built on the sink's thread, from what the Guardian already holds."""
        try:
            self._queue.put_nowait(offered)
        except queue.Full:
            with self._lock:
                self._queue_dropped += 1

    @property
    def queue_dropped(self) -> int:
        """Records dropped because the queue was full, since the start."""
        with self._lock:
            return self._queue_dropped

    def _work(self) -> None:
        stopping = False
        while not stopping:
            items = [self._queue.get()]
            if items[0] is not _STOP and self._queue.qsize() < BATCH:
                time.sleep(LINGER_S)
            while len(items) < BATCH:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if items[-1] is _STOP:
                items.pop()
                stopping = True
            records = []
            for item in items:
                try:
                    records.append(DecisionRecord.of(*item))  # type: ignore[misc]
                except Exception as exc:  # noqa: BLE001 - a sink must outlive a bad record
                    self.failed(exc)
            if records:
                self.handle_batch(records)
        self.finish()

    def handle_batch(self, records: list[DecisionRecord]) -> None:
        """Handle records in order; one that fails is counted and the rest go on."""
        for record in records:
            try:
                self.handle(record)
            except Exception as exc:  # noqa: BLE001 - a sink must outlive a bad record
                self.failed(exc)

    def handle(self, record: DecisionRecord) -> None:
        raise NotImplementedError

    def failed(self, exc: Exception) -> None:
        """A record :meth:`handle` could not deal with (counted by the subclass)."""

    def finish(self) -> None:
        """Called on the sink's thread after the last record (flush, close)."""

    def close(self, timeout: float = 10.0) -> None:
        """Handle what is queued, then stop (waits at most ``timeout`` seconds)."""
        if self._closed:
            return
        self._closed = True
        thread = self._thread
        if thread is None:
            self.finish()
            return
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return  # the thread is stuck on a write; it is a daemon and dies with us
        thread.join(timeout)

    def stats(self) -> dict[str, int]:
        return {"dropped": self.queue_dropped, "queued": self._queue.qsize()}
