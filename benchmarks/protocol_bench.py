"""Per-request cost of the protocol layer on the decision path.

Run: ``python benchmarks/protocol_bench.py``. Prints microseconds per operation (best of 5
runs) for a realistic signed toolCallRequest envelope, and the time to verify a long chain.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import rfc8785

from agbom.protocol import (
    KeyRing,
    canonical_bytes,
    link_entry,
    lookup,
    request_hash,
    validate_envelope,
    validate_payload,
    verify_chain,
    warm_up,
)


def envelope() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "steps/toolCallRequest",
        "id": "8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10",
        "params": {
            "acs_version": "0.1.0",
            "request_id": "8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10",
            "timestamp": "2026-09-19T10:00:00Z",
            "nonce": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
            "metadata": {
                "agent_id": "agent",
                "session_id": "5c3f1b8e-9a0d-4c2e-8f4b-2d6a7e9c1b30",
                "turn_id": "t-12",
                "environment": "production",
            },
            "payload": {
                "tool": {"name": "Bash", "version": "1.0"},
                "arguments": {
                    "command": {
                        "value": "grep -r TODO src/ | head -n 20",
                        "provenance": {"provenance_id": "p7", "origin": "agent_generated"},
                    }
                },
                "raw_command": "grep -r TODO src/ | head -n 20",
                "intent": {"goal": "list open todos"},
            },
        },
    }


def per_call_us(fn: Callable[[], object], n: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def main() -> None:
    warm_up()
    ring = KeyRing(b"benchmark-key-material-32-bytes!", "k1")
    env = envelope()
    session = env["params"]["metadata"]["session_id"]
    signed = ring.sign(env, session)
    spec = lookup(env["method"])
    assert spec is not None
    params = signed["params"]

    def full() -> None:
        validate_envelope(signed)
        ring.verify(signed, session)
        validate_payload(spec, params["payload"])
        request_hash(params)

    rows = [
        ("canonical_bytes (orjson fast path)", lambda: canonical_bytes(signed), 20000),
        ("rfc8785.dumps (reference)", lambda: rfc8785.dumps(signed), 5000),
        ("validate_envelope (depth + schema)", lambda: validate_envelope(signed), 20000),
        (
            "validate_payload (toolCallRequest)",
            lambda: validate_payload(spec, params["payload"]),
            20000,
        ),
        ("lookup", lambda: lookup("protocols/MCP/tools/call"), 100000),
        ("KeyRing.verify (cached session key)", lambda: ring.verify(signed, session), 20000),
        ("KeyRing.sign", lambda: ring.sign(env, session), 20000),
        ("request_hash", lambda: request_hash(params), 20000),
        ("all of the above per request", full, 10000),
    ]
    for name, fn, n in rows:
        print(f"{name:40s} {per_call_us(fn, n):8.2f} us")

    chain: list[dict[str, Any]] = []
    previous = None
    for i in range(10000):
        entry = link_entry(
            {
                "entry_id": str(i),
                "step_id": f"s{i}",
                "step_type": "steps/toolCallRequest",
                "request_hash": request_hash(params),
                "timestamp": "2026-09-19T10:00:00Z",
            },
            previous,
        )
        chain.append(entry)
        previous = entry["entry_hash"]
    start = time.perf_counter()
    assert verify_chain(chain, expected_head=previous) is None
    print(f"{'verify_chain, 10,000 entries':40s} {(time.perf_counter() - start) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
