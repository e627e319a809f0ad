"""Start-to-answer time of ``agbom hook`` as a runtime sees it (one process per event).

Compares, over N runs each, interleaved:
  * ``python -c pass`` with the same interpreter (the floor any Python hook pays);
  * thin mode, ``agbom-hook claude-code --server URL`` (what ``agbom hook install`` writes;
    ``agbom hook`` where no ``agbom-hook`` is installed), against a running ``agbom serve`` (as
    started with no option: the baseline runtime pack on), for a ``Read`` and a ``Bash`` call;
  * the same ``Read`` through ``agbom hook``, the entry point's generated script;
  * thin mode with the server down (the fail-closed answer);
  * thin mode at ``SessionStart`` on a machine with 50 skills and 20 MCP servers (the hook
    reads, digests and sends the session's inventory; the server records it as an AgBOM);
  * standalone mode, ``agbom hook claude-code --db ...``, deciding in process.
Then, in process (this interpreter's agbom): ``Adapter.handle`` on a warm Guardian, and the
inventory read itself (:func:`agbom.adapters.claude_inventory.session_inventory`) of those 50
skills and 20 servers.

Usage: python benchmarks/bench_hook_startup.py [--runs N] [--standalone-runs M] [--python PY]
(``--python``: the interpreter of the installation to time, e.g. a venv holding the wheel.)
Targets (issue 40): the thin hook at most 1.5x the ``python -c pass`` median per event; the
SessionStart inventory of 50 skills and 20 servers under 0.5 s of the hook's time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _hook_timing import Install, add_python_option, free_port, served, timed_run

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


BASH = json.dumps(
    {
        "session_id": "bench-session",
        "transcript_path": "/tmp/bench.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status --short && pytest -q tests/unit"},
        "tool_use_id": "toolu_bench_bash",
    }
).encode()
SKILLS = 50
SERVERS = 20


def machine(root: Path) -> tuple[Path, Path]:
    """A developer's HOME with SKILLS skills (SKILL.md with allowed-tools, a script, a
    reference) and SERVERS MCP servers in ~/.claude.json; and a project folder."""
    home = root / "home"
    for i in range(SKILLS):
        folder = home / ".claude" / "skills" / f"skill-{i:02d}"
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:02d}\ndescription: Does task {i}.\n"
            "allowed-tools: Bash(./scripts/run.sh:*), Read, Grep\n---\n" + "Steps.\n" * 40
        )
        (folder / "scripts" / "run.sh").write_text("#!/bin/sh\nset -e\nmake build\n" * 20)
        (folder / "reference.md").write_text("Reference text.\n" * 200)
    servers = {
        f"srv-{i:02d}": {
            "command": "npx",
            "args": ["-y", f"@example/mcp-server-{i}@1.{i}.0"],
            "env": {"API_TOKEN": "x" * 40},
        }
        for i in range(SERVERS)
    }
    history = {f"/work/p{i}": {"allowedTools": [], "history": ["x" * 200] * 20} for i in range(50)}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": servers, "projects": history}))
    project = root / "project"
    project.mkdir()
    return home, project


def session_start(project: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "bench-session-start",
            "transcript_path": "/tmp/bench.jsonl",
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()


def time_runs(
    cmd: list[str], runs: int, *, stdin: bytes = b"", env: dict[str, str] | None = None
) -> list[float]:
    return [timed_run(cmd, stdin, env=env) for _ in range(runs)]


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


def inventory_in_process(home: Path, project: Path, n: int = 20) -> list[float]:
    """The hook's own time for the SessionStart inventory (no interpreter start, no server)."""
    from agbom.adapters.claude_inventory import session_inventory
    from agbom.adapters.skill_files import ReadLimits

    environ = {"HOME": str(home), "AGBOM_CLAUDE_MANAGED_DIR": str(home / "no-managed")}
    out = []
    for _ in range(n):
        started = time.perf_counter()
        report = session_inventory(
            str(project), home=str(home), environ=environ, limits=ReadLimits.within(10)
        )
        out.append((time.perf_counter() - started) * 1000)
        assert len(report["skills"]) == SKILLS and len(report["mcp_servers"]) == SERVERS
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--standalone-runs", type=int, default=8)
    add_python_option(parser)
    args = parser.parse_args()
    install = Install(args.python)

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        home, project = machine(Path(tmp))
        hook_env = {
            **os.environ,
            "HOME": str(home),
            "AGBOM_CLAUDE_MANAGED_DIR": str(home / "no-managed"),
        }
        install.compile_bytecode()
        with served(db, install) as url:
            thin = [*install.hook, "claude-code", "--server", url]
            console = [*install.console, "claude-code", "--server", url]
            start = session_start(project)
            # Warm the OS caches and the server's session before timing anything.
            time_runs(install.anchor, 3)
            time_runs(thin, 3, stdin=EVENT, env=hook_env)
            time_runs(console, 2, stdin=EVENT, env=hook_env)
            time_runs(thin, 2, stdin=start, env=hook_env)

            down = [*install.hook, "claude-code", "--server", f"http://127.0.0.1:{free_port()}"]
            standalone = [*install.hook, "claude-code", "--db", str(Path(tmp) / "sa.db")]
            commands = {
                "baseline": (install.anchor, EVENT),
                "thin": (thin, EVENT),
                "thin_bash": (thin, BASH),
                "thin_console": (console, EVENT),
                # Nothing listens there: the fail-closed deny, answered without a server.
                "thin_server_down": (down, EVENT),
                "thin_session_start": (thin, start),
            }
            samples: dict[str, list[float]] = {name: [] for name in (*commands, "standalone")}
            # Interleaved, so that background load on the machine hits every variant alike.
            every = max(1, args.runs // max(1, args.standalone_runs))
            for i in range(args.runs):
                for name, (cmd, stdin) in commands.items():
                    samples[name] += time_runs(cmd, 1, stdin=stdin, env=hook_env)
                if i % every == 0 and len(samples["standalone"]) < args.standalone_runs:
                    samples["standalone"] += time_runs(standalone, 1, stdin=EVENT, env=hook_env)
        inventory = inventory_in_process(home, project)

    load = os.getloadavg()[0]
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs, load {load:.1f}; ms")
    print(f"installation: {install.describe()}")
    labels = {
        "baseline": "python -c pass",
        "thin": "hook --server (thin), Read",
        "thin_bash": "hook --server (thin), Bash",
        "thin_console": "agbom hook --server (script), Read",
        "thin_server_down": "hook --server, server down",
        "thin_session_start": f"thin SessionStart, {SKILLS} skills {SERVERS} srv",
        "standalone": "hook --db (standalone)",
    }
    results: dict[str, dict[str, float]] = {}
    for name, label in labels.items():
        base = results["baseline"]["median"] if results else None
        results[name] = report(label, samples[name], base)
    report(f"in process: inventory of {SKILLS} skills {SERVERS} srv", inventory, None)
    in_process()
    ok = True
    for name in ("thin", "thin_bash"):
        ratio = results[name]["median"] / results["baseline"]["median"]
        verdict = "OK" if ratio <= 1.5 else "OVER TARGET"
        ok = ok and ratio <= 1.5
        print(f"{name}/python -c pass median ratio {ratio:.2f} (target <= 1.5): {verdict}")
    inventory_ms = statistics.median(inventory)
    verdict = "OK" if inventory_ms < 500 else "OVER TARGET"
    ok = ok and inventory_ms < 500
    print(
        f"SessionStart inventory, hook's own time: median {inventory_ms:.1f} ms (< 500): {verdict}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
