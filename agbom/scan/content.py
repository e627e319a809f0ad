"""Deterministic content checks over a skill's files.

Each check is a fixed set of regular expressions (or a byte-level rule) applied line by line;
the same files always give the same findings, each with the file, the 1-based line and the
matched text (secrets redacted, invisible characters shown as ``<U+XXXX>``, cut to
:data:`MAX_TEXT` characters). Nothing is judged by a model and nothing is fetched.

The checks look for what a skill would have to write down to do harm: a download piped
into a shell, decoded data executed, credential files sent to a URL, text pushed out of
sight by blank lines or carried in invisible characters, instructions to drop earlier
instructions or to hide actions from the user, executables outside ``scripts/``, and links.
What they cannot see is listed in docs/rules.md ("Content checks").

This module runs the checks over a skill folder and one file (:func:`check_skill`,
:func:`check_text`) and holds the layout rules (blank runs, invisible characters, teaching
sections, MCP configs, scripts given credentials); the file as read and the findings are
:mod:`agbom.scan.content_text`'s, the regular-expression families
:mod:`agbom.scan.content_patterns`', and what the parse-based analyses of its code add
:mod:`agbom.scan.content_code`'s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agbom.inventory.signals import CONTENT_CHECKS
from agbom.inventory.skill_digest import open_skill_file
from agbom.scan.content_patterns import pattern_findings, teaching
from agbom.scan.content_text import MAX_STARTS, MAX_TEXT, ContentFinding, ContentText, shown
from agbom.scan.vendor_installers import is_vendor_installer

__all__ = [
    "CHECKS",
    "MAX_FINDINGS",
    "MAX_STARTS",
    "MAX_TEXT",
    "ContentFinding",
    "ContentReport",
    "check_lines",
    "check_skill",
    "check_text",
    "shown",
]

CHECKS = CONTENT_CHECKS
MAX_FILE_BYTES = 1024 * 1024  # larger files are not read (listed as unchecked)
MAX_SKILL_BYTES = 16 * 1024 * 1024  # per skill
MAX_FINDINGS = 50  # per skill; the count of the rest is kept
MAX_LINE_CHARS = 8192  # of a line kept as a finding's context (every line is checked whole)
BLANK_RUN = 40  # consecutive blank lines that hide what follows
_SNIFF = 8192  # a NUL byte in the first bytes: binary, not read as text

# Starting on a literal newline lets the engine skip to candidates instead of trying a line
# start at every character (the run itself is group 1); a run at the very start is matched
# by _LEADING_BLANKS.
_BLANK_RUN = re.compile(rf"\n((?:[^\S\n]*\n){{{BLANK_RUN},}})")
_LEADING_BLANKS = re.compile(rf"(?:[^\S\n]*\n){{{BLANK_RUN},}}")


def check_lines(lines: Iterable[str], file: str) -> Iterator[ContentFinding]:
    """The checks over one text file given as lines (see :func:`check_text`)."""
    return check_text("\n".join(lines), file)


def check_text(text: str, file: str) -> Iterator[ContentFinding]:
    """The text checks (patterns, two-step patterns, invisible characters, blank runs) over
    one file, in line order. Matching runs on the normalised text (see
    :mod:`agbom.scan._normalise`); positions are those of the original."""
    return iter(_check(text, file).found)


def _check(text: str, file: str) -> ContentText:
    doc = ContentText(text, file)
    _blank_runs(doc)
    _invisible(doc)
    lines_of: dict[str, set[int]] = {}  # one finding per check and line
    pattern_findings(doc, lines_of)
    _prose(doc, lines_of)
    _code(doc, lines_of)
    if any(f.check == "secret-exfiltration" for f in doc.found):  # the read is part of it
        doc.found = [f for f in doc.found if f.check != "credential-access"]
    if doc.file.lower().endswith(_MARKDOWN):
        _teaching_sections(doc)
    doc.found.sort(key=lambda f: (f.line, CHECKS.index(f.check), f.column))
    return doc


_MARKDOWN = (".md", ".markdown", ".mdx", ".rst")
# What teaching text may quote: reported as cited-attack (low) when it stands there.
_QUOTABLE = frozenset(CHECKS) - {
    "invisible-characters", "hidden-after-blank-lines", "executable-outside-scripts", "symlink",
    "cited-attack", "vendor-installer", "mcp-plaintext-secret", "mcp-insecure-endpoint",
    "mcp-unpinned-server",
}  # fmt: skip
_RUN_STEP = re.compile(
    r"(?i)^\s*(?:\d+[.)]\s*|[-*+]\s*)?(?:first,?\s+|then,?\s+|now,?\s+|next,?\s+)?"
    r"(?:run|execute|paste|type|install|enter|call|invoke|source)\b"
)


def _prose(doc: ContentText, lines_of: dict[str, set[int]]) -> None:
    """The prose patterns of :mod:`agbom.scan.content_prose` on the prose view, and
    instructions hidden in comments, where nothing else reported the check on that line."""
    from agbom.scan.content_prose import hidden_findings, prose_findings

    prose = doc.prose
    for check, start, end in prose_findings(prose.text, lambda words: doc.needs(words, prose=True)):
        origin_start, origin_end = prose.origin(start), prose.origin(end, end=True)
        line = doc.line_bounds(origin_start)[0]
        seen = lines_of.setdefault(check, set())
        if line in seen or lines_of.get("instruction-override", set()) & {line}:
            continue
        seen.add(line)
        match = re.compile(re.escape(prose.text[start:end])).search(prose.text, start)
        if match is not None and teaching(prose.text, match):
            doc.add("cited-attack", origin_start, origin_end, detail=f"{check}, quoted")
            continue
        doc.add(check, origin_start, origin_end)
    markdown = doc.file.lower().endswith(_MARKDOWN)
    for check, start, end in hidden_findings(doc.norm, markdown=markdown):
        doc.add(check, start, end)


def _teaching_sections(doc: ContentText) -> None:
    """Findings in a markdown section that teaches or lists attacks for a reviewer become
    ``cited-attack`` (low), unless the line (or the line that introduces its code block)
    asks to run it."""
    from agbom.scan.content_prose import teaching_lines

    if not any(found.check in _QUOTABLE for found in doc.found):
        return  # nothing the sections could turn into cited-attack: no need to find them
    ranges = teaching_lines(doc.original)
    if not ranges:
        return
    lines = doc.original.split("\n")
    kept: list[ContentFinding] = []
    for found in doc.found:
        inside = any(lo <= found.line <= hi for lo, hi in ranges)
        if not inside or found.check not in _QUOTABLE or _asked_to_run(lines, found.line):
            kept.append(found)
            continue
        text = shown(f"{found.check}, in text that teaches or lists attacks: {found.text}")
        kept.append(replace(found, check="cited-attack", text=text))
    doc.found = kept


def _asked_to_run(lines: list[str], line: int) -> bool:
    """The line asks to run what it holds, or it is in a code block introduced by a line
    that does ("Run:", "1. Install the tool:")."""
    index = line - 1
    if 0 <= index < len(lines) and _RUN_STEP.match(lines[index]):
        return True
    depth = 0
    probe = index
    while probe > 0 and depth < 200:
        probe -= 1
        depth += 1
        if lines[probe].lstrip().startswith(("```", "~~~")):
            intro = probe - 1
            while intro >= 0 and not lines[intro].strip():
                intro -= 1
            return intro >= 0 and _RUN_STEP.match(lines[intro]) is not None
    return False


def _code(doc: ContentText, lines_of: dict[str, set[int]]) -> None:
    """What the analyses of the file's code find (:mod:`agbom.scan.content_code`: its
    scripts, its markdown's code blocks), where the patterns did not already report the
    check on that line."""
    from agbom.scan.content_code import analyse_file

    covered: set[tuple[str, int]] = set()  # (check, line) the patterns' findings span
    for found in doc.found:
        last = max(found.end_line or found.line, found.line)
        covered.update((found.check, n) for n in range(found.line, min(last, found.line + 64) + 1))
    code = analyse_file(doc.folded.code, doc.file, is_vendor_installer)
    doc.argv_sent = code.argv_sent
    for finding in code.findings:
        check, start, end = finding.check, finding.start, finding.end
        seen = lines_of.setdefault(check, set())
        line = doc.line_bounds(start)[0]
        first, _ = doc.position(doc.folded.origin(start))
        if line in seen or (check, first) in covered:
            continue  # the patterns found it already
        seen.add(line)
        if finding.source_start >= 0 and finding.source_start < start:
            start = finding.source_start
        doc.add(check, start, end, detail=finding.detail)


def _blank_runs(doc: ContentText) -> None:
    """Padding: 40 or more blank lines with text after them. The padding is reported (low);
    what it pushes out of sight is matched by the other checks like any other line."""
    text = doc.original
    leading = _LEADING_BLANKS.match(text)
    runs = [(leading.start(), leading.end())] if leading is not None else []
    runs += [m.span(1) for m in _BLANK_RUN.finditer(text, leading.end() if leading else 0)]
    for start, end in runs:
        after_end = text.find("\n", end)
        after = text[end : len(text) if after_end < 0 else after_end]
        if not after.strip():
            continue  # blank lines at the end of the file hide nothing
        blanks = text.count("\n", start, end)
        first, _ = doc.position(start)
        message = f"{blanks} blank lines from line {first} push line {first + blanks} down: "
        doc.add("hidden-after-blank-lines", start, end - 1, text=message + after[:MAX_LINE_CHARS])


def _invisible(doc: ContentText) -> None:
    """Characters that render as nothing (``invisible-characters``) or as blank
    (``blank-characters``), as :func:`agbom.invisible.hidden` finds them (emoji sequences
    and a leading byte-order mark are not reported): one finding per check and line, over
    the line's first run."""
    from agbom.invisible import NOTHING, hidden

    text = doc.original
    reported: set[tuple[str, int]] = set()
    for begin, stop, what in hidden(text):
        check = "invisible-characters" if what == NOTHING else "blank-characters"
        line, column = doc.position(begin)
        if (check, line) in reported:
            continue
        reported.add((check, line))
        lo = text.rfind("\n", 0, begin) + 1
        hi = text.find("\n", begin)
        part = text[lo : len(text) if hi < 0 else hi][:MAX_LINE_CHARS]
        end_line, end_column = doc.position(stop)
        count = f"{stop - begin} characters: " if stop - begin > 1 else ""
        doc.found.append(
            ContentFinding(check, doc.file, line, count + shown(part), column, end_line, end_column)
        )


