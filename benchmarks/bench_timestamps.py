"""What reading ``params.timestamp`` by the RFC 3339 grammar costs on the decision path.

Run: ``python -m benchmarks.bench_timestamps``. Prints microseconds per call (best of 7 runs)
of agbom's RFC 3339 reader (issue 30) on a value's first read and on a repeat (the skew
check's, served by the reader's cache), of the anchor measured in the same run,
``datetime.fromisoformat(...).timestamp()`` (what the skew check used before, which refuses
lower-case ``z``), and of the whole ``validate_envelope``, which now reads the timestamp; the
ratios are what docs/performance.md quotes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from agbom.protocol import timestamp_seconds, validate_envelope, warm_up
from agbom.protocol.timestamps import _read
from benchmarks.protocol_bench import envelope

VALUES = ("2026-12-02T08:19:00Z", "2026-12-02T08:19:00.699123+01:00", "2026-12-02T08:19:00.699Z")


def per_call_us(fn: Callable[[], object], n: int = 50_000) -> float:
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def main() -> None:
    warm_up()
    uncached = _read.__wrapped__  # the grammar's reading, without the per-value cache
    for value in VALUES:
        ours = per_call_us(lambda v=value: uncached(v) / 1e6)
        again = per_call_us(lambda v=value: timestamp_seconds(v))
        anchor = per_call_us(lambda v=value: datetime.fromisoformat(v).timestamp())
        print(
            f"{value:34} first read {ours:5.2f} us, again {again:4.2f} us; "
            f"fromisoformat {anchor:4.2f} us; first/anchor {ours / anchor:4.2f}x"
        )
    request = envelope()
    whole = per_call_us(lambda: validate_envelope(request), 20_000)
    read = per_call_us(lambda: uncached(request["params"]["timestamp"]))
    print(
        f"validate_envelope {whole:6.2f} us, of which the timestamp read {read:5.2f} us "
        f"({read / whole:.0%})"
    )


if __name__ == "__main__":
    main()
