"""Scan benchmark for a tree that holds one large MCP config with no finding (issue 41).

    python benchmarks/bench_scan_large_config.py [--mib 5] [--runs 5]
                                                 [--old-src DIR] [--cdxgen PATH | --no-cdxgen]

The tree is the labelled skills of ``tests/scan/detect_corpus/`` (both splits) plus a
``.claude.json`` of about ``--mib`` MiB: project history, as Claude Code writes it, and one
pinned server, so no rule fires on it and no position in it is ever asked for. Before
positions were deferred, every entry's position in such a file was computed while reading it.

Timed, alternating run by run so a change of the machine's load hits each alike:
``agbom scan TREE -f json`` of this checkout; with ``--old-src DIR`` the same command with
``PYTHONPATH=DIR`` (a folder holding another commit's ``agbom/`` package, e.g. from
``git archive COMMIT agbom | tar -x -C DIR``); and cdxgen (``cdxgen -o FILE TREE``, the
anchor). Target: agbom's median ≤ 0.5× cdxgen's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scan import _cdxgen  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "scan" / "detect_corpus"
RATIO_TARGET = 0.5


def write_config(path: Path, mib: float) -> None:
    """A Claude Code user config of about ``mib`` MiB whose one server is pinned."""
    projects: dict[str, object] = {}
    size, i = 0, 0
    while size < mib * 1024 * 1024:
        entry = {"history": [{"display": f"fix module {j} in package {i}"} for j in range(40)]}
        projects[f"/home/u/work/project-{i}"] = entry
        size += len(json.dumps(entry, indent=2)) + 40
        i += 1
    server = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2025.8.4"]}
    doc = {"numStartups": 12, "projects": projects, "mcpServers": {"memory": server}}
    path.write_text(json.dumps(doc, indent=2))


def _timed(command: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in ok:
        print(proc.stderr[-2000:].decode(errors="replace"))
        raise SystemExit(f"{command[0]} failed with exit code {proc.returncode}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--old-src", type=Path, help="a folder holding another agbom/ to compare")
    parser.add_argument("--cdxgen", help="the cdxgen to compare with (default: .ci/node, PATH)")
    parser.add_argument("--no-cdxgen", action="store_true", help="skip the cdxgen comparison")
    args = parser.parse_args()

    cdxgen = None if args.no_cdxgen else _cdxgen(args.cdxgen)
    base_env = {**os.environ, "AGBOM_DEBUG": "0"}
    base_env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree = work / "tree"
        shutil.copytree(CORPUS, tree / "skills")
        write_config(tree / ".claude.json", args.mib)
        size = (tree / ".claude.json").stat().st_size
        print(f"tree: {CORPUS.relative_to(REPO)} + .claude.json of {size / 2**20:.2f} MiB")

        scan = [sys.executable, "-m", "agbom", "scan", "tree", "-f", "json"]
        commands: dict[str, tuple[list[str], dict[str, str], tuple[int, ...]]] = {
            "agbom scan -f json (this checkout)": (scan, base_env, (0, 1, 3)),
        }
        if args.old_src is not None:
            old_env = {**base_env, "PYTHONPATH": str(args.old_src.resolve())}
            commands[f"agbom scan -f json ({args.old_src})"] = (scan, old_env, (0, 1, 3))
        if cdxgen:
            cdx = [cdxgen, "-o", str(work / "cdxgen.cdx.json"), "tree"]
            commands["cdxgen -o FILE TREE (anchor)"] = (cdx, base_env, (0,))
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.runs):  # alternating
            for label, (command, env, ok) in commands.items():
                times[label].append(_timed(command, work, env, ok))

        print(f"load average {os.getloadavg()[0]:.2f} (1 min) after the runs")
        for label, values in times.items():
            print(
                f"{label:<40} median {statistics.median(values):6.3f} s  "
                f"(min {min(values):.3f}, max {max(values):.3f}, runs {len(values)})"
            )
        anchor = times.get("cdxgen -o FILE TREE (anchor)")
        if anchor:
            for label, values in times.items():
                if values is anchor:
                    continue
                ratio = statistics.median(values) / statistics.median(anchor)
                verdict = "PASS" if ratio <= RATIO_TARGET else "FAIL"
                print(f"{label} / cdxgen: {ratio:.2f}x (target <= {RATIO_TARGET}x): {verdict}")
        else:
            print("no cdxgen (--no-cdxgen, or none in .ci/node or PATH): no anchor comparison")


if __name__ == "__main__":
    main()
