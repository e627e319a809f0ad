"""Canonical bytes an AgBOM keeps per component cost about their length in memory, not the
buffer the serializer grew (issue 27 #5: a held AgBOM cost ~3x its estimate)."""

from __future__ import annotations

import gc
import tracemalloc

from agbom._canonical import jcs_bytes


def test_canonical_bytes_cost_about_their_length() -> None:
    values = [
        {"id": f"t-{i}", "type": "tool", "name": f"t-{i}", "v": "x" * 100} for i in range(300)
    ]
    gc.collect()
    tracemalloc.start()
    try:
        texts = [jcs_bytes(value) for value in values]
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    length = sum(len(text) for text in texts)
    assert length > 300 * 100
    # Before: orjson's 4 KiB buffer per value (~1.2 MiB here).
    assert traced < 2 * length + 64 * 1024, (traced, length)
