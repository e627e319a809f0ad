"""``agbom/changed`` cost of a one-component change at 10k and 100k components (in process).

Run: ``python benchmarks/bench_changed.py [--sizes 10000 100000] [--changes 15] [--signals]``.

``--default-rules`` evaluates the default rule pack on each change (without it, no rules).
``--signals`` measures the ``agbom serve --osv PATH --lock FILE`` configuration: one MCP server
per 100 tools, each server listing its tools, every tenth tool naming an npm package that a
one-record OSV export (written for the run) marks as affected, and a lock file of the first
AgBOM. The changed tool's capability moves back and forth, so its server's tool set is judged
against the lock and the advisories on each change (a capability is not part of a tool set's
pin, so the measured changes are allowed; one more change, to the tool's description, must then
be refused as drift).

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


SERVER_EVERY = 100
"""With ``--signals``: one MCP server per this many tools."""
ADVISORY = {
    "schema_version": "1.6.0",
    "id": "GHSA-bnch-agb0-0001",
    "modified": "2026-01-01T00:00:00Z",
    "summary": "Benchmark advisory: every version of the package is affected",
    "affected": [
        {
            "package": {"ecosystem": "npm", "name": "bench-affected"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}],
        }
    ],
    "database_specific": {"severity": "HIGH"},
}


def signal_components(n: int) -> list[dict[str, Any]]:
    """``n`` tools, every tenth naming an affected package, and their MCP servers."""
    tools = [tool(i) for i in range(n)]
    for i in range(0, n, 10):
        tools[i]["purl"] = "pkg:npm/bench-affected@1.0.0"
    servers = [
        {
            "id": f"server-{s}",
            "type": "mcp_server",
            "name": f"server-{s}",
            "version": "1.0.0",
            "transport": "stdio",
            "endpoint": f"npx bench-server-{s}",
            "tools": [f"tool-{i}" for i in range(s * SERVER_EVERY, min(n, (s + 1) * SERVER_EVERY))],
        }
        for s in range((n + SERVER_EVERY - 1) // SERVER_EVERY)
    ]
    return tools + servers


def signal_files(folder: Path, document: dict[str, Any]) -> tuple[Path, Path]:
    """An OSV export of one advisory, and the lock file of ``document``."""
    from agbom.inventory import AgBOM
    from agbom.scan.lock import build_lock

    osv = folder / "osv"
    osv.mkdir()
    (osv / "GHSA-bnch-agb0-0001.json").write_bytes(orjson.dumps(ADVISORY))
    lock = folder / "agbom.lock.json"
    lock.write_bytes(orjson.dumps(build_lock(AgBOM.from_document(document))))
    return osv, lock


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


def measure(
    n: int, changes: int, *, signals: bool = False, default_rules: bool = False
) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp())
    db = folder / "s.db"
    components = signal_components(n) if signals else [tool(i) for i in range(n)]
    document = {"agent": {"id": "bench"}, "components": components}
    if signals:
        from agbom.guardian.config import GuardianConfig

        osv, lock = signal_files(folder, document)
        config = GuardianConfig(osv_path=str(osv), lock_path=str(lock))
        g = build_guardian(db, config=config, with_default_rules=True)
    else:
        g = build_guardian(db, with_default_rules=default_rules)
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
    answer = g.handle(envelope("agbom/snapshot", {"agbom": document}, sid))
    assert answer["result"]["decision"] == "allow", answer
    # Sorted-key orjson is the RFC 8785 form of this all-ASCII, integer-free document.
    whole = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    hash_ms = statistics.median(timed_sha256(whole) for _ in range(7))
    document_bytes = len(whole)
    del document, whole
    # One change first: warms the caches a long-running Guardian has warm.
    target = n // 2 + 1  # not a tool that names the affected package
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
    if signals:
        # The signals are live: a new description drifts the server's tool set from the lock.
        drifted = {**tool(target), "description": "now does something else"}
        answer = g.handle(envelope("agbom/changed", {"changed": [drifted]}, sid))
        assert answer["result"]["decision"] != "allow", answer
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
    parser.add_argument(
        "--signals", action="store_true", help="as agbom serve --osv PATH --lock FILE"
    )
    parser.add_argument(
        "--default-rules",
        action="store_true",
        help="with the default rule pack (implied by --signals)",
    )
    args = parser.parse_args()
    if args.default_rules and not args.signals:
        print("configuration: the default rule pack")
    if args.signals:
        print("configuration: agbom serve --osv PATH --lock FILE (default rules)")
    results = {}
    for n in args.sizes:
        r = measure(n, args.changes, signals=args.signals, default_rules=args.default_rules)
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
