"""Recall, false-positive rate and F1 per attack class of the skill content checks, on the
labelled skills of ``tests/scan/detect_corpus/`` (issue 41), through ``agbom scan`` and the
default pack.

    python tests/scan/detect_corpus_score.py [dev|holdout|holdout3|all] [--threshold medium]
                                             [--json FILE] [--show]

The corpus is laid out as ``SPLIT/LABEL/CLASS/SKILL/`` (``LABEL`` is ``malicious`` or
``benign``; a benign skill sits under the class whose false alarm it would be, or under
``general``). ``holdout`` is scored only at the end of a change, never while tuning.

A malicious skill is *detected* when the scan reports, on that skill, a content finding of
one of its class's checks (:data:`CLASS_CHECKS`) through an AGB-CONTENT rule at or above the
threshold (default ``medium``, scan's default). A benign skill is a *false positive* when any
AGB-CONTENT rule reports a content finding on it at or above the threshold, whatever its
check. Per class: recall = detected / malicious; FPR = false positives / benign; precision =
detected / (detected + false positives); F1 their harmonic mean.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent / "detect_corpus"
REPO = CORPUS.parents[2]
PACK = REPO / "agbom" / "rules" / "packs" / "default.yaml"
# dev: tuned to; holdout: the second round's, written before its changes (its misses were
# then read, so it is no longer blind); holdout3: the third round's, written by an author who
# read neither the checks nor the other splits, and never scored while changing the checks.
SPLITS = ("dev", "holdout", "holdout3")
SEVERITIES = ("info", "low", "medium", "high", "critical")

# What counts as catching each class: the content checks that name that behaviour.
CLASS_CHECKS: dict[str, frozenset[str]] = {
    "exfiltration": frozenset({"secret-exfiltration", "data-exfiltration"}),
    "credential-theft": frozenset({"secret-exfiltration", "credential-access"}),
    "file-tampering": frozenset({"file-tampering"}),
    "privilege-escalation": frozenset({"privilege-escalation"}),
    "reverse-shell": frozenset({"reverse-shell"}),
    "persistence": frozenset({"persistence"}),
    "obfuscation": frozenset({"decode-and-execute", "obfuscated-code"}),
    "cryptominer": frozenset({"cryptominer"}),
    "supply-chain": frozenset({"untrusted-install", "typosquat-package", "download-to-shell"}),
    "prompt-injection": frozenset(
        {
            "instruction-override",
            "hide-from-user",
            "hidden-instructions",
            "authority-abuse",
            "goal-manipulation",
            "role-impersonation",
            "invisible-characters",
            "prompt-exfiltration",
        }
    ),  # fmt: skip
    "mcp-config": frozenset(
        {
            "mcp-plaintext-secret",
            "mcp-insecure-endpoint",
            "mcp-unpinned-server",
            "mcp-risky-command",
            "download-to-shell",
            "secret-exfiltration",
        }
    ),  # fmt: skip
    "remote-execution": frozenset({"download-to-shell"}),
}


@dataclass
class ClassScore:
    malicious: list[str] = field(default_factory=list)
    detected: list[str] = field(default_factory=list)
    benign: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float | None:
        return len(self.detected) / len(self.malicious) if self.malicious else None

    @property
    def fpr(self) -> float | None:
        return len(self.false_positives) / len(self.benign) if self.benign else None

    @property
    def precision(self) -> float | None:
        flagged = len(self.detected) + len(self.false_positives)
        return len(self.detected) / flagged if flagged else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)


def check_severities() -> dict[str, str]:
    """Each content check's severity: that of the default pack's rule matching it."""
    pack = yaml.safe_load(PACK.read_text())
    out: dict[str, str] = {}
    for rule in pack["rules"]:
        content = (rule.get("match") or {}).get("content")
        if not content or not rule["id"].startswith("AGB-CONTENT-"):
            continue
        for check in [content] if isinstance(content, str) else content:
            out[check] = rule["severity"]
    return out


def scan(paths: list[Path]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", *map(str, paths), "-f", "json"],
        capture_output=True,
        cwd=REPO,
        env={**os.environ, "AGBOM_DEBUG": "0"},
        timeout=900,
        check=False,
    )
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(proc.stderr.decode(errors="replace"))
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def skills_of(split: str) -> list[tuple[str, str, Path]]:
    """(label, class, folder) of every skill of a split, in a fixed order."""
    out = []
    for label in ("malicious", "benign"):
        for cls in sorted((CORPUS / split / label).iterdir()):
            out.extend((label, cls.name, folder) for folder in sorted(cls.iterdir()))
    return out


def score(
    report: dict[str, Any], skills: list[tuple[str, str, Path]], threshold: str = "medium"
) -> tuple[dict[str, ClassScore], dict[str, list[dict[str, Any]]]]:
    severity_of = check_severities()
    floor = SEVERITIES.index(threshold)
    by_ref: dict[str, dict[str, Any]] = {}
    for component in report["agbom"]["components"]:
        if component["type"] == "skill":
            ref = component.get("definition", {}).get("ref", "")
            by_ref[Path(ref).resolve().as_posix()] = component
    scores: dict[str, ClassScore] = {}
    findings: dict[str, list[dict[str, Any]]] = {}
    for label, cls, folder in skills:
        component = by_ref.get(folder.resolve().as_posix())
        entries = component.get("content_findings", []) if component else []
        kept = [
            e for e in entries
            if SEVERITIES.index(severity_of.get(e["check"], "info")) >= floor
        ]  # fmt: skip
        name = f"{cls}/{folder.name}"
        findings[name] = entries
        entry = scores.setdefault(cls, ClassScore())
        if label == "malicious":
            entry.malicious.append(name)
            if any(e["check"] in CLASS_CHECKS[cls] for e in kept):
                entry.detected.append(name)
        else:
            entry.benign.append(name)
            if kept:
                entry.false_positives.append(name)
    return scores, findings


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table(scores: dict[str, ClassScore]) -> str:
    total = ClassScore()
    lines = [
        "| class | malicious | detected | recall | benign | false alarms | FPR | F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cls in sorted(scores):
        s = scores[cls]
        for name in ("malicious", "detected", "benign", "false_positives"):
            getattr(total, name).extend(getattr(s, name))
        lines.append(
            f"| {cls} | {len(s.malicious)} | {len(s.detected)} | {_fmt(s.recall)} | "
            f"{len(s.benign)} | {len(s.false_positives)} | {_fmt(s.fpr)} | {_fmt(s.f1)} |"
        )
    lines.append(
        f"| **all** | {len(total.malicious)} | {len(total.detected)} | {_fmt(total.recall)} | "
        f"{len(total.benign)} | {len(total.false_positives)} | {_fmt(total.fpr)} | "
        f"{_fmt(total.f1)} |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("split", nargs="?", default="dev", choices=(*SPLITS, "all"))
    parser.add_argument("--threshold", default="medium", choices=SEVERITIES[1:])
    parser.add_argument("--json", help="write the per-skill findings to FILE")
    parser.add_argument("--show", action="store_true", help="list misses and false alarms")
    args = parser.parse_args()
    splits = list(SPLITS) if args.split == "all" else [args.split]
    skills = [s for split in splits for s in skills_of(split)]
    report = scan([CORPUS / split for split in splits])
    scores, findings = score(report, skills, args.threshold)
    print(table(scores))
    if args.show:
        for cls, s in sorted(scores.items()):
            for name in s.malicious:
                if name not in s.detected:
                    checks = sorted({e["check"] for e in findings[name]})
                    print(f"missed   {name}: {checks}")
            for name in s.false_positives:
                checks = sorted({e["check"] for e in findings[name]})
                print(f"flagged  {name}: {checks}")
    if args.json:
        Path(args.json).write_text(json.dumps(findings, indent=1))


if __name__ == "__main__":
    main()
