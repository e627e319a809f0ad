"""A step on a replica whose view of the session is stale, as the session's chain grows.

Run: ``python benchmarks/bench_stale_restore.py [--lengths 1000 4000 16000] [--steps 40]
[--components N]``.

Two Guardians on one SQLite file are two replicas behind a load balancer that is not sticky.
The session's chain is first grown to each length through one replica. Then ``--steps``
toolCallRequests go to the two replicas in turn: every one of them finds the session stale
(the other replica appended since), has its entry refused on the old head, restores the
session and decides again. The anchor, measured in the same run at the same length, is the
same step sent to one replica only, whose view is never stale. ``--components N`` (default
0) first gives the session an AgBOM of N tools, which a restore must also bring back. The
script prints both medians and their ratio for each length, and the ratio of the stale step
at the longest length to the shortest (in proportion to the chain: 16x; flat: 1x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_guardian import envelope  # noqa: E402 - the shared request builder

HELLO = {
    "acs_versions_supported": ["0.1.0"],
    "methods_implemented": ["steps/sessionStart", "steps/toolCallRequest", "agbom/snapshot"],
    "transports_supported": ["http"],
    "provenance_producer": "none",
}
TOOL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "a"}}}


def timed(guardian: Any, session_id: str) -> float:
    request = envelope("steps/toolCallRequest", TOOL, session_id=session_id)
    started = time.perf_counter()
    answer = guardian.handle(request)
    elapsed = (time.perf_counter() - started) * 1e3
    if "result" not in answer:
        raise SystemExit(f"unexpected answer: {answer}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[1000, 4000, 16000])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--components", type=int, default=0)
    args = parser.parse_args()
    from agbom.guardian import build_guardian

    print(
        f"python {sys.version.split()[0]}; {args.steps} steps per figure, SQLite (WAL), "
        f"AgBOM of {args.components} components"
    )
    stale_at: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "replicas.db"
        replicas = [build_guardian(db), build_guardian(db)]
        sid = f"bench-{uuid.uuid4()}"
        opening: list[tuple[str, Any]] = [("handshake/hello", HELLO), ("steps/sessionStart", {})]
        if args.components:
            tools = [
                {
                    "id": f"tool-{i}",
                    "type": "tool",
                    "name": f"tool-{i}",
                    "version": "1.0.0",
                    "provider": "local",
                    "capability": "fs.read",
                    "registration_provenance": {"origin": "system"},
                }
                for i in range(args.components)
            ]
            opening.append(
                ("agbom/snapshot", {"agbom": {"agent": {"id": "bench"}, "components": tools}})
            )
        for method, payload in opening:
            assert "result" in replicas[0].handle(envelope(method, payload, session_id=sid))
        length = 1
        for target in sorted(args.lengths):
            while length < target:
                timed(replicas[0], sid)
                length += 1
            stale = [timed(replicas[i % 2], sid) for i in range(args.steps)]
            one = [timed(replicas[0], sid) for _ in range(args.steps)]
            length += 2 * args.steps
            stale_at[target] = statistics.median(stale)
            anchor = statistics.median(one)
            print(
                f"chain of {target:>6,} entries: stale replica {stale_at[target]:7.2f} ms median; "
                f"anchor (one replica) {anchor:.3f} ms; ratio {stale_at[target] / anchor:.1f}x"
            )
        for replica in replicas:
            replica.store.close()
    short, long = min(stale_at), max(stale_at)
    print(
        f"stale step at {long:,} / at {short:,} entries: {stale_at[long] / stale_at[short]:.2f}x "
        f"(the chain is {long / short:.0f}x as long)"
    )


if __name__ == "__main__":
    main()
