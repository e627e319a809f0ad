"""How much does an approval lookup cost when the store is large?

Fills a fresh SQLite store with 100,000 registered (skill_id, digest) pairs (a third of them
approved, some scoped, some expiring), then times ``SqliteStore.verdict`` for random known
pairs, unknown pairs and scoped pairs, one call at a time, as the Guardian makes them.

Run: ``python benchmarks/bench_store_lookup.py [--pairs N] [--lookups N] [--db PATH]``
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agbom.store import Digest, SqliteStore
from agbom.store.interface import format_timestamp


def digest_for(i: int) -> Digest:
    return Digest("sha256", hashlib.sha256(f"skill-{i}".encode()).hexdigest())


def fill(path: Path, pairs: int) -> float:
    """Bulk-load ``pairs`` registrations; returns seconds. Uses the real schema via open()."""
    SqliteStore.open(path).close()
    now = datetime.now(UTC)
    rows = []
    for i in range(pairs):
        d = digest_for(i)
        status = ("approved", "pending", "denied")[i % 3]
        expires = format_timestamp(now + timedelta(days=30)) if i % 7 == 0 else None
        scope = '["build-*"]' if i % 11 == 0 else "[]"
        ts = format_timestamp(now)
        rows.append(
            (
                f"skill-{i % 20000}",
                d.algorithm,
                d.value,
                f"file://skills/{i}",
                '["fs.read"]',
                '{"tools": ["t"]}',
                None,
                status,
                "bench" if status != "pending" else None,
                ts if status != "pending" else None,
                None,
                expires,
                scope,
                "[]",
                ts,
                ts,
                "agent",
                None,
            )  # fmt: skip
        )
    start = time.perf_counter()
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO skills (skill_id, digest_alg, digest_value, ref, declared_capabilities, "
            "composition, provenance, status, decided_by, decided_at, reason, expires_at, "
            "scope_agents, scope_tenants, first_seen, last_seen, registered_by_agent, "
            "registered_by_tenant) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    conn.close()
    return time.perf_counter() - start


def time_calls(fn, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


def report(name: str, samples: list[float]) -> None:
    samples.sort()
    p99 = samples[int(len(samples) * 0.99) - 1]
    print(
        f"{name:<28} n={len(samples):>6}  median {statistics.median(samples):7.1f} us  "
        f"p99 {p99:7.1f} us  max {samples[-1]:8.1f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--db", type=Path, default=None, help="store file (default: a temp dir)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.db"
        seconds = fill(path, args.pairs)
        print(f"loaded {args.pairs} registrations in {seconds:.2f} s ({path.stat().st_size} bytes)")
        rng = random.Random(7)
        with SqliteStore.open(path) as store:
            # Warm the page cache the way a running server would be.
            for i in range(1000):
                store.verdict(f"skill-{i % 20000}", digest_for(i), agent_id="a", tenant_id=None)

            known = [rng.randrange(args.pairs) for _ in range(args.lookups)]
            it = iter(known)

            def lookup_known() -> None:
                i = next(it)
                store.verdict(f"skill-{i % 20000}", digest_for(i), agent_id="ci-1", tenant_id=None)

            digests = {i: digest_for(i) for i in set(known)}
            it2 = iter(known)

            def lookup_known_predigested() -> None:
                i = next(it2)
                store.verdict(f"skill-{i % 20000}", digests[i], agent_id="ci-1", tenant_id=None)

            unknown = Digest("sha256", "0" * 64)

            def lookup_unknown() -> None:
                store.verdict("skill-1", unknown, agent_id="ci-1", tenant_id=None)

            scoped = list(range(0, args.pairs, 33))  # i % 3 == 0 and i % 11 == 0
            it3 = iter(scoped * (args.lookups // max(len(scoped), 1) + 1))

            def lookup_scoped() -> None:
                i = next(it3)
                store.verdict(
                    f"skill-{i % 20000}", digests.get(i) or digest_for(i), agent_id="build-7",
                    tenant_id=None,
                )  # fmt: skip

            report("verdict (known pair)", time_calls(lookup_known, args.lookups))
            report("verdict (digest prebuilt)", time_calls(lookup_known_predigested, args.lookups))
            report("verdict (unknown pair)", time_calls(lookup_unknown, args.lookups))
            report("verdict (scoped approval)", time_calls(lookup_scoped, args.lookups))
            report(
                "approved_digests(skill)",
                time_calls(lambda: store.approved_digests("skill-42"), args.lookups // 4),
            )
            # Writes through the public API, each its own BEGIN IMMEDIATE transaction.
            counter = iter(range(args.pairs, args.pairs + 2000))

            def register_new() -> None:
                i = next(counter)
                store.record_registration(
                    skill_id=f"new-{i}", digest=digest_for(i), ref=None,
                    declared_capabilities=["fs.read"], composition={}, provenance=None,
                    agent_id="a", tenant_id=None,
                )  # fmt: skip

            report("record_registration (new)", time_calls(register_new, 2000))
            counter = iter(range(args.pairs, args.pairs + 2000))

            def approve() -> None:
                i = next(counter)
                store.set_status(f"new-{i}", digest_for(i), "approved", actor="bench")

            report("set_status (approve)", time_calls(approve, 2000))
            plan = store.db.execute(
                "EXPLAIN QUERY PLAN SELECT status FROM skills "
                "WHERE skill_id = ? AND digest_alg = ? AND digest_value = ?",
                ("a", "b", "c"),
            ).fetchall()
            print("query plan:", "; ".join(str(row[-1]) for row in plan))


if __name__ == "__main__":
    main()
