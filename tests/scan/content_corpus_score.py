"""Precision and recall of the skill content checks on the planted and benign skills of
``tests/scan/content_corpus/``, through ``agbom scan`` and the default pack.

    python tests/scan/content_corpus_score.py

A planted skill (``planted/NAME``, its ``EXPECTED`` file names the check planted) is found
when that check fires on it and an AGB-CONTENT rule reports it at high or critical. A benign
skill is a false positive when any AGB-CONTENT rule reports it at high or critical; low
findings (padding, a vendor's installer) are counted apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "content_corpus"
REPO = CORPUS.parents[2]
HIGH = {"high", "critical"}


@dataclass
class Score:
    found: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)  # planted, not found
    false_positives: list[str] = field(default_factory=list)  # benign, high or critical
    low_on_benign: list[str] = field(default_factory=list)  # benign, low findings only
    findings: list[dict[str, Any]] = field(default_factory=list)  # every content finding

    @property
    def precision(self) -> float:
        flagged = len(self.found) + len(self.false_positives)
        return len(self.found) / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        planted = len(self.found) + len(self.missed)
        return len(self.found) / planted if planted else 1.0


def scan() -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", str(CORPUS / "planted"), str(CORPUS / "benign"),
         "-f", "json"],
        capture_output=True,
        cwd=REPO,
        env={**os.environ, "AGBOM_DEBUG": "0"},
        timeout=300,
        check=False,
    )  # fmt: skip
    # 1: findings at or above --fail-on; a file read and inventoried is never an error (3).
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr.decode(errors="replace"))
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def score(report: dict[str, Any]) -> Score:
    skills = {c["id"]: c for c in report["agbom"]["components"] if c["type"] == "skill"}
    severities: dict[str, set[str]] = {}
    for finding in report["findings"]:
        if finding["rule_id"].startswith("AGB-CONTENT-"):
            for component in finding["components"]:
                severities.setdefault(component, set()).add(finding["severity"])
    by_name = {c["name"]: (cid, c) for cid, c in skills.items()}
    out = Score()
    for kind in ("planted", "benign"):
        for folder in sorted((CORPUS / kind).iterdir()):
            cid, component = by_name[folder.name]
            checks = {f["check"] for f in component.get("content_findings", [])}
            for f in component.get("content_findings", []):
                out.findings.append({**f, "folder": str(folder)})
            high = bool(severities.get(cid, set()) & HIGH)
            if kind == "planted":
                expected = (folder / "EXPECTED").read_text().strip()
                (out.found if expected in checks and high else out.missed).append(folder.name)
            elif high:
                out.false_positives.append(folder.name)
            elif severities.get(cid):
                out.low_on_benign.append(folder.name)
    return out


def main() -> None:
    result = score(scan())
    planted = len(result.found) + len(result.missed)
    benign = len(list((CORPUS / "benign").iterdir()))
    print(f"planted {planted}, found {len(result.found)}, missed {result.missed}")
    print(f"benign {benign}, high or critical {result.false_positives}, "
          f"low only {result.low_on_benign}")  # fmt: skip
    print(f"precision {result.precision:.3f}, recall {result.recall:.3f}")


if __name__ == "__main__":
    main()