@dataclass(slots=True)
class ContentReport:
    """Everything the checks found in one skill folder, in file and line order."""

    findings: list[ContentFinding]
    unchecked: list[str]  # files not read: too large, binary, over the skill's budget
    omitted: int = 0  # findings past MAX_FINDINGS


def check_skill(folder: Path, files: Iterable[Any]) -> ContentReport:
    """Run every check over ``files`` (:class:`agbom.inventory.skill_digest.SkillFile`
    entries of the folder's digest: path, size, executable, symlink)."""
    from agbom.scan.content_mcp import is_mcp_config

    found: list[ContentFinding] = []
    unchecked: list[str] = []
    budget = MAX_SKILL_BYTES
    sends_arguments: set[str] = set()  # scripts whose own arguments reach the network
    markdown: dict[str, ContentText] = {}
    entries = sorted(files, key=lambda f: f.path)
    # Folders of skills nested in this one: their files sit in *their* scripts/.
    nested = sorted(
        (e.path[: -len("/SKILL.md")] + "/" for e in entries if e.path.endswith("/SKILL.md")),
        key=len,
        reverse=True,
    )
    for entry in entries:
        path: str = entry.path
        if entry.symlink:
            target = getattr(entry, "target", None) or "?"
            found.append(ContentFinding("symlink", path, 1, shown(f"{path} -> {target}")))
            continue  # its target is a file of the folder and is read as such
        own = next((path[len(p) :] for p in nested if path.startswith(p)), path)
        if entry.executable and not own.startswith("scripts/"):
            found.append(ContentFinding("executable-outside-scripts", path, 1, shown(path)))
        if entry.size > MAX_FILE_BYTES or entry.size > budget:
            unchecked.append(path)
            continue
        data = _read(folder / path)
        if data is None or b"\0" in data[:_SNIFF]:
            unchecked.append(path)
            continue
        budget -= len(data)
        text = data.decode("utf-8", errors="replace")
        doc = _check(text, path)
        found.extend(doc.found)
        if doc.skipped:  # read, but some patterns were over their bound
            unchecked.append(f"{path} (patterns not matched: {', '.join(sorted(doc.skipped))})")
        if doc.argv_sent:
            sends_arguments.add(path)
        if path.lower().endswith(_MARKDOWN) or path.lower().endswith(".txt"):
            markdown[path] = doc
        if is_mcp_config(path, data):
            found.extend(_mcp(folder, path, data, doc))
    found.extend(_scripts_given_secrets(markdown, sends_arguments))
    found.sort(key=lambda f: (f.file, f.line, CHECKS.index(f.check), f.column))
    omitted = max(0, len(found) - MAX_FINDINGS)
    return ContentReport(found[:MAX_FINDINGS], unchecked, omitted)


