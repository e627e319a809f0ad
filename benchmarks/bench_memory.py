"""Memory and small-request latency of ``agbom serve`` while many sessions send big snapshots.

Run: ``python benchmarks/bench_memory.py [--sessions 24] [--components 5000] [--clients 6]
[--bound-mib 512] [--rounds 1] [--timeout 300]``.

Starts a real ``agbom serve`` on 127.0.0.1 (default session bound: 512 MiB), opens
``--sessions`` sessions and sends each ``--rounds`` ``agbom/snapshot`` requests of
``--components`` components (about 0.83 MiB of JSON at 4,700) from ``--clients`` concurrent
clients. Meanwhile a probe sends ``steps/toolCallRequest`` in a session of its own, one at a
time. Reports the server's process tree's peak RSS (the sum of ``VmRSS`` over the front and
the decision process, sampled from /proc every 20 ms), its RSS before and after, and the
probe's p50/p90/p99/max while the snapshots arrive. Every loop is bounded in count and time
(``--timeout``). Linux only (/proc).

Targets (issue 27 §5): peak RSS at most the bound plus ``MEMORY_SLACK_MIB`` (what a server
holds besides the sessions: interpreters, the front, one snapshot in flight; see
docs/performance.md, "Big snapshots and memory"), and the probe's p99 under 50 ms.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_guardian  # noqa: E402
from bench_guardian import free_port, stop, wait_healthy  # noqa: E402

HEADERS = {"content-type": "application/json"}
MEMORY_SLACK_MIB = 256
"""RSS a server may use beyond its configured session bound (docs/performance.md)."""
PROBE_P99_MS = 50.0
SAMPLE_S = 0.02


def envelope(method: str, payload: Any, session_id: str) -> bytes:
    return orjson.dumps(bench_guardian.envelope(method, payload, session_id=session_id))


def open_session(client: httpx.Client, url: str) -> str:
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": ["steps/toolCallRequest", "agbom/snapshot"],
        "transports_supported": ["http"],
        "provenance_producer": "none",
    }
    reply = client.post(url, content=envelope("handshake/hello", hello, sid), headers=HEADERS)
    assert reply.status_code == 200 and b'"result"' in reply.content, reply.text[:200]
    return sid


def inventory(n: int, tag: str) -> dict[str, Any]:
    """``n`` tools (0.82 MiB of JSON at 4,700 in a request)."""
    return {
        "agbom": {
            "agent": {"id": "bench"},
            "components": [
                {
                    "id": f"{tag}-tool-{i:06d}",
                    "type": "tool",
                    "name": f"{tag}-tool-{i:06d}",
                    "version": "1.0.0",
                    "provider": "local",
                    "capability": "fs.read",
                    "registration_provenance": {"origin": "system"},
                }
                for i in range(n)
            ],
        }
    }


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    found, todo = [], [pid]
    while todo and len(found) < 64:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
                todo.extend(int(child) for child in children)
        except OSError:
            continue
    return found


def rss_mib(pid: int) -> float:
    """The summed VmRSS of ``pid``'s process tree, in MiB."""
    total = 0
    for member in tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            continue
    return total / 1024


