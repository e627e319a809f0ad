"""Advisories across the fleet: which components in use an advisory names, and how many
agents run them (``serve --osv``; the Advisories page and ``GET /v1/fleet/advisories``).

The components are the fleet's (:meth:`Store.fleet_components`: every agent's latest
accepted AgBOM), each matched by its purl against the loaded OSV export as the Guardian
matches a component (:meth:`OsvDatabase.match`: a purl without a version matches nothing),
with ``--vex`` statements attached as the Guardian attaches them. One store call groups the
fleet; matching is a dictionary lookup per component with a purl. At most
:data:`MAX_SCANNED` components are looked at; past that the answer says it was cut.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agbom.advisories.osv import SEVERITIES, OsvDatabase
from agbom.store import Store, StoreValueError
from agbom.store._fleet_logic import DEFAULT_PAGE, MAX_PAGE, check_page

MAX_SCANNED = 200_000
"""Fleet components one request matches (the issue's scale is 100,000)."""
MAX_ADVISORIES_SHOWN = 50
"""Advisories listed per component (the count is whole)."""


@dataclass
class AdvisoryFiles:
    """``serve --osv`` and ``--vex`` for a page or an endpoint: loaded on first use (an
    export takes seconds), again when a file's modification time changes; a load that fails
    keeps the previous one (None before any succeeded: the Guardian reports the failure)."""

    osv_path: Path
    vex_paths: tuple[Path, ...] = ()
    _stamp: list[int | None] | None = None
    _loaded: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def current(self) -> Any:
        """A :class:`LiveAdvisories`, wrapped in :class:`StatedAdvisories` with ``--vex``."""
        stamp: list[int | None] = []
        for path in (self.osv_path, *self.vex_paths):
            try:
                stamp.append(path.stat().st_mtime_ns)
            except OSError:
                stamp.append(None)
        with self._lock:
            if self._stamp != stamp:
                from agbom.advisories.live import LiveAdvisories
                from agbom.advisories.vex import StatedAdvisories, read_vex

                try:
                    live: Any = LiveAdvisories(self.osv_path)
                    if self.vex_paths:
                        live = StatedAdvisories(live, read_vex(self.vex_paths))
                    self._loaded = live
                except Exception:  # noqa: BLE001 - a broken export: keep what was loaded
                    pass
                self._stamp = stamp
            return self._loaded


def _database_and_statements(source: Any) -> tuple[OsvDatabase | None, Sequence[Any]]:
    from agbom.advisories.vex import StatedAdvisories

    if isinstance(source, StatedAdvisories):
        return source.advisories.database, source.statements
    return (None if source is None else source.database), ()


def check_severity(severity: Any) -> str | None:
    if severity is None or severity == "":
        return None
    if severity not in SEVERITIES:
        raise StoreValueError(f"severity must be one of {', '.join(SEVERITIES)}")
    return str(severity)


def fleet_advisories(
    store: Store, source: Any, *, severity: Any = None, limit: Any = None, offset: Any = None
) -> dict[str, Any]:
    """A page of the fleet's components that an advisory names, the most severe first:
    ``{"total", "limit", "offset", "scanned", "cut", "components"}``; each component as
    :meth:`Store.fleet_components` gives it, with its ``advisories`` (OSV matches, a ``vex``
    statement where one speaks) and its ``worst`` severity. ``severity`` keeps the
    components with an advisory of that severity."""
    wanted = check_severity(severity)
    size, start = check_page(DEFAULT_PAGE if limit is None else limit, offset)
    if size > MAX_PAGE:
        raise StoreValueError(f"limit must be a whole number from 1 to {MAX_PAGE}")
    database, statements = _database_and_statements(source)
    fleet = store.fleet_components(limit=MAX_SCANNED)
    rows = fleet["components"]
    affected = []
    for row in rows:
        if database is None or not row.get("purl"):
            continue
        matches = [m.to_json() for m in database.match(row["purl"])]
        if not matches:
            continue
        if statements:
            from agbom.advisories.vex import statement_for

            for match in matches:
                said = statement_for(match, statements)
                if said is not None:
                    match["vex"] = said.to_json()
        if wanted is not None and not any(m["severity"] == wanted for m in matches):
            continue
        worst = min(SEVERITIES.index(m["severity"]) for m in matches)
        affected.append(
            {
                **row,
                "worst": SEVERITIES[worst],
                "advisory_count": len(matches),
                "advisories": matches[:MAX_ADVISORIES_SHOWN],
            }
        )
    affected.sort(key=lambda r: (SEVERITIES.index(r["worst"]), -r["agents"], r["name"] or ""))
    total = fleet["total"] or 0
    return {
        "loaded": database is not None,
        "total": len(affected),
        "limit": size,
        "offset": start,
        "scanned": len(rows),
        "cut": total > len(rows),
        "components": affected[start : start + size],
    }
