"""Text for people: what an agent or a file controls must not drive the terminal.

Skill ids, server names, descriptions, paths and reasons reach tables and one-line messages.
Printed raw, an ESC sequence can recolour, move the cursor or retitle the window, a CR or LF
can forge or hide rows, and bidi overrides (U+202E) and zero-width characters can make text
read differently from what it is. :func:`visible` writes each such character as a visible
escape (``\\x1b``, ``\\r``, ``\\u202e``). Machine formats (JSON, CycloneDX, SARIF) keep text
exact; their own escaping covers them.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


def visible(text: object) -> str:
    """``text`` with every character that renders as nothing or as blank, and every one that
    is not printable, written as an escape (the ASCII space excepted).

    Which characters those are is decided once, by their Unicode properties, in
    :mod:`agbom.invisible`: C0 and C1 controls, DEL, format characters (bidi overrides and
    isolates, zero-width characters, the BOM, tags), default-ignorable characters (variation
    selectors, Hangul fillers), spaces other than U+0020, line and paragraph separators, the
    braille blank; and what :meth:`str.isprintable` refuses besides (lone surrogates from
    undecodable file names, private-use and unassigned code points).
    """
    from agbom.invisible import escape

    value = text if isinstance(text, str) else str(text)
    return escape(value, keep=" ")


CUT_MIN = 16
"""On a terminal, the narrowest a ``cut`` column is shown; narrower, it moves under its row."""
FOLD_MIN = 16
"""The narrowest an id (folded) column is made before other columns give way."""
FILL_MIN = 20
"""The narrowest a ``fill`` column (a message) is made."""
ID_SHARE = 0.5
"""The most of the free width an id column takes while the place and details want more."""
ID_SHARE_BESIDE_TEXT = 0.3
"""The same beside a ``fill`` column: a finding's message matters more than its ids."""
INDENT = "    "
"""How far lines printed under a row (details, a finding's place and fix) are indented."""

Cell = str | Sequence[str]
"""A table cell: one text, or several lines of text."""


def to_terminal(output: object = None) -> bool:
    """Whether text written to ``output`` (``None`` or ``-``: stdout) reaches a terminal."""
    if output is not None and str(output) != "-":
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Cell]],
    *,
    tty: bool,
    whole: Sequence[int] = (),
    cut: Sequence[int] = (),
    place: int | None = None,
    fill: Sequence[int] = (),
    below: Sequence[Cell] | None = None,
) -> str:
    """Rows under ``headers``, every cell escaped with :func:`visible`.

    Not on a terminal (a pipe, a file): the stable form scripts read, one line per row,
    columns left-aligned and two spaces apart, nothing cut, no colour (a cell's extra lines
    follow on their own lines). On a terminal, as wide as the terminal at most (``COLUMNS`` is
    honoured), with a bold header unless ``NO_COLOR`` is set; the columns share the width by
    role, the way ``kubectl get -o wide`` and ``gh pr list`` keep what matters on a line:

    - ``whole`` (versions, severities) are never broken;
    - ``place`` (a file path) is shortened from the left, ``…/dir/file.json``, and always
      keeps its file name whole;
    - ``fill`` (a message) wraps at words and gets what the others leave;
    - the other columns (ids) fold onto more lines, but take at most about
      :data:`ID_SHARE` of the free width while the place and text columns want more;
    - ``cut`` (details a script reads from the pipe or JSON form) stay on one line ending in
      ``…``; when the terminal is too narrow to give them :data:`CUT_MIN` characters they
      move under the row, ``HEADER: text``, indented.

    ``below`` gives each row lines printed under it, indented and wrapped to the terminal's
    full width (the place and fix of a finding, say).
    """
    lines_of = [_lines(cell) for cell in headers]
    body = [[_lines(cell) for cell in row] for row in rows]
    extra = [_lines(cell) for cell in below] if below is not None else None
    if not tty:
        return _plain([h[0] for h in lines_of], body, extra)
    roles = _Roles(whole=tuple(whole), cut=tuple(cut), place=place, fill=tuple(fill))
    return _terminal([h[0] for h in lines_of], body, extra, roles)


def _lines(cell: Cell) -> list[str]:
    parts = [cell] if isinstance(cell, str) else list(cell)
    return [visible(part) for part in parts] or [""]


