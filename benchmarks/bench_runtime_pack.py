"""toolCallRequest cost with the baseline runtime pack (in process).

Run: ``python benchmarks/bench_runtime_pack.py [--requests R] [--rounds N]``.

Two Guardians in the same run, each with the default pack over a SQLite store, take turns
deciding the same requests (rounds interleaved, so machine load falls on both alike):

* the anchor: no runtime pack;
* the pack Guardian: ``--pack baseline`` with one allowed host.

The requests are ``Bash`` toolCallRequests of everyday shape: a short command, a command
with a URL on the allowlist piped into ``jq``, and a 2 KB script of twenty lines. Printed:
the median milliseconds per request of each, and the ratio to the anchor.
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

import bench_guardian  # noqa: E402

from agbom.guardian import Guardian, GuardianConfig, build_guardian  # noqa: E402

SCRIPT = "\n".join(
    f"python -m pytest tests/test_part_{i}.py -q && git add src/part_{i}.py  # step {i}"
    for i in range(20)
)
COMMANDS = (
    "ls -la",
    "curl -s https://docs.example.com/api/items | jq '.items[] | .id'",
    SCRIPT,
)


def _guardian(folder: Path, config: GuardianConfig) -> tuple[Guardian, str]:
    g = build_guardian(folder / "store.db", config=config)
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": ["steps/toolCallRequest", "steps/toolCallResult"],
        "transports_supported": ["http"],
        "provenance_producer": "none",
    }
    assert "result" in g.handle(bench_guardian.envelope("handshake/hello", hello, session_id=sid))
    return g, sid


def _round(g: Guardian, sid: str, requests: int) -> float:
    bodies: list[dict[str, Any]] = []
    for i in range(requests):
        command = COMMANDS[i % len(COMMANDS)]
        payload = {"tool": {"name": "Bash"}, "arguments": {"command": {"value": command}}}
        bodies.append(bench_guardian.envelope("steps/toolCallRequest", payload, session_id=sid))
    began = time.perf_counter()
    for body in bodies:
        answer = g.handle(body)
        assert answer["result"]["decision"] == "allow", answer
    return (time.perf_counter() - began) / requests * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a").mkdir()
        (root / "b").mkdir()
        anchor = _guardian(root / "a", GuardianConfig())
        packed = _guardian(
            root / "b",
            GuardianConfig(runtime_packs=("baseline",), egress_allow=("docs.example.com",)),
        )
        _round(*anchor, 30)  # warm: imports, compiled patterns
        _round(*packed, 30)
        base: list[float] = []
        pack: list[float] = []
        for _ in range(args.rounds):
            base.append(_round(*anchor, args.requests))
            pack.append(_round(*packed, args.requests))
        a, b = statistics.median(base), statistics.median(pack)
        print(f"anchor (no runtime pack): {a:.3f} ms/request (median of {args.rounds} rounds)")
        print(f"--pack baseline:          {b:.3f} ms/request, {b / a:.2f}x the anchor")
        for g, _ in (anchor, packed):
            g.store.close()


if __name__ == "__main__":
    main()
