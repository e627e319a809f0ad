"""Benchmark: CycloneDX export + validation of generated AgBOMs, agbom vs cyclonedx-python-lib.

    python benchmarks/bench_export.py            # 2k and 10k, library comparison at 2k
    python benchmarks/bench_export.py --sizes 2000 --library-sizes 2000 --repeat 5

What is timed (wall clock, best of --repeat unless noted):
- load: AgBOM.from_document (schema checks of every component, references, RFC 8785 hash);
- compile: first use of the compiled CycloneDX schema validator in this process (once);
- export+validate: CycloneDxJsonExporter.export (dict build, fastjsonschema validation, orjson);
- cold total: compile + export+validate, i.e. what one `agbom export` pays after loading;
- library: the same AgBOM through cyclonedx-python-lib's model (Component/Service objects,
  register_dependency per edge), make_outputter(...).output_as_string() and its own
  JsonStrictValidator (run once: it is the slow part).

    python benchmarks/bench_export.py --whole-process 2000 [--rounds 2]

times whole processes instead, as a user runs them, interleaved round by round: the anchor is
a fresh Python process that loads the same AgBOM file and takes the library path above
(export and validation); against it, ``agbom export FILE -f cyclonedx-json -o OUT`` (start-up,
imports, load, export, validation, write). Target (issue 16): agbom >= 10x faster.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_agbom import generate_agbom  # noqa: E402

from agbom.export import CycloneDxJsonExporter, CycloneDxXmlExporter  # noqa: E402
from agbom.export._cdx_schema import compiled_validator  # noqa: E402
from agbom.export.cyclonedx import SERVICE_TYPES, build_cyclonedx  # noqa: E402
from agbom.inventory import AgBOM  # noqa: E402


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def library_path(agbom: AgBOM, validate: bool = True) -> dict[str, float]:
    """Build the same content with cyclonedx-python-lib's model, serialize, validate."""
    from cyclonedx.model import HashAlgorithm, HashType, Property, XsUri
    from cyclonedx.model.bom import Bom
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.service import Service
    from cyclonedx.output import make_outputter
    from cyclonedx.schema import OutputFormat, SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    doc = build_cyclonedx(agbom, "1.6")  # reuse the mapping; only the machinery differs
    kinds = {
        "machine-learning-model": ComponentType.MACHINE_LEARNING_MODEL,
        "application": ComponentType.APPLICATION,
    }
    out: dict[str, float] = {}
    start = time.perf_counter()
    objects: dict[str, Any] = {}
    for entry in doc.get("components", []):
        objects[entry["bom-ref"]] = Component(
            type=kinds[entry["type"]],
            name=entry["name"],
            version=entry.get("version"),
            bom_ref=entry["bom-ref"],
            hashes=[
                HashType(alg=HashAlgorithm(h["alg"]), content=h["content"])
                for h in entry.get("hashes", [])
            ],
            properties=[Property(name=p["name"], value=p["value"]) for p in entry["properties"]],
        )
    for entry in doc.get("services", []):
        objects[entry["bom-ref"]] = Service(
            name=entry["name"],
            version=entry.get("version"),
            bom_ref=entry["bom-ref"],
            endpoints=[XsUri(u) for u in entry.get("endpoints", [])],
            properties=[Property(name=p["name"], value=p["value"]) for p in entry["properties"]],
        )
    meta = doc["metadata"]["component"]
    root = Component(type=ComponentType.APPLICATION, name=meta["name"], bom_ref=meta["bom-ref"])
    objects[meta["bom-ref"]] = root
    bom = Bom(
        components=[o for o in objects.values() if isinstance(o, Component) and o is not root],
        services=[o for o in objects.values() if isinstance(o, Service)],
    )
    bom.metadata.component = root
    out["model build"] = time.perf_counter() - start
    start = time.perf_counter()
    for dep in doc["dependencies"]:
        targets = [objects[t] for t in dep.get("dependsOn", [])]
        if targets:
            bom.register_dependency(objects[dep["ref"]], targets)
    out["register_dependency"] = time.perf_counter() - start
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = make_outputter(bom, OutputFormat.JSON, SchemaVersion.V1_6).output_as_string()
    out["serialize"] = time.perf_counter() - start
    out["export total"] = out["model build"] + out["register_dependency"] + out["serialize"]
    if validate:
        validator = JsonStrictValidator(SchemaVersion.V1_6)
        start = time.perf_counter()
        error = validator.validate_str(text)
        out["validate"] = time.perf_counter() - start
        assert error is None, error
        out["export+validate"] = out["export total"] + out["validate"]
    return out