def _mcp(folder: Path, path: str, data: bytes, doc: ContentText) -> Iterator[ContentFinding]:
    """The checks of scan's MCP configs over one the skill ships
    (:mod:`agbom.scan.content_mcp`), placed on each server's entry."""
    from agbom.scan.content_mcp import mcp_findings

    lines = doc.original.split("\n")
    for check, span, detail in mcp_findings(folder, path, data, is_vendor_installer):
        line = getattr(span, "line", 1) or 1
        column = getattr(span, "column", 1) or 1
        end_line = getattr(span, "end_line", 0) or line
        end_column = getattr(span, "end_column", 0) or column + 1
        context = lines[line - 1][:MAX_LINE_CHARS] if 0 < line <= len(lines) else ""
        yield ContentFinding(check, path, line, shown(f"{detail}: {context.strip()}"), column,
                             end_line, end_column)  # fmt: skip


def _scripts_given_secrets(
    markdown: dict[str, ContentText], sends_arguments: set[str]
) -> Iterator[ContentFinding]:
    """A skill's markdown runs one of its scripts with a credential as an argument (``python
    scripts/sync.py ~/.ssh/id_rsa``) and that script sends its arguments to the network: the
    credential is sent, though neither file says so alone."""
    if not sends_arguments:
        return
    from agbom.scan.content_shell import script_calls

    for path, doc in markdown.items():
        for script, start, end, credential in script_calls(doc.norm, path):
            if script in sends_arguments and credential:
                before = len(doc.found)
                doc.add("secret-exfiltration", start, end,
                        detail=f"{script} sends its arguments to the network, and is given "
                        f"{credential}")  # fmt: skip
                yield from doc.found[before:]


def _read(path: Path) -> bytes | None:
    """The file's bytes, never through a link swapped in since the digest listed it."""
    try:
        opened = open_skill_file(path)  # O_NONBLOCK: a FIFO swapped in does not block
    except OSError:
        return None
    if opened is None:
        return None
    fd = opened[0]
    try:
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
