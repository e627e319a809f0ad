"""Whether an identifier someone chose can be shown faithfully to a person.

Shared by every layer that takes ids from outside: the ACS wire (:mod:`agbom.protocol`), AgBOM
components (:mod:`agbom.inventory`), the command line and the read API. Refused: C0 and C1
controls and DEL (line breaks and tabs included), the Unicode line and paragraph separators,
and every format character (general category Cf: bidi embeddings, overrides and isolates,
zero-width spaces and joiners, the byte order mark, soft hyphen, invisible operators, tags).
Anything else printable is accepted: ids in other scripts are legitimate.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
"""Controls (C0, C1, DEL), format characters, and the line and paragraph separators."""


def invisible_character(text: str) -> str | None:
    """The first refused character of ``text`` (see the module docstring), or ``None``."""
    if text.isascii() and text.isprintable():
        # The common case: printable ASCII ids; one C-level scan decides it.
        return None
    category = unicodedata.category
    refused = _REFUSED_CATEGORIES
    for char in text:
        if category(char) in refused:
            return char
    return None


def escaped(char: str) -> str:
    """``char`` spelled so it can be read: ``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    name = unicodedata.name(char, "")
    if not name:
        name = {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB"}.get(char, "control")
    return f"U+{ord(char):04X} {name}"


def identifier_problem(text: Any) -> str | None:
    """Why ``text`` is not an acceptable identifier, or ``None`` when it is (or is not a
    string: the schemas check types)."""
    if not isinstance(text, str):
        return None
    char = invisible_character(text)
    if char is None:
        return None
    return f"holds {escaped(char)}, an invisible or control character"
