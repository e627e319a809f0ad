"""Guardian replicas: 1, 2 and 3 ``agbom serve`` replicas on one PostgreSQL database, beside one
``agbom serve`` on a SQLite file, in the same run.

Run: ``python benchmarks/bench_replicas.py`` (``--duration S`` per configuration, default 8;
``--connections C`` in all, default 24; ``--sessions K``, default 16; ``--rounds R``, default
2, the configurations visited in turn, the order reversed every other round).

The load is ``steps/toolCallRequest`` over ``POST /acs``, each with a unique ``request_id``,
spread over K open sessions. Nothing is sticky: with N replicas, N ``wrk`` processes run at
once, one per replica, C/N connections each, and every one of them sends to all K sessions,
so every session's chain is appended to by every replica (each replica's view of a session is
stale whenever another one appended since: that is the case the replicas must get right, and
what it costs is what "shared" measures; it is the worst case, every session written by every
replica at once). "own" gives each replica sessions of its own, as a sticky load balancer
would (agbom needs none): the same load without stale heads. Decisions per second are the sum
over the replicas, error answers not counted; the p99 (of all answers) is the worst of the
replicas' p99s. Error answers are counted and the first one printed: the only ones expected
are ``chain_conflict`` refusals in the "shared" worst case.

PostgreSQL is a throwaway cluster (tests/pgcluster.py: ``initdb`` in a temporary folder,
``fsync=off``, loopback). On a 2-core machine every replica, its decision process, the
database and the load generator share two cores: more replicas add CPU contention, not
capacity. The figures compare the configurations on this machine; they are not a capacity
statement (see docs/deploying.md).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.guardian.acs import hello, request  # noqa: E402
from tests.pgcluster import running_cluster  # noqa: E402
from tests.transports.served import Served, post  # noqa: E402

# Each wrk thread numbers its requests; the prefix, thread id and counter make the request_id
# unique across the run, and the counter picks the session, so every wrk process (replica)
# sends to every session.
WRK_LUA = textwrap.dedent(
    """
    local threads = {}
    local created = 0
    function setup(thread)
      created = created + 1
      thread:set("tid", created)
      table.insert(threads, thread)
    end
    function init(args)
      prefix = args[1]
      session = args[2]
      sessions = tonumber(args[3])
      stamp = args[4]
      counter = 0
    end
    function request()
      counter = counter + 1
      local rid = prefix .. "-" .. tid .. "-" .. counter
      local sid = session .. "-" .. ((counter + tid) % sessions)
      local body = '{"jsonrpc":"2.0","method":"steps/toolCallRequest","id":"' .. rid ..
        '","params":{"acs_version":"0.1.0","request_id":"' .. rid ..
        '","timestamp":"' .. stamp .. '","metadata":{"agent_id":"agent-1",' ..
        '"session_id":"' .. sid .. '"},"payload":{"tool":' ..
        '{"name":"read_file","version":"1.0"},"arguments":{"path":{"value":"README.md"}}}}}'
      return wrk.format("POST", "/acs", {["Content-Type"] = "application/json"}, body)
    end
    errors = 0
    sample = ""
    function response(status, headers, body)
      if status ~= 200 or string.find(body, '"error"', 1, true) then
        errors = errors + 1
        if sample == "" then sample = string.sub(body, 1, 300) end
      end
    end
    function done(summary, latency, requests)
      local total = 0
      local first = ""
      for _, t in ipairs(threads) do
        total = total + (t:get("errors") or 0)
        if first == "" then first = t:get("sample") or "" end
      end
      io.write(string.format("AGBOM_P50_US %d\\n", latency:percentile(50)))
      io.write(string.format("AGBOM_P99_US %d\\n", latency:percentile(99)))
      io.write(string.format("AGBOM_REQUESTS %d\\n", summary.requests))
      io.write(string.format("AGBOM_DURATION_US %d\\n", summary.duration))
      io.write(string.format("AGBOM_BAD %d\\n", total))
      io.write("AGBOM_SAMPLE " .. first .. "\\n")
    end
    """
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def wrk(
    url: str, seconds: int, connections: int, prefix: str, sessions: str, count: int, lua: Path
) -> subprocess.Popen[str]:
    """Start one wrk on ``url``; returns the process (read with :func:`wrk_result`)."""
    return subprocess.Popen(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            str(lua),
            f"{url}/acs",
            "--",
            prefix,
            sessions,
            str(count),
            _now(),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wrk_result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"wrk failed: {err.strip()}")
    values = dict(re.findall(r"AGBOM_(\w+) (\d+)", out))
    sample = re.search(r"AGBOM_SAMPLE (.*)", out)
    return {
        "requests": int(values["REQUESTS"]),
        "seconds": int(values["DURATION_US"]) / 1e6,
        "p50_ms": int(values["P50_US"]) / 1000,
        "p99_ms": int(values["P99_US"]) / 1000,
        "bad": int(values["BAD"]),
        "sample": sample.group(1).strip() if sample else "",
    }


def open_sessions(url: str, prefix: str, count: int) -> None:
    for index in range(count):
        sid = f"{prefix}-{index}"
        assert "result" in post(url, hello(sid))
        started = post(url, request("steps/sessionStart", {}, session_id=sid))
        assert started["result"]["decision"] == "allow", started


def run_config(
    replicas: list[Served],
    seconds: int,
    connections: int,
    sessions: int,
    lua: Path,
    *,
    shared: bool,
) -> dict[str, Any]:
    """One measurement: fresh sessions, one wrk per replica, all at once. ``shared``: every
    replica sends to every session; else each replica has sessions of its own (what a sticky
    load balancer would give; agbom does not need one)."""
    tag = uuid.uuid4().hex[:8]
    if shared:
        prefixes = [f"s{tag}"] * len(replicas)
        open_sessions(replicas[0].url, prefixes[0], sessions)
    else:
        prefixes = [f"s{tag}{i}" for i in range(len(replicas))]
        own = max(1, sessions // len(replicas))
        for replica, prefix in zip(replicas, prefixes, strict=True):
            open_sessions(replica.url, prefix, own)
    count = sessions if shared else max(1, sessions // len(replicas))
    per = max(1, connections // len(replicas))
    procs = [
        wrk(r.url, seconds, per, f"r{tag}{i}", prefixes[i], count, lua)
        for i, r in enumerate(replicas)
    ]
    results = [wrk_result(p) for p in procs]
    return {
        # Decisions: answers that are not errors (a chain_conflict refusal is quick, and is
        # not a decision).
        "rps": sum((r["requests"] - r["bad"]) / r["seconds"] for r in results),
        "requests": sum(r["requests"] for r in results),
        "p50_ms": max(r["p50_ms"] for r in results),
        "p99_ms": max(r["p99_ms"] for r in results),
        "bad": sum(r["bad"] for r in results),
        "sample": next((r["sample"] for r in results if r["sample"]), ""),
    }


def start_all(location: str, logs: Path, count: int, name: str) -> list[Served]:
    servers = [Served(db=location, log=logs / f"{name}{i}.log") for i in range(count)]  # type: ignore[arg-type]
    with ThreadPoolExecutor(count) as pool:
        list(pool.map(lambda s: s.start(timeout=180), servers))
    return servers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--connections", type=int, default=24)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench_replicas: wrk is required (apt-get install wrk)")
    work = Path(tempfile.mkdtemp(prefix="agbom-bench-replicas-"))
    lua = work / "replicas.lua"
    lua.write_text(WRK_LUA)
    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()[0]:.2f}")
    print(
        f"{args.duration} s per configuration, {args.connections} connections in all, "
        f"{args.sessions} sessions shared by every replica, {args.rounds} rounds"
    )
    with running_cluster() as cluster:
        pg_url = cluster.url(cluster.create_database("bench"))
        sqlite = start_all(str(work / "bench.db"), work, 1, "sqlite")
        pg = start_all(pg_url, work, 3, "pg")
        configs: dict[str, tuple[list[Served], bool]] = {
            "SQLite, 1 server": (sqlite, True),
            "PostgreSQL, 1 replica": (pg[:1], True),
            "PostgreSQL, 2, shared": (pg[:2], True),
            "PostgreSQL, 3, shared": (pg[:3], True),
            "PostgreSQL, 2, own": (pg[:2], False),
            "PostgreSQL, 3, own": (pg[:3], False),
        }
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
        try:
            for round_no in range(args.rounds):
                order = list(configs) if round_no % 2 == 0 else list(reversed(configs))
                for name in order:
                    servers, shared = configs[name]
                    result = run_config(
                        servers, args.duration, args.connections, args.sessions, lua, shared=shared
                    )
                    rows[name].append(result)
                    print(
                        f"round {round_no + 1} {name:24} {result['rps']:8.0f} decisions/s  "
                        f"p50 {result['p50_ms']:7.1f} ms  p99 {result['p99_ms']:7.1f} ms  "
                        f"errors {result['bad']}/{result['requests']}  "
                        f"load {os.getloadavg()[0]:.2f}"
                    )
                    if result["bad"]:
                        print(f"    first error: {result['sample']}")
        finally:
            for server in [*sqlite, *pg]:
                server.stop()
        print()
        print(f"{'configuration':24} {'decisions/s':>12} {'p99 ms':>8} {'errors':>14}  (medians)")
        for name, results in rows.items():
            rps = statistics.median(r["rps"] for r in results)
            p99 = statistics.median(r["p99_ms"] for r in results)
            bad = sum(r["bad"] for r in results)
            sent = sum(r["requests"] for r in results)
            print(f"{name:24} {rps:12.0f} {p99:8.1f} {bad:7d} ({100 * bad / sent:4.1f}%)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
