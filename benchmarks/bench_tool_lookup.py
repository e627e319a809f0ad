"""toolCallRequest cost by how the tool is named, at N inventory components (in process).

Run: ``python benchmarks/bench_tool_lookup.py [--components N] [--requests R]``.

The anchor is the same request naming the tool by its id (``tool.id``), measured in the same
run; the ratios to it show whether a lookup by name, or of an unknown name, stays flat.
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

from agbom.guardian import build_guardian  # noqa: E402


def envelope(method: str, payload: Any, sid: str) -> dict[str, Any]:
    return bench_guardian.envelope(method, payload, session_id=sid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--components", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2_000)
    args = parser.parse_args()
    n = args.components
    g = build_guardian(Path(tempfile.mkdtemp()) / "s.db")
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": ["steps/sessionStart", "steps/toolCallRequest", "agbom/snapshot"],
        "transports_supported": ["http"],
        "provenance_producer": "none",
    }
    g.handle(envelope("handshake/hello", hello, sid))
    g.handle(envelope("steps/sessionStart", {}, sid))
    tools = [
        {
            "id": f"tool-id-{i}",
            "type": "tool",
            "name": f"tool-{i}",
            "version": "1",
            "provider": "local",
            "capability": "fs.read",
            "registration_provenance": {"origin": "system"},
        }
        for i in range(n)
    ]
    snap = g.handle(
        envelope("agbom/snapshot", {"agbom": {"agent": {"id": "bench"}, "components": tools}}, sid)
    )
    assert snap["result"]["decision"] == "allow", snap
    last = n - 1
    cases = {
        "by id (anchor)": {
            "tool": {"name": f"tool-{last}", "id": f"tool-id-{last}"},
            "arguments": {},
        },
        "by name": {"tool": {"name": f"tool-{last}"}, "arguments": {}},
        "unknown name": {"tool": {"name": "no-such-tool"}, "arguments": {}},
    }
    results: dict[str, float] = {}
    for label, payload in cases.items():
        times = []
        for _ in range(args.requests):
            request = envelope("steps/toolCallRequest", payload, sid)
            started = time.perf_counter()
            answer = g.handle(request)
            times.append((time.perf_counter() - started) * 1e6)
            assert "result" in answer, answer
        results[label] = statistics.median(times)
    anchor = results["by id (anchor)"]
    print(f"{n} components, {args.requests} requests each, median per toolCallRequest:")
    for label, value in results.items():
        print(f"  {label:16} {value:8.1f} us  ({value / anchor:.2f}x the lookup by id)")
    g.store.close()


if __name__ == "__main__":
    main()
