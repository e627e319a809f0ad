"""Shell text as the shell's reader hands it to the parser: each backslash-newline outside
single quotes, ``$'…'`` strings, comments and here-document bodies removed, as the shell
removes it before it splits words.

The grammar (:mod:`agbom.analysis.shell`) reads ``cu\\<newline>rl`` as two words where the
shell runs ``curl``: a word split over lines would hide the program it names. The text is
joined first, and :func:`join_continuations` says where pairs were cut, so that every
position found in the joined text is placed back on the original
(:meth:`agbom.analysis.shell_expand.Offsets.after_cuts`).

Here-document bodies are copied as they are: the shell reading one as a script (``bash
<<'EOF'``) joins its lines itself, and the nested text is joined when it is parsed in turn.
The scan is one pass over the bytes that matter (quotes, ``#``, ``<<``, backslashes,
newlines), so its cost is bounded by the text's size, itself bounded by the analysis's
limits. A backslash-newline is two ASCII bytes, never inside a UTF-8 sequence, so bytes are
joined without decoding them.
"""

from __future__ import annotations

import re

_CONTINUATION = b"\\\n"
_SPECIAL = re.compile(rb"""\\.|\\$|\$'|'|"|#|<<-?|\(\(|\n""", re.DOTALL)
_COMMENT_AFTER = frozenset(b" \t\n;&|()")  # "#" starts a comment after one of these
_DELIMITER = re.compile(rb"""[ \t]*((?:[^\s;&|<>()'"\\]|\\.|'[^']*'|"[^"]*")+)""")


def join_continuations(data: bytes) -> tuple[bytes, list[int]]:
    """``data`` with its line continuations removed, and where each removed pair stood in
    the joined bytes (in order; a position appears once per pair cut there)."""
    if _CONTINUATION not in data:
        return data, []
    out = bytearray()
    cuts: list[int] = []
    pending: list[tuple[bytes, bool]] = []  # here-documents whose bodies start next line
    index = 0
    length = len(data)
    while index < length:
        match = _SPECIAL.search(data, index)
        if match is None:
            out += data[index:]
            break
        start, token = match.start(), match.group()
        out += data[index:start]
        index = match.end()
        if token == _CONTINUATION:
            cuts.append(len(out))
        elif token.startswith(b"\\"):
            out += token  # an escaped character: not a quote, comment or operator
        elif token == b"'":
            index = _copy_until(data, index, b"'", out, token)
        elif token == b"$'":
            index = _copy_ansi_c(data, index, out)
        elif token == b'"':
            index = _double_quoted(data, index, out, cuts)
        elif token == b"#":
            if start == 0 or data[start - 1] in _COMMENT_AFTER:
                index = _copy_until(data, index, b"\n", out, token, keep_end=False)
            else:
                out += token
        elif token == b"((":  # arithmetic (also after "$"): its "<<" is a shift
            index = _arithmetic(data, index, out, cuts)
        elif token.startswith(b"<<"):
            out += token
            found = _DELIMITER.match(data, index)
            if found is not None and not data.startswith(b"<", index):
                out += found.group()
                index = found.end()
                word = found.group(1)
                pending.append((_unquoted(word), token == b"<<-"))
        else:  # a newline: here-document bodies follow it
            out += token
            for delimiter, strip_tabs in pending:
                index = _copy_body(data, index, delimiter, strip_tabs, out)
            pending.clear()
    return bytes(out), cuts


def _copy_until(
    data: bytes, index: int, end: bytes, out: bytearray, opening: bytes, *, keep_end: bool = True
) -> int:
    """Copy ``opening`` and the text up to ``end`` (included when ``keep_end``) as it is."""
    stop = data.find(end, index)
    stop = len(data) if stop < 0 else stop + (len(end) if keep_end else 0)
    out += opening
    out += data[index:stop]
    return stop


def _copy_ansi_c(data: bytes, index: int, out: bytearray) -> int:
    """A ``$'…'`` string, whose backslashes escape (``\\'`` does not close it)."""
    out += b"$'"
    while index < len(data):
        byte = data[index]
        if byte == 0x5C and index + 1 < len(data):  # backslash
            out += data[index : index + 2]
            index += 2
            continue
        out.append(byte)
        index += 1
        if byte == 0x27:  # the closing quote
            break
    return index


def _escape(data: bytes, index: int, out: bytearray, cuts: list[int]) -> int:
    """The backslash at ``index`` and the byte after it, inside ``"…"`` or ``((…))``: a
    backslash-newline is cut (and where noted), any other pair is copied as it is."""
    if data[index + 1] == 0x0A:
        cuts.append(len(out))
    else:
        out += data[index : index + 2]
    return index + 2


def _double_quoted(data: bytes, index: int, out: bytearray, cuts: list[int]) -> int:
    """A double-quoted string: a backslash-newline is removed, other escapes kept."""
    out += b'"'
    while index < len(data):
        byte = data[index]
        if byte == 0x5C and index + 1 < len(data):
            index = _escape(data, index, out, cuts)
            continue
        out.append(byte)
        index += 1
        if byte == 0x22:
            break
    return index


def _arithmetic(data: bytes, index: int, out: bytearray, cuts: list[int]) -> int:
    """``((…))`` up to its closing parentheses (or the line's end), continuations removed."""
    out += b"(("
    depth = 2
    while index < len(data) and depth > 0:
        byte = data[index]
        if byte == 0x5C and index + 1 < len(data):
            index = _escape(data, index, out, cuts)
            continue
        if byte == 0x0A:
            break  # arithmetic is one line; past it, the main scan goes on
        depth += 1 if byte == 0x28 else -1 if byte == 0x29 else 0
        out.append(byte)
        index += 1
    return index


def _unquoted(word: bytes) -> bytes:
    """A here-document's delimiter as the line that ends it is written."""
    return word.replace(b"'", b"").replace(b'"', b"").replace(b"\\", b"")


def _copy_body(data: bytes, index: int, delimiter: bytes, strip_tabs: bool, out: bytearray) -> int:
    """Copy a here-document's body and its closing line as they are."""
    while index < len(data):
        end = data.find(b"\n", index)
        stop = len(data) if end < 0 else end + 1
        line = data[index:stop]
        out += line
        index = stop
        text = line.rstrip(b"\n")
        if (text.lstrip(b"\t") if strip_tabs else text) == delimiter:
            break
    return index
