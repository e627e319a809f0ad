"""The BOMs of `agbom scan samples/` pass two independent npm validators, run as real
subprocesses: @cyclonedx/cyclonedx-library (strict JSON, and XML) and cdxgen's
`cdx-validate --strict`. `.ci/run` installs both into .ci/node/; under CI=true a missing
validator fails, elsewhere the tests skip and say why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from export_samples import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"
LIBRARY_SCRIPT = Path(__file__).with_name("cdx_library_validate.mjs")
CDX_VALIDATE = NODE_MODULES / ".bin" / "cdx-validate"


def _require_validators() -> str:
    node = shutil.which("node")
    missing = None
    if node is None:
        missing = "node is not installed"
    elif not (NODE_MODULES / "@cyclonedx" / "cyclonedx-library").is_dir() or not (
        CDX_VALIDATE.exists()
    ):
        missing = f"the npm validators are not installed in {NODE_MODULES} (run .ci/run)"
    if missing is not None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but {missing}")
        pytest.skip(missing)
    assert node is not None
    return node


@pytest.fixture(scope="module")
def sample_boms(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("boms")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}
    boms: dict[str, Path] = {}
    for fmt, ext in (("cyclonedx-json", "json"), ("cyclonedx-xml", "xml")):
        for version in ("1.6", "1.7"):
            path = out / f"samples-{version}.cdx.{ext}"
            cmd = [sys.executable, "-m", "agbom", "scan", str(SAMPLES), "-f", fmt]
            cmd += ["--spec-version", version, "-o", str(path)]
            done = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
            assert done.returncode in (0, 1), done.stderr  # 1: the samples have findings
            boms[path.name] = path
    return boms


def _library(node: str, *files: Path) -> tuple[int, list[dict]]:
    done = subprocess.run(
        [node, str(LIBRARY_SCRIPT), *map(str, files)],
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def _cdx_validate(node: str, bom: Path, report: Path) -> tuple[int, dict]:
    done = subprocess.run(
        [node, str(CDX_VALIDATE), "-i", str(bom), "--strict", "--report", "json"]
        + ["-o", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, json.loads(report.read_text())


def test_cyclonedx_library_accepts_every_sample_bom(sample_boms):
    node = _require_validators()
    code, results = _library(node, *sample_boms.values())
    assert code == 0, results
    assert [r["file"] for r in results] == [str(p) for p in sample_boms.values()]
    assert all(r.get("valid") is True for r in results), results  # XML included


def test_cyclonedx_library_rejects_a_broken_bom(sample_boms, tmp_path):
    node = _require_validators()
    doc = json.loads(sample_boms["samples-1.6.cdx.json"].read_text())
    doc["services"][0]["agbom_extra"] = True  # unknown property: strict validation refuses
    broken = tmp_path / "broken.cdx.json"
    broken.write_text(json.dumps(doc))
    code, (result,) = _library(node, broken)
    assert code == 1 and result["valid"] is False


@pytest.mark.parametrize("version", ["1.6", "1.7"])
def test_cdxgen_strict_validation_accepts_the_sample_bom(sample_boms, tmp_path, version):
    node = _require_validators()
    code, report = _cdx_validate(node, sample_boms[f"samples-{version}.cdx.json"], tmp_path / "r")
    # 0, or 3 when only compliance controls fail (the samples lack licenses, signatures...);
    # 2 would be a schema or reference failure.
    assert code in (0, 3), report["summary"]
    assert report["schemaValid"] is True and report["deepValid"] is True
    controls = {
        c["id"]: c["status"] for benchmark in report["benchmarks"] for c in benchmark["controls"]
    }
    # The controls the exporter itself answers for (the others need data the sources lack).
    for control in ("SCVS-2.7", "SCVS-2.9", "SCVS-2.12", "SCVS-2.15", "SCVS-3.20"):
        assert controls[control] == "pass", control
    for control in ("CRA-MIN-003", "CRA-MIN-004", "CRA-MIN-005", "CRA-MIN-008"):
        assert controls[control] == "pass", control


def test_cdxgen_strict_validation_needs_depends_on_everywhere(sample_boms, tmp_path):
    # The failure agbom had: an entry without dependsOn makes the strict check exit 2.
    node = _require_validators()
    doc = json.loads(sample_boms["samples-1.6.cdx.json"].read_text())
    leaf = next(d for d in doc["dependencies"] if not d["dependsOn"])
    del leaf["dependsOn"]
    broken = tmp_path / "no-depends-on.cdx.json"
    broken.write_text(json.dumps(doc))
    code, report = _cdx_validate(node, broken, tmp_path / "r")
    assert code == 2 and report["schemaValid"] is False
