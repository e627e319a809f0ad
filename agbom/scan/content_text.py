"""One skill file as the content checks read it, and the findings they make on it: the
original text and its normalised form (:mod:`agbom.scan._normalise`), positions mapped back
to the original, the words each pattern needs looked up once, and how a finding's text is
shown (invisible characters named, secrets redacted, cut short).

Shared by the checks of :mod:`agbom.scan.content` and the pattern families of
:mod:`agbom.scan.content_patterns`, so that neither imports the other.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

from agbom.scan._normalise import Normalised, ProseView

MAX_TEXT = 160  # of a finding's text
# Places a pattern may start in one file (the occurrences of its words): past this the
# pattern is not matched over the file, which is listed in ``content_unchecked`` with the
# checks left out. A skill has tens of them; 1 MB of ``curl x`` has 150,000.
MAX_STARTS = 10_000
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


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


class ContentText:
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
        self._prose_lower: str | None = None  # the prose view lower-cased, "" when it is norm
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
        if not prose:
            return False
        if self._prose_lower is None:  # once per file: the marks, and the view lower-cased
            marked = any(mark in self.norm for mark in "*_~<")
            view = self.prose.text if marked else self.norm
            self._prose_lower = view.translate(_ASCII_LOWER) if view is not self.norm else ""
        lower = self._prose_lower
        return bool(lower) and any(word in lower for word in words)

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
