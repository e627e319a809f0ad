"""A wide toolCallRequest over a big lineage against the same over an empty one (issue 39).

Run: ``python benchmarks/bench_lineage.py [--objects N] [--requests R] [--restored]``.

Two sessions of one Guardian in the same run, over a SQLite store, under the default pack
(its warning AGB-FLOW-001 judges Bash calls) and a pack with a ``source``-filtered deny rule
(``source: {origin: [tool_output, retrieved]}``), so both the trust and the filter index are
asked:

* the anchor: a session whose lineage is empty;
* the big one: a session whose steps delivered N objects (default 40,000) in chains that
  start at an id never delivered, so that none ever settles (the shape that walked the
  whole ancestry on every query before issue 39), half agent_generated, half tool_output;

and the same request to each: a ``Bash`` toolCallRequest with 20 arguments of 256 parents
each (parents drawn from the big lineage: in the anchor they are ids not delivered). The
target is a median at most 2x the anchor's. ``--restored`` also times the first such request
after the Guardian dropped the big session from memory (the lineage is rebuilt from the
chain: a one-off cost, proportional to the lineage).
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

from agbom.guardian import Guardian, build_guardian  # noqa: E402
from tests.guardian.acs import FILTERED_PACK  # noqa: E402

FILTERED = FILTERED_PACK.replace("SINK", "Bash")
BATCH = 5_000  # objects per toolCallResult
ARGUMENTS, PARENTS = 20, 256


def envelope(method: str, payload: Any, sid: str) -> dict[str, Any]:
    return bench_guardian.envelope(method, payload, session_id=sid)


def open_session(g: Guardian) -> str:
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": [
            "steps/sessionStart",
            "steps/toolCallRequest",
            "steps/toolCallResult",
        ],
        "transports_supported": ["http"],
        "provenance_producer": "deterministic",
    }
    assert "result" in g.handle(envelope("handshake/hello", hello, sid))
    assert "result" in g.handle(envelope("steps/sessionStart", {}, sid))
    return sid


def fill(g: Guardian, sid: str, objects: int) -> None:
    for start in range(0, objects, BATCH):
        outputs = []
        for i in range(start, min(start + BATCH, objects)):
            parent = f"n{i - 2}" if i >= 2 else f"ghost{i}"
            origin = "tool_output" if i % 2 else "agent_generated"
            prov = {"provenance_id": f"n{i}", "origin": origin, "derived_from": [parent]}
            outputs.append({"value": "x", "provenance": prov})
        payload = {"tool": {"name": "web_fetch"}, "exit_status": "success", "outputs": outputs}
        answer = g.handle(envelope("steps/toolCallResult", payload, sid))
        assert answer["result"]["decision"] == "allow", answer


def call(objects: int, n: int) -> dict[str, Any]:
    arguments = {}
    for k in range(ARGUMENTS):
        parents = [f"n{(objects - 1 - j * 97 - k * 13) % objects}" for j in range(PARENTS)]
        prov = {"provenance_id": f"c{n}-{k}", "origin": "agent_generated", "derived_from": parents}
        arguments[f"a{k}"] = {"value": "ls", "provenance": prov}
    return {"tool": {"name": "Bash"}, "capability": "process.execute", "arguments": arguments}


def timed(g: Guardian, sid: str, payload: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    request = envelope("steps/toolCallRequest", payload, sid)
    started = time.perf_counter()
    answer = g.handle(request)
    return (time.perf_counter() - started) * 1e3, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=40_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--restored", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    (folder / "rules").mkdir()
    (folder / "rules" / "filtered.yaml").write_text(FILTERED)
    g = build_guardian(folder / "b.db", folder / "rules", with_default_rules=True)
    empty = open_session(g)
    big = open_session(g)
    started = time.perf_counter()
    fill(g, big, args.objects)
    loaded = (time.perf_counter() - started) * 1e3
    held = g.policies.flow.lineage(big)
    assert held is not None and len(held) == args.objects, len(held or ())
    times: dict[str, list[float]] = {"empty": [], "big": []}
    for n in range(args.requests):
        for label, sid in (("empty", empty), ("big", big)):
            elapsed, answer = timed(g, sid, call(args.objects, n))
            times[label].append(elapsed)
            assert answer["result"]["decision"] == "deny", answer
    anchor = statistics.median(times["empty"])
    wide = statistics.median(times["big"])
    print(
        f"{args.objects} objects delivered in {loaded:.0f} ms (lineage {held.bytes / 2**20:.1f} "
        f"MiB est.); a Bash call of {ARGUMENTS} arguments x {PARENTS} parents, "
        f"{args.requests} each, median:"
    )
    print(f"  empty lineage (anchor)       {anchor:8.2f} ms")
    print(
        f"  {args.objects}-object lineage       {wide:8.2f} ms  ({wide / anchor:.2f}x the anchor)"
    )
    if args.restored:
        g.forget_sessions()
        elapsed, answer = timed(g, big, call(args.objects, args.requests))
        assert answer["result"]["decision"] == "deny", answer
        print(
            f"  first call after the session was dropped (rebuilt from the chain) {elapsed:.0f} ms"
        )
        elapsed, answer = timed(g, big, call(args.objects, args.requests + 1))
        print(f"  the next one                 {elapsed:8.2f} ms")
    g.store.close()


if __name__ == "__main__":
    main()