def _plain(headers: list[str], body: list[list[list[str]]], below: list[list[str]] | None) -> str:
    widths = [len(h) for h in headers]
    for row in body:
        widths = [max(w, len(cell[0])) for w, cell in zip(widths, row, strict=True)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for index, row in enumerate(body):
        out.append("  ".join(c[0].ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        out.extend("    " + line for cell in row for line in cell[1:])
        if below is not None:
            out.extend("    " + line for line in below[index] if line)
    return "\n".join(out)


@dataclass(frozen=True)
class _Roles:
    whole: tuple[int, ...]
    cut: tuple[int, ...]
    place: int | None
    fill: tuple[int, ...]


def _terminal(
    headers: list[str],
    body: list[list[list[str]]],
    below: list[list[str]] | None,
    roles: _Roles,
) -> str:
    from rich.cells import cell_len

    width = max(shutil.get_terminal_size((100, 24)).columns, 20)
    bold = not os.environ.get("NO_COLOR")
    count = len(headers)
    natural = [
        max([cell_len(header)] + [max(cell_len(line) for line in row[i]) for row in body])
        for i, header in enumerate(headers)
    ]
    need = 0
    if roles.place is not None:
        need = max((_name_width(line) for row in body for line in row[roles.place]), default=0)
    shown = list(range(count))
    widths = _fit(natural, width - 2 * (count - 1), roles, need)
    if widths is None:  # the cut columns move under the row
        shown = [i for i in shown if i not in roles.cut]
        sub = _Roles(
            whole=tuple(shown.index(i) for i in roles.whole if i in shown),
            cut=(),
            place=shown.index(roles.place) if roles.place is not None else None,
            fill=tuple(shown.index(i) for i in roles.fill if i in shown),
        )
        fitted = _fit([natural[i] for i in shown], width - 2 * (len(shown) - 1), sub, need)
        assert fitted is not None  # nothing left to move
        widths = [0] * count
        for slot, i in enumerate(shown):
            widths[i] = fitted[slot]
    # A header wider than its column folds like an id (narrow terminals, many columns).
    titles = [_chop(headers[i], widths[i]) for i in shown]
    out = []
    for n in range(max(len(title) for title in titles)):
        parts = [
            _pad(title[n] if n < len(title) else "", widths[i])
            for title, i in zip(titles, shown, strict=True)
        ]
        line = "  ".join(parts).rstrip()
        out.append(f"\x1b[1m{line}\x1b[0m" if bold else line)
    for index, row in enumerate(body):
        columns = [_cell(row[i], widths[i], i, roles) for i in shown]
        height = max(len(c) for c in columns)
        for n in range(height):
            parts = [
                _pad(c[n] if n < len(c) else "", widths[i])
                for c, i in zip(columns, shown, strict=True)
            ]
            out.append("  ".join(parts).rstrip())
        notes = [
            f"{headers[i].lower()}: {line}" for i in roles.cut if i not in shown for line in row[i]
        ]
        notes = [n for n in notes if not n.endswith(": ")]
        if below is not None:
            notes += [line for line in below[index] if line]
        for note in notes:
            wrapped = _wrap(note, width - len(INDENT))
            out.extend(INDENT + line for line in wrapped)
    return "\n".join(out)


def _name_width(path: str) -> int:
    """The width a place needs to show its file name whole: ``…/`` + name (+ what follows)."""
    from rich.cells import cell_len

    head, sep, tail = path.rpartition("/")
    return cell_len(path) if not sep or not head else cell_len(tail) + 2


def _fit(natural: list[int], room: int, roles: _Roles, need: int) -> list[int] | None:
    """Column widths within ``room``, or ``None`` when the ``cut`` columns should move under
    the row. Each column first gets its minimum (``whole`` its width up to a third of the
    room, ``place`` what its file names need, ids :data:`FOLD_MIN`, ``fill``
    :data:`FILL_MIN`, ``cut`` :data:`CUT_MIN`); what is left is shared evenly among the
    columns that want more, an id column stopping at :data:`ID_SHARE` of the free width until
    the others are satisfied."""
    widths = list(natural)
    if sum(widths) <= room:
        return widths
    for i in roles.whole:
        widths[i] = min(natural[i], max(room // 3, 1))
    free = room - sum(widths[i] for i in roles.whole)
    rest = [i for i in range(len(natural)) if i not in roles.whole]
    ids = [i for i in rest if i not in roles.cut and i not in roles.fill and i != roles.place]
    floor = dict.fromkeys(ids, FOLD_MIN) | dict.fromkeys(roles.fill, FILL_MIN)
    floor |= dict.fromkeys(roles.cut, CUT_MIN)
    if roles.place is not None and roles.place in rest:
        floor[roles.place] = need
    lows = {i: min(natural[i], floor[i]) for i in rest}
    share_of_ids = ID_SHARE_BESIDE_TEXT if any(i in rest for i in roles.fill) else ID_SHARE
    id_cap = max(int(free * share_of_ids), FOLD_MIN)
    if any(i in rest for i in roles.cut):
        # Details stay in the row only if ids can still have their share beside them.
        fair = sum(min(natural[i], id_cap) if i in ids else lows[i] for i in rest)
        if fair > free:
            return None
    if sum(lows.values()) > free:
        # Narrower than the minimums: the place keeps its file names if the others can
        # still have a few characters each; the others start from a few characters and
        # share what is left evenly, so a short column (a status, a date) stays whole.
        lows = {i: min(natural[i], 6) for i in rest}
        if roles.place is not None and roles.place in rest:
            spare = max(free - 6 * (len(rest) - 1), 6)
            lows[roles.place] = min(natural[roles.place], max(need if need <= spare else 6, 6))
        if sum(lows.values()) > free:
            lows = {i: min(natural[i], max(free // len(rest), 1)) for i in rest}
        for i in rest:
            widths[i] = lows[i]
        _share(widths, {i: natural[i] for i in rest}, rest, free - sum(lows.values()))
        return widths
    for i in rest:
        widths[i] = lows[i]
    left = free - sum(lows.values())
    for capped in (True, False):
        # First pass: ids and the place share alike (the place shortens well from the left),
        # messages and details take the rest; second pass: anyone still short.
        shared = set(ids) | ({roles.place} if roles.place is not None else set())
        wants = {
            i: (min(natural[i], max(id_cap, floor[i])) if capped and i in shared else natural[i])
            for i in rest
        }
        left = _share(widths, wants, rest, left)
    return widths


def _share(widths: list[int], wants: Mapping[int, int], columns: Sequence[int], left: int) -> int:
    """Give ``left`` cells out evenly to the ``columns`` below what they want (in place);
    return what no column wanted."""
    pending = [i for i in columns if widths[i] < wants[i]]
    while pending and left > 0:
        share = max(left // len(pending), 1)
        for i in list(pending):
            grant = min(share, wants[i] - widths[i], left)
            widths[i] += grant
            left -= grant
            if widths[i] >= wants[i]:
                pending.remove(i)
    return left


def _pad(text: str, width: int) -> str:
    from rich.cells import cell_len

    return text + " " * max(width - cell_len(text), 0)


def _cell(lines: list[str], width: int, index: int, roles: _Roles) -> list[str]:
    """One cell's lines at ``width``, by the column's role (see :func:`table`)."""
    if index in roles.cut:
        return [_ellipsis(line, width) for line in lines]
    if index == roles.place:
        return [_left(line, width) for line in lines]
    if index in roles.fill:
        return [part for line in lines for part in _wrap(line, width)]
    return [part for line in lines for part in _chop(line, width)]


def _ellipsis(text: str, width: int) -> str:
    from rich.cells import cell_len, chop_cells

    if cell_len(text) <= width:
        return text
    return chop_cells(text, max(width - 1, 1))[0] + "…"


def _left(text: str, width: int) -> str:
    """``text`` cut from the left to ``width``: the end of a path (its file name) stays."""
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    kept = ""
    for char in reversed(text):
        if cell_len(char + kept) > width - 1:
            break
        kept = char + kept
    # Start at a folder boundary when one is near, so the path reads "…/dir/file".
    cut = kept.find("/")
    if 0 <= cut < len(kept) - 1 and cell_len(kept) - cut > _name_width(text) - 2:
        kept = kept[cut:]
    return "…" + kept


def _chop(text: str, width: int) -> list[str]:
    from rich.cells import chop_cells

    return chop_cells(text, max(width, 1)) or [""]


def _wrap(text: str, width: int) -> list[str]:
    """``text`` wrapped at spaces to ``width`` cells; a longer word is folded."""
    from rich.cells import cell_len

    width = max(width, 1)
    out: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if cell_len(candidate) <= width:
            line = candidate
            continue
        if line:
            out.append(line)
        pieces = _chop(word, width)
        out.extend(pieces[:-1])
        line = pieces[-1]
    out.append(line)
    return out
