"""The differential test of issue 39, run longer and with random seeds.

Run: ``python benchmarks/differential_soak.py [--examples 200] [--steps 80] [--postgres]
[--seed N]``.

Drives tests/reliability/differential.py (a Guardian that holds its sessions, one restarted
at random points, one whose memory bound evicts every session but the one it serves; every
answer must agree) for ``--examples`` random sessions sequences of up to ``--steps`` steps, on
SQLite files, or with ``--postgres`` on a throwaway PostgreSQL cluster (tests/pgcluster.py,
which needs the server binaries). A divergence prints the shrunk sequence of steps that
shows it and exits 1: make it a regression test (tests/reliability/
test_reliability_differential.py keeps each one found, as an explicit sequence).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import seed as fixed_seed  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402

from tests.reliability.differential import Differential  # noqa: E402


@contextlib.contextmanager
def store_factory(postgres: bool) -> Iterator[object]:
    if not postgres:
        yield None
        return
    from tests.pgcluster import running_cluster

    with running_cluster() as cluster:

        def factory(name: str) -> str:
            return cluster.url(cluster.create_database(prefix=f"soak_{name}_"))

        yield staticmethod(factory)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    chosen = args.seed if args.seed is not None else random.randrange(2**32)
    print(f"seed {chosen}: {args.examples} examples of up to {args.steps} steps", flush=True)
    started = time.perf_counter()
    with store_factory(args.postgres) as factory:
        machine = type("Soak", (Differential,), {"store_factory": factory})
        chosen_settings = settings(
            max_examples=args.examples,
            stateful_step_count=args.steps,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        fixed_seed(chosen)(machine)
        try:
            run_state_machine_as_test(machine, settings=chosen_settings)
        except AssertionError as exc:
            print(f"divergence (seed {chosen}):\n{exc}", file=sys.stderr)
            return 1
    print(f"no divergence in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
