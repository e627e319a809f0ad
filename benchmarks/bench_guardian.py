"""Guardian decision speed: in process against a floor, and over HTTP against a bare echo server.

Run: ``python benchmarks/bench_guardian.py`` (both parts), or ``--part inprocess`` /
``--part http``. Options: ``--requests N`` and ``--inprocess-rounds R`` (in process, default
20000 in 8 rounds), ``--duration S``, ``--connections C`` and ``--rounds R`` (HTTP, default 10 s,
32 and 6 rounds), ``--no-single-process``.

Part 1 (in process): a ``steps/toolCallRequest`` from its request bytes to its answer:
``orjson.loads`` and ``Guardian.handle``, which includes envelope and payload validation, replay
and skew checks, policy, the clamp and the audit-chain append committed to a real SQLite file.
The anchor is the floor (:class:`Floor`): one orjson parse of the same request, one SHA-256 of
1 KB and one committed INSERT into an indexed table in WAL mode, ``synchronous=NORMAL`` as the
store runs. The two alternate in rounds; the script prints both medians and the median of the
per-round ratios (issue 16: at most 2x).

``--compare-tree PATH`` (in process only): this tree's Guardian and the ``agbom`` package at
PATH (an older commit, e.g. ``git archive COMMIT agbom | tar -x -C PATH``), each in a worker
process of its own (``--worker``, the tree first on PYTHONPATH, checked to be where ``agbom``
was imported from) with its own floor, taking turns round by round, the order reversed every
other round. It prints each tree's ratio to its floor and the median per-round ratio of the two
trees' decision times.

Part 2 (HTTP, loopback): ``agbom serve`` (a real subprocess, with its decision process)
answering ``POST /acs`` toolCallRequests, against a bare starlette+uvicorn JSON echo, and
``agbom serve --single-process``. All run at once; the load generator visits them in turn, the
order reversed every other round, so each round's ratio to the echo compares runs seconds
apart. It prints every round (with the load average and each server process's CPU time per
request, which other jobs on the machine inflate less than req/s), the medians, and the median
of the per-round ratios. The load generator is ``wrk`` with a Lua script that gives every
request a unique ``request_id`` (the Guardian refuses repeats with -32005). Without ``wrk`` the
script falls back to a Python asyncio+httpx generator in a separate process and says so. On a
2-core machine the load generator and the servers share the CPU, so the figures compare the
servers; they are not a capacity statement.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

SESSION = "bench-session-0001"
AGENT = "bench-agent"
TOOL_PAYLOAD = {
    "tool": {"name": "read_file", "version": "1.0"},
    "arguments": {"path": {"value": "README.md"}},
}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def envelope(method: str, payload: Any, *, session_id: str = SESSION, rid: str | None = None):
    rid = rid or str(uuid.uuid4())
    return {
        "jsonrpc": "2.0",
        "method": method,
        "id": rid,
        "params": {
            "acs_version": "0.1.0",
            "request_id": rid,
            "timestamp": _now(),
            "metadata": {"agent_id": AGENT, "session_id": session_id, "turn_id": "t1"},
            "payload": payload,
        },
    }


HELLO = {
    "acs_versions_supported": ["0.1.0"],
    "methods_implemented": ["steps/sessionStart", "steps/toolCallRequest", "steps/sessionEnd"],
    "transports_supported": ["http"],
    "provenance_producer": "deterministic",
}


def _percentile(sorted_values: list[float], q: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


# -- part 1: in process -------------------------------------------------------------------------


FLOOR_SCHEMA = (
    "CREATE TABLE entries (seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL, "
    "request_id TEXT NOT NULL, entry_hash TEXT NOT NULL, entry TEXT NOT NULL)",
    "CREATE UNIQUE INDEX entries_by_request ON entries (session_id, request_id)",
)


class Floor:
    """The least any decision with a durable audit entry can cost on this machine: one orjson
    parse of the request, one SHA-256 of 1 KB and one committed INSERT into an indexed table,
    in WAL mode with ``synchronous=NORMAL`` (as the store runs). Measured in the same run as
    the Guardian, so that their ratio means something on a loaded machine."""

    def __init__(self, path: Path) -> None:
        import sqlite3

        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        for statement in FLOOR_SCHEMA:
            self.conn.execute(statement)
        self.kilobyte = os.urandom(1024)

    def one(self, body: bytes) -> None:
        import hashlib

        message = orjson.loads(body)
        digest = hashlib.sha256(self.kilobyte).hexdigest()
        metadata = message["params"]["metadata"]
        self.conn.execute(  # autocommit: one committed transaction per INSERT
            "INSERT INTO entries (session_id, request_id, entry_hash, entry) VALUES (?, ?, ?, ?)",
            (metadata["session_id"], message["id"], digest, body),
        )

    def close(self) -> None:
        self.conn.close()


def _timed(step: Any, items: list[Any], cpu: list[float] | None = None) -> list[float]:
    """Wall-clock microseconds per item; with ``cpu``, the thread's CPU microseconds per item
    are appended to it too (on a loaded machine a wall-clock median still counts the time a
    request waited for a core, its CPU time does not)."""
    clock = time.perf_counter_ns
    cpu_clock = time.thread_time_ns
    timings = []
    for item in items:
        c0 = cpu_clock()
        t0 = clock()
        step(item)
        timings.append((clock() - t0) / 1000)
        if cpu is not None:
            cpu.append((cpu_clock() - c0) / 1000)
    return timings


class InprocessRun:
    """One Guardian over a fresh SQLite file and one floor beside it, in this process, with
    a session open: :meth:`round` times ``count`` decisions, then ``count`` floor steps."""

    def __init__(self) -> None:
        from agbom.guardian import build_guardian

        self._tmp = tempfile.TemporaryDirectory()
        tmp = Path(self._tmp.name)
        self.guardian = build_guardian(tmp / "bench.db")
        self.floor = Floor(tmp / "floor.db")
        assert "error" not in self.guardian.handle(envelope("handshake/hello", HELLO))
        assert "error" not in self.guardian.handle(envelope("steps/sessionStart", {}))
        self.responses: list[dict[str, Any]] = []
        for body in self.bodies(500):  # warm-up
            self.decide(body)
            self.floor.one(body)

    @staticmethod
    def bodies(count: int) -> list[bytes]:
        # Built up front: the client's work is not the Guardian's cost.
        return [orjson.dumps(envelope("steps/toolCallRequest", TOOL_PAYLOAD)) for _ in range(count)]

    def decide(self, body: bytes) -> None:
        # What the decision process does with a frame: parse, decide, commit the entry.
        self.responses.append(self.guardian.handle(orjson.loads(body)))

    def round(self, count: int) -> dict[str, Any]:
        """Time ``count`` decisions, then ``count`` floor steps: each one's wall-clock and CPU
        microseconds, and the Guardian's wall-clock seconds for the batch."""
        batch = self.bodies(count)
        floor_batch = self.bodies(count)
        self.responses.clear()
        t0 = time.perf_counter()
        our_cpu: list[float] = []
        their_cpu: list[float] = []
        ours = _timed(self.decide, batch, our_cpu)
        wall = time.perf_counter() - t0
        theirs = _timed(self.floor.one, floor_batch, their_cpu)
        bad = [r for r in self.responses if "error" in r]
        if bad:
            raise SystemExit(f"unexpected error: {bad[0]}")
        return {
            "ours": ours,
            "theirs": theirs,
            "our_cpu": our_cpu,
            "their_cpu": their_cpu,
            "wall": wall,
            "decision": self.responses[-1]["result"]["decision"],
        }

    def close(self) -> int:
        """Close both stores; returns the entries the session's chain holds."""
        entries = len(self.guardian.store.chain_entries(SESSION))
        self.guardian.store.close()
        self.floor.close()
        self._tmp.cleanup()
        return entries


