"""Benchmark: agbom's SPDX 3.0.1 writer against spdx-python-model's objects and serializer.

    python benchmarks/bench_spdx_writer.py [--sizes 2000 10000] [--repeat 3]

What is timed (wall clock, best of --repeat, same process, same AgBOM):
- anchor: ``SpdxJsonExporter().export(agbom)``: build the JSON-LD dict, serialize with orjson;
- library: the same document made with spdx-python-model (the official 3.0.1 bindings):
  every element, hash, external identifier and property entry is created as a bindings
  object with its typed, checked setters (``JSONLDDeserializer`` over agbom's dict, which
  creates exactly the objects a direct build would), then ``JSONLDSerializer`` writes the
  JSON-LD and ``json.dumps`` the bytes.

It also reports what the bindings write for the extension profile: the bare word
``extension``, which the 3.0.1 context expands to ``Core/extension`` (the SHACL violation of
issue 29; agbom writes the full IRI). The figures go in docs/performance.md ("SPDX writer")
and the comment at the top of agbom/export/spdx.py.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_agbom import generate_agbom  # noqa: E402

from agbom.export.spdx import SpdxJsonExporter, build_spdx  # noqa: E402
from agbom.inventory import AgBOM  # noqa: E402


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def library_path(doc: dict[str, Any]) -> tuple[bytes, list[str]]:
    from spdx_python_model import v3_0_1 as spdx3

    objects = spdx3.SHACLObjectSet()
    spdx3.JSONLDDeserializer().deserialize_data(copy.deepcopy(doc), objects)
    written = spdx3.JSONLDSerializer().serialize_data(objects)
    profiles = next(n for n in written["@graph"] if n["type"] == "SpdxDocument")[
        "profileConformance"
    ]
    return json.dumps(written, indent=2).encode(), profiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    stamp = "2026-01-01T00:00:00Z"
    for n in args.sizes:
        agbom = AgBOM.from_document(generate_agbom(n, seed=args.seed))
        exporter = SpdxJsonExporter(timestamp=stamp)
        anchor, body = best(lambda: exporter.export(agbom), args.repeat)  # noqa: B023
        doc = build_spdx(agbom, timestamp=stamp)
        library, (lib_body, profiles) = best(lambda: library_path(doc), args.repeat)  # noqa: B023
        print(f"n={n}: {len(doc['@graph'])} nodes, agbom {len(body):,} bytes")
        print(f"  agbom writer (anchor)        {anchor:.3f} s")
        print(f"  spdx-python-model objects    {library:.3f} s  ({library / anchor:.1f}x)")
        print(f"  library output {len(lib_body):,} bytes; its profileConformance: {profiles}")


if __name__ == "__main__":
    main()
