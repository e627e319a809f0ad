"""The overview's charts (issue 45 item 5) from the store: components in use by status, and
pending skill approvals at the end of each day, from the approvals' history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import fleet_data

from agbom.store import Store
from agbom.store._fleet_logic import CHART_DAYS, STATUSES

NOW = datetime(2026, 3, 20, 15, 0, tzinfo=UTC)


def test_components_by_status_counts_each_distinct_component(store: Store) -> None:
    fleet_data.build(store)
    charts = store.fleet_charts(NOW)
    counts = {row["status"]: row["count"] for row in charts["components_by_status"]}
    assert [row["status"] for row in charts["components_by_status"]] == [*STATUSES, None]
    listed = store.fleet_components(limit=100)["components"]
    for status in counts:
        assert counts[status] == sum(1 for r in listed if r["status"] == status), status
    assert sum(counts.values()) == len(listed) == 7
    assert counts["approved"] == 2 and counts[None] == 2  # deploy@D1 and github; model, peer


def test_pending_approvals_at_the_end_of_each_day(store: Store) -> None:
    def day(n: int) -> datetime:
        return NOW - timedelta(days=n)

    for skill_id, seed, at in (("a", "a1", 40), ("b", "b1", 5), ("c", "c1", 5), ("d", "d1", 2)):
        store.record_registration(
            skill_id=skill_id, digest=fleet_data.digest(seed), ref=None,
            declared_capabilities=[], composition={}, provenance=None, agent_id="x",
            tenant_id=None, now=day(at),
        )  # fmt: skip
    store.set_status("b", fleet_data.digest("b1"), "approved", actor="r", now=day(3))
    store.set_status("a", fleet_data.digest("a1"), "denied", actor="r", now=day(1))
    store.set_status("c", fleet_data.digest("c1"), "denied", actor="r", now=NOW)
    series = store.fleet_charts(NOW)["pending_by_day"]
    assert len(series) == CHART_DAYS
    assert series[-1] == {"day": "2026-03-20", "pending": 1}  # d (c denied today)
    by_day = {row["day"]: row["pending"] for row in series}
    assert by_day["2026-02-19"] == 1  # the first day of the window: a, pending since day 40
    assert by_day["2026-03-14"] == 1
    assert by_day["2026-03-15"] == 3  # b and c registered
    assert by_day["2026-03-17"] == 2  # b approved
    assert by_day["2026-03-18"] == 3  # d registered
    assert by_day["2026-03-19"] == 2  # a denied


def test_an_empty_store(store: Store) -> None:
    charts = store.fleet_charts(NOW)
    assert all(row["count"] == 0 for row in charts["components_by_status"])
    assert {row["pending"] for row in charts["pending_by_day"]} == {0}
