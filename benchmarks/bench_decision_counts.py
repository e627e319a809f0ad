"""What does counting each decision per day cost an append to the audit chain?

The Overview's decision charts read counters each append keeps in its own transaction
(agbom/store/_decision_counts.py: on SQLite the store's append paths count, on PostgreSQL a
trigger on ``chain_entries``). This times the store's two append paths counting and not
counting (on SQLite the count turned off in the store's module, on PostgreSQL the trigger
dropped and created again between rounds, on the same store, so both read and write the
same tables), in alternating rounds, the order reversed every other round: ``append_entry``
(a Guardian that commits each entry) and ``append_entries`` in batches of ``--batch`` (a
pipelining Guardian, as ``agbom serve``). The entries are shaped
as the Guardian writes them, a third of them denials with two reason codes. The time is the
thread's CPU time on SQLite (the store's SQLite work, and its system calls, run on it),
which other jobs on a shared machine inflate less than wall time, and the wall time on
PostgreSQL (the trigger runs in the server). The figure is the median of the per-round
ratios of the two, not the microseconds.

Run: ``python benchmarks/bench_decision_counts.py [--entries N] [--rounds N] [--batch N]
[--postgres]``; ``--postgres`` starts a throwaway cluster (tests/pgcluster.py).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agbom.store import ChainAppend, Store, open_store  # noqa: E402
from agbom.store import _decision_counts as counts  # noqa: E402
from agbom.store.sqlite import chains as sqlite_chains  # noqa: E402


def entry(n: int) -> dict[str, Any]:
    """An entry as stage 6 of the Guardian writes it (agbom/guardian/stages/chain.py)."""
    deny = n % 3 == 0
    out: dict[str, Any] = {
        "entry_id": str(n + 1),
        "step_id": f"req-{n:08d}-3f2a9c1e-7b4d-4c1a-9e8f-0a1b2c3d4e5f",
        "step_type": "steps/toolCallRequest",
        "request_hash": "sha256:" + f"{n:064x}",
        "timestamp": "2026-03-20T10:00:00.000000Z",
        "decision": "deny" if deny else "allow",
        "turn_id": "turn-1",
    }
    if deny:
        out["reason_codes"] = ["AGB-TOOL-001", "tool_not_in_agbom"]
    return out


class Chain:
    """Appends to one session, remembering its head."""

    def __init__(self, store: Store, name: str) -> None:
        self.store, self.name, self.head, self.n = store, name, None, 0
        sqlite = type(store).__name__ == "SqliteStore"
        self.clock = time.thread_time if sqlite else time.perf_counter

    def next(self) -> ChainAppend:
        key = f"{self.name}-{self.n}"
        append = ChainAppend(self.name, entry(self.n), key, self.head, key, None)
        self.head, self.n = key, self.n + 1
        return append

    def one_by_one(self, count: int) -> float:
        start = self.clock()
        for _ in range(count):
            a = self.next()
            self.store.append_entry(
                a.session_id, entry=a.entry, entry_hash=a.entry_hash,
                previous_hash=a.previous_hash, request_id=a.request_id, nonce=None,
            )  # fmt: skip
        return (self.clock() - start) / count * 1e6

    def batches(self, count: int, size: int) -> float:
        start = self.clock()
        for _ in range(count // size):
            outcomes = self.store.append_entries([self.next() for _ in range(size)])
            assert all(isinstance(o, int) for o in outcomes), outcomes[:1]
        return (self.clock() - start) / (count // size * size) * 1e6


_COUNTED = sqlite_chains.counted


def counting(store: Store, on: bool) -> None:
    """Count decisions (``on``), as the store does, or not: on SQLite the store's appends
    are told no entry counts (a single append is then one autocommitted statement again);
    on PostgreSQL the trigger is dropped or created again."""
    if type(store).__name__ == "SqliteStore":
        sqlite_chains.counted = _COUNTED if on else (lambda *_: [])  # type: ignore[assignment]
        return
    with store._write() as conn:  # type: ignore[attr-defined]
        if on:
            conn.execute(counts.POSTGRES_TRIGGER[1])
        else:
            conn.execute("DROP TRIGGER chain_entries_counted ON chain_entries")


@contextlib.contextmanager
def where(postgres: bool) -> Iterator[str]:
    if postgres:
        from tests.pgcluster import running_cluster

        with running_cluster() as cluster:
            yield cluster.url(cluster.create_database("counts"))
        return
    folder = tempfile.mkdtemp(prefix="agbom-counts-")
    Path(folder).chmod(0o700)
    yield str(Path(folder) / "counts.db")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=2000, help="appends per path and round")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    with where(args.postgres) as location, open_store(location) as store:
        print(f"store {store.location}: {args.entries} appends per path, {args.rounds} rounds")
        results: dict[str, dict[bool, list[float]]] = {
            "append_entry": {True: [], False: []},
            f"append_entries (batches of {args.batch})": {True: [], False: []},
        }
        name_single, name_batch = results
        for r in range(args.rounds):
            for on in (True, False) if r % 2 == 0 else (False, True):
                if not on:
                    counting(store, False)
                single = Chain(store, f"single-{r}-{on}")
                batched = Chain(store, f"batch-{r}-{on}")
                results[name_single][on].append(single.one_by_one(args.entries))
                results[name_batch][on].append(batched.batches(args.entries, args.batch))
                if not on:
                    counting(store, True)  # the store as the migration left it
        for name, by in results.items():
            ratios = [a / b for a, b in zip(by[True], by[False], strict=True)]
            print(
                f"{name:34} counted {statistics.median(by[True]):7.1f} us, "
                f"not counted {statistics.median(by[False]):7.1f} us per entry: "
                f"{statistics.median(ratios):.3f}x (rounds {min(ratios):.3f}-{max(ratios):.3f}x)"
            )
        charts = store.fleet_charts()
        total = sum(sum(d[k] for k in counts.DISPOSITIONS) for d in charts["decisions_by_day"])
        print(f"decisions counted (the rounds that counted): {total}")


if __name__ == "__main__":
    main()
