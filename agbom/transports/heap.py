"""Keep Python's cyclic collector off the objects a long-running decision process holds.

A Guardian holds every session's inventory, graph and findings: about ten tracked objects a
component, so a million with 24 sessions of 4,700 components. CPython's full (generation 2)
collection walks all of them each time the heap grew by a quarter, and holds the GIL while
it does: in ``benchmarks/bench_memory.py`` those walks took 26 to 156 ms each, fourteen of
them in 17 s, and every small request that arrived meanwhile waited them out (issue 27 §5).
They found nothing to collect: what a session holds is acyclic and is freed by reference
counting when the session is dropped.

So what survives a full collection is moved out of the collector's sight (``gc.freeze``):
the next full collection walks only what was allocated since. Two things keep that from
costing memory:

* freezing happens right after a full collection, so no garbage that was collectable then is
  frozen with the live objects;
* frozen objects that later become part of an unreachable cycle (none are known) are found by
  a sweep over everything (``gc.unfreeze``, a full collection, ``gc.freeze``) that runs only
  when the process has had no request for :data:`IDLE_S`, at most every
  :data:`SWEEP_EVERY_S`, and only if something was frozen since the last one.
"""

from __future__ import annotations

import gc
import time
from typing import Any

__all__ = ["IDLE_S", "SWEEP_EVERY_S", "TenuredHeap"]

IDLE_S = 2.0
"""How long the decision process must have had nothing to do before a sweep."""
SWEEP_EVERY_S = 300.0
"""The shortest time between two sweeps."""
_OLDEST = 2  # the generation of a full collection


class TenuredHeap:
    """Freezes what survives each full collection; sweeps everything now and then, when idle.

    Call :meth:`install` once, :meth:`after_turn` after each turn of the loop (it freezes
    when a full collection ran during the turn), and use :meth:`idle_timeout` and
    :meth:`when_idle` around the loop's wait."""

    def __init__(self, *, idle_s: float = IDLE_S, sweep_every_s: float = SWEEP_EVERY_S) -> None:
        self.idle_s = idle_s
        self.sweep_every_s = sweep_every_s
        self._freeze_due = False
        self._frozen_since_sweep = False
        self._last_sweep = time.monotonic()
        self.sweeps = 0

    def install(self) -> None:
        gc.callbacks.append(self._collected)

    def uninstall(self) -> None:
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        # Not frozen here: the collector calls back from inside its own bookkeeping.
        if phase == "stop" and info.get("generation") == _OLDEST:
            self._freeze_due = True

    def after_turn(self) -> None:
        """Freeze what the full collection that ran since the last call left alive."""
        if self._freeze_due:
            self._freeze_due = False
            gc.freeze()
            self._frozen_since_sweep = True

    def idle_timeout(self) -> float | None:
        """How long the loop may wait for work before it should call :meth:`when_idle`
        (at least :data:`IDLE_S`); ``None`` while there is nothing to sweep."""
        if not self._frozen_since_sweep:
            return None
        return max(self.idle_s, self._last_sweep + self.sweep_every_s - time.monotonic())

    def _sweep_due(self) -> bool:
        return (
            self._frozen_since_sweep and time.monotonic() - self._last_sweep >= self.sweep_every_s
        )

    def when_idle(self) -> None:
        """The loop waited :meth:`idle_timeout` for nothing: sweep, if one is due."""
        if not self._sweep_due():
            return
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._freeze_due = False
        self._frozen_since_sweep = False
        self._last_sweep = time.monotonic()
        self.sweeps += 1
