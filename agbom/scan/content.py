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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agbom.inventory.signals import CONTENT_CHECKS
from agbom.inventory.skill_digest import open_skill_file
from agbom.scan._normalise import Normalised, ProseView
from agbom.scan.vendor_installers import is_vendor_installer

CHECKS = CONTENT_CHECKS
MAX_FILE_BYTES = 1024 * 1024  # larger files are not read (listed as unchecked)
MAX_SKILL_BYTES = 16 * 1024 * 1024  # per skill
MAX_FINDINGS = 50  # per skill; the count of the rest is kept
MAX_LINE_CHARS = 8192  # of a line kept as a finding's context (every line is checked whole)
MAX_TEXT = 160
# Places a pattern may start in one file (the occurrences of its words): past this the
# pattern is not matched over the file, which is listed in ``content_unchecked`` with the
# checks left out. A skill has tens of them; 1 MB of ``curl x`` has 150,000.
MAX_STARTS = 10_000
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
# Quantifiers inside a line are bounded: a hostile 1 MB line cannot make a match quadratic.
_L = r"[^|\n]{0,400}"
# Each check is a few patterns, each run only when the text holds one of its words (see
# _Text.needs): a pattern that cannot start on a literal costs a pass over the whole text.
_DOWNLOAD_TO_SHELL: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # curl URL | sh: something to fetch (a URL, a variable, host/path) must stand between,
    # so that prose such as "never run curl | sh" is not read as doing it.
    (  # the lookahead keeps the work per start linear (nested {0,400}s were quadratic)
        re.compile(rf"(?im)\b{_FETCH}(?={_L}?(?:://|\$|\w\.\w+/))[^|\n]{{0,800}}\|\s*{_RUNNER}"),
        ("curl", "wget", "fetch", "iwr", "irm", "invoke-"),
    ),
    (  # bash <(curl URL)
        re.compile(rf"(?im)(?:^|[\s;&(`'\"])(?:ba|z|k)?sh\s+(?:-\S+\s+)*<\(\s*{_FETCH}"),
        ("<(",),
    ),
    (  # sh -c "$(curl URL)"
        re.compile(
            rf"(?im)(?:^|[\s;&(`'\"])(?:ba|z|k)?sh\s+(?:-\S+\s+)*-c\s+[\"']?\$\(\s*{_FETCH}"
        ),
        ("$(",),
    ),
    (
        re.compile(
            rf"(?i)\b(?:iex|invoke-expression)\b\s*\(?\s*\(?\s*"
            rf"(?:{_FETCH}|\(?new-object\s+net\.webclient)"
        ),
        ("iex", "invoke-expression"),
    ),
)
_DECODE_AND_EXECUTE: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(rf"(?im)\bbase64\s+(?:-d|--decode|-D)\b{_L}\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b"),
        ("base64",),
    ),
    (
        re.compile(
            rf"(?im)\b(?:xxd\s+-r|openssl\s+(?:enc\s+)?-?base64\s+-d){_L}\|\s*(?:ba|z|k|da)?sh\b"
        ),
        ("xxd", "openssl"),
    ),
    (
        re.compile(
            r"(?i)\b(?:exec|eval)\s*\(\s*(?:__import__\(\s*['\"]base64['\"]\s*\)\.|base64\."
            r"|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads)"
        ),
        ("exec", "eval"),
    ),
    (
        re.compile(
            r"(?i)\beval\s*\(\s*(?:atob\s*\(|Buffer\.from\s*\([^)\n]{0,400}['\"](?:base64|hex)['\"])"
            r"|\bnew\s+Function\s*\(\s*(?:atob\s*\(|Buffer\.from\s*\()"
        ),
        ("atob", "buffer.from"),
    ),
    (  # powershell -EncodedCommand
        re.compile(r"(?im)\s-(?:encodedcommand|enc|e)\s+[A-Za-z0-9+/]{40,}={0,2}(?:\s|$)"),
        ("-e",),
    ),
)
# A download saved to a file (``curl URL -o F``, ``wget -O F URL``, ``> F``) and decoded
# data written to one (``base64 -d > F``, ``open(F, "wb").write(base64...)``): group 1 or 2
# is the file. A later line that runs that file completes the two-step pattern.
_SAVED = re.compile(
    r"(?im)\b(?P<fetch>curl|wget|iwr|invoke-webrequest)\b[^\n]{0,400}?"
    r"(?:\s-o\s*|\s--output(?:=|\s+)|\s-O\s+|\s-outfile\s+|>\s*)[\"']?([\w./~$%{}-]+)"
    r"|\b(?P<decode>base64\s+(?:-d|--decode|-D)|xxd\s+-r|openssl\s+(?:enc\s+)?-?base64\s+-d)"
    r"[^\n|]{0,400}?(?:>\s*|\s-o\s+|\s-out\s+)[\"']?([\w./~$%{}-]+)"
    r"|\bopen\s*\(\s*['\"]([^'\"\n]{1,200})['\"]\s*,\s*['\"]wb?['\"]\s*\)\s*\.write\s*\(\s*"
    r"(?P<pydecode>base64\.|codecs\.decode|bytes\.fromhex|zlib\.decompress)"
)
_RUN_AFTER = 6  # lines after the save in which running the file counts
_RUN_AFTER_CHARS = 8192  # ... and at most this far (one long line is not six lines)
_SAVED_STARTS = ("curl", "wget", "iwr", "invoke-webrequest", "base64", "xxd", "openssl", "open(")
# Credential files and whole-environment dumps (a single token in an auth header is the
# normal use of a token, and not flagged; a token as the request body is).
_SECRET_SOURCE = re.compile(
    r"(?im)\.ssh/(?:id_[a-z0-9]+(?!\.pub\b)|authorized_keys)\b"
    r"|\.aws/credentials\b|\.netrc\b|\.git-credentials\b|\.pypirc\b|\.docker/config\.json"
    r"|\.kube/config\b|/etc/shadow\b|(?:^|[\s'\"=/@<])\.env(?:\.local|\.production)?(?![\w.])"
    r"|\bprintenv\b|(?:^|[\s;&(|])env\s*(?:\||>)|\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b))"
    r"|\bprocess\.env\b(?!\s*[.\[])"
    r"|(?:\s-d|\s--data[\w-]*|\s-F\s*\w+=)\s*[\"']?\$\{?[A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD)\b"
)
_SEND = re.compile(
    r"(?i)\bcurl\b[^\n]{0,400}(?:\s-d\b|\s--data(?:-binary|-raw|-urlencode)?\b|\s-F\b|\s--form\b"
    r"|\s-T\b|\s--upload-file\b|\s-X\s*(?:POST|PUT)\b)"
    r"|\bwget\b[^\n]{0,400}--post-(?:file|data)\b"
    r"|\b(?:requests|httpx|session|client)\.(?:post|put)\s*\("
    r"|\bfetch\s*\([^)\n]{0,400}method\s*:\s*['\"](?:POST|PUT)"
    r"|\b(?:nc|ncat|netcat)\s+(?:-\S+\s+)*[a-z0-9.-]+\s+\d{2,5}\b"
    r"|\bscp\s+[^\n]{0,400}\s[\w.-]+@[\w.-]+:"
    r"|>\s*/dev/tcp/"
    # Python's standard library: urlopen(url, data), Request(url, data=...), http.client
    r"|\burlopen\s*\([^)\n]{0,400}(?:,\s*|data\s*=)\s*[\w(]"
    r"|\bRequest\s*\([^)\n]{0,400}\bdata\s*="
    r"|\.request\s*\(\s*['\"](?:POST|PUT)['\"]"
)
# Plain prose: "send / upload / post the file to https://... / to name@host / to x.tld".
_PROSE_SEND = re.compile(
    r"(?i)\b(?:send|upload|post|transmit|forward|exfiltrate|e-?mail|paste|submit)(?:s|ing)?\b"
    r"(?:[^.\n]|\n(?!\n)){0,160}?\b(?:to|into)\s+(?:https?://|[\w.+-]+@[\w-]+\."
    r"|the\s+(?:server|endpoint|webhook)\b|[\w-]+\.(?:com|net|org|io|dev|app|xyz|site|ru|cn|sh)\b)"
)
_ASSIGNED = re.compile(r"(?:export\s+|local\s+|const\s+|let\s+|var\s+)?([A-Za-z_]\w{0,63})\s*=")
_INSTRUCTION_OVERRIDE = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override|bypass)\s+"
    r"(?:all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*"
    r"(?:previous|prior|earlier|above|preceding|original|system|developer|safety)\s+"
    r"(?:instructions?|prompts?|rules|directions|guidelines|messages?|constraints)"
    r"|\byou\s+are\s+no\s+longer\s+(?:bound|restricted)"
    r"|\bnew\s+system\s+prompt\s*:"
)
_WHO = (
    r"(?:the\s+|your\s+|this\s+|that\s+)?"
    r"(?:user|human|operator|owner|person|people|requester)s?\b(?!['’]s)"
)
_KEPT_BACK = (
    r"(?:this|that|it|these|them|anything|any\s+of\s+(?:this|these|it)"
    r"|what\s+you(?:['’]ve|\s+have|\s+are)?\s+\w+"
    r"|(?:the|these|this|those|your)\s+(?:instructions?|steps?|actions?|changes?|commands?"
    r"|files?|uploads?|requests?|skill|task|scripts?))"
)
_HIDE_FROM_USER = re.compile(
    rf"(?i)\b(?:do\s+not|don'?t|never|without)\s+(?:tell|inform|notify|alert)(?:ing)?\s+{_WHO}"
    # "do not tell the user to ...", "... how to": advice; "of / for every retry": noise control
    r"(?!\s+(?:to|how|what|which|name|id|(?:of|about|for)\s+(?:every|each|all))\b)"
    rf"|\b(?:do\s+not|don'?t|never|without)\s+let(?:ting)?\s+{_WHO}\s+know\b"
    # "never mention this to the person": what is kept back, then who from
    rf"|\b(?:do\s+not|don'?t|never|without)\s+(?:mention|reveal|disclose|report|admit)(?:ing)?"
    rf"\s+{_KEPT_BACK}\s+(?:to|with)\s+{_WHO}"
    rf"|\b(?:hide|conceal)\s+(?:[\w-]+\s+){{0,4}}from\s+{_WHO}"
    rf"|\bkeep\s+(?:this|it|them)\s+(?:secret|hidden)\s+from\s+{_WHO}"
    r"|\b(?:the\s+)?user\s+(?:must|should)\s+(?:not|never)\s+(?:know|notice|find\s+out)\b"
)
# Teaching text: a warning just before the match ("never run curl URL | sh", "do not send
# .env to x.com"), or a quoted phrase introduced as an example of an attack ("attackers may
# write 'ignore previous instructions'"). Both only when they stand in the same sentence.
_WARNED = re.compile(
    r"(?i)\b(?:never|don'?t|do\s+not|avoid|must\s+not|should\s+not)(?:\s+(?:run|running|pipe"
    r"|piping|use|using|execute|type|paste|copy|follow|call|invoke|try))?\s*[`'\"“‘(]*\s*$"
)  # the warning stands right before the match: "never mind, ignore ..." is not one
_EXAMPLE_CUE = re.compile(
    r"(?i)\b(?:attackers?|malicious|injections?|phrases?|such\s+as|like|e\.g\.|for\s+example"
    r"|watch\s+for|beware|look\s+for|detect|flag|refuse|strings?|may\s+(?:write|say|contain))\b"
)
_QUOTES = "\"'`“”‘’«»"
# Literal words each pattern needs, looked for in the lower-cased text first (``in`` on a
# str is a fast C search): a file holding none of a pattern's words is not matched against it.
_NEEDS: dict[str, tuple[str, ...]] = {
    "saved": ("curl", "wget", "iwr", "invoke-webrequest", "base64", "xxd", "open"),
    "secret": ("env", "$", ".ssh", ".aws", ".netrc", ".git-cred", ".pypirc", ".docker", ".kube",
               "shadow"),
    "instruction-override": ("ignore", "disregard", "forget", "override", "bypass", "longer",
                             "system"),
    "hide-from-user": ("user", "human", "operator", "owner", "person", "people", "requester"),
    "send": ("curl", "wget", "post", "put", "request", "session", "client", "fetch", "nc",
             "scp", "/dev/tcp", "urlopen", "send", "upload", "transmit", "forward", "exfiltrate",
             "mail", "paste", "submit"),
}  # fmt: skip
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Starting on a literal newline lets the engine skip to candidates instead of trying a line
# start at every character (the run itself is group 1); a run at the very start is matched
# by _LEADING_BLANKS.
_BLANK_RUN = re.compile(rf"\n((?:[^\S\n]*\n){{{BLANK_RUN},}})")
_LEADING_BLANKS = re.compile(rf"(?:[^\S\n]*\n){{{BLANK_RUN},}}")
_PROSE_CHECKS = frozenset({"instruction-override", "hide-from-user"})  # read on ProseView
_PHRASES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    *(("download-to-shell", pattern, words) for pattern, words in _DOWNLOAD_TO_SHELL),
    *(("decode-and-execute", pattern, words) for pattern, words in _DECODE_AND_EXECUTE),
    ("instruction-override", _INSTRUCTION_OVERRIDE, _NEEDS["instruction-override"]),
    ("hide-from-user", _HIDE_FROM_USER, _NEEDS["hide-from-user"]),
)


