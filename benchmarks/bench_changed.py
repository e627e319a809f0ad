"""``agbom/changed`` cost of a one-component change at 10k and 100k components (in process).

Run: ``python benchmarks/bench_changed.py [--sizes 10000 100000] [--changes 15]``.

For each size: the median cost of one ``agbom/changed`` that changes one tool, the bytes the
store grows by per change (the bytes its tables and indexes use, from SQLite's ``dbstat``;
and the files, database plus WAL, which grow by whole pages), and the anchors of the same run: one
``steps/toolCallRequest`` in the same session, and the physical floor of a change (one SHA-256
over the changed component's bytes plus one committed indexed INSERT in WAL mode), and one
SHA-256 over the whole canonical document, which is what the AgBOM hash is defined over (the
change resumes from the hash state before the changed component, so it hashes the document
from there on: half of it for the middle component the benchmark changes). The last line is
the ratio of the 100k cost to the 10k cost (target: at most 3x).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_guardian  # noqa: E402

from agbom.guardian import build_guardian  # noqa: E402


def envelope(method: str, payload: Any, sid: str) -> dict[str, Any]:
    return bench_guardian.envelope(method, payload, session_id=sid)


def tool(index: int, capability: str = "fs.read") -> dict[str, Any]:
    return {
        "id": f"tool-{index}",
        "type": "tool",
        "name": f"tool-{index}",
        "version": "1.0.0",
        "provider": "local",
        "capability": capability,
        "registration_provenance": {"origin": "system"},
    }


def store_bytes(db: Path) -> int:
    return sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if p.exists())


def used_bytes(db: Path) -> int:
    """Bytes the store's tables and indexes hold (pages less their free space, WAL included)."""
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT SUM(pgsize - unused) FROM dbstat").fetchone()[0])
    finally:
        conn.close()


def floor_us(component: dict[str, Any], rounds: int) -> float:
    """One SHA-256 over the component's bytes and one committed indexed INSERT (WAL)."""
    conn = sqlite3.connect(Path(tempfile.mkdtemp()) / "floor.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID")
    data = orjson.dumps(component)
    times = []
    for i in range(rounds):
        started = time.perf_counter()
        key = hashlib.sha256(data + str(i).encode()).hexdigest()
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t VALUES (?, ?)", (key, data))
        conn.execute("COMMIT")
        times.append((time.perf_counter() - started) * 1e6)
    conn.close()
    return statistics.median(times)


def timed_sha256(data: bytes) -> float:
    started = time.perf_counter()
    hashlib.sha256(data).digest()
    return (time.perf_counter() - started) * 1e3


def measure(n: int, changes: int) -> dict[str, float]:
    db = Path(tempfile.mkdtemp()) / "s.db"
    g = build_guardian(db)
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": [
            "steps/sessionStart",
            "steps/toolCallRequest",
            "agbom/snapshot",
            "agbom/changed",
        ],
        "transports_supported": ["http"],
        "provenance_producer": "none",
    }
    g.handle(envelope("handshake/hello", hello, sid))
    g.handle(envelope("steps/sessionStart", {}, sid))
    document = {"agent": {"id": "bench"}, "components": [tool(i) for i in range(n)]}
    answer = g.handle(envelope("agbom/snapshot", {"agbom": document}, sid))
    assert answer["result"]["decision"] == "allow", answer
    # Sorted-key orjson is the RFC 8785 form of this all-ASCII, integer-free document.
    whole = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    hash_ms = statistics.median(timed_sha256(whole) for _ in range(7))
    document_bytes = len(whole)
    del document, whole
    # One change first: warms the caches a long-running Guardian has warm.
    target = n // 2
    g.handle(envelope("agbom/changed", {"changed": [tool(target, "fs.write")]}, sid))
    size_before, used_before = store_bytes(db), used_bytes(db)
    times = []
    for k in range(changes):
        payload = {"changed": [tool(target, "fs.read" if k % 2 else "fs.write")]}
        request = envelope("agbom/changed", payload, sid)
        started = time.perf_counter()
        answer = g.handle(request)
        times.append((time.perf_counter() - started) * 1e3)
        assert "result" in answer, answer
    grown = (store_bytes(db) - size_before) / changes
    used = (used_bytes(db) - used_before) / changes
    call = {"tool": {"name": f"tool-{target}", "id": f"tool-{target}"}, "arguments": {}}
    calls = []
    for _ in range(200):
        request = envelope("steps/toolCallRequest", call, sid)
        started = time.perf_counter()
        answer = g.handle(request)
        calls.append((time.perf_counter() - started) * 1e3)
        assert "result" in answer, answer
    g.store.close()
    return {
        "changed_ms": statistics.median(times),
        "bytes_per_change": grown,
        "used_per_change": used,
        "tool_call_ms": statistics.median(calls),
        "floor_ms": floor_us(tool(target), 200) / 1e3,
        "hash_ms": hash_ms,
        "document_bytes": document_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--changes", type=int, default=15)
    args = parser.parse_args()
    results = {}
    for n in args.sizes:
        r = measure(n, args.changes)
        results[n] = r
        print(
            f"{n:>7} components: agbom/changed median {r['changed_ms']:8.2f} ms, "
            f"store +{r['used_per_change']:,.0f} bytes/change used "
            f"(files +{r['bytes_per_change']:,.0f}); anchors: toolCallRequest "
            f"{r['tool_call_ms']:.3f} ms ({r['changed_ms'] / r['tool_call_ms']:.1f}x), "
            f"floor {r['floor_ms']:.3f} ms ({r['changed_ms'] / r['floor_ms']:.1f}x), "
            f"SHA-256 of the whole document ({r['document_bytes'] / 1e6:.1f} MB) "
            f"{r['hash_ms']:.2f} ms ({r['changed_ms'] / r['hash_ms']:.1f}x)",
            flush=True,
        )
    if len(args.sizes) >= 2:
        small, large = args.sizes[0], args.sizes[-1]
        ratio = results[large]["changed_ms"] / results[small]["changed_ms"]
        print(f"ratio {large} / {small}: {ratio:.2f}x (target <= 3x)")
        hashes = results[large]["hash_ms"] / results[small]["hash_ms"]
        print(f"ratio {large} / {small} of the whole-document SHA-256: {hashes:.2f}x")


if __name__ == "__main__":
    main()
