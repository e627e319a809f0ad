"""Bounded soak of ``agbom serve`` on 127.0.0.1: memory and latency at the start and the end.

Run: ``python benchmarks/soak.py [--requests 300000] [--clients 8] [--session-steps 50]``.

Client threads (one keep-alive connection each) run whole sessions back to back: hello,
sessionStart, ``--session-steps`` steps (user messages, tool calls, AgBOM snapshots) and
sessionEnd, until the fixed request count is reached. Every ``--window`` requests the script
records the server's resident memory (``/proc/PID/status`` VmRSS) and the window's latency
percentiles. At the end it prints the first and last windows and checks the bounds:

* RSS after the first window grows by less than ``--max-rss-growth-mb`` (default 64 MB);
* the server's CPU time per request in the last window is at most 1.25x the first window's
  (no rising cost; this is immune to other processes' load);
* the last window's p50 is no more than 2x the first's plus 2 ms (wall-clock latency also
  moves with whatever else runs on the machine).

Exit status 1 when a bound is broken or any request failed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.guardian.acs import hello, request  # noqa: E402
from tests.transports.served import Served  # noqa: E402

AGBOM = {
    "agent": {"id": "soak-agent", "name": "soak"},
    "components": [
        {
            "id": "t1",
            "type": "tool",
            "name": "read_file",
            "version": "1.0.0",
            "provider": "local",
            "capability": "fs.read",
        },
        {
            "id": "s1",
            "type": "mcp_server",
            "name": "files",
            "version": "1.0.0",
            "endpoint": "https://files.example.com/mcp",
            "tools": ["t1"],
        },
    ],
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` (immune to other processes' load, unlike latency)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Counter:
    def __init__(self, total: int) -> None:
        self.total, self.issued, self.lock = total, 0, threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.issued >= self.total:
                return False
            self.issued += 1
            return True


def session_messages(steps: int):
    sid = f"soak-{uuid.uuid4()}"
    yield hello(sid)
    yield request("steps/sessionStart", {}, session_id=sid)
    yield request("agbom/snapshot", {"agbom": AGBOM}, session_id=sid)
    for i in range(steps):
        if i % 2:
            yield request("steps/userMessage", {"content": f"message {i}"}, session_id=sid)
        else:
            yield request(
                "steps/toolCallRequest",
                {"tool": {"name": "read_file"}, "arguments": {"p": {"value": str(i)}}},
                session_id=sid,
            )
    yield request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)


def client(url: str, counter: Counter, steps: int, out: list[tuple[float, float]], bad: list):
    with httpx.Client(timeout=30) as http:
        while True:
            for message in session_messages(steps):
                if not counter.take():
                    return
                began = time.perf_counter()
                reply = http.post(
                    f"{url}/acs",
                    content=orjson.dumps(message),
                    headers={"Content-Type": "application/json"},
                )
                done = time.perf_counter()
                out.append((done, done - began))
                if reply.status_code != 200 or b'"error"' in reply.content:
                    bad.append(reply.text[:200])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--session-steps", type=int, default=50)
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--max-rss-growth-mb", type=float, default=64.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = Served(db=Path(tmp) / "soak.db", log=Path(tmp) / "serve.log").start()
        assert server.proc is not None
        pid = server.proc.pid
        counter = Counter(args.requests)
        samples: list[tuple[float, float]] = []
        bad: list[str] = []
        threads = [
            threading.Thread(
                target=client, args=(server.url, counter, args.session_steps, samples, bad)
            )
            for _ in range(args.clients)
        ]
        started = time.perf_counter()
        rss_start = rss_kb(pid)
        cpu_start = cpu_seconds(pid)
        for thread in threads:
            thread.start()
        windows = []
        next_mark = args.window
        while any(t.is_alive() for t in threads):
            time.sleep(0.2)
            if len(samples) >= next_mark:
                windows.append(
                    (len(samples), rss_kb(pid), time.perf_counter() - started, cpu_seconds(pid))
                )
                next_mark += args.window
        for thread in threads:
            thread.join()
        windows.append((len(samples), rss_kb(pid), time.perf_counter() - started, cpu_seconds(pid)))
        db_bytes = sum(p.stat().st_size for p in Path(tmp).glob("soak.db*"))
        server.stop()
    elapsed = time.perf_counter() - started
    samples.sort()  # by completion time
    latencies = [lat for _, lat in samples]

    def stats(chunk: list[float]) -> tuple[float, float]:
        ordered = sorted(chunk)
        return statistics.median(ordered) * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000

    first = stats(latencies[: args.window])
    last = stats(latencies[-args.window :])
    print(
        f"soak: {len(latencies)} requests, {args.clients} clients, sessions of "
        f"{args.session_steps + 4} requests, {elapsed:.0f} s ({len(latencies) / elapsed:.0f} req/s)"
    )
    print(f"RSS at start {rss_start / 1024:.1f} MB")
    previous_count, previous_cpu = 0, cpu_start
    per_request = []
    for count, rss, at, cpu in windows:
        if count == previous_count:
            continue  # the final sample can repeat the last window's
        per_request.append((cpu - previous_cpu) / (count - previous_count) * 1e6)
        print(
            f"  after {count:7d} requests ({at:6.1f} s): RSS {rss / 1024:7.1f} MB, server CPU "
            f"{per_request[-1]:.0f} us/request in this window"
        )
        previous_count, previous_cpu = count, cpu
    print(f"first window: p50 {first[0]:.2f} ms, p99 {first[1]:.2f} ms")
    print(f"last window:  p50 {last[0]:.2f} ms, p99 {last[1]:.2f} ms")
    print(f"store on disk: {db_bytes / 1e6:.1f} MB; failed requests: {len(bad)}")
    growth_mb = (windows[-1][1] - windows[0][1]) / 1024
    failures = []
    if growth_mb > args.max_rss_growth_mb:
        failures.append(f"RSS grew {growth_mb:.1f} MB after the first window")
    # Server CPU per request is the load-independent signal of rising cost; wall-clock
    # latency on a shared 2-core machine also moves with other processes, so its bound is
    # looser.
    if per_request[-1] > 1.25 * per_request[0]:
        failures.append(
            f"server CPU per request rose from {per_request[0]:.0f} to {per_request[-1]:.0f} us"
        )
    if last[0] > 2 * first[0] + 2.0:
        failures.append(f"median latency rose from {first[0]:.2f} to {last[0]:.2f} ms")
    if bad:
        failures.append(f"{len(bad)} failed requests, e.g. {bad[0]}")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print(
            f"PASS: RSS growth {growth_mb:.1f} MB after the first window; server CPU "
            f"{per_request[0]:.0f} -> {per_request[-1]:.0f} us/request"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
