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
