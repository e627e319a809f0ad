"""``agbom inventory components --fleet``: the distinct components of every agent's latest
accepted AgBOM, with their agents, approval status and rule findings (the store's
``fleet_components``, docs/store.md), as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import sys
from typing import Any

from agbom.store import Store
from agbom.store._fleet_logic import MAX_LIMIT

COLUMNS = [
    *("type", "ref", "version", "name", "purl", "agents", "developers", "hosts"),
    *("first_seen", "last_seen", "status", "severity", "findings"),
]

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def fleet_rows(
    store: Store, *, type: str | None, status: str | None, search: str | None,
    host: str | None = None, severity: str | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Every row, in one call (a page costs nearly what the whole list does)."""
    found = store.fleet_components(
        type=type, status=status, search=search, limit=MAX_LIMIT, offset=0, host=host,
        severity=severity,
    )  # fmt: skip
    if (found["total"] or 0) > MAX_LIMIT:
        print(f"agbom: note: the first {MAX_LIMIT} of {found['total']} components", file=sys.stderr)
    rows: list[dict[str, Any]] = found["components"]
    return rows


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
