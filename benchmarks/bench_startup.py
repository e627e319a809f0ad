"""Fixed start-up cost and peak memory of whole agbom processes, each against an anchor.

    python benchmarks/bench_startup.py [--runs 15] [--before TREE]

Every command below runs as a fresh process, interleaved round by round (so background load
on the machine hits all alike), through the installed ``agbom`` console script:

  * ``python -c pass`` with the same interpreter: the anchor of the start-up ratios;
  * ``agbom --help``;
  * ``agbom scan EMPTY -f json`` (the anchor of the CycloneDX row) and ``-f cyclonedx-json``;
  * ``agbom hook claude-code --db PATH``, one PreToolUse event on stdin (standalone hook);
  * a one-file scan (one MCP client config) with ``-f json`` and ``-f cyclonedx-json``,
    for the peak resident set size of each (``ru_maxrss`` of that very child).

With ``--before TREE`` (a folder holding another ``agbom`` package, e.g. ``git archive`` of an
earlier commit), ``--help`` and the standalone hook also run from that tree (``PYTHONPATH``),
interleaved with the rest, so a change is measured before and after in the same run.

Prints the median (and min) of each, then each target as a ratio with its anchor. Issue 16
targets: cyclonedx/json <= 1.3x, --help <= 4x, hook <= 8x, CycloneDX peak RSS <= 1.5x JSON.
The exit code is 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
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

ONE_CONFIG = {
    "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@1.0"]}
    }
}


def agbom() -> list[str]:
    script = Path(sys.executable).parent / "agbom"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agbom"]


def run_once(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, int, float]:
    """Wall time (ms), peak RSS (KiB) and CPU time (ms) of one run of ``cmd``."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    err = proc.stderr.read()
    # wait4 gives the rusage of this very child (RUSAGE_CHILDREN would be a running maximum).
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}: {err.decode()[:300]}")
    return elapsed, usage.ru_maxrss, (usage.ru_utime + usage.ru_stime) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, help="another tree's agbom, timed alongside")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        empty = root / "empty"
        empty.mkdir()
        one = root / "one"
        one.mkdir()
        (one / "mcp.json").write_text(json.dumps(ONE_CONFIG), encoding="utf-8")
        env = dict(os.environ)
        # A cache folder of this run only: the first run fills any on-disk cache, the
        # warm-up run below takes that hit, so the timed runs are what a user sees the
        # second time (and the cold cost is printed on its own).
        env["XDG_CACHE_HOME"] = str(root / "cache")
        env["XDG_DATA_HOME"] = str(root / "data")
        a = agbom()
        # Bytecode for the whole package, as pip writes it at install time: a tree where
        # PYTHONDONTWRITEBYTECODE is set (or files were just edited) would otherwise compile
        # every changed module from source in every timed process.
        where = subprocess.run(
            [sys.executable, "-c", "import agbom, os; print(os.path.dirname(agbom.__file__))"],
            capture_output=True, text=True, env=env, check=True,
        ).stdout.strip()  # fmt: skip
        subprocess.run([sys.executable, "-m", "compileall", "-q", where], env=env, check=False)
        print(f"package: {where}")
        before_env = dict(env)
        if args.before is not None:
            tree = str(args.before.resolve())
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(Path(tree) / "agbom")], check=False
            )
            before_env["PYTHONPATH"] = tree
            print(f"before: {tree}/agbom")
        commands: dict[str, tuple[list[str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
            "agbom --help": ([*a, "--help"], b""),
            "scan EMPTY -f json": ([*a, "scan", str(empty), "-f", "json"], b""),
            "scan EMPTY -f cyclonedx-json": ([*a, "scan", str(empty), "-f", "cyclonedx-json"], b""),
            "hook claude-code (standalone)": (
                [*a, "hook", "claude-code", "--db", str(root / "hook.db")],
                EVENT,
            ),
            "scan ONE -f json": ([*a, "scan", str(one), "-f", "json"], b""),
            "scan ONE -f cyclonedx-json": ([*a, "scan", str(one), "-f", "cyclonedx-json"], b""),
        }
        if args.before is not None:
            commands["agbom --help (before)"] = commands["agbom --help"]
            commands["hook claude-code (before)"] = (
                [*a, "hook", "claude-code", "--db", str(root / "hook-before.db")],
                EVENT,
            )
        envs = {name: before_env if name.endswith("(before)") else env for name in commands}
        cold_ms, _, _ = run_once(commands["scan EMPTY -f cyclonedx-json"][0], b"", env)
        for name, (cmd, stdin) in commands.items():  # warm the OS caches and the store file
            run_once(cmd, stdin, envs[name])
        times: dict[str, list[float]] = {name: [] for name in commands}
        rss: dict[str, list[int]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (cmd, stdin) in commands.items():
                elapsed, peak, used = run_once(cmd, stdin, envs[name])
                times[name].append(elapsed)
                rss[name].append(peak)
                cpu[name].append(used)

    print(
        f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs, {args.runs} runs each, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"first 'scan EMPTY -f cyclonedx-json' with an empty cache: {cold_ms:.0f} ms")
    for name in commands:
        peak_mib = statistics.median(rss[name]) / 1024
        print(
            f"  {name:32s} median {statistics.median(times[name]):7.1f} ms  "
            f"min {min(times[name]):7.1f} ms  CPU {statistics.median(cpu[name]):7.1f} ms  "
            f"peak RSS {peak_mib:6.1f} MiB"
        )
    med = {name: statistics.median(values) for name, values in times.items()}
    mem = {name: statistics.median(values) for name, values in rss.items()}
    targets = [
        ("scan EMPTY cyclonedx-json / json", med["scan EMPTY -f cyclonedx-json"],
         med["scan EMPTY -f json"], 1.3),
        ("agbom --help / python -c pass", med["agbom --help"], med["python -c pass"], 4.0),
        ("standalone hook / python -c pass", med["hook claude-code (standalone)"],
         med["python -c pass"], 8.0),
        ("peak RSS scan ONE cyclonedx / json", mem["scan ONE -f cyclonedx-json"],
         mem["scan ONE -f json"], 1.5),
    ]  # fmt: skip
    ok = True
    for label, value, anchor, limit in targets:
        ratio = value / anchor
        ok &= ratio <= limit
        verdict = "OK" if ratio <= limit else "OVER TARGET"
        print(f"{label:36s} {ratio:5.2f}x (target <= {limit}x): {verdict}")
    # On a loaded machine wall time is mostly waiting for a core; CPU time is what each
    # process itself costs, and its ratios move far less with the load.
    used = {name: statistics.median(values) for name, values in cpu.items()}
    print("the same start-up ratios in CPU time (user + system):")
    for label, name, anchor in (
        ("scan EMPTY cyclonedx-json / json", "scan EMPTY -f cyclonedx-json", "scan EMPTY -f json"),
        ("agbom --help / python -c pass", "agbom --help", "python -c pass"),
        ("standalone hook / python -c pass", "hook claude-code (standalone)", "python -c pass"),
    ):
        print(f"  {label:34s} {used[name] / used[anchor]:5.2f}x")
    if args.before is not None:
        print("before (--before tree) and after, same run, against python -c pass:")
        for label, name in (
            ("agbom --help", "agbom --help"),
            ("standalone hook", "hook claude-code (standalone)"),
        ):
            was = f"{name.split(' (')[0]} (before)"
            print(
                f"  {label:16s} wall {med[was] / med['python -c pass']:5.2f}x -> "
                f"{med[name] / med['python -c pass']:5.2f}x, CPU "
                f"{used[was] / used['python -c pass']:5.2f}x -> "
                f"{used[name] / used['python -c pass']:5.2f}x"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