@dataclass(frozen=True, slots=True)
class ContentFinding:
    """One check that fired: where (folder-relative file; 1-based line and column of the
    match's start, and of its end, exclusive, in code points of the original text) and what
    matched."""

    check: str
    file: str
    line: int
    text: str
    column: int = 1
    end_line: int = 0  # 0: the start line
    end_column: int = 0  # 0: the column after the start

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line or self.line,
            "end_column": self.end_column or self.column + 1,
            "text": self.text,
        }


def shown(text: str) -> str:
    """``text`` safe to show and to export: invisible characters named, secrets redacted,
    cut to :data:`MAX_TEXT` characters."""
    text = text.strip()
    if not (text.isascii() and text.isprintable()):
        from agbom.invisible import kind

        text = "".join(
            ch if ch.isprintable() and (ch == " " or kind(ch) is None) else f"<U+{ord(ch):04X}>"
            for ch in text
        )
    from agbom.scan.redact import redact_url

    text = re.sub(r"\b[a-z][a-z0-9+.-]*://\S+", lambda m: redact_url(m.group())[0], text)
    # The scanner's own redaction pass (the exporters' redact_command/redact_args wrap it).
    from agbom.scan.redact import redact_args

    try:
        text = redact_args([text])[0][0]
    except ValueError:  # unbalanced quotes: the words are redacted one by one
        text = " ".join(redact_args(text.split())[0])
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def check_lines(lines: Iterable[str], file: str) -> Iterator[ContentFinding]:
    """The checks over one text file given as lines (see :func:`check_text`)."""
    return check_text("\n".join(lines), file)


