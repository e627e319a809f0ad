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
from collections.abc import Iterable, Sequence

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


CUT_MIN = 10
"""On a terminal, the narrowest a column cut with ``…`` is made before ids are folded more."""

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
    below: Sequence[Cell] | None = None,
) -> str:
    """Rows under ``headers``, every cell escaped with :func:`visible`.

    Not on a terminal (a pipe, a file): the stable form scripts read, one line per row,
    columns left-aligned and two spaces apart, nothing cut, no colour (a cell's extra lines
    follow on their own lines). On a terminal: a rich table as wide as the terminal at most
    (``COLUMNS`` is honoured), long cells folded onto more lines rather than cut, the columns
    in ``whole`` (versions, severities) never broken, those in ``cut`` (details a script
    reads from the pipe or JSON form) kept to one line ending in ``…``, and a bold header
    unless ``NO_COLOR`` is set. ``below`` gives each row a line printed under it, indented
    (the path of a finding, say).
    """
    lines_of = [_lines(cell) for cell in headers]
    body = [[_lines(cell) for cell in row] for row in rows]
    extra = [_lines(cell) for cell in below] if below is not None else None
    if not tty:
        return _plain([h[0] for h in lines_of], body, extra)
    return _rich([h[0] for h in lines_of], body, extra, whole, cut)


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


def _rich(
    headers: list[str],
    body: list[list[list[str]]],
    below: list[list[str]] | None,
    whole: Sequence[int],
    cut: Sequence[int],
) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    plain = bool(os.environ.get("NO_COLOR"))
    width = max(shutil.get_terminal_size((100, 24)).columns, 20)
    console = Console(
        width=width,
        force_terminal=True,
        no_color=plain,
        highlight=False,
        emoji=False,
        markup=False,
    )
    natural = [
        max([len(header)] + [max(len(line) for line in row[i]) for row in body])
        for i, header in enumerate(headers)
    ]
    widths = _fit(natural, width - 2 * (len(headers) - 1), whole, cut)
    grid = Table(box=None, pad_edge=False, show_edge=False, header_style=None if plain else "bold")
    for index, header in enumerate(headers):
        if index in cut:
            grid.add_column(header, width=widths[index], no_wrap=True, overflow="ellipsis")
        else:
            grid.add_column(header, width=widths[index], overflow="fold")
    for index, row in enumerate(body):
        cells = [Text("\n".join(cell)) for cell in row]
        if below is not None and any(below[index]):  # under the last cell: no column spans
            note = "\n".join(line for line in below[index] if line)
            cells[-1].append("\n" + note, style=None if plain else "dim")
        grid.add_row(*cells)
    with console.capture() as captured:
        console.print(grid)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())


def _fit(natural: list[int], room: int, whole: Sequence[int], cut: Sequence[int]) -> list[int]:
    """Column widths within ``room``. The ``whole`` columns keep their width (up to a third
    of the room each); the folded columns (ids) come next, the ``cut`` ones get the rest
    (at least a few characters each). Within each kind no column is wider than it needs and
    what a narrow one leaves goes to the wider ones."""
    widths = list(natural)
    if sum(widths) <= room:
        return widths
    for i in whole:
        widths[i] = min(natural[i], max(room // 3, 1))
    left = room - sum(widths[i] for i in whole)
    folded = [i for i in range(len(natural)) if i not in whole and i not in cut]
    rest = [i for i in cut if i not in whole]
    reserve = sum(min(natural[i], CUT_MIN) for i in rest)
    for group, budget in ((folded, left - reserve), (rest, None)):
        if budget is None:
            budget = left
        pending = sorted(group, key=lambda i: natural[i])
        while pending:
            i = pending.pop(0)
            widths[i] = min(natural[i], max(budget // (len(pending) + 1), 4))
            budget -= widths[i]
            left -= widths[i]
    return widths
