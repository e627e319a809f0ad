"""The decision process keeps the cyclic collector off the objects it holds, and still frees
cycles among them when idle (agbom/transports/heap.py, issue 27 §5).

Run in a subprocess of its own: freezing is process-wide, and pytest's process must keep its
collector as it is."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import gc, json, weakref
    from agbom.transports.heap import TenuredHeap

    class Node:
        pass

    heap = TenuredHeap(idle_s=0.0, sweep_every_s=0.0)
    heap.install()
    held = [Node() for _ in range(10_000)]  # what a session holds
    cycle = Node()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    out = {"idle_before": heap.idle_timeout()}
    gc.collect()  # a full collection, as the interpreter runs them
    heap.after_turn()
    out["frozen"] = gc.get_freeze_count()
    out["idle_after"] = heap.idle_timeout()
    del cycle  # a frozen object becomes cyclic garbage
    out["collected_by_full_collection"] = gc.collect()
    out["alive_after_full_collection"] = gone() is not None
    heap.when_idle()
    out["alive_after_sweep"] = gone() is not None
    out["sweeps"] = heap.sweeps
    out["frozen_after_sweep"] = gc.get_freeze_count()
    out["held"] = len(held)
    heap.uninstall()
    print(json.dumps(out))
    """
)


def test_survivors_of_a_full_collection_are_frozen_and_an_idle_sweep_frees_their_cycles() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    out = json.loads(done.stdout)
    # Nothing frozen yet: no sweep to wait for.
    assert out["idle_before"] is None
    # Everything alive after the full collection left the collector's walks...
    assert out["frozen"] >= 10_000
    assert out["idle_after"] == 0.0
    # ... so a cycle among them is not found by the next full collection,
    assert out["alive_after_full_collection"] is True
    # ... but the idle sweep finds it, and freezes the survivors again.
    assert out["alive_after_sweep"] is False
    assert out["sweeps"] == 1
    assert out["frozen_after_sweep"] >= 10_000
    assert out["held"] == 10_000


def test_a_young_collection_freezes_nothing() -> None:
    script = textwrap.dedent(
        """
        import gc, json
        from agbom.transports.heap import TenuredHeap
        gc.collect(); gc.freeze(); gc.unfreeze()
        heap = TenuredHeap()
        heap.install()
        gc.collect(0); gc.collect(1)
        heap.after_turn()
        print(json.dumps([gc.get_freeze_count(), heap.idle_timeout()]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[0, null]"
