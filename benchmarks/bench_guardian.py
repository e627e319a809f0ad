"""Guardian decision speed: in process, and over HTTP against a bare echo server.

Run: ``python benchmarks/bench_guardian.py`` (both parts), or ``--part inprocess`` /
``--part http``. Options: ``--requests N`` (in process, default 20000), ``--duration S`` and
``--connections C`` (HTTP, default 10 s and 32).

Part 1 (in process): ``Guardian.handle`` on a ``steps/toolCallRequest`` envelope, which
includes envelope and payload validation, replay and skew checks, policy, the clamp and the
audit-chain append committed to a real SQLite file. Prints median and p99 in microseconds.

Part 2 (HTTP, loopback): ``agbom serve`` (a real subprocess, with its decision process)
answering ``POST /acs`` toolCallRequests, against a bare starlette+uvicorn JSON echo started the
same way, in the same run; then ``agbom serve --single-process`` for comparison. The load
generator is ``wrk`` with a Lua script that gives every request a unique
``request_id`` (the Guardian refuses repeats with -32005). Without ``wrk`` the script falls
back to a Python asyncio+httpx generator in a separate process and says so. On a 2-core
machine the load generator and the server share the CPU, so the figures compare the two
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


def bench_inprocess(requests: int) -> dict[str, float]:
    from agbom.guardian import build_guardian

    with tempfile.TemporaryDirectory() as tmp:
        guardian = build_guardian(Path(tmp) / "bench.db")
        assert "error" not in guardian.handle(envelope("handshake/hello", HELLO))
        assert "error" not in guardian.handle(envelope("steps/sessionStart", {}))
        # Build the envelopes up front: the client's work is not the Guardian's cost.
        warm = [envelope("steps/toolCallRequest", TOOL_PAYLOAD) for _ in range(500)]
        batch = [envelope("steps/toolCallRequest", TOOL_PAYLOAD) for _ in range(requests)]
        for item in warm:
            guardian.handle(item)
        timings: list[float] = []
        clock = time.perf_counter_ns
        started = time.perf_counter()
        for item in batch:
            t0 = clock()
            response = guardian.handle(item)
            timings.append((clock() - t0) / 1000)
            if "error" in response:
                raise SystemExit(f"unexpected error: {response}")
        wall = time.perf_counter() - started
        decision = response["result"]["decision"]
        entries = len(guardian.store.chain_entries(SESSION))
        guardian.store.close()
    timings.sort()
    result = {
        "requests": requests,
        "median_us": statistics.median(timings),
        "p99_us": _percentile(timings, 0.99),
        "mean_us": statistics.fmean(timings),
        "throughput_rps": requests / wall,
    }
    print(
        f"in-process toolCallRequest ({decision}, chain append committed, {entries} entries): "
        f"median {result['median_us']:.1f} us, p99 {result['p99_us']:.1f} us, "
        f"mean {result['mean_us']:.1f} us over {requests} requests"
    )
    return result


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


def bench_http(duration: int, connections: int) -> dict[str, Any]:
    use_wrk = shutil.which("wrk") is not None
    method = (
        "wrk 4.1 (-t2, Lua script, unique request_id per request)"
        if use_wrk
        else ("Python asyncio+httpx load generator in a separate process (wrk not installed)")
    )
    print(f"HTTP load generator: {method}; {connections} connections, {duration} s per server")
    results: dict[str, Any] = {"method": method, "connections": connections}
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
            "--single-process": lambda port: [
                *agbom,
                "serve",
                "--single-process",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--db",
                str(tmpdir / "single.db"),
            ],
        }
        for name, command in servers.items():
            port = free_port()
            proc = subprocess.Popen(command(port), stdout=subprocess.DEVNULL)
            try:
                wait_healthy(port, proc)
                session = f"bench-{uuid.uuid4()}"
                if name != "echo":
                    open_http_session(port, session)
                # Warm up (JIT-free, but fills caches, page cache and SQLite's WAL).
                if use_wrk:
                    run_wrk(port, 2, connections, f"warm{uuid.uuid4().hex[:8]}", session, lua)
                    stats = run_wrk(
                        port, duration, connections, f"run{uuid.uuid4().hex[:8]}", session, lua
                    )
                else:
                    run_python_loadgen(port, 2, connections, session)
                    stats = run_python_loadgen(port, duration, connections, session)
            finally:
                stop(proc)
            results[name] = stats
            print(
                f"{name:18s} {stats['rps']:9.0f} req/s  p50 {stats['p50_ms']:.2f} ms  "
                f"p99 {stats['p99_ms']:.2f} ms  ({stats['requests']} requests, "
                f"{stats['bad']} errors)"
            )
    ratio = results["agbom serve"]["rps"] / results["echo"]["rps"]
    results["ratio"] = ratio
    single = results["--single-process"]["rps"] / results["echo"]["rps"]
    print(f"agbom serve / echo throughput: {ratio:.0%} (target >= 40%, p99 < 10 ms)")
    print(f"agbom serve --single-process / echo throughput: {single:.0%}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "inprocess", "http"], default="all")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if args.part in ("all", "inprocess"):
        bench_inprocess(args.requests)
    if args.part in ("all", "http"):
        bench_http(args.duration, args.connections)


if __name__ == "__main__":
    main()
