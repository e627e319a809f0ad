"""What telemetry costs a decision: no sink, the decision log, OTLP spans, and both.

Run: ``python benchmarks/bench_telemetry.py`` (both parts), or ``--part inprocess`` /
``--part http``. Options: ``--requests N`` and ``--rounds R`` (in process, default 8000
decisions in 8 rounds per variant), ``--duration S`` and ``--http-rounds R`` (HTTP, default 8 s
and 3 rounds per variant), ``--connections C``.

Part 1 (in process): the time of ``Guardian.handle`` for a ``steps/toolCallRequest`` (the whole
pipeline, the chain entry committed to a real SQLite file), per variant, the variants visited
in turn and the order reversed every other round, so they are compared seconds apart on a
loaded machine. The OTLP variant exports to a receiver of this script's own on 127.0.0.1 that
reads every request and answers 200; after each round the script waits until the sinks have
written or exported everything, and checks that nothing was dropped, so the figures are for
work actually done. It prints the median and p99 per variant and the median per-round ratio
to no sink.

Part 2 (HTTP): ``agbom serve`` without and with ``--decision-log`` and ``--otlp-endpoint``
(real subprocesses with their decision processes), loaded in turn with ``wrk`` (the script of
bench_guardian.py: every request a unique ``request_id``). It prints req/s and p99 per round
and the median ratio to no sink. On a 2-core machine wrk, the servers and the sinks' threads
share the CPU: the figures compare the variants, they are not a capacity statement.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_guardian import (  # noqa: E402 - the shared helpers of the Guardian benchmark
    HELLO,
    TOOL_PAYLOAD,
    WRK_LUA,
    envelope,
    free_port,
    open_http_session,
    run_wrk,
    stop,
    wait_healthy,
)

VARIANTS = ("none", "decision-log", "otlp", "both")


RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class Sink:
    """A minimal OTLP/HTTP endpoint in a process of its own (its CPU is not the Guardian's):
    reads each export and answers 200. That the spans arrived is checked on the exporter's
    side (``spans_exported``, no failures)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def _guardian(variant: str, folder: Path, sink: Sink) -> Any:
    from agbom.guardian import GuardianConfig, build_guardian

    settings: dict[str, Any] = {}
    if variant in ("decision-log", "both"):
        settings["decision_log"] = str(folder / f"{variant}.jsonl")
    if variant in ("otlp", "both"):
        settings["otlp_endpoint"] = sink.url
    guardian = build_guardian(folder / f"{variant}.db", config=GuardianConfig(**settings))
    session = f"bench-{variant}"
    for method, payload in (("handshake/hello", HELLO), ("steps/sessionStart", {})):
        reply = guardian.handle(envelope(method, payload, session_id=session))
        assert "result" in reply, reply
    return guardian, session


def _drain(guardian: Any, expected: int) -> None:
    """Wait until every sink has handled ``expected`` records; fail on any drop."""
    telemetry = guardian.observer
    if telemetry is None:
        return
    for sink in telemetry.sinks:
        if hasattr(sink, "flush"):
            for _ in range(1000):
                if sink.stats()["queued"] == 0:
                    break
                time.sleep(0.01)
            sink.flush()
    stats = telemetry.stats()
    for name, counts in stats.items():
        dropped = counts["dropped"]
        done = counts.get("written", counts.get("spans_exported", 0))
        if dropped or counts.get("spans_failed"):
            raise SystemExit(f"{name} dropped records: {counts}")
        if done < expected:
            for _ in range(1000):
                counts = telemetry.stats()[name]
                if counts.get("written", counts.get("spans_exported", 0)) >= expected:
                    break
                time.sleep(0.01)
            else:
                raise SystemExit(f"{name} did not finish: {counts}")


def bench_inprocess(requests: int, rounds: int) -> dict[str, dict[str, float]]:
    sink = Sink()
    per_round = max(1, requests // rounds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        guardians = {v: _guardian(v, folder, sink) for v in VARIANTS}
        timings: dict[str, list[float]] = {v: [] for v in VARIANTS}
        medians: dict[str, list[float]] = {v: [] for v in VARIANTS}
        cpu_us: dict[str, list[float]] = {v: [] for v in VARIANTS}
        decided = dict.fromkeys(VARIANTS, 1)
        clock = time.perf_counter_ns
        for index in range(rounds):
            order = VARIANTS if index % 2 == 0 else tuple(reversed(VARIANTS))
            for variant in order:
                guardian, session = guardians[variant]
                bodies = [
                    orjson.dumps(
                        envelope("steps/toolCallRequest", TOOL_PAYLOAD, session_id=session)
                    )
                    for _ in range(per_round)
                ]
                round_times = []
                cpu = time.process_time()
                for body in bodies:
                    t0 = clock()
                    reply = guardian.handle(orjson.loads(body))
                    round_times.append((clock() - t0) / 1000)
                    if "result" not in reply:
                        raise SystemExit(f"{variant}: {reply}")
                decided[variant] += per_round
                _drain(guardian, decided[variant])
                # All of it: the decisions, and the sinks' threads until they are done.
                cpu_us[variant].append((time.process_time() - cpu) / per_round * 1e6)
                timings[variant].extend(round_times)
                medians[variant].append(statistics.median(round_times))
        out: dict[str, dict[str, float]] = {}
        for variant in VARIANTS:
            ordered = sorted(timings[variant])
            ratios = [m / base for m, base in zip(medians[variant], medians["none"], strict=True)]
            out[variant] = {
                "median_us": statistics.median(ordered),
                "p99_us": ordered[int(len(ordered) * 0.99)],
                "ratio": statistics.median(ratios),
                "cpu_us": statistics.median(cpu_us[variant]),
            }
            guardian = guardians[variant][0]
            if guardian.observer is not None:
                guardian.observer.close()
    sink.close()
    return out


def bench_http(duration: int, rounds: int, connections: int) -> dict[str, Any]:
    sink = Sink()
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lua = folder / "acs.lua"
        lua.write_text(WRK_LUA)
        procs: dict[str, tuple[subprocess.Popen[bytes], int, str]] = {}
        try:
            for variant in VARIANTS:
                port = free_port()
                extra: list[str] = []
                if variant in ("decision-log", "both"):
                    extra += ["--decision-log", str(folder / f"{variant}.jsonl")]
                if variant in ("otlp", "both"):
                    extra += ["--otlp-endpoint", sink.url]
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "agbom",
                        "serve",
                        "--port",
                        str(port),
                        "--db",
                        str(folder / f"{variant}.db"),
                        *extra,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=(folder / f"{variant}.err").open("wb"),
                )
                wait_healthy(port, proc, timeout=120)
                session = f"bench-http-{variant}"
                open_http_session(port, session)
                procs[variant] = (proc, port, session)
            for index in range(rounds):
                order = VARIANTS if index % 2 == 0 else tuple(reversed(VARIANTS))
                for variant in order:
                    _, port, session = procs[variant]
                    run = run_wrk(port, duration, connections, f"r{index}-", session, lua)
                    results[variant].append(run)
                    print(
                        f"  round {index + 1} {variant:>12}: {run['rps']:8.0f} req/s, "
                        f"p99 {run['p99_ms']:6.2f} ms, bad {run['bad']}",
                        flush=True,
                    )
        finally:
            for proc, _, _ in procs.values():
                stop(proc)
        lines = {
            v: sum(1 for _ in (folder / f"{v}.jsonl").open()) for v in ("decision-log", "both")
        }
        # What the sinks lost (the queue full while the exporter fell behind), as they say.
        dropped = {
            v: [
                line
                for line in (folder / f"{v}.err").read_text(errors="replace").splitlines()
                if "dropped in all" in line
            ]
            for v in VARIANTS
        }
    summary: dict[str, Any] = {}
    for variant in VARIANTS:
        ratios = [
            r["rps"] / base["rps"]
            for r, base in zip(results[variant], results["none"], strict=True)
        ]
        summary[variant] = {
            "rps": statistics.median(r["rps"] for r in results[variant]),
            "p99_ms": statistics.median(r["p99_ms"] for r in results[variant]),
            "ratio_rps": statistics.median(ratios),
            "requests": sum(r["requests"] for r in results[variant]),
        }
    summary["decision-log-lines"] = lines
    summary["dropped (stderr at exit)"] = dropped
    sink.close()
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "inprocess", "http"], default="all")
    parser.add_argument("--requests", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--http-rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if args.part in ("all", "inprocess"):
        print(f"in process: {args.requests} decisions per variant in {args.rounds} rounds")
        for name, figures in bench_inprocess(args.requests, args.rounds).items():
            print(f"  {name:>13}: " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items()))
    if args.part in ("all", "http"):
        print(
            f"HTTP: {args.http_rounds} rounds of {args.duration} s, {args.connections} connections"
        )
        for name, figures in bench_http(args.duration, args.http_rounds, args.connections).items():
            print(f"  {name:>18}: {figures}")


if __name__ == "__main__":
    main()
