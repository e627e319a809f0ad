"""Scan benchmark: 2,000 skill folders + 300 MCP configs, scanned to CycloneDX.

    python benchmarks/bench_scan.py [--skills 2000] [--configs 300] [--runs 3]
                                    [--cdxgen PATH | --no-cdxgen] [--report FILE]
                                    [--old-src DIR]

Prints the in-process phases (scan, CycloneDX export) and the end-to-end time of the real
command ``agbom scan TREE --format cyclonedx-json -o FILE`` in a fresh process (interpreter
start, imports, rules, export and the atomic write included). Target: end to end < 5 s.

The anchor is cdxgen (``cdxgen -o FILE TREE``) on the same tree in the same run: the two
commands alternate, run by run, so a change of the machine's load hits both alike. cdxgen is
taken from ``.ci/node`` (``.ci/run`` installs it) or ``PATH``; without it the comparison is
skipped and said so. Target: agbom's median ≤ 0.35× cdxgen's (issue 29 item 6).

``--old-src DIR`` also times another checkout's ``agbom`` (a folder holding its ``agbom``
package, e.g. ``git archive main agbom | tar -x -C DIR``) with this interpreter, in the same
alternation: a before/after of a change in one run.

``--report FILE`` also writes ``agbom scan tree -f json`` (run from the tree's parent, so
paths are relative and two checkouts give comparable files): diff two of them to check that
a speed change left the findings as they were.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_scan_tree import generate  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RATIO_TARGET = 0.35


def _cdxgen(option: str | None) -> str | None:
    if option:
        return option
    local = REPO / ".ci" / "node" / "node_modules" / ".bin" / "cdxgen"
    return str(local) if local.exists() else shutil.which("cdxgen")


def _timed(
    command: list[str], cwd: Path, ok: tuple[int, ...], pythonpath: Path | None = None
) -> float:
    env = None
    if pythonpath is not None:
        env = {**os.environ, "PYTHONPATH": str(pythonpath.resolve())}
    t0 = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in ok:
        print(proc.stderr[-2000:])
        raise SystemExit(f"{command[0]} failed with exit code {proc.returncode}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=2000)
    parser.add_argument("--configs", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cdxgen", help="the cdxgen to compare with (default: .ci/node, PATH)")
    parser.add_argument("--no-cdxgen", action="store_true", help="skip the cdxgen comparison")
    parser.add_argument("--report", type=Path, help="write agbom's JSON report here")
    parser.add_argument("--old-src", type=Path, help="a folder holding another agbom/ to time too")
    args = parser.parse_args()

    from agbom.export import export
    from agbom.scan import scan_paths

    cdxgen = None if args.no_cdxgen else _cdxgen(args.cdxgen)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree = work / "tree"
        start = time.perf_counter()
        generate(tree, args.skills, args.configs)
        print(
            f"generated {args.skills} skills + {args.configs} configs in "
            f"{time.perf_counter() - start:.2f} s"
        )

        scan_times, export_times, e2e_times, cdx_times = [], [], [], []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            result = scan_paths([tree])
            t1 = time.perf_counter()
            data = export(result.agbom, "cyclonedx-json")
            t2 = time.perf_counter()
            scan_times.append(t1 - t0)
            export_times.append(t2 - t1)
        summary = result.summary()
        print(
            f"files {summary['files']} (errors {summary['error']}), components "
            f"{summary['components']}, CycloneDX {len(data)} bytes"
        )
        agbom = [sys.executable, "-m", "agbom", "scan", "tree", "--format", "cyclonedx-json",
                 "-o", str(work / "bom.cdx.json")]  # fmt: skip
        # cdxgen refuses nothing as root but says so on every run; its output is not read.
        cdx = [cdxgen, "-o", str(work / "cdxgen.cdx.json"), "tree"] if cdxgen else None
        base_times: list[float] = []
        for _ in range(args.runs):  # alternating: agbom, cdxgen, agbom, cdxgen, ...
            e2e_times.append(_timed(agbom, work, (0, 1, 3)))
            if cdx is not None:
                cdx_times.append(_timed(cdx, work, (0,)))
            if args.old_src is not None:
                base_times.append(_timed(agbom, work, (0, 1, 3), pythonpath=args.old_src))
        if args.report is not None:
            proc = subprocess.run(
                [sys.executable, "-m", "agbom", "scan", "tree", "-f", "json"],
                cwd=work, capture_output=True, check=False,
                env={**os.environ, "AGBOM_DEBUG": "0"},
            )  # fmt: skip
            args.report.write_bytes(proc.stdout)
            print(f"JSON report written to {args.report} (exit {proc.returncode})")

        def show(label: str, values: list[float]) -> None:
            print(
                f"{label:<34} median {statistics.median(values):6.3f} s  "
                f"(min {min(values):.3f}, max {max(values):.3f}, runs {len(values)})"
            )

        show("scan_paths (in process)", scan_times)
        show("export cyclonedx-json (in process)", export_times)
        show("agbom scan -> CycloneDX (process)", e2e_times)
        verdict = "PASS" if statistics.median(e2e_times) < 5.0 else "FAIL"
        print(f"target end to end < 5 s: {verdict}")
        if cdx_times:
            show("cdxgen -o FILE TREE (anchor)", cdx_times)
            ratio = statistics.median(e2e_times) / statistics.median(cdx_times)
            verdict = "PASS" if ratio <= RATIO_TARGET else "FAIL"
            print(f"agbom / cdxgen: {ratio:.2f}x (target <= {RATIO_TARGET}x): {verdict}")
        else:
            print("cdxgen not found (.ci/node or PATH): no anchor comparison")
        if base_times:
            show("agbom of --old-src (process)", base_times)
            if cdx_times:
                ratio = statistics.median(base_times) / statistics.median(cdx_times)
                print(f"--old-src agbom / cdxgen: {ratio:.2f}x")


if __name__ == "__main__":
    main()
