"""The Overview page's charts in Debian's chromium against a real ``agbom serve``, as a
viewer and as an approver, at 1,280 and 800 px, with JavaScript off: reached from the
navigation, each chart an SVG drawn on the server that the browser lays out at a non-zero
size under the page's CSP (no console error, no refused request), and each chart's table
holding the numbers its shapes carry, which are the store's. The decisions charted are the
served Guardian's own, made over ACS: sessions started (allowed) and skills registered that
nobody approved (denied)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from agbom.store import open_store
from tests import fleet_data
from tests.guardian.acs import request
from tests.review.reviewing import (
    ARTIFACTS,
    add_reviewer,
    hello_as,
    need_browser,
    signed_in_page,
    skill_folder,
    version_of,
)
from tests.transports.served import Served, post

pytestmark = pytest.mark.network

SESSIONS = 3


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, str], Any]]:
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
    reviewers = root / "reviewers.json"
    tokens = {
        role: add_reviewer(reviewers, name, role)
        for name, role in (("vic", "viewer"), ("amy", "approver"))
    }
    server = Served(
        db=root / "s.db", log=root / "serve.log", extra=["--reviewers-file", str(reviewers)]
    )
    server.start()
    try:
        version = version_of("unreviewed", skill_folder(root / "skill", {"SKILL.md": "# hi\n"}))
        for n in range(SESSIONS):
            decide_over_acs(server.url, f"claude-code/dev{n}@host", version)
        with open_store(root / "s.db") as store:
            expected = store.fleet_charts()
        yield server, tokens, expected
    finally:
        server.stop()


def decide_over_acs(url: str, agent_id: str, version: Any) -> None:
    """A session started and a skill nobody approved registered: one allow, one deny."""
    sid = f"overview-{agent_id}"
    with httpx.Client() as client:
        assert "result" in post(url, hello_as(sid, agent_id), client=client)
        started = post(
            url, request("steps/sessionStart", {}, session_id=sid, agent_id=agent_id), client=client
        )
        assert started["result"]["decision"] == "allow", started
        payload = {
            "skill_id": version.skill_id,
            "definition": {
                "ref": f"file:///skills/{version.skill_id}",
                "digest": {"algorithm": "sha256", "value": version.value},
                "body": version.body,
            },
            "declared_capabilities": [],
        }
        answer = post(
            url,
            request("steps/skillRegister", payload, session_id=sid, agent_id=agent_id),
            client=client,
        )
        assert answer["result"]["decision"] == "deny", answer


def table(page: Any, selector: str) -> list[list[str]]:
    return page.locator(f"{selector} tbody tr").evaluate_all(
        "trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))"
    )


def shapes(page: Any, selector: str) -> list[str]:
    """What each bar or column says of itself (its SVG title)."""
    return page.locator(f"{selector} svg g > title").evaluate_all(
        "ts => ts.map(t => t.textContent)"
    )


@pytest.mark.parametrize("role", ["viewer", "approver"])
@pytest.mark.parametrize("width", [1280, 800])
def test_the_charts_render_under_the_csp_with_their_numbers(
    site: tuple[Served, dict[str, str], Any], width: int, role: str
) -> None:
    served, tokens, expected = site
    failed: list[str] = []
    with signed_in_page(served.url, tokens[role], width, failed, javascript=False) as page:
        page.get_by_role("navigation", name="Sections").get_by_role("link", name="Overview").click()
        page.wait_for_url(f"{served.url}/ui/overview")
        assert page.locator("h1").inner_text() == "Overview"
        rules = len(expected["top_denied_rules"])
        for chart, tall in (
            ("#statuses-chart svg", 50), ("#pending-chart svg", 50),
            ("#decisions-chart svg", 50), ("#rules-chart svg", 18 * rules),
        ):  # fmt: skip
            box = page.locator(chart).bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] >= tall > 0, chart
            assert page.locator(chart).get_attribute("role") == "img"
        assert page.locator("svg [style], svg style, script:not([src])").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"overview-{width}-{role}.png"), full_page=True)
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
        # queued-3 pending 3 days ago, one more each day; today queued-3 denied, deploy@D2 in,
        # and the skill the sessions registered over ACS (one pair, pending)
        assert [int(count) for _, count in pending[-4:]] == [1, 2, 3, 5]

        kinds = ["allow", "deny", "modify", "ask", "defer"]
        decisions = table(page, "#decisions-table")
        assert decisions == [
            [r["day"], *(str(r[k]) for k in kinds), str(sum(r[k] for k in kinds))]
            for r in expected["decisions_by_day"]
        ]
        said = [f"{r[0]}: " + ", ".join(f"{k} {n}" for k, n in zip(kinds, r[1:6], strict=True))
                for r in decisions]  # fmt: skip
        assert shapes(page, "#decisions-chart") == said
        # each session's start allowed and its registration denied, today
        assert int(decisions[-1][1]) >= SESSIONS and int(decisions[-1][2]) >= SESSIONS
        legend = page.locator("#decisions-chart svg g.legend text").evaluate_all(
            "ts => ts.map(t => t.textContent)"
        )
        assert legend == kinds
        heights = page.locator("#decisions-chart svg rect.seg-deny").evaluate_all(
            "rs => rs.map(r => r.getBBox().height)"
        )
        assert heights and all(h > 0 for h in heights)

        rules = table(page, "#rules-table")
        assert rules == [[r["rule"], str(r["count"])] for r in expected["top_denied_rules"]]
        assert shapes(page, "#rules-chart") == [f"{rule}: {count}" for rule, count in rules]
        assert sum(int(count) for _, count in rules) >= SESSIONS

        page.get_by_role("link", name="pending", exact=True).click()
        page.wait_for_url(f"{served.url}/ui/components?status=pending")
        # a denied rule leads to its denials in the decision log
        page.go_back()
        page.locator("#rules-table a").first.click()
        page.wait_for_url(f"{served.url}/ui/decisions?decision=deny&reason=*")
        assert page.locator("h1").inner_text().startswith("Decision")
        assert page.locator("main table tbody tr").count() >= 1
    assert failed == [], failed  # no 404, no CSP violation