def process_rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Sampler(threading.Thread):
    """Peak RSS of the server's process tree, and of its decision process alone (the one
    ``--max-memory-mib`` bounds: the front holds no session)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.halt = pid, 0.0, threading.Event()
        self.decision_peak = 0.0

    def run(self) -> None:
        while not self.halt.is_set():
            self.peak = max(self.peak, rss_mib(self.pid))
            for child in tree(self.pid)[1:]:
                self.decision_peak = max(self.decision_peak, process_rss_mib(child))
            time.sleep(SAMPLE_S)


def probe(url: str, halt: threading.Event, out: list[float], deadline: float) -> None:
    with httpx.Client(timeout=120) as client:
        sid = open_session(client, url)
        payload = {"tool": {"name": "ls"}, "arguments": {}}
        while not halt.is_set() and time.monotonic() < deadline and len(out) < 200_000:
            body = envelope("steps/toolCallRequest", payload, sid)
            started = time.perf_counter()
            reply = client.post(url, content=body, headers=HEADERS)
            out.append((time.perf_counter() - started) * 1000)
            assert reply.status_code == 200 and b'"result"' in reply.content, reply.text[:200]
            time.sleep(0.002)  # an agent between steps, not a load generator


def sender(url: str, todo: queue.SimpleQueue[tuple[str, bytes]], decided: list[int]) -> None:
    with httpx.Client(timeout=300) as client:
        while True:
            try:
                _sid, body = todo.get_nowait()
            except queue.Empty:
                return
            reply = client.post(url, content=body, headers=HEADERS)
            if reply.status_code == 200 and b'"result"' in reply.content:
                decided.append(len(body))
            else:
                print(f"snapshot not decided: {reply.status_code} {reply.text[:160]}")


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--components", type=int, default=4700)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--bound-mib", type=int, default=512)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    if not (0 < args.sessions <= 1000 and 0 < args.components <= 100_000):
        parser.error("--sessions in 1..1000, --components in 1..100000")
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="agbom-mem-"))
    agbom = Path(sys.executable).parent / "agbom"
    command = [str(agbom), "serve", "--port", str(port), "--db", str(folder / "s.db")]
    command += ["--max-body-bytes", str(64 * 1024 * 1024), "--max-memory-mib", str(args.bound_mib)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + args.timeout
    try:
        wait_healthy(port, proc)
        url = f"http://127.0.0.1:{port}/acs"
        sampler = Sampler(proc.pid)
        sampler.start()
        with httpx.Client(timeout=60) as client:
            sessions = [open_session(client, url) for _ in range(args.sessions)]
        idle = rss_mib(proc.pid)
        todo: queue.SimpleQueue[tuple[str, bytes]] = queue.SimpleQueue()
        for round_ in range(args.rounds):
            for sid in sessions:
                doc = inventory(args.components, f"{sid[:8]}r{round_}")
                todo.put((sid, envelope("agbom/snapshot", doc, sid)))
        size = len(envelope("agbom/snapshot", inventory(args.components, "x" * 10), "s"))
        halt = threading.Event()
        small: list[float] = []
        prober = threading.Thread(target=probe, args=(url, halt, small, deadline), daemon=True)
        decided: list[int] = []
        senders = [
            threading.Thread(target=sender, args=(url, todo, decided), daemon=True)
            for _ in range(args.clients)
        ]
        started = time.monotonic()
        prober.start()
        time.sleep(0.3)
        for thread in senders:
            thread.start()
        for thread in senders:
            thread.join(max(1.0, deadline - time.monotonic()))
        elapsed = time.monotonic() - started
        halt.set()
        prober.join(30)
        time.sleep(0.5)
        after = rss_mib(proc.pid)
        sampler.halt.set()
        sampler.join(5)
    finally:
        stop(proc)
    ordered = sorted(small)
    p99 = percentile(ordered, 0.99)
    limit = args.bound_mib + MEMORY_SLACK_MIB
    print(f"machine load (1 min): {os.getloadavg()[0]:.1f}")
    print(
        f"{len(decided)} of {args.sessions * args.rounds} snapshots decided "
        f"({args.components} components, {size / 2**20:.2f} MiB each) from {args.clients} "
        f"clients in {elapsed:.1f} s"
    )
    print(
        f"server RSS (front + decision process): idle {idle:.0f} MiB, peak {sampler.peak:.0f} "
        f"MiB, after {after:.0f} MiB; decision process peak {sampler.decision_peak:.0f} MiB; "
        f"bound {args.bound_mib} MiB (--max-memory-mib) + {MEMORY_SLACK_MIB} MiB = {limit} MiB"
    )
    if ordered:
        print(
            f"probe: {len(ordered)} small requests, p50 {statistics.median(ordered):.1f} ms, "
            f"p90 {percentile(ordered, 0.9):.1f} ms, p99 {p99:.1f} ms, max {ordered[-1]:.1f} ms"
        )
    met_rss = sampler.peak <= limit
    met_p99 = p99 < PROBE_P99_MS
    print(f"targets: RSS {'met' if met_rss else 'NOT met'}, p99 {'met' if met_p99 else 'NOT met'}")
    return 0 if met_rss and met_p99 else 1


if __name__ == "__main__":
    sys.exit(main())
