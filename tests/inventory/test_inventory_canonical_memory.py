"""Canonical bytes an AgBOM keeps per component cost about their length in memory, not the
buffer the serializer grew (issue 27 #5: a held AgBOM cost ~3x its estimate)."""

from __future__ import annotations

import gc
import tracemalloc

from agbom.inventory import AgBOM


def test_cached_canonical_bytes_cost_about_their_length() -> None:
    components = [
        {
            "id": f"t-{i}",
            "type": "tool",
            "name": f"t-{i}",
            "version": "1.0.0",
            "provider": "local",
            "capability": "fs.read",
            "registration_provenance": {"origin": "system"},
        }
        for i in range(300)
    ]
    agbom = AgBOM.from_document({"agent": {"id": "a"}, "components": components})
    held = (
        list(agbom.components.values())
        if hasattr(agbom.components, "values")
        else list(agbom.components)
    )
    gc.collect()
    tracemalloc.start()
    try:
        texts = [component.canonical for component in held]
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    length = sum(len(text) for text in texts)
    assert length > 300 * 100
    # Before: orjson's 4 KiB buffer per component (~1.2 MiB here).
    assert traced < 2 * length + 64 * 1024, (traced, length)
