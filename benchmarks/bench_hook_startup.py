"""Start-to-answer time of ``agbom hook`` as a runtime sees it (one process per event).

Compares, over N runs each:
  * ``python -c pass`` with the same interpreter (the floor any Python hook pays);
  * thin mode, ``agbom hook claude-code --server URL``, against a running ``agbom serve``;
  * thin mode with the server down (the fail-closed answer);
  * standalone mode, ``agbom hook claude-code --db ... --rules ...``, deciding in process.

Usage: python benchmarks/bench_hook_startup.py [--runs N] [--standalone-runs M]
The target (issue): thin mode under 3x the ``python -c pass`` median.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVENT = json.dumps(
    {
        "session_id": "bench-session",
        "transcript_path": "/tmp/bench.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "/etc/hosts"},
        "tool_use_id": "toolu_bench",
    }
).encode()


def agbom() -> list[str]:
    script = Path(sys.executable).parent / "agbom"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agbom"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_runs(cmd: list[str], runs: int, *, stdin: bytes = b"", expect: int = 0) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(cmd, input=stdin, capture_output=True, check=False)
        out.append((time.perf_counter() - started) * 1000)
        if proc.returncode != expect:
            raise SystemExit(f"{cmd}: exit {proc.returncode}: {proc.stderr.decode()[:300]}")
    return out


def report(name: str, samples: list[float], base: float | None) -> dict[str, float]:
    samples = sorted(samples)
    median = statistics.median(samples)
    p90 = samples[min(len(samples) - 1, int(len(samples) * 0.9))]
    ratio = f"{median / base:5.2f}x" if base else "  1.00x"
    print(
        f"{name:38s} n={len(samples):3d}  min {samples[0]:7.1f}  median {median:7.1f}  "
        f"p90 {p90:7.1f} ms  {ratio}"
    )
    return {"min": samples[0], "median": median, "p90": p90}


def in_process(n: int = 2000) -> None:
    """What the hook costs once the process is up: parse, decide, chain append, reply."""
    from agbom.adapters import get_adapter
    from agbom.guardian import build_guardian

    with tempfile.TemporaryDirectory() as tmp:
        guardian = build_guardian(Path(tmp) / "ip.db")
        adapter = get_adapter("claude-code")
        adapter.handle(EVENT, guardian, env={}, fail_open=False)
        started = time.perf_counter()
        for _ in range(n):
            adapter.handle(EVENT, guardian, env={}, fail_open=False)
        each = (time.perf_counter() - started) / n * 1000
        guardian.store.close()
    print(f"{'in process: Adapter.handle (warm)':38s} n={n}  mean {each:7.3f} ms per event")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--standalone-runs", type=int, default=8)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        port = free_port()
        server = subprocess.Popen(
            [*agbom(), "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                    conn.request("GET", "/healthz")
                    if conn.getresponse().status == 200:
                        break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("agbom serve did not start") from None
                    time.sleep(0.1)
            url = f"http://127.0.0.1:{port}"
            thin = [*agbom(), "hook", "claude-code", "--server", url]
            # Warm the OS caches and the server's session before timing anything.
            time_runs([sys.executable, "-c", "pass"], 3)
            time_runs(thin, 3, stdin=EVENT)

            down = [*agbom(), "hook", "claude-code", "--server", f"http://127.0.0.1:{free_port()}"]
            standalone = [*agbom(), "hook", "claude-code", "--db", str(Path(tmp) / "sa.db")]
            commands = {
                "baseline": ([sys.executable, "-c", "pass"], 0),
                "thin": (thin, 0),
                # Nothing listens there: the fail-closed deny, answered without a server.
                "thin_server_down": (down, 0),
            }
            samples: dict[str, list[float]] = {name: [] for name in (*commands, "standalone")}
            # Interleaved, so that background load on the machine hits every variant alike.
            every = max(1, args.runs // max(1, args.standalone_runs))
            for i in range(args.runs):
                for name, (cmd, expect) in commands.items():
                    samples[name] += time_runs(cmd, 1, stdin=EVENT, expect=expect)
                if i % every == 0 and len(samples["standalone"]) < args.standalone_runs:
                    samples["standalone"] += time_runs(standalone, 1, stdin=EVENT)
        finally:
            server.terminate()
            server.wait(timeout=10)

    print(f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs; times in ms")
    labels = {
        "baseline": "python -c pass",
        "thin": "agbom hook --server (thin)",
        "thin_server_down": "agbom hook --server, server down",
        "standalone": "agbom hook --db (standalone)",
    }
    results: dict[str, dict[str, float]] = {}
    for name, label in labels.items():
        base = results["baseline"]["median"] if results else None
        results[name] = report(label, samples[name], base)
    in_process()
    ratio = results["thin"]["median"] / results["baseline"]["median"]
    verdict = "OK" if ratio < 3 else "OVER TARGET"
    print(f"thin/baseline median ratio {ratio:.2f} (target < 3): {verdict}")
    return 0 if ratio < 3 else 1


if __name__ == "__main__":
    sys.exit(main())
