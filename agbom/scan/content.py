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
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agbom.inventory.signals import CONTENT_CHECKS

CHECKS = CONTENT_CHECKS
MAX_FILE_BYTES = 1024 * 1024  # larger files are not read (listed as unchecked)
MAX_SKILL_BYTES = 16 * 1024 * 1024  # per skill
MAX_FINDINGS = 50  # per skill; the count of the rest is kept
MAX_LINE_CHARS = 8192  # a longer line is checked in its first part only
MAX_TEXT = 160
BLANK_RUN = 40  # consecutive blank lines that hide what follows
_SNIFF = 8192  # a NUL byte in the first bytes: binary, not read as text

# -- the patterns -----------------------------------------------------------------------------

_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b"
# Shells run what they read; interpreters only when given nothing else to run (``| python``,
# ``| python -``): ``| python -m json.tool`` and ``| python -c "..."`` process data.
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:"
    r"(?:ba|z|k|da|fi)?sh\b(?!\s*-n\b)"
    r"|(?:python[0-9.]*|node|perl|ruby|php)(?:\s+-)?\s*(?=$|[;&|)`'\"])"
    r"|pwsh\b|powershell\b|iex\b|invoke-expression\b)"
)
_DOWNLOAD_TO_SHELL = re.compile(
    # curl URL | sh: something to fetch (a URL, a variable, host/path) must stand between,
    # so that prose such as "never run curl | sh" is not read as doing it.
    rf"(?i)\b{_FETCH}[^|\n]*(?:://|\$|\w\.\w+/)[^|\n]*\|\s*{_RUNNER}"
    rf"|(?:^|[\s;&(`'\"])(?:ba|z|k)?sh\s+(?:-\S+\s+)*<\(\s*{_FETCH}"  # bash <(curl URL)
    rf"|(?:^|[\s;&(`'\"])(?:ba|z|k)?sh\s+(?:-\S+\s+)*-c\s+[\"']?\$\(\s*{_FETCH}"  # sh -c "$(curl)"
    rf"|\b(?:iex|invoke-expression)\b\s*\(?\s*\(?\s*(?:{_FETCH}|\(?new-object\s+net\.webclient)"
)
_DECODE_AND_EXECUTE = re.compile(
    r"(?i)\bbase64\s+(?:-d|--decode|-D)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b"
    r"|\b(?:xxd\s+-r|openssl\s+(?:enc\s+)?-?base64\s+-d)[^|\n]*\|\s*(?:ba|z|k|da)?sh\b"
    r"|\b(?:exec|eval)\s*\(\s*(?:__import__\(\s*['\"]base64['\"]\s*\)\.|base64\.|codecs\.decode"
    r"|bytes\.fromhex|zlib\.decompress|marshal\.loads)"
    r"|\beval\s*\(\s*(?:atob\s*\(|Buffer\.from\s*\([^)]*['\"](?:base64|hex)['\"])"
    r"|\bnew\s+Function\s*\(\s*(?:atob\s*\(|Buffer\.from\s*\()"
    r"|\s-(?:encodedcommand|enc|e)\s+[A-Za-z0-9+/]{40,}={0,2}(?:\s|$)"  # powershell -Enc
)
# Credential files and whole-environment dumps (a single token in an auth header is the
# normal use of a token, and not flagged; a token as the request body is).
_SECRET_SOURCE = re.compile(
    r"(?i)\.ssh/(?:id_[a-z0-9]+|authorized_keys)\b"
    r"|\.aws/credentials\b|\.netrc\b|\.git-credentials\b|\.pypirc\b|\.docker/config\.json"
    r"|\.kube/config\b|/etc/shadow\b|(?:^|[\s'\"=/@<])\.env(?:\.local|\.production)?(?![\w.])"
    r"|\bprintenv\b|(?:^|[\s;&(|])env\s*(?:\||>)|\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b))"
    r"|\bprocess\.env\b(?!\s*[.\[])"
    r"|(?:\s-d|\s--data[\w-]*|\s-F\s*\w+=)\s*[\"']?\$\{?[A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD)\b"
)
_SEND = re.compile(
    r"(?i)\bcurl\b[^\n]*(?:\s-d\b|\s--data(?:-binary|-raw|-urlencode)?\b|\s-F\b|\s--form\b"
    r"|\s-T\b|\s--upload-file\b|\s-X\s*(?:POST|PUT)\b)"
    r"|\bwget\b[^\n]*--post-(?:file|data)\b"
    r"|\b(?:requests|httpx|session|client)\.(?:post|put)\s*\("
    r"|\bfetch\s*\([^)]*method\s*:\s*['\"](?:POST|PUT)"
    r"|\b(?:nc|ncat|netcat)\s+(?:-\S+\s+)*[a-z0-9.-]+\s+\d{2,5}\b"
    r"|\bscp\s+[^\n]*\s[\w.-]+@[\w.-]+:"
    r"|>\s*/dev/tcp/"
)
_INVISIBLE = re.compile(
    "[\u200b\u200c\u200d\u2060-\u2064\u180e\u202a-\u202e\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_INSTRUCTION_OVERRIDE = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override|bypass)\s+"
    r"(?:all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*"
    r"(?:previous|prior|earlier|above|preceding|original|system|developer|safety)\s+"
    r"(?:instructions?|prompts?|rules|directions|guidelines|messages?|constraints)"
    r"|\byou\s+are\s+no\s+longer\s+(?:bound|restricted)"
    r"|\bnew\s+system\s+prompt\s*:"
)
_WHO = r"(?:the\s+|your\s+)?(?:user|human|operator|owner)s?\b(?!['’]s)"
_HIDE_FROM_USER = re.compile(
    rf"(?i)\b(?:do\s+not|don'?t|never|without)\s+(?:tell|inform|notify|alert)(?:ing)?\s+{_WHO}"
    # "do not tell the user to ...", "... how to": advice; "of every retry": noise control
    r"(?!\s+(?:to|how|what|which|name|id|(?:of|about)\s+(?:every|each|all))\b)"
    rf"|\b(?:do\s+not|don'?t|never|without)\s+let(?:ting)?\s+{_WHO}\s+know\b"
    rf"|\b(?:hide|conceal)\s+(?:[\w-]+\s+){{0,4}}from\s+{_WHO}"
    rf"|\bkeep\s+(?:this|it|them)\s+(?:secret|hidden)\s+from\s+{_WHO}"
    r"|\b(?:the\s+)?user\s+(?:must|should)\s+(?:not|never)\s+(?:know|notice|find\s+out)\b"
)
_LINE_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("download-to-shell", _DOWNLOAD_TO_SHELL),
    ("decode-and-execute", _DECODE_AND_EXECUTE),
    ("instruction-override", _INSTRUCTION_OVERRIDE),
    ("hide-from-user", _HIDE_FROM_USER),
)


