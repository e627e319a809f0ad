"""The content checks' code part: every file of a skill, and every fenced block of its
markdown, read by the analysis of its language (:mod:`agbom.analysis`): shell on
tree-sitter's bash grammar, Python on :mod:`ast`, JavaScript and TypeScript on tree-sitter's
grammars; PowerShell and Windows batch by patterns
(:mod:`agbom.scan.content_powershell`). What the analyses find becomes content checks
(:data:`CHECK_OF`), each placed on the code that does it.

Also here: cryptominer indicators in code and configuration files, and the packages a
skill's ``requirements.txt`` and ``package.json`` name (with ``package.json``'s install
scripts read as shell).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agbom.analysis import indicators, packages
from agbom.analysis.js_code import analyse_js
from agbom.analysis.python_code import CodeReport, analyse_python
from agbom.scan.content_shell import shell_findings

# What an analysis calls a risk, as the content check that reports it.
CHECK_OF = {
    "download-exec": "download-to-shell",
    "decode-exec": "decode-and-execute",
    "exfiltration": "secret-exfiltration",
    "destructive": "file-tampering",
}
_PYTHON = (".py", ".pyw")
_JAVASCRIPT = {
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
}
_POWERSHELL = (".ps1", ".psm1", ".psd1", ".bat", ".cmd")
_MARKDOWN = (".md", ".markdown", ".mdx", ".txt", ".rst")
_SHEBANG = re.compile(r"\A#![ \t]*\S*(?:env[ \t]+(?:-\S+[ \t]+)*)?(python[\d.]*|node|deno|bun)\b")
_FENCE = re.compile(
    r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_BLOCK_LANGUAGE = {
    "python": "python", "py": "python", "python3": "python", "javascript": "javascript",
    "js": "javascript", "node": "javascript", "mjs": "javascript", "typescript": "typescript",
    "ts": "typescript", "tsx": "tsx", "jsx": "javascript", "powershell": "powershell",
    "ps1": "powershell", "pwsh": "powershell", "ps": "powershell", "bat": "powershell",
    "cmd": "powershell", "batch": "powershell", "json": "json", "jsonc": "json",
    "yaml": "config", "yml": "config", "toml": "config", "ini": "config",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class CodeFinding:
    """A content check found by an analysis: where in the file's text, and why."""

    check: str
    start: int
    end: int
    detail: str
    source_start: int = -1


@dataclass(slots=True)
class FileCode:
    """What one file's code analysis found, and what it tells the skill-level checks: where
    the script's own arguments reach the network."""

    findings: list[CodeFinding]
    argv_sent: bool = False


def analyse_file(text: str, file: str, vendor_installer: Callable[[str], bool]) -> FileCode:
    """Every code finding of one file (``text`` as the content checks match it)."""
    name = file.rsplit("/", 1)[-1].lower()
    suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
    found: list[CodeFinding] = []
    argv_sent = False
    shebang = _SHEBANG.match(text)
    if suffix in _PYTHON or shebang is not None and shebang.group(1).startswith("python"):
        report = analyse_python(text)
        found.extend(_from_report(report, 0))
        argv_sent = bool(report.argv_sent)
    elif suffix in _JAVASCRIPT or shebang is not None:
        report = analyse_js(text, _JAVASCRIPT.get(suffix, "javascript"))
        found.extend(_from_report(report, 0))
        argv_sent = bool(report.argv_sent)
    elif suffix in _POWERSHELL:
        found.extend(_powershell(text, 0))
    elif name == "requirements.txt" or re.fullmatch(r"requirements[\w.-]*\.txt", name):
        found.extend(_requirements(text))
    elif name == "package.json":
        found.extend(_package_json(text, file, vendor_installer))
    if suffix in _MARKDOWN:
        found.extend(_blocks(text))
    if suffix not in _MARKDOWN:
        found.extend(_miner(text, 0))
    for check, start, end in shell_findings(text, file, vendor_installer):
        found.append(CodeFinding(check, start, end, ""))
    return FileCode(found, argv_sent)


def _from_report(report: CodeReport, offset: int) -> Iterator[CodeFinding]:
    for risk in report.risks:
        check = CHECK_OF.get(risk.check, risk.check)
        source = offset + risk.source_start if risk.source_start >= 0 else -1
        yield CodeFinding(check, offset + risk.start, offset + risk.end, risk.detail, source)


def _blocks(text: str) -> Iterator[CodeFinding]:
    """Fenced blocks of a markdown file in a language other than shell."""
    if "```" not in text and "~~~" not in text:
        return
    for block in _FENCE.finditer(text):
        info = block.group("info").strip().lower().split(" ", 1)[0].strip("{}.")
        language = _BLOCK_LANGUAGE.get(info)
        if language is None:
            continue
        body, offset = block.group("body"), block.start("body")
        if language == "python":
            yield from _from_report(analyse_python(body), offset)
        elif language in ("javascript", "typescript", "tsx"):
            yield from _from_report(analyse_js(body, language), offset)
        elif language == "powershell":
            yield from _powershell(body, offset)
        yield from _miner(body, offset)


def _miner(text: str, offset: int) -> Iterator[CodeFinding]:
    for match in indicators.miner_matches(text)[:1]:
        yield CodeFinding(
            "cryptominer",
            offset + match.start(),
            offset + match.end(),
            f"a miner's pool, option or script: {match.group()[:60]}",
        )


def _requirements(text: str) -> Iterator[CodeFinding]:
    position = 0
    for line in text.split("\n"):
        for problem in packages.requirement_problems(line):
            yield CodeFinding(
                problem.problem, position, position + max(len(line), 1), problem.detail
            )
        position += len(line) + 1


def _package_json(
    text: str, file: str, vendor_installer: Callable[[str], bool]
) -> Iterator[CodeFinding]:
    try:
        doc = json.loads(text)
    except ValueError:
        return
    if not isinstance(doc, dict):
        return
    for section in ("dependencies", "devDependencies", "optionalDependencies"):
        deps = doc.get(section)
        if not isinstance(deps, dict):
            continue
        for name, spec in list(deps.items())[:500]:
            if not isinstance(name, str) or not isinstance(spec, str):
                continue
            for problem in packages.manifest_dependency_problems(name, spec):
                start = _locate(text, f'"{name}"')
                yield CodeFinding(problem.problem, start, start + len(name) + 2, problem.detail)
    scripts = doc.get("scripts")
    if isinstance(scripts, dict):
        for hook in ("preinstall", "install", "postinstall", "prepare", "prepublish"):
            line = scripts.get(hook)
            if not isinstance(line, str):
                continue
            start = _locate(text, f'"{hook}"')
            for check, _s, _e in shell_findings(line, "package-script.sh", vendor_installer):
                yield CodeFinding(
                    check, start, start + len(hook) + 2, f"the {hook} script: {line[:80]}"
                )


def _locate(text: str, needle: str) -> int:
    found = text.find(needle)
    return max(found, 0)


def _powershell(text: str, offset: int) -> Iterator[CodeFinding]:
    from agbom.scan.content_powershell import powershell_findings

    for check, start, end, detail in powershell_findings(text):
        yield CodeFinding(check, offset + start, offset + end, detail)
