"""Summary step of the agbom Action (action.yml): the job summary and the step outputs.

Reads the JSON report of ``agbom scan`` and, with a lock file, the JSON of ``agbom diff LOCK``;
appends Markdown to ``$GITHUB_STEP_SUMMARY`` (counts by severity, the top findings, the drift,
the files that could not be read) and writes the counts and the verdict to ``$GITHUB_OUTPUT``.
Every string a scanned file controls (rule messages quote ids, names and paths) is escaped
before it reaches the Markdown, so a manifest cannot add links, images or HTML to the summary.
Standard library only: it runs with the Python of agbom's own venv.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

SEVERITIES = ("critical", "high", "medium", "low", "info")
TOP = 10
CELL_MAX = 200
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def cell(value: object) -> str:
    """``value`` as inert Markdown text on one table cell: no markup, no HTML, no line break."""
    text = _CONTROL.sub(" ", str(value))
    if len(text) > CELL_MAX:
        text = text[: CELL_MAX - 1] + "…"
    text = _MARKDOWN.sub(r"\\\1", html.escape(text, quote=True))
    # Bare URLs would become links (GitHub's autolinks): a backslash before each slash or
    # dot keeps them text, shown the same.
    return text.replace("://", ":\\/\\/").replace("www.", "www\\.")


def location(finding: dict[str, Any]) -> str:
    for place in finding.get("locations") or []:
        path = place.get("path")
        if path:
            line = place.get("line")
            return f"{path}:{line}" if line else str(path)
    return ""


def rank(finding: dict[str, Any]) -> tuple[int, str, str]:
    severity = finding.get("severity", "info")
    order = SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)
    return order, str(finding.get("rule_id", "")), location(finding)


def verdict(
    counts: dict[str, int], fail_on: str, scan_exit: int, drift: list[dict[str, Any]]
) -> tuple[int, str]:
    """(exit code, one line): 3 unreadable files, 1 findings at or above fail-on or drift."""
    total = sum(counts.values())
    if scan_exit == 3:
        return 3, "agbom could not read some files (see the job summary)"
    reasons = []
    if fail_on in SEVERITIES:
        gate = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        over = sum(counts[s] for s in gate)
        if over:
            reasons.append(f"{over} finding(s) at or above {fail_on}")
    if drift:
        reasons.append(f"{len(drift)} difference(s) from the lock file")
    if reasons or scan_exit == 1:
        return 1, "agbom failed: " + ", ".join(reasons or ["findings at or above " + fail_on])
    if fail_on in SEVERITIES:
        return 0, f"agbom passed: {total} finding(s), none at or above {fail_on}"
    return 0, f"agbom passed: {total} finding(s) (fail-on: {fail_on})"


def markdown(
    report: dict[str, Any],
    counts: dict[str, int],
    drift: list[dict[str, Any]],
    lock: str,
    line: str,
) -> str:
    summary = report.get("summary", {})
    out = ["## agbom scan", "", f"**{line}**", ""]  # counts and fixed words only
    out += ["| severity | findings |", "|---|---:|"]
    out += [f"| {s} | {counts[s]} |" for s in SEVERITIES]
    by_type = summary.get("components_by_type") or {}
    kinds = ", ".join(f"{cell(k)} {n}" for k, n in sorted(by_type.items()))
    out += [
        "",
        f"{summary.get('components', 0)} component(s) in {summary.get('files', 0)} file(s)"
        + (f" ({kinds})" if kinds else "")
        + ".",
    ]
    findings = sorted(report.get("findings") or [], key=rank)
    if findings:
        shown = findings[:TOP]
        out += ["", f"### Top findings ({len(shown)} of {len(findings)})", ""]
        out += ["| severity | rule | finding | where |", "|---|---|---|---|"]
        out += [
            f"| {cell(f.get('severity', ''))} | {cell(f.get('rule_id', ''))} "
            f"| {cell(f.get('message', ''))} | {cell(location(f))} |"
            for f in shown
        ]
    if lock:
        out += ["", f"### Drift from {cell(lock)}", ""]
        if drift:
            out += ["| change | component | detail |", "|---|---|---|"]
            out += [
                f"| {cell(d.get('kind', ''))} | {cell(d.get('component', ''))} "
                f"| {cell(d.get('detail', ''))} |"
                for d in drift[:50]
            ]
        else:
            out.append("None: the scan matches the lock file.")
    unreadable = [f for f in report.get("files") or [] if f.get("status") == "error"]
    if unreadable:
        out += ["", "### Files that could not be read", ""]
        out += ["| file | error |", "|---|---|"]
        out += [f"| {cell(f.get('path', ''))} | {cell(f.get('error', ''))} |" for f in unreadable]
    return "\n".join(out) + "\n"


def main() -> int:
    env = os.environ
    report: dict[str, Any] = json.loads(Path(env["AGBOM_REPORT_JSON"]).read_text("utf-8"))
    drift: list[dict[str, Any]] = []
    if env.get("AGBOM_DRIFT_JSON"):
        drift = json.loads(Path(env["AGBOM_DRIFT_JSON"]).read_text("utf-8")).get("drift", [])
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in report.get("findings") or []:
        if finding.get("severity") in counts:
            counts[finding["severity"]] += 1
    fail_on = env.get("INPUT_FAIL_ON") or "never"
    code, line = verdict(counts, fail_on, int(env.get("AGBOM_SCAN_EXIT") or 0), drift)
    with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
        summary.write(markdown(report, counts, drift, env.get("INPUT_LOCK", ""), line))
    outputs = {
        **counts,
        "findings": sum(counts.values()),
        "components": report.get("summary", {}).get("components", 0),
        "drift": len(drift),
        "exit-code": code,
        "verdict": line,
    }
    with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.writelines(f"{name}={value}\n" for name, value in outputs.items())
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
