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


# The compliance controls the sample BOM still fails, each for data the scanned sources do
# not hold (docs/cyclonedx-mapping.md, "What cdxgen still reports"). The set is exact: a
# control that starts passing, or a new failure, must update that page.
OPEN_CONTROLS = {
    "SCVS-1.1": "high",  # versions: tools, capabilities, undeclared skills, unpinned launches
    "SCVS-1.7": "high",  # identifiers: tools, capabilities, skills that declare no package
    "SCVS-1.10": "medium",  # origin: capabilities and skills (no purl, supplier, publisher)
    "SCVS-2.4": "high",  # unsigned: signing the BOM is issue 31
    "SCVS-2.13": "medium",
    "SCVS-2.14": "high",  # licenses: declared only by one skill; packages are not fetched
    "SCVS-2.16": "low",  # copyright: no source declares one
    "SCVS-2.18": "medium",  # hashes: tools, capabilities, packages not downloaded
    "SCVS-3.18": "medium",
    "SCVS-5.12": "medium",
    "CRA-MIN-001": "high",  # the agent's manufacturer: not in any scanned source
    "CRA-MIN-002": "high",  # its vulnerability contact: likewise
    "CRA-MIN-006": "high",
    "CRA-MIN-007": "medium",
}


def _statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for b in report["benchmarks"] for c in b["controls"]}


@pytest.mark.parametrize("version", ["1.6", "1.7"])
def test_cdxgen_strict_validation_accepts_the_sample_bom(sample_boms, tmp_path, version):
    node = _require_validators()
    code, report = _cdx_validate(node, sample_boms[f"samples-{version}.cdx.json"], tmp_path / "r")
    # 3: compliance controls of high severity fail, and only those (2 would be a schema
    # failure; a deep-check failure also exits 3, hence deepValid). Exit 0 needs a signature
    # (SCVS-2.4) at least; see OPEN_CONTROLS.
    assert code == 3, report["summary"]
    assert report["schemaValid"] is True and report["deepValid"] is True
    controls = _statuses(report)
    # The controls the exporter itself answers for (the others need data the sources lack).
    for control in ("SCVS-2.7", "SCVS-2.9", "SCVS-2.12", "SCVS-2.15", "SCVS-3.20"):
        assert controls[control] == "pass", control
    for control in ("CRA-MIN-003", "CRA-MIN-004", "CRA-MIN-005", "CRA-MIN-008"):
        assert controls[control] == "pass", control
    # metadata.component.version: derived from the AgBOM hash for a scan (issue 29)
    assert controls["SCVS-2.11"] == "pass"
    failing = {f["ruleId"]: f["severity"] for f in report["findings"] if f["status"] == "fail"}
    assert failing == OPEN_CONTROLS


def test_nothing_the_inventory_holds_is_missing_from_the_sample_bom(sample_boms):
    # Each inventory component cdxgen counts (application, library, container...) that lacks a
    # version, purl, license or hash lacks it in the AgBOM too: the gaps are the sources'.
    doc = json.loads(sample_boms["samples-1.6.cdx.json"].read_text())
    agbom = json.loads(
        subprocess.run(
            [sys.executable, "-m", "agbom", "scan", str(SAMPLES), "-f", "json"],
            capture_output=True,
            timeout=300,
        ).stdout
    )["agbom"]
    source = {c["id"]: c for c in agbom["components"]}
    counted = [c for c in doc["components"] if c["type"] in ("application", "library", "container")]
    assert len(counted) > 40
    for entry in counted:
        if entry["bom-ref"] not in source:  # a package component: a purl, from a launcher
            assert entry["bom-ref"].startswith("package:") and entry["purl"]
            continue
        data = source[entry["bom-ref"]]
        metadata = data.get("metadata") or {}
        if "version" not in entry:
            assert data.get("version") is None and "version" not in metadata, data
        if "purl" not in entry:
            assert data.get("purl") is None, data
        if "licenses" not in entry:
            assert data.get("license") is None, data
        if "hashes" not in entry:
            assert data.get("digest") is None and not (data.get("definition") or {}).get(
                "digest"
            ), data


def test_cdxgen_on_a_richer_inventory(tmp_path):
    # Everything agbom can name: a Hub model, a skill with a license, a version and pinned
    # packages, an MCP bundle with its archive digest and bundled dependencies.
    node = _require_validators()
    skill = {
        "id": "skill-report",
        "type": "skill",
        "name": "report",
        "description": "d",
        "license": "Apache-2.0",
        "metadata": {"version": "1.2"},
        "definition": {
            "ref": "skills/report",
            "digest": {"algorithm": "sha256", "value": "c" * 64},
        },
        "packages": ["pkg:pypi/requests@2.32.3", "pkg:npm/left-pad@1.3.0"],
    }
    model = {"id": "model-hf", "type": "model", "name": "meta-llama/Llama-3.1-8B"}
    model.update(version=None, provider="huggingface", endpoint=None, context_window=None)
    bundle = {
        "id": "mcp:mcpb/w@1.4.2",
        "type": "mcp_server",
        "name": "weather",
        "version": "1.4.2",
        "endpoint": None,
        "tools": [],
        "bundle": {"server_type": "node"},
        "digest": {"algorithm": "sha256", "value": "a" * 64},
        "packages": ["pkg:npm/left-pad@1.3.0"],
    }
    source = tmp_path / "rich.agbom.json"
    source.write_text(json.dumps({"agent": {"id": "rich"}, "components": [skill, model, bundle]}))
    bom = tmp_path / "rich.cdx.json"
    cmd = [sys.executable, "-m", "agbom", "export", str(source), "-f", "cyclonedx-json"]
    done = subprocess.run([*cmd, "-o", str(bom)], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, report = _cdx_validate(node, bom, tmp_path / "r")
    assert report["schemaValid"] is True and report["deepValid"] is True
    controls = _statuses(report)
    # every counted component has a version, and only the declared packages (not downloaded,
    # so no license or hash) keep the license and hash checks open
    for control in ("SCVS-1.1", "SCVS-2.11", "SCVS-2.12", "SCVS-2.15"):
        assert controls[control] == "pass", control
    located = {
        f["ruleId"]: {loc.get("bomRef") for loc in f.get("locations") or ()}
        for f in report["findings"]
        if f["status"] == "fail"
    }
    packages = {"package:pkg:pypi/requests@2.32.3", "package:pkg:npm/left-pad@1.3.0"}
    assert located["SCVS-2.18"] == packages  # the skill and the bundle are hashed
    assert located["SCVS-2.14"] == packages | {
        "package:pkg:generic/weather@1.4.2?checksum=sha256:" + "a" * 64
    }
    # a skill that declares no purl of its own, nor a supplier or publisher
    assert located["SCVS-1.7"] == located["SCVS-1.10"] == {"skill-report"}
    assert code == 3 and controls["SCVS-2.4"] == "fail"  # unsigned (issue 31)


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