@dataclass(frozen=True, slots=True)
class ContentFinding:
    """One check that fired: where (folder-relative file, 1-based line) and what matched."""

    check: str
    file: str
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "file": self.file, "line": self.line, "text": self.text}


def shown(text: str) -> str:
    """``text`` safe to show and to export: invisible characters named, secrets redacted,
    cut to :data:`MAX_TEXT` characters."""
    text = _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text.strip())
    text = "".join(ch if ch.isprintable() else f"<U+{ord(ch):04X}>" for ch in text)
    from agbom.scan.redact import redact_url

    text = re.sub(r"\b[a-z][a-z0-9+.-]*://\S+", lambda m: redact_url(m.group())[0], text)
    try:
        from agbom.export._redact import redact_command

        text = redact_command(text)
    except ValueError:  # unbalanced quotes: the words are redacted one by one
        from agbom.export._redact import redact_args

        text = " ".join(redact_args(text.split()))
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


# Words one of the line patterns needs: only lines holding one are checked against them (a
# huge generated file of other text costs one pass of this regex, not six per line).
_TRIGGER = re.compile(
    r"curl|wget|fetch|iwr|irm|invoke-|iex|webclient|base64|xxd|openssl|exec|eval|function|-e"
    r"|ignore|disregard|forget|override|bypass|longer|system|tell|inform|notify|alert|let|hide"
    r"|conceal|keep|user|requests|httpx|session|client|nc|netcat|scp|/dev/tcp"
)  # matched against the text with ASCII letters lower-cased (same length, same offsets)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_BLANK_RUN = re.compile(rf"(?:^[^\S\n]*\n){{{BLANK_RUN},}}", re.MULTILINE)


