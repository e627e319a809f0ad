"""Text for people: what an agent or a file controls must not drive the terminal.

Skill ids, server names, descriptions, paths and reasons reach tables and one-line messages.
Printed raw, an ESC sequence can recolour, move the cursor or retitle the window, a CR or LF
can forge or hide rows, and bidi overrides (U+202E) and zero-width characters can make text
read differently from what it is. :func:`visible` writes each such character as a visible
escape (``\\x1b``, ``\\r``, ``\\u202e``). Machine formats (JSON, CycloneDX, SARIF) keep text
exact; their own escaping covers them.
"""

from __future__ import annotations

_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    if point < 0x10000:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


def visible(text: object) -> str:
    """``text`` with every character that is not printable written as an escape.

    Not printable means what :meth:`str.isprintable` says, the ASCII space excepted: C0 and
    C1 controls, DEL, format characters (bidi overrides and isolates, zero-width characters,
    the BOM), line and paragraph separators, other spaces than U+0020, lone surrogates (from
    undecodable file names), private-use and unassigned code points.
    """
    value = text if isinstance(text, str) else str(text)
    if value.isprintable():
        return value
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in value)
