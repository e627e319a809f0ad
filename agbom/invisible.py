"""Characters that render as nothing or as blank, told apart by their Unicode properties.

One classification for every place where text from outside reaches a person (the CLI's
tables and messages through :func:`agbom.display.visible`, the review page) and for the
content check that reports such characters in a skill's files (``invisible-characters`` and
``blank-characters``, agbom/scan/content.py). Two kinds, both read from the Unicode Character
Database through the ``regex`` module's tables, never from a list of code points:

- **nothing**: drawn as nothing at all. Format characters (general category Cf: zero-width
  spaces and joiners, bidi controls, tags, the BOM, the soft hyphen), control characters
  (Cc) other than the line-layout ones below, and every Default_Ignorable_Code_Point
  (variation selectors, the combining grapheme joiner, the Hangul fillers, the reserved
  ignorable ranges);
- **blank**: drawn as empty space. Every other White_Space character and space, line and
  paragraph separator (Zs, Zl, Zp: no-break and ideographic spaces, U+2028), and
  U+2800 BRAILLE PATTERN BLANK, the one graphic character (So) drawn empty that no Unicode
  property marks.

The ASCII space, tab, line feed and carriage return are ordinary layout and neither.
Combining marks (Mn, Me) are drawn on the character before them, so they are neither, except
those Unicode makes default-ignorable (variation selectors among them).

:func:`hidden` finds the runs a content check reports. Well-formed emoji sequences are left
out: one VS15/VS16 after an emoji, ZWJ between emoji (👩‍💻), keycaps, a subdivision flag's
tags, and one ideographic variation selector after a Han character are how those render.
A run of selectors after an emoji (bytes smuggled as variation selectors) is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

ORDINARY = " \t\n\r"
"""Layout characters that are neither kind."""
BLANK_GLYPHS = "\u2800"
"""Graphic characters drawn empty that no Unicode property marks (see the module docstring)."""

NOTHING = "nothing"
BLANK = "blank"


@cache
def _patterns() -> tuple[regex.Pattern[str], regex.Pattern[str], regex.Pattern[str]]:
    import regex

    nothing = regex.compile(
        r"[[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cc}]--[\t\n\r\x0b\x0c\x85]]", regex.V1
    )
    blank = regex.compile(
        rf"[[\p{{White_Space}}\p{{Zs}}\p{{Zl}}\p{{Zp}}{BLANK_GLYPHS}]--[ \t\n\r]]", regex.V1
    )
    element = (
        r"(?:[0-9#*]\uFE0F?\u20E3"  # keycap
        r"|\U0001F3F4[\U000E0061-\U000E007A]{2}[\U000E0030-\U000E0039\U000E0061-\U000E007A]{1,3}"
        r"\U000E007F"  # a subdivision flag: country and subdivision code in tags
        r"|[\p{Extended_Pictographic}\p{Emoji}][\uFE0E\uFE0F]?\p{Emoji_Modifier}?)"
    )
    exempt = regex.compile(
        rf"{element}(?:\u200D{element})+"  # a ZWJ sequence
        rf"|{element}"
        r"|\p{Ideographic}[\U000E0100-\U000E01EF]",  # an ideographic variation sequence
        regex.V1,
    )
    return nothing, blank, exempt


def _without(text: str, chars: str) -> str:
    """``text`` without ``chars`` (str.replace: C speed, where translate is not)."""
    for char in chars:
        if char in text:
            text = text.replace(char, "")
    return text


@cache
def _printable_but_hidden() -> regex.Pattern[str]:
    """The characters of either kind that :meth:`str.isprintable` lets through: every other
    one (Cc, Cf, Zs, Zl, Zp) it refuses, which makes the common case one C-level scan."""
    import regex

    return regex.compile(rf"[\p{{Default_Ignorable_Code_Point}}{BLANK_GLYPHS}]")


def _clean(text: str) -> bool:
    """No character of either kind in ``text``: cheap, and never True when there is one
    (it may say False for a character this Python does not know, which callers then read
    closely)."""
    if not _without(text, ORDINARY).isprintable():
        return False
    return text.isascii() or _printable_but_hidden().search(text) is None


def kind(char: str) -> str | None:
    """:data:`NOTHING`, :data:`BLANK` or None for one character."""
    nothing, blank, _ = _patterns()
    if nothing.match(char):
        return NOTHING
    if blank.match(char):
        return BLANK
    return None


def has_hidden(text: str) -> bool:
    """Whether ``text`` holds a character of either kind (emoji sequences included)."""
    if _clean(text):
        return False
    nothing, blank, _ = _patterns()
    return nothing.search(text) is not None or blank.search(text) is not None


def escape_char(char: str) -> str:
    """``\\t``, ``\\x1b``, ``\\u200b``, ``\\U000e0041``: a character spelled out."""
    short = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(char)
    if short is not None:
        return short
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    if point < 0x10000:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


@cache
def _escaper(keep: str) -> regex.Pattern[str]:
    """Every character :func:`escape` writes out but those in ``keep``: the two kinds, and
    what :meth:`str.isprintable` refuses (C: controls, format, surrogates, private use,
    unassigned; Z: separators, the ASCII space among them)."""
    import regex

    written = rf"\p{{C}}\p{{Z}}\p{{Default_Ignorable_Code_Point}}{BLANK_GLYPHS}"
    if not keep:
        return regex.compile(f"[{written}]")
    kept = "".join(f"\\x{ord(c):02x}" if ord(c) < 0x100 else regex.escape(c) for c in keep)
    return regex.compile(f"[[{written}]--[{kept}]]", regex.V1)


def escape(text: str, *, keep: str = " ") -> str:
    """``text`` with every character of either kind, and every other character that is not
    printable (:meth:`str.isprintable`: private-use, unassigned, lone surrogates), written
    with :func:`escape_char`; the characters in ``keep`` stay as they are."""
    if text.isascii() and text.isprintable():
        return text
    if _clean(text) and _without(text, keep).isprintable():
        return text  # nothing to write out but layout characters ``keep`` keeps
    out = _escaper(keep).sub(lambda m: escape_char(m.group()), text)
    if _without(out, keep).isprintable():
        return out
    # A character this Python's Unicode tables do not know yet, and the regex module's do.
    return "".join(c if c in keep or c.isprintable() else escape_char(c) for c in out)


def hidden(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, kind)`` of each run of characters of either kind in ``text``, in order,
    outside well-formed emoji and ideographic variation sequences and but for a leading
    byte-order mark. A run holding any character drawn as nothing is of kind
    :data:`NOTHING`."""
    if _clean(text):
        return
    nothing, blank, exempt = _patterns()
    found = sorted(
        [(m.start(), NOTHING) for m in nothing.finditer(text)]
        + [(m.start(), BLANK) for m in blank.finditer(text)]
    )
    if not found:
        return
    spared: list[tuple[int, int]] = []
    if any(k == NOTHING for _, k in found):
        # Only the emoji sequences that hold a character of the first kind matter.
        spared = [m.span() for m in exempt.finditer(text) if m.end() - m.start() > 1]
    run_start = run_end = -1
    run_kind = BLANK
    index = 0
    for position, what in found:
        if position == 0 and text[0] == "\ufeff":
            continue
        while index < len(spared) and spared[index][1] <= position:
            index += 1
        if index < len(spared) and spared[index][0] <= position:
            continue  # inside an emoji sequence
        if position == run_end:
            run_end += 1
            if what == NOTHING:
                run_kind = NOTHING
            continue
        if run_start >= 0:
            yield run_start, run_end, run_kind
        run_start, run_end, run_kind = position, position + 1, what
    if run_start >= 0:
        yield run_start, run_end, run_kind


__all__ = ["BLANK", "NOTHING", "escape", "escape_char", "has_hidden", "hidden", "kind"]
