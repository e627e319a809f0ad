"""The Overview page: the fleet's state as pictures, each with its numbers in a table
(:mod:`agbom.review.charts` draws them; ``Store.fleet_charts`` counts them, bounded at any
fleet size: docs/performance.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agbom.review.charts import bars, columns
from agbom.store import Store


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
    }
