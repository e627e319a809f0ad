"""Offline OSV matching: 100,000 generated advisories against 2,000 packages.

Run: python benchmarks/bench_osv.py [--advisories N] [--packages P] [--repeat R] [--keep DIR]

Writes an ``all.zip`` of N generated OSV records (npm and PyPI, 1-3 affected packages each,
SEMVER/ECOSYSTEM ranges with introduced/fixed/last_affected events, some exact version
lists, a few GIT ranges and withdrawn records) over a pool of package names, then measures:

- the anchor: reading every record out of the zip and ``orjson.loads`` of each (the least any
  loader must do);
- ``load_osv`` of the zip (parse plus index);
- matching P package versions (half of them named by some advisory) and ``annotate`` of a
  P-component AgBOM, which compiles the ranges of the packages that occur.

Prints each time (best and median of R runs) and the ratio of load to the anchor.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agbom.advisories import annotate, load_osv
from agbom.inventory import AgBOM


def _version(rng: random.Random) -> tuple[int, int, int]:
    return rng.randrange(0, 5), rng.randrange(0, 20), rng.randrange(0, 30)


def _text(version: tuple[int, int, int], ecosystem: str) -> str:
    del ecosystem  # the same text reads as semver and as PEP 440
    major, minor, patch = version
    return f"{major}.{minor}.{patch}"


def _range(rng: random.Random, ecosystem: str) -> dict[str, Any]:
    points = sorted({_version(rng) for _ in range(rng.randrange(2, 5))})
    events: list[dict[str, str]] = [{"introduced": "0"}] if rng.random() < 0.3 else []
    kinds = ["fixed", "introduced"] if events else ["introduced", "fixed"]
    for index, point in enumerate(points):
        kind = kinds[index % 2]
        if kind == "fixed" and rng.random() < 0.15:
            kind = "last_affected"
        events.append({kind: _text(point, ecosystem)})
    return {"type": "SEMVER" if ecosystem == "npm" else "ECOSYSTEM", "events": events}


def generate(n: int, names: list[tuple[str, str]], rng: random.Random) -> list[dict[str, Any]]:
    """N OSV records whose affected packages are drawn from ``names``."""
    records = []
    for i in range(n):
        affected = []
        for ecosystem, name in rng.sample(names, rng.choice((1, 1, 1, 2, 3))):
            entry: dict[str, Any] = {"package": {"ecosystem": ecosystem, "name": name}}
            if rng.random() < 0.03:
                entry["ranges"] = [
                    {"type": "GIT", "repo": "https://example.invalid/r", "events": [
                        {"introduced": f"{rng.getrandbits(40):010x}"}]}
                ]  # fmt: skip
            else:
                entry["ranges"] = [_range(rng, ecosystem) for _ in range(rng.choice((1, 1, 2)))]
            if rng.random() < 0.1:
                entry["versions"] = [_text(_version(rng), ecosystem) for _ in range(5)]
            affected.append(entry)
        record: dict[str, Any] = {
            "schema_version": "1.6.0",
            "id": f"GHSA-bench-{i:07d}",
            "modified": "2026-01-01T00:00:00Z",
            "aliases": [f"CVE-2099-{i:07d}"],
            "summary": f"generated advisory {i}",
            "affected": affected,
            "database_specific": {"severity": rng.choice(("LOW", "MODERATE", "HIGH", "CRITICAL"))},
        }
        if rng.random() < 0.01:
            record["withdrawn"] = "2026-02-01T00:00:00Z"
        records.append(record)
    return records


def _timed(repeat: int, work: Callable[[], Any]) -> tuple[float, float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def _anchor(path: Path) -> int:
    count = 0
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            orjson.loads(archive.read(member))
            count += 1
    return count


def _inventory(packages: list[tuple[str, str, str]]) -> AgBOM:
    components: list[dict[str, Any]] = []
    for index, (ecosystem, name, version) in enumerate(packages):
        purl_type = "npm" if ecosystem == "npm" else "pypi"
        components.append(
            {
                "id": f"mcp:{index}",
                "type": "mcp_server",
                "name": name,
                "version": version,
                "endpoint": None,
                "tools": [],
                "purl": f"pkg:{purl_type}/{name}@{version}",
            }
        )
    return AgBOM.from_document({"components": components})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--advisories", type=int, default=100_000)
    parser.add_argument("--packages", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write all.zip here and keep it")
    args = parser.parse_args()
    rng = random.Random(19)
    pool = [("npm" if i % 2 else "PyPI", f"bench-pkg-{i}") for i in range(args.advisories // 10)]
    records = generate(args.advisories, pool, rng)
    with tempfile.TemporaryDirectory() as scratch:
        path = (args.keep or Path(scratch)) / "all.zip"
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for record in records:
                archive.writestr(f"{record['id']}.json", orjson.dumps(record))
        del records
        size = path.stat().st_size
        named = [pool[rng.randrange(len(pool))] for _ in range(args.packages // 2)]
        unnamed = [(e, f"other-pkg-{i}") for i, (e, _) in enumerate(pool[: args.packages // 2])]
        packages = [
            (e, n, _text(_version(rng), e)) for e, n in named + unnamed
        ]  # half are named by some advisory
        inventory = _inventory(packages)

        anchor_best, anchor_median, count = _timed(args.repeat, lambda: _anchor(path))
        load_best, load_median, database = _timed(args.repeat, lambda: load_osv(path))

        def match_all() -> tuple[int, float]:
            fresh = load_osv(path)  # ranges compile on first use: measure that, not a cache
            start = time.perf_counter()
            found = sum(len(fresh.match(c.data["purl"])) for c in inventory if "purl" in c.data)
            return found, time.perf_counter() - start

        match_times = [match_all() for _ in range(args.repeat)]
        matches = match_times[0][0]
        match_best = min(t for _, t in match_times)
        annotate_best, _, annotated = _timed(args.repeat, lambda: annotate(inventory, database))
        affected = sum(1 for c in annotated if "vulnerabilities" in c.data)
    print(
        f"{count:,} advisories ({size / 1e6:.1f} MB zip), {len(packages):,} packages "
        f"({affected:,} affected, {matches:,} matches); best of {args.repeat}"
    )
    ratio = load_best / anchor_best
    print(f"anchor: read + orjson.loads every record  {anchor_best:7.2f} s "
          f"(median {anchor_median:.2f} s)")  # fmt: skip
    print(f"load_osv (parse + index)                  {load_best:7.2f} s "
          f"(median {load_median:.2f} s)  ratio {ratio:.2f}x anchor")  # fmt: skip
    print(f"match {len(packages):,} packages (cold ranges)      {match_best:7.3f} s")
    print(f"annotate a {len(packages):,}-component AgBOM (warm)  {annotate_best:7.3f} s")


if __name__ == "__main__":
    main()
