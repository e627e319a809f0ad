"""A longer, random schemathesis run against the read API on a real ``agbom serve``.

Run: ``python benchmarks/fuzz_api.py [--examples 500] [--seconds 900] [--seed N]
[--workers 2] [--out DIR]``.

CI runs schemathesis derandomized, with a fixed seed and one worker
(tests/api/test_api_openapi.py), so a red CI is red on every run; this script is the
search for what that fixed run does not reach. It starts ``agbom serve`` on 127.0.0.1 over a
store seeded as the CI test seeds it (tests/api/live.py), then runs ``schemathesis run``
with every check and all four phases, a random seed (printed, so a failure can be sent
again with ``--seed``), ``--examples`` cases per operation and phase, bounded by
``--seconds``. The reports (NDJSON, JUnit, and schemathesis' pytest file that reproduces
each failure) go to ``--out`` (default: a new temporary folder, printed).

Each failure it finds becomes a regression test with that input (tests/api/
test_api_store_errors.py holds the first) and a fix, never a wider document. Exit status 1
when schemathesis reports a failure, or the server logged a traceback.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.api.live import schemathesis_run, seeded_server  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=500, help="cases per operation, phase")
    parser.add_argument("--seconds", type=int, default=900, help="time budget of the run")
    parser.add_argument("--seed", type=int, default=None, help="default: a random one")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="report folder")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    out = args.out or Path(tempfile.mkdtemp(prefix="agbom-fuzz-api-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"fuzz_api: seed {seed}, reports in {out}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        server = seeded_server(Path(folder))
        started = time.monotonic()
        try:
            done = schemathesis_run(
                server.url,
                out,
                max_examples=args.examples,
                seed=seed,
                deterministic=False,
                max_seconds=args.seconds,
                workers=args.workers,
                timeout=args.seconds + 300,
                reports=("ndjson", "junit", "pytest"),
            )
        finally:
            server.stop()
        log = server.logs()
    print(done.stdout[-6000:], done.stderr[-2000:], sep="\n")
    cases = _generated(done.stdout)
    print(f"fuzz_api: {cases} cases in {time.monotonic() - started:.0f} s, seed {seed}")
    if "Traceback" in log:
        print("fuzz_api: the server logged a traceback:\n" + log[-4000:])
        return 1
    return 0 if done.returncode == 0 else 1


def _generated(summary: str) -> str:
    for line in summary.splitlines():
        if " generated" in line:
            return line.strip().split(" generated")[0]
    return "?"


if __name__ == "__main__":
    sys.exit(main())
