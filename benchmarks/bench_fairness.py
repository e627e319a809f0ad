"""Small decisions while other clients send big snapshots (``agbom serve``, loopback).

Run: ``python benchmarks/bench_fairness.py [--components N] [--big-clients B] [--seconds S]``.

One client sends ``steps/toolCallRequest`` in its own session, one at a time, for S seconds:
first alone (the anchor, measured in the same run), then while B other clients each send
``agbom/snapshot`` requests of N components back to back in their own sessions. Prints the
small client's median and p99 latency in both phases and their ratio, and how many snapshots
were decided. Every loop is bounded by time and count.
"""

from __future__ import annotations

import argparse
import os
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
    client.post(url, content=envelope("handshake/hello", hello, sid), headers=HEADERS)
    return sid


def inventory(n: int, tag: str) -> dict[str, Any]:
    return {
        "agbom": {
            "agent": {"id": "bench"},
            "components": [
                {
                    "id": f"{tag}-{i}",
                    "type": "tool",
                    "name": f"{tag}-{i}",
                    "version": "1.0.0",
                    "provider": "local",
                    "capability": "fs.read",
                    "registration_provenance": {"origin": "system"},
                }
                for i in range(n)
            ],
        }
    }


def small_latencies(url: str, seconds: float) -> list[float]:
    out: list[float] = []
    with httpx.Client(timeout=120) as client:
        sid = open_session(client, url)
        payload = {"tool": {"name": "ls"}, "arguments": {}}
        stop_at = time.monotonic() + seconds
        while time.monotonic() < stop_at and len(out) < 100_000:
            body = envelope("steps/toolCallRequest", payload, sid)
            started = time.perf_counter()
            reply = client.post(url, content=body, headers=HEADERS)
            out.append((time.perf_counter() - started) * 1000)
            assert reply.status_code == 200 and b'"result"' in reply.content, reply.text[:200]
    return out


def big_sender(url: str, n: int, stop: threading.Event, decided: list[int]) -> None:
    with httpx.Client(timeout=300) as client:
        sid = open_session(client, url)
        doc = inventory(n, uuid.uuid4().hex[:8])
        for _ in range(1000):
            if stop.is_set():
                break
            reply = client.post(url, content=envelope("agbom/snapshot", doc, sid), headers=HEADERS)
            if reply.status_code == 200 and b'"result"' in reply.content:
                decided.append(1)


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--components", type=int, default=9000)
    parser.add_argument("--big-clients", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="agbom-fair-"))
    agbom = Path(sys.executable).parent / "agbom"
    command = [str(agbom), "serve", "--port", str(port), "--db", str(folder / "s.db")]
    command += ["--max-body-bytes", str(64 * 1024 * 1024)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        url = f"http://127.0.0.1:{port}/acs"
        alone = small_latencies(url, args.seconds)
        stop_event = threading.Event()
        decided: list[int] = []
        senders = [
            threading.Thread(target=big_sender, args=(url, args.components, stop_event, decided))
            for _ in range(args.big_clients)
        ]
        for sender in senders:
            sender.start()
        time.sleep(1.0)  # let the big clients get going
        loaded = small_latencies(url, args.seconds)
        stop_event.set()
        for sender in senders:
            sender.join(600)
    finally:
        stop(proc)
    a50, a99 = summary(alone)
    l50, l99 = summary(loaded)
    print(f"machine load (1 min): {os.getloadavg()[0]:.1f}")
    print(
        f"small client alone (anchor): {len(alone)} decisions, p50 {a50:.2f} ms, p99 {a99:.2f} ms"
    )
    print(
        f"with {args.big_clients} clients sending {args.components}-component snapshots "
        f"({len(decided)} decided): {len(loaded)} decisions, p50 {l50:.2f} ms, p99 {l99:.2f} ms"
    )
    print(f"ratio to the anchor: p50 {l50 / a50:.1f}x, p99 {l99 / a99:.1f}x")


if __name__ == "__main__":
    main()
