"""VEX through the CLI: statements written by other libraries (vexipy for OpenVEX,
cyclonedx-python-lib for CycloneDX VEX) suppress the findings they justify, which stay listed
with their author; agbom's OpenVEX and CycloneDX VEX exports pass independent validators
(vexipy's models, the CycloneDX JSON schema in cyclonedx-python-lib and in the npm
@cyclonedx/cyclonedx-library) and read back as the same statements."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.contact import OrganizationalContact
from cyclonedx.model.vulnerability import (
    BomTarget,
    ImpactAnalysisJustification,
    ImpactAnalysisState,
    Vulnerability,
    VulnerabilityAnalysis,
)
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL
from vexipy import Document, Statement
from vexipy import Vulnerability as VexVulnerability
from vexipy.component import Product
from vexipy.status import StatusJustification, StatusLabel

from tests.cli_process import run_agbom

OSV = Path(__file__).parent / "fixtures" / "osv"
FS_ADVISORY = "GHSA-7q2m-agb1-fs01"
FS_PURL = "pkg:npm/%40acme/mcp-filesystem@1.4.1"
FETCH_PURL = "pkg:pypi/mcp-server-fetch@0.6.1"
AUTHOR = "Acme PSIRT <psirt@acme.example>"
REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / ".ci" / "node" / "node_modules"
LIBRARY_SCRIPT = REPO / "tests" / "export" / "cdx_library_validate.mjs"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@acme/mcp-filesystem@1.4.1", "/data"]},
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch==0.6.1"]},
    }}))  # fmt: skip
    return tmp_path


def _openvex(path: Path, status: StatusLabel, **fields: Any) -> Path:
    """An OpenVEX document written by vexipy (not by agbom)."""
    statement = Statement(
        vulnerability=VexVulnerability(name="CVE-2099-10001"),  # the advisory's alias
        products=[Product(id=FS_PURL)],
        status=status,
        **fields,
    )
    document = Document(id="https://acme.example/vex/1", author=AUTHOR, version=1,
                        statements=[statement])  # fmt: skip
    path.write_text(document.to_json(by_alias=True, exclude_none=True))
    return path


def _scan(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_agbom("scan", ".", "--osv", str(OSV), *args, cwd=project)


def _vuln_findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["rule_id"]: f for f in report["findings"] if f["rule_id"].startswith("AGB-VULN")}


def test_an_openvex_not_affected_statement_suppresses_and_names_its_author(
    project: Path,
) -> None:
    vex = _openvex(
        project / "acme.openvex.json",
        StatusLabel.NOT_AFFECTED,
        justification=StatusJustification.VULNERABLE_CODE_NOT_IN_EXECUTE_PATH,
    )
    before = _scan(project, "-f", "json", "--fail-on", "critical")
    assert before.returncode == 1
    proc = _scan(project, "--vex", str(vex), "-f", "json", "--fail-on", "critical")
    assert proc.returncode == 0, proc.stderr  # the critical finding no longer fails the scan
    report = json.loads(proc.stdout)
    found = _vuln_findings(report)
    assert found["AGB-VULN-001"]["suppressed"] == {
        "status": "not_affected", "author": AUTHOR, "vulnerability": FS_ADVISORY,
        "document": "https://acme.example/vex/1", "format": "openvex", "suppresses": True,
        "justification": "vulnerable_code_not_in_execute_path",
        "timestamp": found["AGB-VULN-001"]["suppressed"]["timestamp"],
    }  # fmt: skip
    assert "suppressed" not in found["AGB-VULN-002"]  # the other package: no statement
    assert "1 suppressed by VEX" in proc.stderr

    table = _scan(project, "--vex", str(vex))
    assert "suppressed  AGB-VULN-001" in table.stdout
    assert f"suppressed: not_affected (vulnerable_code_not_in_execute_path) by {AUTHOR}" in (
        table.stdout
    )
    sarif = json.loads(_scan(project, "--vex", str(vex), "-f", "sarif").stdout)
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    assert results["AGB-VULN-001"]["suppressions"][0]["kind"] == "external"
    assert AUTHOR in results["AGB-VULN-001"]["suppressions"][0]["justification"]
    assert "suppressions" not in results["AGB-VULN-002"]


def test_statements_that_do_not_justify_change_nothing(project: Path) -> None:
    impact_only = _openvex(project / "impact.json", StatusLabel.NOT_AFFECTED,
                           impact_statement="we think it is fine")  # fmt: skip
    affected = _openvex(project / "affected.json", StatusLabel.AFFECTED,
                        action_statement="upgrade")  # fmt: skip
    for vex in (impact_only, affected):
        proc = _scan(project, "--vex", str(vex), "-f", "json", "--fail-on", "critical")
        assert proc.returncode == 1
        assert "suppressed" not in _vuln_findings(json.loads(proc.stdout))["AGB-VULN-001"]


def _cyclonedx_vex(path: Path) -> Path:
    """A CycloneDX VEX written by cyclonedx-python-lib: fetch's advisory not reachable."""
    bom = Bom()
    bom.metadata.authors.add(OrganizationalContact(name="Fetch Maintainers"))
    package = Component(name="mcp-server-fetch", version="0.6.1", type=ComponentType.LIBRARY,
                        purl=PackageURL.from_string(FETCH_PURL), bom_ref="fetch-pkg")  # fmt: skip
    bom.components.add(package)
    bom.vulnerabilities.add(
        Vulnerability(
            id="CVE-2099-10041",
            analysis=VulnerabilityAnalysis(
                state=ImpactAnalysisState.NOT_AFFECTED,
                justification=ImpactAnalysisJustification.CODE_NOT_REACHABLE,
                detail="fetch never parses the affected header",
            ),
            affects=[BomTarget(ref=package.bom_ref.value)],
        )
    )
    path.write_text(JsonV1Dot6(bom).output_as_string())
    return path


