"""Text as the content checks match it: compatibility-folded (NFKC), look-alike letters
mapped to the Latin letter they imitate, invisible formatting characters dropped, and shell
line continuations joined. Every offset of the result maps back to the original text, so a
finding still points at the line and columns a reader sees.

Look-alikes come from Unicode's confusables (UTS #39, ``confusables.txt``) as the
``confusable-homoglyphs`` package ships it: every character that Unicode lists as
confusable with one ASCII letter reads as that letter (Armenian ``օ``, Cherokee, Cyrillic,
Greek, mathematical and other look-alikes, 1,200 or so). A small hand-made table goes
first: it keeps capital I-like letters as ``I`` (UTS #39 skeletons read them as ``l``, which
would hide "Ignore") and adds Cyrillic and Greek letters that look like small capitals of a
Latin letter (``в м т к``). Fullwidth letters need no entry: NFKC folds them. Combining marks
are dropped after decomposition, so ``ìgnore`` reads as ``ignore``.

:class:`ProseView` is a second, prose-only reading: markdown emphasis and inline HTML
formatting removed (``**Ig**nore``, ``prev*ious*``, ``<b>ig</b>nore``), for the phrase checks.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache

# Cyrillic, Greek and Latin letters that look like a Latin letter (lower and upper case).
_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i",
    "ї": "i", "ј": "j", "к": "k", "ӏ": "l", "м": "m", "п": "n", "о": "o", "р": "p",
    "ԛ": "q", "г": "r", "ѕ": "s", "т": "t", "у": "y", "ԝ": "w", "х": "x", "ү": "y",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K",
    "М": "M", "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y", "Ԝ": "W",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin variants, Armenian
    "ı": "i", "ɡ": "g", "ʟ": "L", "ɩ": "i", "ո": "n", "ս": "u", "օ": "o",
}  # fmt: skip


@lru_cache(maxsize=1)
def _confusables() -> dict[str, str]:
    """Unicode's confusables (UTS #39) that read as one ASCII letter, loaded on first use."""
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[str, str] = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        letters = {h["c"] for h in homoglyphs if len(h["c"]) == 1 and h["c"].isascii()}
        letters = {c for c in letters if c.isalpha()}
        if len(letters) != 1:
            continue
        letter = letters.pop()
        if letter == "l" and "CAPITAL" in unicodedata.name(char, ""):
            letter = "I"  # an I-like capital, read as I (UTS #39 reads I itself as l)
        table[char] = letter
    return table


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_CONTINUATION = re.compile(r"\\\r?\n")  # a shell line continuation


@lru_cache(maxsize=4096)
def _fold(ch: str) -> str:
    """One character's skeleton: NFKC, combining marks and formatting characters dropped,
    look-alikes mapped."""
    if ch in _LOOKALIKES:
        return _LOOKALIKES[ch]
    if unicodedata.category(ch) == "Cf":
        return ""  # zero-width and bidi controls, soft hyphen: shown by their own check
    folded = unicodedata.normalize("NFKC", ch)
    confusables = _confusables()
    out = []
    for part in unicodedata.normalize("NFKD", folded):
        if unicodedata.combining(part):
            continue
        out.append(_LOOKALIKES.get(part) or confusables.get(part, part))
    result = "".join(out)
    if not result.isascii():
        return folded if len(folded) == 1 else ch  # not a Latin look-alike: kept as written
    return result


class _OneForOne(dict[int, str]):
    """``str.translate`` table: a character's fold when it is one character, else NUL (never
    in a run of non-ASCII text), computed once per character."""

    def __missing__(self, code: int) -> str:
        folded = _fold(chr(code))
        value = folded if len(folded) == 1 else "\0"
        if len(self) < 65536:
            self[code] = value
        return value


_ONE_FOR_ONE = _OneForOne()


