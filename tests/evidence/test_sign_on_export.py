"""``agbom export --sign`` and ``agbom scan --sign``: a CI job gets a signed BOM in one step.
Checked as ``agbom sign``'s output is (tests/evidence/test_signed_bom.py): the JSF signature
from its definition with PyNaCl / dilithium-py, the DSSE envelope with securesystemslib,
the signed BOM with cyclonedx-python-lib's strict 1.6 validator."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from tests.evidence.test_signed_bom import AGBOM, ROOT, jsf_valid, keypair
from tests.transports.served import run_cli


@pytest.mark.parametrize("algorithm", ["Ed25519", "ML-DSA-65"])
def test_export_sign_writes_a_jsf_signed_bom(tmp_path: Path, algorithm: str) -> None:
    private, public, raw = keypair(tmp_path, algorithm)
    plain, signed_file = tmp_path / "plain.cdx.json", tmp_path / "signed.cdx.json"
    assert run_cli("export", str(AGBOM), "-o", str(plain)).returncode == 0
    done = run_cli("export", str(AGBOM), "--sign", str(private), "-o", str(signed_file))
    assert done.returncode == 0, done.stderr
    signed = json.loads(signed_file.read_text())
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(signed_file.read_text()) is None
    # The same BOM as the unsigned export, plus its signature.
    assert {k: v for k, v in signed.items() if k != "signature"} == json.loads(plain.read_text())
    assert jsf_valid(signed, raw, algorithm)
    tampered = copy.deepcopy(signed)
    tampered["metadata"]["timestamp"] = "2001-01-01T00:00:00Z"
    assert not jsf_valid(tampered, raw, algorithm)
    assert run_cli("verify", str(signed_file), "--public-key", str(public)).returncode == 0


def test_export_sign_dsse_verifies_with_securesystemslib(tmp_path: Path) -> None:
    private, _public, raw = keypair(tmp_path, "Ed25519")
    out = tmp_path / "agbom.dsse.json"
    done = run_cli(
        "export", str(AGBOM), "-f", "cyclonedx-json", "--sign", str(private),
        "--sign-format", "dsse", "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    keyid = document["signatures"][0]["keyid"]
    key = SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})
    envelope = Envelope.from_dict(copy.deepcopy(document))
    assert keyid in envelope.verify([key], 1)
    statement = json.loads(envelope.payload)
    assert statement["predicate"]["bomFormat"] == "CycloneDX"
    assert statement["subject"][0]["name"] == out.name


def test_scan_sign_signs_the_cyclonedx_output(tmp_path: Path) -> None:
    private, public, raw = keypair(tmp_path, "ML-DSA-65")
    out = tmp_path / "scan.cdx.json"
    done = run_cli("scan", str(ROOT / "samples"), "--sign", str(private), "-o", str(out))
    assert done.returncode in (0, 1), done.stderr  # 1: findings at or above --fail-on
    signed = json.loads(out.read_text())
    assert signed["bomFormat"] == "CycloneDX" and signed["components"]
    assert jsf_valid(signed, raw, "ML-DSA-65")
    assert run_cli("verify", str(out), "--public-key", str(public)).returncode == 0


def test_sign_is_refused_early_for_a_loose_key_or_an_unsigned_format(tmp_path: Path) -> None:
    private, _, _ = keypair(tmp_path, "Ed25519")
    xml = run_cli("export", str(AGBOM), "-f", "cyclonedx-xml", "--sign", str(private))
    assert xml.returncode == 2 and b"only cyclonedx-json" in xml.stderr
    os.chmod(private, 0o640)
    out = tmp_path / "never.cdx.json"
    loose = run_cli("export", str(AGBOM), "--sign", str(private), "-o", str(out))
    assert loose.returncode == 1 and b"chmod 600" in loose.stderr
    assert b"Traceback" not in loose.stderr and not out.exists()


CDX_VALIDATE = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "cdx-validate"


def _cdx_validate(bom: Path, report: Path) -> tuple[int, dict[str, Any]]:
    """cdxgen's validator and scorecard (installed by .ci/run; required under CI=true)."""
    node = shutil.which("node")
    if node is None or not CDX_VALIDATE.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but node or cdxgen's cdx-validate is not installed")
        pytest.skip("node or cdxgen's cdx-validate is not installed (run .ci/run)")
    command = [node, str(CDX_VALIDATE), "-i", str(bom), "--strict", "--report", "json"]
    done = subprocess.run([*command, "-o", str(report)], capture_output=True, timeout=300)
    return done.returncode, json.loads(report.read_text())


def test_cdxgen_counts_the_signed_scan_as_signed(tmp_path: Path) -> None:
    """cdxgen's scorecard: SCVS-2.4 ("SBOM is signed") fails unsigned, passes with --sign;
    nothing else changes (docs/evidence.md, "cdxgen's scorecard")."""
    private, _, _ = keypair(tmp_path, "Ed25519")
    failing = {}
    for name, extra in (("plain", []), ("signed", ["--sign", str(private)])):
        out = tmp_path / f"{name}.cdx.json"
        done = run_cli(
            "scan", str(ROOT / "samples"), "-f", "cyclonedx-json", *extra, "-o", str(out)
        )
        assert done.returncode in (0, 1), done.stderr
        code, report = _cdx_validate(out, tmp_path / f"{name}.report.json")
        assert code == 3 and report["schemaValid"] and report["deepValid"]
        failing[name] = {f["ruleId"] for f in report["findings"] if f.get("status") == "fail"}
    assert "SCVS-2.4" in failing["plain"]
    assert failing["signed"] == failing["plain"] - {"SCVS-2.4"}
