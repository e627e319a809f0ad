"""The Components pages in Debian's chromium against a real ``agbom serve``, as a viewer, at
1,280 and 800 px, with JavaScript off (the pages need none): the fleet's components reached
from the Fleet page's navigation, filtered with the GET form, paged, each row leading to the
agents that use it; a bad query is a 400 page saying why; nothing the CSP refuses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.store import open_store
from tests import fleet_data
from tests.fleet_data import EXPECTED
from tests.review.reviewing import ARTIFACTS, need_browser, served_to_a_viewer, signed_in_page
from tests.transports.served import Served

pytestmark = pytest.mark.network

EXTRA_MODELS = 110  # with the fleet's 7, two pages of 100
TOTAL = len(EXPECTED) + EXTRA_MODELS


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    need_browser()
    root = tmp_path_factory.mktemp("components")
    with open_store(root / "s.db") as store:
        fleet_data.build(store)
        models = [
            {"id": f"m{i:03}", "type": "model", "name": f"zz-model-{i:03}", "version": "1",
             "provider": "local", "endpoint": None, "context_window": None}
            for i in range(EXTRA_MODELS)
        ]  # fmt: skip
        store.save_agbom_version(
            "s-zed", agent_id="zed", document=fleet_data.doc("zed", *models), agbom_hash="h-zed"
        )
    with served_to_a_viewer(root) as served:
        yield served


def viewer_page(served: Served, token: str, width: int, failed: list[str]) -> Any:
    """A chromium page signed in as the viewer, with JavaScript off: the pages need none."""
    return signed_in_page(served.url, token, width, failed, javascript=False)


def rows(page: Any) -> list[list[str]]:
    return page.locator("#components tbody tr").evaluate_all(
        "trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))"
    )


@pytest.mark.parametrize("width", [1280, 800])
def test_components_from_the_fleet_page_filtered_paged_and_linked(
    site: tuple[Served, str], width: int
) -> None:
    served, token = site
    failed: list[str] = []
    with viewer_page(served, token, width, failed) as page:
        page.goto(f"{served.url}/ui/fleet")
        page.get_by_role("navigation", name="Sections").get_by_role(
            "link", name="Components"
        ).click()
        page.wait_for_url(f"{served.url}/ui/components")
        assert page.locator("h1").inner_text() == "Components across the fleet"
        assert (
            page.locator("#components-count").inner_text() == f"{TOTAL} components; 1 to 100 shown."
        )
        assert len(rows(page)) == 100
        page.screenshot(path=str(ARTIFACTS / f"components-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        page.get_by_role("link", name="Next page").click()
        assert (
            page.locator("#components-count").inner_text()
            == f"{TOTAL} components; 101 to {TOTAL} shown."
        )
        assert len(rows(page)) == TOTAL - 100
        assert page.get_by_role("link", name="Previous page").count() == 1

        # the GET form: type and status, then the row's agents, then the agent
        page.get_by_label("Type").select_option("skill")
        page.get_by_label("Status").select_option("pending")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**/ui/components?type=skill&status=pending&host=&severity=&q=")
        shown = rows(page)
        assert len(shown) == 1 and shown[0][0] == "skill" and shown[0][1] == "deploy"
        assert shown[0][3] == "1 agent using deploy" or shown[0][3].startswith("1 agent")
        assert shown[0][-1] == "pending"
        page.locator("#components a.agents-link").click()
        page.wait_for_url("**/ui/components/agents?type=skill&ref=deploy&version=sha256%3A*")
        agents = page.locator("#component-agents tbody tr").evaluate_all(
            "trs => trs.map(tr => tr.cells[0].innerText.trim())"
        )
        assert agents == ["alice"]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.get_by_role("link", name="alice").click()
        page.wait_for_url(f"{served.url}/ui/agent?id=alice")

        # the rule findings the latest AgBOMs keep, and the filter by the worst of them
        page.goto(f"{served.url}/ui/components")
        page.get_by_label("Findings at least").select_option("medium")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**/ui/components?type=&status=&host=&severity=medium&q=")
        shown = rows(page)
        assert [(r[1].split("\n")[0], r[-1]) for r in shown] == [
            ("filesystem", "unapproved\nHIGH AGB-FS-ROOT AGB-FS-WRITE"),
            ("github", "approved\nMEDIUM AGB-GH-TOKEN"),
        ]
        assert page.locator("#components-count").inner_text() == "2 components."
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.get_by_label("Findings at least").select_option("critical")
        page.get_by_role("button", name="Apply").click()
        assert page.locator("p.empty").inner_text() == "No component matches these filters."

        # search by purl, case-insensitive
        page.goto(f"{served.url}/ui/components")
        page.get_by_label("Name or purl").fill("MODELCONTEXTPROTOCOL")
        page.get_by_role("button", name="Apply").click()
        shown = rows(page)
        assert (
            len(shown) == 1
            and shown[0][1].startswith("filesystem")
            and shown[0][-1] == "unapproved\nHIGH AGB-FS-ROOT AGB-FS-WRITE"
        )
        assert "pkg:npm/%40modelcontextprotocol/server-filesystem" in shown[0][1]
    assert failed == [], failed  # no 404, no CSP violation


def test_each_row_counts_the_agents_its_link_lists(site: tuple[Served, str]) -> None:
    served, token = site
    with viewer_page(served, token, 1280, []) as page:
        page.goto(f"{served.url}/ui/components?type=mcp_server")
        links = page.locator("#components a.agents-link")
        for i in range(links.count()):
            page.goto(f"{served.url}/ui/components?type=mcp_server")
            link = page.locator("#components a.agents-link").nth(i)
            count = int(link.inner_text().split()[0])
            link.click()
            assert page.locator("#component-agents tbody tr").count() == count


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("type=tool", "type must be one of"),
        ("status=fine", "status must be one of"),
        ("page=abc", "page must be a whole number"),
        ("page=0", "page must be from 1"),
        ("q=" + "x" * 300, "at most 256"),
        ("severity=dire", "severity must be one of"),
    ],
)
def test_a_bad_query_is_a_400_page_saying_why(
    site: tuple[Served, str], query: str, says: str
) -> None:
    served, token = site
    failed: list[str] = []
    with viewer_page(served, token, 800, failed) as page:
        answer = page.goto(f"{served.url}/ui/components?{query}")
        assert answer.status == 400 and says in page.locator("main").inner_text()
        answer = page.goto(f"{served.url}/ui/components/agents?type=skill&ref=")
        assert answer.status == 400 and "ref must be non-empty" in page.locator("main").inner_text()


def test_the_pages_need_a_sign_in_and_hold_no_inline_script(site: tuple[Served, str]) -> None:
    served, _ = site
    for path in ("/ui/components", "/ui/components/agents?type=skill&ref=deploy"):
        answer = httpx.get(served.url + path, follow_redirects=False, timeout=30)
        assert answer.status_code == 303 and answer.headers["location"] == "/ui/login"
        assert "deploy" not in answer.text
    csp = httpx.get(served.url + "/ui/login", timeout=30).headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    template = Path(__file__).resolve().parents[2] / "agbom" / "review" / "templates"
    for name in ("components.html", "component_agents.html"):
        text = (template / name).read_text()
        assert "<script" not in text and "style=" not in text, name
        assert not re.search(r"\son[a-z]+=", text), name  # no event handler attribute