class _Text:
    """One file as read (``original``) and as matched (``norm``, same lines after mapping)."""

    def __init__(self, original: str, file: str) -> None:
        self.original = original
        self.file = file
        self.folded = Normalised(original)
        self.norm = self.folded.text  # every line whole: a long line costs what many do
        self.lower = self.norm.translate(_ASCII_LOWER)
        self._starts: list[int] | None = None
        self._words: dict[str, bool] = {}
        self._prose: ProseView | None = None
        self.found: list[ContentFinding] = []
        self.argv_sent = False  # a script whose own arguments reach the network
        self.skipped: set[str] = set()  # checks whose patterns were over MAX_STARTS

    @property
    def prose(self) -> ProseView:
        """:attr:`norm` with markdown emphasis removed, for the phrase checks."""
        if self._prose is None:
            self._prose = ProseView(self.norm)
        return self._prose

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and column of an original offset."""
        if self._starts is None:
            self._starts = [0]
            self._starts.extend(m.end() for m in re.finditer("\n", self.original))
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1

    def line_bounds(self, offset: int) -> tuple[int, int]:
        """Start and end (before its newline) of the line of ``offset`` in :attr:`norm`."""
        begin = self.norm.rfind("\n", 0, offset) + 1
        end = self.norm.find("\n", offset)
        return begin, len(self.norm) if end < 0 else end

    def add(
        self, check: str, start: int, end: int, *, text: str | None = None, detail: str = ""
    ) -> None:
        """A finding over ``norm[start:end]``, placed on the original text (``detail``: what
        an analysis says the code does, put before the matched text)."""
        begin = self.folded.origin(start)
        stop = max(self.folded.origin(end, end=True), begin + 1)
        line, column = self.position(begin)
        end_line, end_column = self.position(stop)
        if text is None:
            lo = self.original.rfind("\n", 0, begin) + 1
            hi = self.original.find("\n", stop)
            hi = len(self.original) if hi < 0 else hi
            text = self.original[max(lo, begin - 20) : min(hi, stop + 40)]
            text = " ⏎ ".join(part.strip() for part in text.splitlines())
        if detail:
            text = f"{detail}: {text}"
        self.found.append(
            ContentFinding(check, self.file, line, shown(text), column, end_line, end_column)
        )

    def needs(self, words: tuple[str, ...], *, prose: bool = False) -> bool:
        """One of ``words`` is in the lower-cased text (each word looked up once), or, for
        ``prose``, in the text without markdown emphasis."""
        seen = self._words
        for word in words:
            if word not in seen:
                seen[word] = word in self.lower
            if seen[word]:
                return True
        if prose and any(mark in self.norm for mark in "*_~<") and self.prose.text is not self.norm:
            lower = self.prose.text.translate(_ASCII_LOWER)
            return any(word in lower for word in words)
        return False

    def dense(self, check: str, words: tuple[str, ...]) -> bool:
        """More than :data:`MAX_STARTS` places in the file where ``check``'s pattern could
        start (its words, counted): the pattern is not run over the file, which is listed as
        partly checked (``skipped``), so that 1 MB of ``curl x`` costs a count, not a match
        attempt at every word (the parse-based analyses of its code still run)."""
        count = 0
        for word in words:
            count += self.lower.count(word)
            if count > MAX_STARTS:
                self.skipped.add(check)
                return True
        return False


def check_text(text: str, file: str) -> Iterator[ContentFinding]:
    """The text checks (patterns, two-step patterns, invisible characters, blank runs) over
    one file, in line order. Matching runs on the normalised text (see
    :mod:`agbom.scan._normalise`); positions are those of the original."""
    return iter(_check(text, file).found)


def _check(text: str, file: str) -> _Text:
    doc = _Text(text, file)
    _blank_runs(doc)
    _invisible(doc)
    norm = doc.norm
    lines_of: dict[str, set[int]] = {}  # one finding per check and line, as before
    for check, pattern, words in _PHRASES:
        if not doc.needs(words, prose=check in _PROSE_CHECKS) or doc.dense(check, words):
            continue
        seen = lines_of.setdefault(check, set())
        prose = doc.prose if check in _PROSE_CHECKS else None
        text = norm if prose is None else prose.text
        for match in pattern.finditer(text):
            start = match.start()
            while text[start] in " \t\n" and start < match.end() - 1:
                start += 1  # a pattern's leading separator is not part of what it found
            end = match.end()
            while end > start + 1 and text[end - 1] in " \t\n":
                end -= 1  # nor its trailing one
            if prose is not None:
                start, end = prose.origin(start), prose.origin(end, end=True)
            line = doc.line_bounds(start)[0]
            if line in seen:
                continue
            seen.add(line)
            name = check
            if check == "download-to-shell" and is_vendor_installer(match.group()):
                name = "vendor-installer"
            if _teaching(text, match):
                doc.add("cited-attack", start, end, detail=f"{name}, quoted or warned against")
                continue
            doc.add(name, start, end)
    if doc.needs(_NEEDS["saved"]) and not doc.dense("download-to-shell", _SAVED_STARTS):
        _saved_then_run(doc)
    if (
        doc.needs(_NEEDS["secret"])
        and doc.needs(_NEEDS["send"])
        and not doc.dense("secret-exfiltration", _NEEDS["secret"])
    ):
        _exfiltration(doc)
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


def _prose(doc: _Text, lines_of: dict[str, set[int]]) -> None:
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
        if match is not None and _teaching(prose.text, match):
            doc.add("cited-attack", origin_start, origin_end, detail=f"{check}, quoted")
            continue
        doc.add(check, origin_start, origin_end)
    markdown = doc.file.lower().endswith(_MARKDOWN)
    for check, start, end in hidden_findings(doc.norm, markdown=markdown):
        doc.add(check, start, end)


def _teaching_sections(doc: _Text) -> None:
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


def _code(doc: _Text, lines_of: dict[str, set[int]]) -> None:
    """What the analyses of the file's code find (:mod:`agbom.scan.content_code`: its
    scripts, its markdown's code blocks), where the patterns did not already report the
    check on that line."""
    from agbom.scan.content_code import analyse_file

    covered: set[tuple[str, int]] = set()  # (check, line) the patterns' findings span
    for found in doc.found:
        last = max(found.end_line or found.line, found.line)
        covered.update((found.check, n) for n in range(found.line, min(last, found.line + 64) + 1))
    code = analyse_file(doc.norm, doc.file, is_vendor_installer)
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


def _blank_runs(doc: _Text) -> None:
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


def _invisible(doc: _Text) -> None:
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


def _teaching(norm: str, match: re.Match[str]) -> bool:
    """The match is warned against, or quoted as an example, in its sentence."""
    before = norm[max(0, match.start() - 120) : match.start()]
    if _WARNED.search(before[-40:]) is not None:
        return True
    opening = before.rstrip()[-1:] if before.rstrip() else ""
    closing = norm[match.end() : match.end() + 3].lstrip()[:1]
    if opening and opening in _QUOTES and closing and closing in _QUOTES + ".,;:":
        sentence = re.split(r"[.!?\n]\s", before)[-1]
        return _EXAMPLE_CUE.search(sentence) is not None
    return False


def _saved_then_run(doc: _Text) -> None:
    """``curl URL -o F`` (or decoded data written to F), then F run within a few lines:
    ``sh F``, ``bash F``, ``chmod +x F && ./F``, ``source F``, ``subprocess.run([F])``."""
    norm = doc.norm
    for saved in _SAVED.finditer(norm):
        name = saved.group(2) or saved.group(4) or saved.group(5)
        if not name or name.startswith("-") or name in {"/dev/null", "-"}:
            continue
        if saved.group("fetch") and saved.group(2) is None:
            continue
        base = name.rsplit("/", 1)[-1]
        if not base or base in {".", ".."}:
            continue
        stop = _lines_after(norm, saved.end())
        ref = rf"(?:[\w./~$%{{}}-]*/)?{re.escape(base)}(?![\w.-])"
        runs = re.compile(
            rf"(?im)(?:^|[\s;&|(`'\"])(?:sudo\s+)?(?:(?:ba|z|k|da)?sh|source|\.|python[0-9.]*"
            rf"|node|perl|ruby|pwsh|powershell)\s+(?:-\S+\s+)*[\"']?{ref}"
            rf"|(?:^|[;&|(`]|&&|\bthen)\s*(?:sudo\s+)?[\"']?(?:\./|/|~/|\$\w+/)\S*?{ref}"
            rf"|\b(?:subprocess\.\w+|os\.system|os\.popen|os\.exec\w*|Popen)\s*\([^\n]{{0,200}}?{ref}"
        )
        run = runs.search(norm, saved.end(), stop)
        if run is None:
            continue
        check = "decode-and-execute" if saved.group(2) is None else "download-to-shell"
        if check == "download-to-shell":
            if is_vendor_installer(saved.group()):
                check = "vendor-installer"
            elif _teaching(norm, saved):
                check = "cited-attack"
        doc.add(check, saved.start(), saved.end(), text=_two(doc, saved.start(), run.end()))


def _two(doc: _Text, start: int, end: int) -> str:
    """The two parts of a two-step pattern as one line of text."""
    lo, _ = doc.line_bounds(start)
    _, hi = doc.line_bounds(max(start, end - 1))
    original = doc.original[doc.folded.origin(lo) : doc.folded.origin(hi, end=True)]
    return " ⏎ ".join(part.strip() for part in original.splitlines() if part.strip())


def _exfiltration(doc: _Text) -> None:
    """A credential source and a send on one (logical) line; a source assigned to a
    variable or written to a file that a send within a few lines uses; or prose asking to
    send a credential source to an address, within its sentence. The sends and the prose
    requests are found once per file, each source then looks them up by offset."""
    norm = doc.norm
    sends = [m.start() for m in _SEND.finditer(norm)]
    prose = [m.span() for m in _PROSE_SEND.finditer(norm)]
    prose_starts = [start for start, _ in prose]
    if not sends and not prose:
        return
    covered = -1  # the end of the last finding: one finding per line
    for source in _SECRET_SOURCE.finditer(norm):
        if source.start() <= covered:
            continue
        lo, hi = doc.line_bounds(source.start())
        found: tuple[int, int] | None = None
        index = bisect.bisect_left(sends, lo)
        if index < len(sends) and sends[index] < hi:
            found = (lo, hi)
        if found is None and index < len(sends):
            found = _sent_later(doc, source, lo, hi, sends[index:])
        if found is None and prose:
            # prose wraps: the request may stand on the line before or after the source
            near = bisect.bisect_left(prose_starts, source.start() - 360)
            for start, end in prose[near : near + 8]:
                if start - 200 <= source.start() <= end + 200:
                    match = _PROSE_SEND.match(norm, start)
                    if match is not None and not _teaching(norm, match):
                        found = (min(start, source.start()), max(end, source.end()))
                        break
        if found is None:
            continue
        covered = doc.line_bounds(max(found[0], found[1] - 1))[1]
        begin = found[0]
        while begin < found[1] - 1 and norm[begin] in " \t":
            begin += 1  # the line's indentation is not part of what was found
        doc.add("secret-exfiltration", begin, found[1], text=_two(doc, found[0], found[1]))


_KEY_OPTION = re.compile(r"\s-i\s*[\"']?\$\{?$")


def _lines_after(norm: str, pos: int) -> int:
    """Where the :data:`_RUN_AFTER`-th line after ``pos`` ends (the text's end if sooner),
    at most :data:`_RUN_AFTER_CHARS` after ``pos``."""
    stop = pos
    limit = min(len(norm), pos + _RUN_AFTER_CHARS)
    for _ in range(_RUN_AFTER):
        nxt = norm.find("\n", stop + 1, limit)
        if nxt < 0:
            return limit
        stop = nxt
    return stop


def _sent_later(
    doc: _Text, source: re.Match[str], lo: int, hi: int, sends: list[int]
) -> tuple[int, int] | None:
    """A send within a few lines that uses what the source's line assigned or wrote
    (``sends``: the offsets of the sends after the line, in order)."""
    norm = doc.norm
    stop = _lines_after(norm, hi)
    if sends[0] >= stop:
        return None
    names: list[str] = []
    assigned = _ASSIGNED.match(norm[lo:hi].lstrip())
    if assigned is not None:
        names.append(assigned.group(1))
    written = re.search(r">\s*[\"']?([\w./~$-]+)", norm[source.end() : hi])
    if written is not None:
        names.append(written.group(1).rsplit("/", 1)[-1])
    names = [n for n in names if n]
    if not names:
        return None
    uses = re.compile("|".join(rf"(?<![\w]){re.escape(n)}(?![\w])" for n in names))
    for send in sends:
        if send >= stop:
            break
        s_lo, s_hi = doc.line_bounds(send)
        for use in uses.finditer(norm, s_lo, s_hi):
            if not _KEY_OPTION.search(norm, max(s_lo, use.start() - 8), use.start()):
                return lo, s_hi  # (a key given to ssh -i logs in with it, and sends nothing)
    return None


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
    markdown: dict[str, _Text] = {}
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


def _mcp(folder: Path, path: str, data: bytes, doc: _Text) -> Iterator[ContentFinding]:
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
    markdown: dict[str, _Text], sends_arguments: set[str]
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
