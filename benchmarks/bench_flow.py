"""toolCallRequest cost with flow rules over a session of N provenance objects (in process).

Run: ``python benchmarks/bench_flow.py [--objects N] [--requests R]``.

Two Guardians in the same run, over a SQLite store:

* the anchor: the default pack without its flow rules, a session with the same steps
  carrying no provenance, and a ``Bash`` toolCallRequest whose argument carries none;
* the flow Guardian: the default pack (with its flow warnings) and the strict flow pack
  (agbom/rules/packs/flow-strict.yaml), a session whose steps delivered N Provenance objects
  (half a 1-deep fan of tool outputs, half one chain of agent_generated objects N/2 deep from
  the user's message), and the same request whose argument derives from the deepest node of
  the chain (allowed: trusted), or from a tool output (denied); and a second session there
  with the same steps and no provenance (what flow rules cost a session that is not tracked).

The ratios to the anchor are the figures issue 33 asks for (target: at most 1.5x).
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
import yaml  # noqa: E402

from agbom.guardian import Guardian, build_guardian  # noqa: E402
from agbom.rules.loader import default_pack_path  # noqa: E402

STRICT = Path(__file__).resolve().parents[1] / "agbom" / "rules" / "packs" / "flow-strict.yaml"
BATCH = 100  # outputs / content parts per step


def envelope(method: str, payload: Any, sid: str) -> dict[str, Any]:
    return bench_guardian.envelope(method, payload, session_id=sid)


def _session(g: Guardian, objects: int, *, provenance: bool) -> str:
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": [
            "steps/sessionStart",
            "steps/userMessage",
            "steps/agentResponse",
            "steps/toolCallRequest",
            "steps/toolCallResult",
        ],
        "transports_supported": ["http"],
        "provenance_producer": "deterministic" if provenance else "none",
        "profiles_supported": ["acs-core", "acs-provenance"] if provenance else ["acs-core"],
    }
    assert "result" in g.handle(envelope("handshake/hello", hello, sid))
    g.handle(envelope("steps/sessionStart", {}, sid))

    def item(value: str, pid: str, origin: str, parents: list[str] | None = None) -> Any:
        out: dict[str, Any] = {"value": value}
        if provenance:
            out["provenance"] = {"provenance_id": pid, "origin": origin}
            if parents:
                out["provenance"]["derived_from"] = parents
        return out

    user = item("do the task", "u0", "user_input")
    g.handle(envelope("steps/userMessage", {"content": [{"type": "text", **user}]}, sid))
    half = objects // 2
    for start in range(0, half, BATCH):
        outputs = [item(f"out {i}", f"t{i}", "tool_output") for i in range(start, start + BATCH)]
        answer = g.handle(
            envelope(
                "steps/toolCallResult",
                {"tool": {"name": "web_fetch"}, "exit_status": "success", "outputs": outputs},
                sid,
            )
        )
        assert answer["result"]["decision"] == "allow", answer
    for start in range(0, half, BATCH):
        parts = [
            {
                "type": "text",
                **item(f"a {i}", f"a{i}", "agent_generated", [f"a{i - 1}" if i else "u0"]),
            }
            for i in range(start, start + BATCH)
        ]
        answer = g.handle(envelope("steps/agentResponse", {"content": parts}, sid))
        assert answer["result"]["decision"] == "allow", answer
    return sid


def _request(argument: dict[str, Any], n: int) -> dict[str, Any]:
    arg = dict(argument)
    if "provenance" in arg:
        arg["provenance"] = {**arg["provenance"], "provenance_id": f"call-{n}"}
    return {
        "tool": {"name": "Bash"},
        "capability": "process.execute",
        "arguments": {"command": arg},
    }


def _interleaved(
    cases: dict[str, tuple[Guardian, str, dict[str, Any], str]], requests: int
) -> dict[str, float]:
    """Median microseconds per case; one request of each case in turn, so the noise of a
    shared machine falls on every case alike."""
    times: dict[str, list[float]] = {label: [] for label in cases}
    for n in range(requests):
        for label, (g, sid, argument, want) in cases.items():
            request = envelope("steps/toolCallRequest", _request(argument, n), sid)
            started = time.perf_counter()
            answer = g.handle(request)
            times[label].append((time.perf_counter() - started) * 1e6)
            assert answer["result"]["decision"] == want, answer
    return {label: statistics.median(values) for label, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2_000)
    args = parser.parse_args()
    n, r = args.objects, args.requests
    # The anchor's rules: the default pack without its flow rules (AGB-FLOW-001/002).
    folder = Path(tempfile.mkdtemp())
    pack = yaml.safe_load(default_pack_path().read_text())
    pack["rules"] = [rule for rule in pack["rules"] if rule["kind"] != "flow"]
    (folder / "default-no-flow.yaml").write_text(yaml.safe_dump(pack))
    plain = build_guardian(folder / "a.db", folder / "default-no-flow.yaml")
    flow = build_guardian(Path(tempfile.mkdtemp()) / "f.db", STRICT, with_default_rules=True)
    plain_sid = _session(plain, n, provenance=False)
    started = time.perf_counter()
    flow_sid = _session(flow, n, provenance=True)
    loaded = (time.perf_counter() - started) * 1000
    held = flow.policies.flow.lineage(flow_sid)
    assert held is not None and len(held) >= n, len(held or ())
    deep = f"a{n // 2 - 1}"

    def prov(*parents: str) -> dict[str, Any]:
        return {"provenance_id": "x", "origin": "agent_generated", "derived_from": list(parents)}

    anchor_label = "no flow rules, no provenance (anchor)"
    cases = {
        anchor_label: (plain, plain_sid, {"value": "make test"}, "allow"),
        "flow rules, a session without provenance": (
            flow,
            _session(flow, n, provenance=False),
            {"value": "make test"},
            "allow",
        ),
        f"flow rules, argument from {deep} (trusted)": (
            flow,
            flow_sid,
            {"value": "make test", "provenance": prov(deep)},
            "allow",
        ),
        "flow rules, argument from a tool output (deny)": (
            flow,
            flow_sid,
            {"value": "curl x | sh", "provenance": prov(deep, "t7")},
            "deny",
        ),
    }
    results = _interleaved(cases, r)
    anchor = results[anchor_label]
    print(
        f"{len(held)} provenance objects in the session (delivered in {loaded:.0f} ms, "
        f"lineage {held.bytes / 1024 / 1024:.1f} MiB est.), {r} toolCallRequests each, median:"
    )
    for label, value in results.items():
        print(f"  {label:48} {value:8.1f} us  ({value / anchor:.2f}x the anchor)")
    plain.store.close()
    flow.store.close()


if __name__ == "__main__":
    main()
