"""Finding renderers shared by ``agbom check`` and ``agbom scan``: table, JSON and SARIF 2.1.0."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import orjson

from agbom import __version__
from agbom.display import visible
from agbom.rules.interface import Finding, RuleError, Severity

Format = Literal["table", "json", "sarif"]
FORMATS: tuple[str, ...] = ("table", "json", "sarif")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/agbom/agbom"

_SARIF_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub code scanning reads ``security-severity`` (0.0-10.0) to rank security results.
_SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "0.0",
}


def render_findings(
    findings: Sequence[Finding], fmt: str = "table", *, source_uri: str | None = None
) -> str:
    """Render ``findings`` as ``table``, ``json`` or ``sarif`` text."""
    if fmt == "table":
        return render_table(findings)
    if fmt == "json":
        return render_json(findings, source_uri=source_uri)
    if fmt == "sarif":
        return orjson.dumps(
            to_sarif(findings, source_uri=source_uri), option=orjson.OPT_INDENT_2
        ).decode()
    raise RuleError(f"unknown output format {fmt!r} (known: {', '.join(FORMATS)})")


def render_json(findings: Sequence[Finding], *, source_uri: str | None = None) -> str:
    counts = {s.value: 0 for s in Severity}
    for finding in findings:
        counts[finding.severity.value] += 1
    document = {
        "tool": {"name": "agbom", "version": __version__},
        "source": source_uri,
        "summary": {"total": len(findings), "by_severity": counts},
        "findings": [f.to_json() for f in findings],
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def render_table(findings: Sequence[Finding]) -> str:
    """A plain-text table: one row per finding, the path and explanation indented below."""
    if not findings:
        return "No findings."
    rows = [("SEVERITY", "ACTION", "RULE", "COMPONENT", "MESSAGE")]
    # Rule ids, component ids and messages may carry what an agent or a file wrote: every
    # cell is escaped so control characters cannot forge or hide rows.
    rows.extend(
        (
            f.severity.value,
            f.action.value,
            visible(f.rule_id),
            visible(f.components[0]) if f.components else "-",
            visible(f.message),
        )
        for f in findings
    )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        )
        if index == 0:
            continue
        finding = findings[index - 1]
        if len(finding.path) > 1:
            lines.append("    path: " + " -> ".join(visible(node) for node in finding.path))
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.severity.value] = counts.get(f.severity.value, 0) + 1
    summary = ", ".join(
        f"{counts[s.value]} {s.value}" for s in reversed(Severity) if s.value in counts
    )
    lines.append("")
    lines.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''} ({summary})")
    return "\n".join(lines)


def _fingerprint(finding: Finding) -> str:
    text = finding.rule_id + "\0" + "\0".join(finding.components)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def to_sarif(findings: Sequence[Finding], *, source_uri: str | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; rules are described from the findings that cite them."""
    uri = source_uri or "AGBOM.json"
    rules: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}
    for finding in sorted(findings, key=lambda f: f.rule_id):
        if finding.rule_id in rule_index:
            continue
        rule_index[finding.rule_id] = len(rules)
        description = finding.explanation.split(" Matched ", 1)[0] or finding.message
        rules.append(
            {
                "id": finding.rule_id,
                "name": finding.rule_id.replace("-", "").replace(".", ""),
                "shortDescription": {"text": description.split(". ", 1)[0][:1000]},
                "fullDescription": {"text": description[:4000]},
                "defaultConfiguration": {"level": _SARIF_LEVEL[finding.severity]},
                "help": {"text": description[:4000]},
                "properties": {
                    "security-severity": _SECURITY_SEVERITY[finding.severity],
                    "tags": ["security", "agbom", finding.pack or "rules"],
                    "precision": "high",
                },
            }
        )
    results = []
    for finding in findings:
        logical = [
            {"name": component, "kind": "module", "fullyQualifiedName": component}
            for component in finding.components
        ]
        result: dict[str, Any] = {
            "ruleId": finding.rule_id,
            "ruleIndex": rule_index[finding.rule_id],
            "level": _SARIF_LEVEL[finding.severity],
            "message": {"text": f"{finding.message}. {finding.explanation}".strip()},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri},
                        "region": {"startLine": 1},
                    },
                    "logicalLocations": logical,
                }
            ],
            "partialFingerprints": {"agbomFinding/v1": _fingerprint(finding)},
            "properties": {
                "severity": finding.severity.value,
                "action": finding.action.value,
                "components": list(finding.components),
                "path": list(finding.path),
                "pack": finding.pack,
            },
        }
        if len(finding.path) > 1:
            result["codeFlows"] = [
                {
                    "threadFlows": [
                        {
                            "locations": [
                                {
                                    "location": {
                                        "logicalLocations": [{"name": node, "kind": "module"}],
                                        "message": {"text": node},
                                    }
                                }
                                for node in finding.path
                            ]
                        }
                    ]
                }
            ]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "agbom",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "artifacts": [{"location": {"uri": uri}}],
                "results": results,
            }
        ],
    }
