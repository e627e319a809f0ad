"""The Overview page: the fleet's state as pictures, each with its numbers in a table
(:mod:`agbom.review.charts` draws them; ``Store.fleet_charts`` counts them, bounded at any
fleet size: docs/performance.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from agbom.review.charts import bars, columns, stacked
from agbom.store import Store
from agbom.store._decision_counts import DISPOSITIONS


def overview_page(store: Store, now: datetime | None = None) -> dict[str, Any]:
    """What ``overview.html`` shows: each chart's SVG and the rows of its table."""
    found = store.fleet_charts(now)
    statuses = [
        {
            "status": row["status"],
            "label": row["status"] or "not reviewed by agbom",
            "count": row["count"],
            "link": "/ui/components" + (f"?status={row['status']}" if row["status"] else ""),
        }
        for row in found["components_by_status"]
    ]
    pending = found["pending_by_day"]
    decisions = [{**r, "total": sum(r[k] for k in DISPOSITIONS)} for r in found["decisions_by_day"]]
    rules = [
        {**r, "link": "/ui/decisions?" + urlencode({"decision": "deny", "reason": r["rule"]})}
        for r in found["top_denied_rules"]
    ]
    return {
        "statuses": statuses,
        "statuses_svg": bars(
            [(r["label"], r["count"], r["status"] or "none") for r in statuses],
            title="Components in use by status",
            name="components-by-status",
        ),
        "pending": pending,
        "pending_svg": columns(
            [(r["day"], r["pending"]) for r in pending],
            title="Skill approvals pending at the end of each day",
            name="pending-by-day",
        ),
        "dispositions": DISPOSITIONS,
        "decisions": decisions,
        "decisions_svg": stacked(
            [(r["day"], [(k, r[k]) for k in DISPOSITIONS]) for r in decisions],
            title="Decisions recorded each day by disposition",
            name="decisions-by-day",
        ),
        "rules": rules,
        "rules_svg": bars(
            [(r["rule"], r["count"], "denied") for r in rules],
            title="Rules that denied most",
            name="top-denied-rules",
        ),
    }