def bench_inprocess(requests: int, rounds: int = 8) -> dict[str, float]:
    """The Guardian's decision from request bytes to committed entry, and the floor, in
    alternating rounds of ``requests / rounds`` each; medians over all requests, and the
    median of the per-round ratios."""
    per_round = max(1, requests // rounds)
    run = InprocessRun()
    guardian_times: list[float] = []
    floor_times: list[float] = []
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    guardian_cpu: list[float] = []
    floor_cpu: list[float] = []
    guardian_wall = 0.0
    decision = ""
    for _ in range(rounds):
        timed = run.round(per_round)
        ours, theirs, our_cpu, their_cpu = (
            timed["ours"],
            timed["theirs"],
            timed["our_cpu"],
            timed["their_cpu"],
        )
        guardian_wall += timed["wall"]
        decision = timed["decision"]
        ratios.append(statistics.median(ours) / statistics.median(theirs))
        cpu_ratios.append(statistics.median(our_cpu) / statistics.median(their_cpu))
        guardian_cpu += our_cpu
        floor_cpu += their_cpu
        guardian_times += ours
        floor_times += theirs
    entries = run.close()
    guardian_times.sort()
    floor_times.sort()
    total = per_round * rounds
    result = {
        "requests": total,
        "median_us": statistics.median(guardian_times),
        "p99_us": _percentile(guardian_times, 0.99),
        "mean_us": statistics.fmean(guardian_times),
        "throughput_rps": total / guardian_wall,
        "floor_median_us": statistics.median(floor_times),
        "floor_p99_us": _percentile(floor_times, 0.99),
        "floor_ratio": statistics.median(ratios),
        "cpu_median_us": statistics.median(guardian_cpu),
        "floor_cpu_median_us": statistics.median(floor_cpu),
        "floor_cpu_ratio": statistics.median(cpu_ratios),
    }
    print(
        f"in-process toolCallRequest ({decision}, parse to committed entry, {entries} entries): "
        f"median {result['median_us']:.1f} us, p99 {result['p99_us']:.1f} us, "
        f"mean {result['mean_us']:.1f} us over {total} requests"
    )
    print(
        f"floor (orjson parse + SHA-256 of 1 KB + committed indexed INSERT, WAL, "
        f"synchronous=NORMAL): median {result['floor_median_us']:.1f} us, "
        f"p99 {result['floor_p99_us']:.1f} us"
    )
    print(
        f"in-process decision / floor: {result['floor_ratio']:.2f}x (median of {rounds} "
        f"alternating rounds, per-round ratios {min(ratios):.2f}-{max(ratios):.2f}x; "
        "target <= 2x)"
    )
    print(
        f"CPU time per request (thread): decision {result['cpu_median_us']:.1f} us, floor "
        f"{result['floor_cpu_median_us']:.1f} us, ratio {result['floor_cpu_ratio']:.2f}x "
        f"(median of per-round ratios {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}x)"
    )
    return result


def _worker() -> None:
    """``--worker``: one :class:`InprocessRun` of the tree ``agbom`` is imported from (the
    parent puts it first on PYTHONPATH); each line ``N`` read from stdin runs a round of N and
    writes its medians as one JSON line."""
    import agbom

    print(orjson.dumps({"agbom": agbom.__file__}).decode(), flush=True)
    run = InprocessRun()
    for line in sys.stdin:
        timed = run.round(int(line))
        summary = {
            "median_us": statistics.median(timed["ours"]),
            "floor_median_us": statistics.median(timed["theirs"]),
            "cpu_median_us": statistics.median(timed["our_cpu"]),
            "floor_cpu_median_us": statistics.median(timed["their_cpu"]),
            "decision": timed["decision"],
        }
        print(orjson.dumps(summary).decode(), flush=True)
    run.close()


class _TreeWorker:
    """A ``--worker`` subprocess deciding with the ``agbom`` package of ``tree``."""

    def __init__(self, tree: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        loaded = Path(self._read()["agbom"]).resolve()
        if not loaded.is_relative_to(tree.resolve()):
            self.close()
            raise SystemExit(f"{tree}: the worker imported agbom from {loaded}, not this tree")

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a benchmark worker exited ({self.proc.wait()})")
        return dict(orjson.loads(line))

    def round(self, count: int) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{count}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def bench_compare(other: Path, requests: int, rounds: int) -> dict[str, float]:
    """This tree's Guardian and ``other``'s, each in a worker process with its own floor,
    taking turns round by round (the order reversed every other round): each tree's median
    ratio to its same-round floor, and the median per-round ratio of their decision times."""
    this = Path(__file__).resolve().parents[1]
    per_round = max(1, requests // rounds)
    workers = {"this tree": _TreeWorker(this), "other tree": _TreeWorker(other)}
    per_tree: dict[str, list[dict[str, Any]]] = {name: [] for name in workers}
    try:
        for index in range(rounds):
            order = list(workers) if index % 2 == 0 else list(reversed(workers))
            for name in order:
                per_tree[name].append(workers[name].round(per_round))
    finally:
        for worker in workers.values():
            worker.close()
    results: dict[str, float] = {}
    print(f"this tree: {this}\nother tree: {other.resolve()}")
    for name, runs in per_tree.items():
        ratios = [r["median_us"] / r["floor_median_us"] for r in runs]
        cpu_ratios = [r["cpu_median_us"] / r["floor_cpu_median_us"] for r in runs]
        results[f"{name} floor_ratio"] = statistics.median(ratios)
        results[f"{name} floor_cpu_ratio"] = statistics.median(cpu_ratios)
        print(
            f"{name:10s} decision median {statistics.median(r['median_us'] for r in runs):.1f} us"
            f" (floor {statistics.median(r['floor_median_us'] for r in runs):.1f} us): "
            f"{statistics.median(ratios):.2f}x the floor ({min(ratios):.2f}-{max(ratios):.2f}x"
            f" by round); CPU {statistics.median(r['cpu_median_us'] for r in runs):.1f} us, "
            f"{statistics.median(cpu_ratios):.2f}x the floor's"
        )
    speed = [
        new["median_us"] / old["median_us"]
        for new, old in zip(per_tree["this tree"], per_tree["other tree"], strict=True)
    ]
    cpu = [
        new["cpu_median_us"] / old["cpu_median_us"]
        for new, old in zip(per_tree["this tree"], per_tree["other tree"], strict=True)
    ]
    results["this / other"] = statistics.median(speed)
    print(
        f"this tree / other tree, decision time: {statistics.median(speed):.2f}x wall "
        f"({min(speed):.2f}-{max(speed):.2f}x by round), {statistics.median(cpu):.2f}x CPU "
        f"(median of {rounds} rounds of {per_round} requests each)"
    )
    return results


# -- part 2: HTTP ----------------------------------------------------------------------------------

ECHO_APP = textwrap.dedent(
    """
    import orjson
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def echo(request):
        body = orjson.loads(await request.body())
        return Response(orjson.dumps(body), media_type="application/json")

    async def healthz(request):
        return Response(b'{"status":"ok"}', media_type="application/json")

    app = Starlette(routes=[Route("/acs", echo, methods=["POST"]),
                            Route("/healthz", healthz)])
    uvicorn.run(app, host="127.0.0.1", port=int(__import__("sys").argv[1]),
                log_level="warning", access_log=False)
    """
)

# Each wrk thread numbers its requests; thread id + counter + a per-run prefix make the
# request_id unique across the whole run (the Guardian refuses a repeated id with -32005).
WRK_LUA = textwrap.dedent(
    """
    local counter = 0
    local threads = {}
    local created = 0
    -- setup() runs in the main Lua state; thread:set puts a global into the thread's own state
    -- (a chunk-level local of the same name would shadow it, hence the distinct names).
    function setup(thread)
      created = created + 1
      thread:set("tid", created)
      table.insert(threads, thread)
    end
    function init(args)
      prefix = args[1] or "run"
      session = args[2] or "s"
      stamp = args[3] or "2026-01-01T00:00:00Z"
      counter = 0
    end
    function request()
      counter = counter + 1
      local rid = prefix .. "-" .. tid .. "-" .. counter
      local body = '{"jsonrpc":"2.0","method":"steps/toolCallRequest","id":"' .. rid ..
        '","params":{"acs_version":"0.1.0","request_id":"' .. rid ..
        '","timestamp":"' .. stamp .. '","metadata":{"agent_id":"bench-agent",' ..
        '"session_id":"' .. session .. '","turn_id":"t1"},"payload":{"tool":' ..
        '{"name":"read_file","version":"1.0"},"arguments":{"path":{"value":"README.md"}}}}}'
      return wrk.format("POST", "/acs", {["Content-Type"] = "application/json"}, body)
    end
    errors = 0
    function response(status, headers, body)
      if status ~= 200 or string.find(body, '"error"', 1, true) then
        errors = errors + 1
      end
    end
    function done(summary, latency, requests)
      local total = 0
      for _, t in ipairs(threads) do total = total + (t:get("errors") or 0) end
      io.write(string.format("AGBOM_P50_US %d\\n", latency:percentile(50)))
      io.write(string.format("AGBOM_P99_US %d\\n", latency:percentile(99)))
      io.write(string.format("AGBOM_REQUESTS %d\\n", summary.requests))
      io.write(string.format("AGBOM_DURATION_US %d\\n", summary.duration))
      io.write(string.format("AGBOM_BAD %d\\n", total))
    end
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise SystemExit("server did not become healthy")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (Linux /proc; just ``pid`` elsewhere)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(int(child) for child in children)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(port: int, duration: int, connections: int, prefix: str, session: str, lua: Path):
    # The timestamp must fall inside the skew window for the whole run: take it now.
    cmd = [
        "wrk",
        "-t2",
        f"-c{connections}",
        f"-d{duration}s",
        "--latency",
        "-s",
        str(lua),
        f"http://127.0.0.1:{port}/acs",
        "--",
        prefix,
        session,
        _now(),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    values = dict(re.findall(r"AGBOM_(\w+) (\d+)", out))
    requests = int(values["REQUESTS"])
    seconds = int(values["DURATION_US"]) / 1e6
    return {
        "rps": requests / seconds,
        "p50_ms": int(values["P50_US"]) / 1000,
        "p99_ms": int(values["P99_US"]) / 1000,
        "requests": requests,
        "bad": int(values["BAD"]),
    }


PY_LOADGEN = textwrap.dedent(
    """
    import asyncio, sys, time, uuid, orjson, httpx
    from datetime import UTC, datetime
    port, duration = int(sys.argv[1]), float(sys.argv[2])
    conns, session = int(sys.argv[3]), sys.argv[4]
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lat, bad = [], 0
    async def worker(client, stop_at):
        global bad
        while time.perf_counter() < stop_at:
            rid = str(uuid.uuid4())
            body = orjson.dumps({"jsonrpc": "2.0", "method": "steps/toolCallRequest", "id": rid,
                "params": {"acs_version": "0.1.0", "request_id": rid, "timestamp": stamp,
                "metadata": {"agent_id": "bench-agent", "session_id": session, "turn_id": "t1"},
                "payload": {"tool": {"name": "read_file", "version": "1.0"},
                "arguments": {"path": {"value": "README.md"}}}}})
            t0 = time.perf_counter()
            r = await client.post(
                "/acs", content=body, headers={"content-type": "application/json"})
            lat.append(time.perf_counter() - t0)
            if r.status_code != 200 or b'"error"' in r.content:
                bad += 1
    async def main():
        limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as c:
            t0 = time.perf_counter()
            await asyncio.gather(*(worker(c, t0 + duration) for _ in range(conns)))
            return time.perf_counter() - t0
    wall = asyncio.run(main())
    lat.sort()
    print(orjson.dumps({"rps": len(lat) / wall, "p50_ms": lat[len(lat)//2] * 1000,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1000, "requests": len(lat), "bad": bad}).decode())
    """
)


def run_python_loadgen(port: int, duration: int, connections: int, session: str):
    out = subprocess.run(
        [sys.executable, "-c", PY_LOADGEN, str(port), str(duration), str(connections), session],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return orjson.loads(out.strip().splitlines()[-1])


def open_http_session(port: int, session: str) -> None:
    import httpx

    for method, payload in (("handshake/hello", HELLO), ("steps/sessionStart", {})):
        reply = httpx.post(
            f"http://127.0.0.1:{port}/acs",
            content=orjson.dumps(envelope(method, payload, session_id=session)),
            headers={"Content-Type": "application/json"},
            timeout=5,
        ).json()
        if "error" in reply:
            raise SystemExit(f"{method} failed: {reply}")


def bench_http(
    duration: int, connections: int, rounds: int = 6, single_process: bool = True
) -> dict[str, Any]:
    """All servers run at once, idle but for the one under load; wrk visits them in turn,
    ``rounds`` times (the order reversed every other round), so that each round's ratio to the
    echo compares runs seconds apart under the same machine load."""
    use_wrk = shutil.which("wrk") is not None
    method = (
        "wrk 4.1 (-t2, Lua script, unique request_id per request)"
        if use_wrk
        else ("Python asyncio+httpx load generator in a separate process (wrk not installed)")
    )
    print(
        f"HTTP load generator: {method}; {connections} connections, {rounds} alternating "
        f"rounds of {duration} s per server"
    )
    results: dict[str, Any] = {"method": method, "connections": connections, "rounds": rounds}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        lua = tmpdir / "acs.lua"
        lua.write_text(WRK_LUA)
        echo_py = tmpdir / "echo.py"
        echo_py.write_text(ECHO_APP)
        agbom = [sys.executable, "-m", "agbom"]
        servers = {
            "echo": lambda port: [sys.executable, str(echo_py), str(port)],
            "agbom serve": lambda port: [
                *agbom,
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--db",
                str(tmpdir / "serve.db"),
            ],
        }
        if single_process:
            servers["--single-process"] = lambda port: [
                *agbom,
                "serve",
                "--single-process",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--db",
                str(tmpdir / "single.db"),
            ]
        running: dict[str, tuple[subprocess.Popen[bytes], int, str]] = {}

        def load(name: str, seconds: int) -> dict[str, Any]:
            _, port, session = running[name]
            if use_wrk:
                prefix = f"r{uuid.uuid4().hex[:10]}"
                return run_wrk(port, seconds, connections, prefix, session, lua)
            return run_python_loadgen(port, seconds, connections, session)

        try:
            for name, command in servers.items():
                port = free_port()
                proc = subprocess.Popen(command(port), stdout=subprocess.DEVNULL)
                running[name] = (proc, port, f"bench-{uuid.uuid4()}")
                wait_healthy(port, proc)
                if name != "echo":
                    open_http_session(port, running[name][2])
            for name in servers:
                load(name, 2)  # warm-up: caches, page cache, SQLite's WAL
            per_round: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
            order = list(servers)
            for number in range(rounds):
                loadavg = os.getloadavg()[0]
                line = []
                for name in order if number % 2 == 0 else reversed(order):
                    # CPU per request of each server process: steadier than req/s when other
                    # jobs share the cores (it does not count the time spent waiting for one).
                    pids = process_tree(running[name][0].pid)
                    before = [cpu_seconds(pid) for pid in pids]
                    stats = load(name, duration)
                    used = [cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True)]
                    count = max(1, stats["requests"])
                    stats["cpu_us"] = [seconds * 1e6 / count for seconds in used]
                    per_round[name].append(stats)
                    cpu = "+".join(f"{us:.0f}" for us in stats["cpu_us"])
                    line.append(
                        f"{name} {stats['rps']:.0f}/s p99 {stats['p99_ms']:.1f} ms "
                        f"({cpu} us CPU/req)"
                    )
                ratio = per_round["agbom serve"][-1]["rps"] / per_round["echo"][-1]["rps"]
                print(f"round {number + 1} (load {loadavg:.1f}): {', '.join(line)}; {ratio:.0%}")
        finally:
            for proc, _, _ in running.values():
                stop(proc)
    for name, runs in per_round.items():
        stats = {
            key: statistics.median(run[key] for run in runs) for key in ("rps", "p50_ms", "p99_ms")
        }
        stats["p99_ms_max"] = max(run["p99_ms"] for run in runs)
        stats["requests"] = sum(run["requests"] for run in runs)
        stats["bad"] = sum(run["bad"] for run in runs)
        stats["cpu_us"] = [
            statistics.median(values) for values in zip(*(run["cpu_us"] for run in runs))
        ]
        results[name] = stats
        print(
            f"{name:18s} median {stats['rps']:9.0f} req/s  p50 {stats['p50_ms']:.2f} ms  "
            f"p99 {stats['p99_ms']:.2f} ms (worst {stats['p99_ms_max']:.2f})  "
            f"({stats['requests']} requests, {stats['bad']} errors)"
        )
        processes = ("front", "decision") if name == "agbom serve" else ("process",)
        print(
            f"{'':18s} CPU per request: "
            + ", ".join(f"{label} {us:.0f} us" for label, us in zip(processes, stats["cpu_us"]))
        )
    for name in servers:
        if name == "echo":
            continue
        ratios = [
            ours["rps"] / echo["rps"] for ours, echo in zip(per_round[name], per_round["echo"])
        ]
        results[f"{name} ratio"] = statistics.median(ratios)
        print(
            f"{name} / echo throughput: median {statistics.median(ratios):.0%} of {rounds} "
            f"rounds ({min(ratios):.0%}-{max(ratios):.0%})"
            + ("; target >= 45%, p99 <= 10 ms at load <= 2" if name == "agbom serve" else "")
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "inprocess", "http"], default="all")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (HTTP)")
    parser.add_argument("--inprocess-rounds", type=int, default=8)
    parser.add_argument(
        "--no-single-process", action="store_true", help="leave out --single-process (HTTP)"
    )
    parser.add_argument(
        "--compare-tree",
        type=Path,
        metavar="PATH",
        help="in process: this tree and the agbom tree at PATH (e.g. a git worktree of an "
        "older commit), each in a worker process, taking turns round by round",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker()
        return
    if args.compare_tree is not None:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
        bench_compare(args.compare_tree, args.requests, args.inprocess_rounds)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if args.part in ("all", "inprocess"):
        bench_inprocess(args.requests, args.inprocess_rounds)
    if args.part in ("all", "http"):
        bench_http(args.duration, args.connections, args.rounds, not args.no_single_process)


if __name__ == "__main__":
    main()