def check_lines(lines: Iterable[str], file: str) -> Iterator[ContentFinding]:
    """The line checks over one text file given as lines (see :func:`check_text`)."""
    return check_text("\n".join(lines), file)


def check_text(text: str, file: str) -> Iterator[ContentFinding]:
    """The line checks (patterns, invisible characters, blank runs) over one text file,
    in line order."""
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))

    def line_at(offset: int) -> int:  # 1-based
        return bisect.bisect_right(starts, offset)

    def line_text(number: int) -> str:
        begin = starts[number - 1]
        end = starts[number] - 1 if number < len(starts) else len(text)
        return text[begin:end]

    found: list[ContentFinding] = []
    for run in _BLANK_RUN.finditer(text):
        after = line_at(run.end())
        if after > len(starts) or not line_text(after).strip():
            continue  # blank lines at the end of the file hide nothing
        blanks = text.count("\n", run.start(), run.end())
        content = line_text(after)
        message = f"after {blanks} blank lines from line {line_at(run.start())}: {content}"
        found.append(ContentFinding("hidden-after-blank-lines", file, after, shown(message)))
    for invisible in _INVISIBLE.finditer(text):
        if invisible.start() == 0 and text[0] == "\ufeff":
            continue  # a leading byte-order mark
        number = line_at(invisible.start())
        if not found or found[-1].check != "invisible-characters" or found[-1].line != number:
            part = line_text(number)[:MAX_LINE_CHARS]
            found.append(ContentFinding("invisible-characters", file, number, shown(part)))
    lowered = text.translate(_ASCII_LOWER)
    candidates = sorted({line_at(m.start()) for m in _TRIGGER.finditer(lowered)})
    for number in candidates:
        part = line_text(number)[:MAX_LINE_CHARS]
        for check, pattern in _LINE_CHECKS:
            match = pattern.search(part)
            if match is not None:
                found.append(ContentFinding(check, file, number, shown(_around(part, match))))
        if _SECRET_SOURCE.search(part) is not None and _SEND.search(part) is not None:
            found.append(ContentFinding("secret-exfiltration", file, number, shown(part)))
    found.sort(key=lambda f: (f.line, CHECKS.index(f.check)))
    return iter(found)


def _around(line: str, found: re.Match[str]) -> str:
    """The match with a little context on each side."""
    start = max(0, found.start() - 20)
    end = min(len(line), found.end() + 40)
    return line[start:end]


@dataclass(slots=True)
class ContentReport:
    """Everything the checks found in one skill folder, in file and line order."""

    findings: list[ContentFinding]
    unchecked: list[str]  # files not read: too large, binary, over the skill's budget
    omitted: int = 0  # findings past MAX_FINDINGS


def check_skill(folder: Path, files: Iterable[Any]) -> ContentReport:
    """Run every check over ``files`` (:class:`agbom.inventory.skill_digest.SkillFile`
    entries of the folder's digest: path, size, executable, symlink)."""
    found: list[ContentFinding] = []
    unchecked: list[str] = []
    budget = MAX_SKILL_BYTES
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
        found.extend(check_text(text, path))
    found.sort(key=lambda f: (f.file, f.line, CHECKS.index(f.check)))
    omitted = max(0, len(found) - MAX_FINDINGS)
    return ContentReport(found[:MAX_FINDINGS], unchecked, omitted)


def _read(path: Path) -> bytes | None:
    """The file's bytes, never through a link swapped in since the digest listed it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