def library_child(path: str) -> int:
    """The library path as one whole process: load the AgBOM file, model, serialize, validate."""
    with open(path, "rb") as handle:
        agbom = AgBOM.from_document(json.load(handle))
    library_path(agbom)
    return 0


def _timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.decode()[:300]}")
    return elapsed


def whole_process(n: int, seed: int, rounds: int) -> int:
    """agbom export vs the library path, each as whole processes, interleaved."""
    script = Path(sys.executable).parent / "agbom"
    agbom_cmd = [str(script)] if script.exists() else [sys.executable, "-m", "agbom"]
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "agbom.json"
        source.write_text(json.dumps(generate_agbom(n, seed)), encoding="utf-8")
        ours = [*agbom_cmd, "export", str(source), "-f", "cyclonedx-json"]
        ours += ["-o", str(Path(tmp) / "out.cdx.json")]
        library = [sys.executable, str(Path(__file__).resolve()), "--library-child", str(source)]
        _timed(ours)  # warm the OS caches
        agbom_s: list[float] = []
        library_s: list[float] = []
        for _ in range(rounds):
            library_s.append(_timed(library))
            agbom_s.extend(_timed(ours) for _ in range(3))
    lib, own = statistics.median(library_s), statistics.median(agbom_s)
    print(f"whole processes, n={n}, {rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    print(f"  library path (anchor): median {lib:7.3f} s  ({len(library_s)} runs)")
    print(f"  agbom export:          median {own:7.3f} s  ({len(agbom_s)} runs)")
    ratio = lib / own
    verdict = "OK" if ratio >= 10 else "UNDER TARGET"
    print(f"  agbom is {ratio:.1f}x faster (target >= 10x): {verdict}")
    return 0 if ratio >= 10 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="CycloneDX export benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--library-sizes", type=int, nargs="*", default=[2000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--whole-process", type=int, metavar="N", help="see the docstring")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--library-child", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.library_child:
        return library_child(args.library_child)
    if args.whole_process:
        return whole_process(args.whole_process, args.seed, args.rounds)

    start = time.perf_counter()
    compiled_validator("1.6")
    compile_s = time.perf_counter() - start
    print(f"compile CycloneDX 1.6 validator (once per process): {compile_s:.3f} s")

    rows = []
    for n in args.sizes:
        document = generate_agbom(n, args.seed)
        load_s, agbom = best(lambda d=document: AgBOM.from_document(d), 1)
        services = sum(1 for c in agbom if c.type in SERVICE_TYPES)
        edges = sum(1 for c in agbom for _ in c.references())
        exporter = CycloneDxJsonExporter("1.6")
        export_s, data = best(lambda a=agbom, e=exporter: e.export(a), args.repeat)
        build_s, doc = best(lambda a=agbom: build_cyclonedx(a, "1.6"), args.repeat)
        validate_s, _ = best(lambda d=doc: compiled_validator("1.6")(d), args.repeat)
        xml_s, xml = best(lambda a=agbom: CycloneDxXmlExporter("1.6").export(a), args.repeat)
        print(
            f"n={n}: {n - services} components, {services} services, {edges} reference edges, "
            f"JSON {len(data):,} bytes, XML {len(xml):,} bytes"
        )
        print(f"  load AgBOM            {load_s:7.3f} s")
        print(f"  build dict            {build_s:7.3f} s")
        print(f"  validate (compiled)   {validate_s:7.3f} s")
        print(f"  export+validate JSON  {export_s:7.3f} s")
        print(f"  cold total JSON       {compile_s + export_s:7.3f} s  (compile + export+validate)")
        print(f"  export+validate XML   {xml_s:7.3f} s")
        row = {"n": n, "export": export_s, "cold": compile_s + export_s, "xml": xml_s}
        if n in args.library_sizes:
            lib = library_path(agbom)
            for key, value in lib.items():
                print(f"  library {key:<20} {value:7.3f} s")
            row["library_export"] = lib["export total"]
            row["library_total"] = lib["export+validate"]
            print(
                f"  speed-up: export {lib['export total'] / export_s:.1f}x, "
                f"export+validate {lib['export+validate'] / export_s:.1f}x "
                f"(cold: {lib['export+validate'] / (compile_s + export_s):.1f}x)"
            )
        rows.append(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