class Normalised:
    """``text`` folded for matching, with :meth:`origin` mapping offsets back; ``code`` is
    the same before shell line continuations are blanked (same length, same offsets), for
    the analyses that parse them."""

    __slots__ = ("_ends", "_shift", "_starts", "code", "text")

    def __init__(self, original: str) -> None:
        # Length-changing replacements, in order: (start in result, length in result,
        # offset in the original). Between them the two texts run in step.
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._shift: list[int] = []  # original - result after each replacement
        if original.isascii():
            text = original
        else:
            pieces: list[str] = []
            done = 0  # original offset copied so far
            out = 0  # length of the result so far
            for run in _NON_ASCII.finditer(original):
                pieces.append(original[done : run.start()])
                out += run.start() - done
                chunk = run.group()
                same_length = chunk.translate(_ONE_FOR_ONE)
                if "\0" not in same_length:  # every character folds to one: offsets kept
                    pieces.append(same_length)
                    out += len(chunk)
                else:
                    folded = [_fold(ch) for ch in chunk]
                    for index, part in enumerate(folded):
                        pieces.append(part)
                        if len(part) != 1:
                            self._starts.append(out)
                            self._ends.append(out + len(part))
                            self._shift.append(run.start() + index + 1 - (out + len(part)))
                        out += len(part)
                done = run.end()
            pieces.append(original[done:])
            text = "".join(pieces)
        # The code analyses parse continuations as their language does; for the patterns a
        # continued shell line reads as one line (same length: offsets are kept).
        self.code = text
        if "\\" in text:
            text = _CONTINUATION.sub(lambda m: " " * len(m.group()), text)
        self.text = text

    def origin(self, offset: int, *, end: bool = False) -> int:
        """The original offset of ``offset`` in :attr:`text` (``end``: an exclusive end)."""
        if not self._starts:
            return offset
        if end and offset > 0:
            return self.origin(offset - 1) + 1
        index = bisect.bisect_right(self._starts, offset) - 1
        if index < 0:
            return offset
        if offset < self._ends[index]:  # inside an expansion: its one original character
            return self._ends[index] + self._shift[index] - 1
        return offset + self._shift[index]


# Markdown emphasis and strike-through markers, and inline HTML formatting tags, where they
# can split or wrap a word: a run of * or _ (or ~~) touching a letter, or a tag.
_EMPHASIS = re.compile(
    r"(?=[*_~<])(?:(?<=\w)[*_]{1,3}(?=\w)|(?<![\w*_])[*_]{1,3}(?=\w)|(?<=\w)[*_]{1,3}(?![\w*_])"
    r"|~~|</?(?:b|i|u|s|em|strong|del|ins|mark|sup|sub|span|code|kbd)(?:\s[^<>\n]{0,200})?>)",
    re.IGNORECASE,
)  # the lookahead first: a position without one of * _ ~ < is passed over at once


class ProseView:
    """``text`` with markdown emphasis and inline formatting tags removed, and
    :meth:`origin` mapping an offset of the result back to ``text``."""

    __slots__ = ("_removed", "_starts", "text")

    def __init__(self, text: str) -> None:
        self._starts: list[int] = []  # result offsets where a removal happened
        self._removed: list[int] = []  # characters removed up to and including it
        pieces: list[str] = []
        done = 0
        removed = 0
        for marker in _EMPHASIS.finditer(text):
            pieces.append(text[done : marker.start()])
            removed += marker.end() - marker.start()
            self._starts.append(marker.start() - (removed - (marker.end() - marker.start())))
            self._removed.append(removed)
            done = marker.end()
        pieces.append(text[done:])
        self.text = "".join(pieces) if self._starts else text

    def origin(self, offset: int, *, end: bool = False) -> int:
        """The offset in the original text of ``offset`` (``end``: an exclusive end)."""
        if end and offset > 0:
            return self.origin(offset - 1) + 1
        index = bisect.bisect_right(self._starts, offset) - 1
        return offset if index < 0 else offset + self._removed[index]
