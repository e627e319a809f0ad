"""``agbom inventory components --fleet``: the distinct components of every agent's latest
accepted AgBOM, with their agents and approval status (the store's
``fleet_components``, docs/store.md), as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from agbom.store import Store
from agbom.store._fleet_logic import MAX_PAGE

COLUMNS = ["type", "ref", "version", "name", "purl", "agents", "first_seen", "last_seen", "status"]

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def fleet_rows(
    store: Store, *, type: str | None, status: str | None, search: str | None
) -> Iterator[dict[str, Any]]:
    """Every row, page after page (the store bounds a page; the command lists them all)."""
    offset = 0
    while True:
        page = store.fleet_components(
            type=type, status=status, search=search, limit=MAX_PAGE, offset=offset
        )
        yield from page["components"]
        if len(page["components"]) < MAX_PAGE:
            return
        offset += MAX_PAGE


def csv_text(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """RFC 4180 CSV with a header line. A cell that a spreadsheet would run as a formula
    (``=``, ``+``, ``-``, ``@``, tab or carriage return first: names are the agents' word)
    is prefixed with ``'``, as OWASP advises; an empty cell is a missing value."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, list | tuple):
                value = ",".join(str(v) for v in value)
            text = "" if value is None else str(value)
            cells.append("'" + text if text.startswith(_FORMULA) else text)
        writer.writerow(cells)
    return out.getvalue()
