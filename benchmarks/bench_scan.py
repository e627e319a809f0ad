"""Scan benchmark: 2,000 skill folders + 300 MCP configs, scanned to CycloneDX.

    python benchmarks/bench_scan.py [--skills 2000] [--configs 300] [--runs 3]

Prints the in-process phases (scan, CycloneDX export) and the end-to-end time of the real
command ``agbom scan TREE --format cyclonedx-json -o FILE`` in a fresh process (interpreter
start, imports, rules, export and the atomic write included). Target: end to end < 5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_scan_tree import generate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=2000)
    parser.add_argument("--configs", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from agbom.export import export
    from agbom.scan import scan_paths

    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        start = time.perf_counter()
        generate(tree, args.skills, args.configs)
        print(
            f"generated {args.skills} skills + {args.configs} configs in "
            f"{time.perf_counter() - start:.2f} s"
        )

        scan_times, export_times, e2e_times = [], [], []
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
        out = Path(tmp) / "bom.cdx.json"
        for _ in range(args.runs):
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "agbom", "scan", str(tree), "--format", "cyclonedx-json",
                 "-o", str(out)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            e2e_times.append(time.perf_counter() - t0)
            if proc.returncode not in (0, 1, 3):
                print(proc.stderr)
                raise SystemExit(f"agbom scan failed with exit code {proc.returncode}")

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


if __name__ == "__main__":
    main()
