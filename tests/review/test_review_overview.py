"""The Overview page's charts in Debian's chromium against a real ``agbom serve``, as a
viewer, at 1,280 and 800 px, with JavaScript off: reached from the navigation, each chart an
SVG drawn on the server that the browser lays out at a non-zero size under the page's CSP
(no console error, no refused request), and each chart's table holding the numbers its
shapes carry, which are the store's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agbom.store import open_store
from tests import fleet_data
from tests.review.reviewing import ARTIFACTS, need_browser, served_to_a_viewer, signed_in_page
from tests.transports.served import Served

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str, Any]]:
    need_browser()
    root = tmp_path_factory.mktemp("overview")
    with open_store(root / "s.db") as store:
        fleet_data.build(store)
        for n in range(4):  # pending since n days ago, then two of them decided
            store.record_registration(
                skill_id=f"queued-{n}", digest=fleet_data.digest(f"q{n}"), ref=None,
                declared_capabilities=[], composition={}, provenance=None, agent_id="x",
                tenant_id=None, now=datetime.now(UTC) - timedelta(days=n),
            )  # fmt: skip
        store.set_status("queued-3", fleet_data.digest("q3"), "denied", actor="r")
        expected = store.fleet_charts()
    with served_to_a_viewer(root) as served:
        yield (*served, expected)


def table(page: Any, selector: str) -> list[list[str]]:
    return page.locator(f"{selector} tbody tr").evaluate_all(
        "trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))"
    )


def shapes(page: Any, selector: str) -> list[str]:
    """What each bar or column says of itself (its SVG title)."""
    return page.locator(f"{selector} svg g > title").evaluate_all(
        "ts => ts.map(t => t.textContent)"
    )


@pytest.mark.parametrize("width", [1280, 800])
def test_the_charts_render_under_the_csp_with_their_numbers(
    site: tuple[Served, str, Any], width: int
) -> None:
    served, token, expected = site
    failed: list[str] = []
    with signed_in_page(served.url, token, width, failed, javascript=False) as page:
        page.get_by_role("navigation", name="Sections").get_by_role("link", name="Overview").click()
        page.wait_for_url(f"{served.url}/ui/overview")
        assert page.locator("h1").inner_text() == "Overview"
        for chart in ("#statuses-chart svg", "#pending-chart svg"):
            box = page.locator(chart).bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 50, chart
            assert page.locator(chart).get_attribute("role") == "img"
        assert page.locator("svg [style], svg style, script:not([src])").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"overview-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        statuses = table(page, "#statuses-table")
        want = [
            [row["status"] or "not reviewed by agbom", str(row["count"])]
            for row in expected["components_by_status"]
        ]
        assert statuses == want
        assert shapes(page, "#statuses-chart") == [f"{label}: {count}" for label, count in want]
        assert dict(map(tuple, statuses))["approved"] == "2"  # type: ignore[arg-type]

        pending = table(page, "#pending-table")
        assert pending == [[r["day"], str(r["pending"])] for r in expected["pending_by_day"]]
        assert shapes(page, "#pending-chart") == [f"{day}: {count}" for day, count in pending]
        # queued-3 pending 3 days ago, one more each day; today queued-3 denied, deploy@D2 in
        assert [int(count) for _, count in pending[-4:]] == [1, 2, 3, 4]

        page.get_by_role("link", name="pending", exact=True).click()
        page.wait_for_url(f"{served.url}/ui/components?status=pending")
    assert failed == [], failed  # no 404, no CSP violation