def test_a_cyclonedx_vex_suppresses_too_and_check_agrees(project: Path) -> None:
    vex = _cyclonedx_vex(project / "fetch.vex.cdx.json")
    proc = _scan(project, "--vex", str(vex), "-f", "json", "-o", "scan.json")
    assert proc.returncode == 0, proc.stderr
    found = _vuln_findings(json.loads((project / "scan.json").read_text()))
    said = found["AGB-VULN-002"]["suppressed"]
    assert (said["author"], said["justification"], said["format"]) == (
        "Fetch Maintainers", "code_not_reachable", "cyclonedx")  # fmt: skip
    assert "suppressed" not in found["AGB-VULN-001"]

    plain = run_agbom("scan", ".", "-f", "json", "-o", "plain.json", cwd=project)
    assert plain.returncode == 0, plain.stderr
    checked = run_agbom("check", "plain.json", "--osv", str(OSV), "--vex", str(vex),
                        "-f", "json", "--fail-on", "high", cwd=project)  # fmt: skip
    assert checked.returncode == 1  # the critical fs finding still fails
    by_rule = _vuln_findings(json.loads(checked.stdout))
    assert by_rule["AGB-VULN-002"]["suppressed"]["author"] == "Fetch Maintainers"
    assert "suppressed" not in by_rule["AGB-VULN-001"]


def test_the_openvex_export_validates_and_reads_back(project: Path) -> None:
    vex = _openvex(project / "acme.openvex.json", StatusLabel.NOT_AFFECTED,
                   justification=StatusJustification.VULNERABLE_CODE_NOT_PRESENT)  # fmt: skip
    proc = _scan(project, "--vex", str(vex), "-f", "openvex", "--vex-author", "ci@agbom.test",
                 "--timestamp", "2026-01-02T03:04:05Z", "-o", "out.openvex.json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = (project / "out.openvex.json").read_text()
    parsed = Document.from_json(text)  # vexipy's models: an independent reading of the spec
    assert parsed.author == "ci@agbom.test"
    statuses = {s.vulnerability.name: s.status for s in parsed.statements}
    assert statuses == {FS_ADVISORY: StatusLabel.NOT_AFFECTED,
                        "PYSEC-2099-41": StatusLabel.UNDER_INVESTIGATION}  # fmt: skip
    fs = next(s for s in parsed.statements if s.vulnerability.name == FS_ADVISORY)
    assert fs.justification is StatusJustification.VULNERABLE_CODE_NOT_PRESENT
    assert AUTHOR in str(fs.status_notes)
    # Read back, the export suppresses what the original statement suppressed.
    again = _scan(project, "--vex", "out.openvex.json", "-f", "json")
    assert _vuln_findings(json.loads(again.stdout))["AGB-VULN-001"]["suppressed"]["author"] == (
        "ci@agbom.test"
    )
    assert run_agbom("scan", ".", "-f", "openvex", cwd=project).returncode == 2  # needs --osv


def test_the_cyclonedx_vex_export_validates_and_reads_back(project: Path) -> None:
    vex = _cyclonedx_vex(project / "fetch.vex.cdx.json")
    proc = _scan(project, "--vex", str(vex), "-f", "cyclonedx-json", "-o", "bom.cdx.json",
                 "--vex-author", "ci@agbom.test")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = (project / "bom.cdx.json").read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    analyses = {v["id"]: v["analysis"] for v in json.loads(text)["vulnerabilities"]}
    assert analyses[FS_ADVISORY] == {"state": "in_triage"}
    assert analyses["PYSEC-2099-41"]["state"] == "not_affected"
    assert analyses["PYSEC-2099-41"]["justification"] == "code_not_reachable"
    again = _scan(project, "--vex", "bom.cdx.json", "-f", "json")
    said = _vuln_findings(json.loads(again.stdout))["AGB-VULN-002"]["suppressed"]
    assert said["format"] == "cyclonedx" and said["justification"] == "code_not_reachable"
    assert said["author"] == "ci@agbom.test"
    # Without an author the document says nothing anyone stands behind: refused.
    anonymous = _scan(project, "-f", "cyclonedx-json", "-o", "anon.cdx.json")
    assert anonymous.returncode == 0, anonymous.stderr
    refused = _scan(project, "--vex", "anon.cdx.json")
    assert refused.returncode == 2 and "must name who says it" in refused.stderr

    node = shutil.which("node")
    present = node is not None and (NODE_MODULES / "@cyclonedx" / "cyclonedx-library").is_dir()
    if not present:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but the npm CycloneDX library is missing (.ci/run)")
        pytest.skip("the npm CycloneDX library is missing (.ci/run installs it)")
    done = subprocess.run([str(node), str(LIBRARY_SCRIPT), str(project / "bom.cdx.json")],
                          env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_vex_file_is_one_line(project: Path) -> None:
    (project / "bad.json").write_text('{"@context": "https://openvex.dev/ns/v0.2.0"}')
    proc = _scan(project, "--vex", "bad.json")
    assert proc.returncode == 2
    assert proc.stderr.startswith("agbom: error: --vex bad.json: an OpenVEX document must")
    assert "Traceback" not in proc.stderr
    alone = run_agbom("scan", ".", "--vex", "bad.json", cwd=project)
    assert alone.returncode == 2 and "give --osv too" in alone.stderr
