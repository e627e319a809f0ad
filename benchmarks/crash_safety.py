"""Long crash-safety and concurrency runs (the CI tests run the same code for seconds).

Run: ``python benchmarks/crash_safety.py [--kills 60] [--clients 4] [--concurrency-seconds 180]``.

1. Crash safety: ``agbom serve`` is SIGKILLed ``--kills`` times at random points while client
   threads stream steps, register and load skills and an approver runs ``agbom skills
   approve``; after every kill the server restarts on the same store. At the end every
   decision a client received must be in the store as answered, ``agbom audit verify`` must
   pass, and every approval must be recorded exactly once.
2. Concurrency: two servers on one store, clients on each, two CLI approvers, for
   ``--concurrency-seconds``: no error of any kind may reach a client.

Prints the counts; exits 1 (with the failed check) when anything is off.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.reliability.test_reliability_crash import concurrency_run, crash_run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--concurrency-seconds", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(2), "big"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        counts = crash_run(Path(tmp), kills=args.kills, clients=args.clients, seed=args.seed)
        print(
            f"crash safety (seed {args.seed}): {args.kills} SIGKILLs in "
            f"{time.perf_counter() - started:.0f} s; {counts['heard']} decisions heard by "
            f"{counts['sessions']} sessions, all stored as answered; {counts['approved']} CLI "
            f"approvals, each recorded once; {counts['transport_failures']} requests cut off "
            "by a kill; audit verify passed"
        )
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        counts = concurrency_run(
            Path(tmp), seconds=args.concurrency_seconds, clients_per_server=args.clients
        )
        print(
            f"concurrency: 2 servers x {args.clients} clients + 2 CLI approvers for "
            f"{time.perf_counter() - started:.0f} s; {counts['heard']} decisions, "
            f"{counts['approved']} approvals, 0 client errors, no lost writes"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
