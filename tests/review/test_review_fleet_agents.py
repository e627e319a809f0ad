"""The Agents, agent and Advisories pages (issue 45 items 1-3) in Debian's chromium against
a real ``agbom serve --osv``, at 1,280 and 800 px, as a viewer and as an approver, with
JavaScript off (the pages need none): the agents of the fleet filtered by host and by what
is not approved, an agent's components, last decisions and AgBOM timeline of diffs, the
components advisories name with the agents affected, and the links between them; a bad
query is a 400 page saying why; nothing the CSP refuses; no page offers a decision."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.store import open_store
from tests import fleet_agents_data as data
from tests.fleet_data import MODEL, T0, doc
from tests.review.reviewing import ARTIFACTS, add_reviewer, need_browser, signed_in_page
from tests.transports.served import Served

pytestmark = pytest.mark.network

BUSY = "codex/gina@ci-9"  # 23 versions: two pages of the timeline
BUSY_VERSIONS = 23


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, str]]]:
    need_browser()
    root = tmp_path_factory.mktemp("fleet-agents")
    with open_store(root / "s.db") as store:
        data.build(store)
        data.add_advisory_agents(store)
        for n in range(BUSY_VERSIONS):
            model = {**MODEL, "version": f"v{n}"}
            store.save_agbom_version(
                "s-g", agent_id=BUSY, document=doc(BUSY, model),
                agbom_hash="sha256:" + hashlib.sha256(f"g{n}".encode()).hexdigest(),
                now=T0 + timedelta(hours=2, minutes=n),
            )  # fmt: skip
        entry = (
            '{"decision":"deny","entry_id":"e-9","reason_codes":["skill_denied"],'
            '"step_type":"skill_load","timestamp":"2026-03-01T11:00:00Z"}'
        )
        store.upsert_session("s-b", agent_id=data.BOB, status="active", started_at=T0)
        store.append_entry(
            "s-b", entry=entry, entry_hash="h1", previous_hash=None, request_id=None, nonce=None
        )
    reviewers = root / "reviewers.json"
    tokens = {
        role: add_reviewer(reviewers, name, role)
        for name, role in (("vic", "viewer"), ("amy", "approver"))
    }
    server = Served(
        db=root / "s.db",
        log=root / "serve.log",
        extra=["--reviewers-file", str(reviewers), "--osv", str(data.OSV)],
    )
    server.start()
    try:
        yield server, tokens
    finally:
        server.stop()


def cells(page: Any, selector: str) -> list[list[str]]:
    return page.locator(f"{selector} tbody tr").evaluate_all(
        "trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))"
    )


def fits(page: Any, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # reading is all these pages offer: no form posts but signing out
    assert page.locator("main form[method=post]").count() == 0


@pytest.mark.parametrize("role", ["viewer", "approver"])
@pytest.mark.parametrize("width", [1280, 800])
def test_agents_to_an_agents_timeline_and_its_components(
    site: tuple[Served, dict[str, str]], width: int, role: str
) -> None:
    served, tokens = site
    failed: list[str] = []
    with signed_in_page(served.url, tokens[role], width, failed, javascript=False) as page:
        page.goto(f"{served.url}/ui/fleet")
        page.get_by_role("navigation", name="Sections").get_by_role("link", name="Agents").click()
        page.wait_for_url(f"{served.url}/ui/agents")
        assert page.locator("h1").inner_text() == "Agents across the fleet"
        assert page.locator("#agents-count").inner_text() == "9 agents."
        rows = {r[0]: r for r in cells(page, "#fleet-agents")}
        assert rows[data.ALICE_CC][1:3] == ["claude-code", "alice\non laptop"]
        assert rows[data.NAMELESS][2] == "unknown"
        assert rows[data.BOB][3] == "1 skill, 1 MCP server,\n0 models, 0 A2A peers"
        assert rows[data.BOB][4].startswith("2")  # lint denied, the filesystem server
        assert rows[data.BOB][5].startswith("deny skill_load skill_denied")
        page.screenshot(path=str(ARTIFACTS / f"agents-{width}-{role}.png"), full_page=True)
        fits(page, width)

        # the GET form: a host platform, then what is not approved
        page.get_by_label("Host").select_option("cursor")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**/ui/agents?host=cursor&q=")
        assert [r[0] for r in cells(page, "#fleet-agents")] == [data.ALICE_CURSOR, data.DAVE]
        page.get_by_label("runs something not approved").check()
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**/ui/agents?host=cursor&q=&unapproved=1")
        assert [r[0] for r in cells(page, "#fleet-agents")] == [data.DAVE]

        # alice's page: what she runs, what is not approved, her timeline
        page.goto(f"{served.url}/ui/agents?q=alice")
        page.locator("#fleet-agents a.agent-link", has_text=data.ALICE_CC).click()
        page.wait_for_url("**/ui/agent?id=claude-code%2Falice%40laptop")
        held = cells(page, "#held")
        assert [(r[0], r[1].split("\n")[0], r[3]) for r in held] == [
            ("mcp server", "github", "approved"),
            ("skill", "deploy", "pending"),
        ]
        assert page.locator("#unapproved li").inner_text().startswith("skill deploy")
        versions = page.locator("#timeline li.version")
        assert versions.count() == 4
        assert page.locator("#versions-count").inner_text().startswith("4 versions stored")
        newest = cells(page, "#version-1 table")
        assert newest == [["model", "removed", "claude-sonnet-4 (m)", "20250514"]]
        assert "refused" in (page.locator("#version-2").get_attribute("class") or "")
        assert [r[1] for r in cells(page, "#version-2 table")] == ["added"]
        changed = {r[2].split()[0]: r for r in cells(page, "#version-3 table")}
        assert changed["github"][1] == "version changed" and "0.6.2 → 0.6.3" in changed["github"][3]
        assert changed["deploy"][1] == "digest changed"
        assert changed["claude-sonnet-4"][1] == "added"
        first = [r[1] for r in cells(page, "#version-4 table")]
        assert first == ["added", "added"]
        page.screenshot(path=str(ARTIFACTS / f"agent-timeline-{width}-{role}.png"), full_page=True)
        fits(page, width)

        # a component it runs leads to the agents that run it, and back
        page.locator("#held a", has_text="github").click()
        page.wait_for_url("**/ui/components/agents?type=mcp_server*")
        assert [r[0] for r in cells(page, "#component-agents")] == [data.ALICE_CC]
        page.get_by_role("link", name=data.ALICE_CC).click()
        page.wait_for_url("**/ui/agent?id=claude-code%2Falice%40laptop")
    assert failed == [], failed  # no 404, no CSP violation


@pytest.mark.parametrize("role", ["viewer", "approver"])
@pytest.mark.parametrize("width", [1280, 800])
def test_advisories_to_the_agents_affected(
    site: tuple[Served, dict[str, str]], width: int, role: str
) -> None:
    served, tokens = site
    failed: list[str] = []
    with signed_in_page(served.url, tokens[role], width, failed, javascript=False) as page:
        page.goto(f"{served.url}/ui/agents")
        nav = page.get_by_role("navigation", name="Sections")
        nav.get_by_role("link", name="Advisories").click()
        page.wait_for_url(f"{served.url}/ui/advisories")
        assert page.locator("h1").inner_text() == "Advisories across the fleet"
        assert page.locator("#advisories-count").inner_text().startswith("2 components named")
        rows = cells(page, "#advisories")
        assert [r[0].split("\n")[0] for r in rows] == ["mcp server acme-fs", "mcp server fetch"]
        # (the severity in upper case: the CSS says so)
        assert rows[0][2].startswith("CRITICAL GHSA-7q2m-agb1-fs01: Path traversal")
        assert "fixed in 1.4.2, 2.1.0" in rows[0][2]
        # (the link's words for a screen reader, "using acme-fs", sit between)
        assert rows[0][3].startswith("2 agents") and rows[0][3].endswith(", 2 developers")
        assert rows[0][4] == "unapproved"
        page.screenshot(path=str(ARTIFACTS / f"advisories-{width}-{role}.png"), full_page=True)
        fits(page, width)

        page.get_by_label("Severity").select_option("high")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**/ui/advisories?severity=high")
        assert [r[0].split("\n")[0] for r in cells(page, "#advisories")] == ["mcp server fetch"]

        page.goto(f"{served.url}/ui/advisories")
        page.locator("#advisories a.agents-link").first.click()
        page.wait_for_url("**/ui/components/agents?type=mcp_server*")
        agents = [r[0] for r in cells(page, "#component-agents")]
        assert agents == [data.ERIN, data.DAVE]
        page.get_by_role("link", name=data.DAVE).click()
        page.wait_for_url("**/ui/agent?id=cursor%2Fdave%40ws-1")
        assert [r[1].split("\n")[0] for r in cells(page, "#held")] == ["acme-fs", "fetch"]
    assert failed == [], failed


def test_the_timeline_is_paged(site: tuple[Served, dict[str, str]]) -> None:
    served, tokens = site
    with signed_in_page(served.url, tokens["viewer"], 800, [], javascript=False) as page:
        page.goto(f"{served.url}/ui/agent?id={BUSY}")
        assert page.locator("#timeline li.version").count() == 20
        assert (
            page.locator("#versions-count")
            .inner_text()
            .startswith(f"{BUSY_VERSIONS} versions stored, newest first; 1 to 20 shown")
        )
        page.get_by_role("link", name="Next page").click()
        page.wait_for_url("**/ui/agent?id=codex%2Fgina%40ci-9&vpage=2")
        assert page.locator("#timeline li.version").count() == 3
        # the oldest: all added; the one after it: the model's version changed
        assert [r[1] for r in cells(page, "#version-3 table")] == ["added"]
        assert [r[1] for r in cells(page, "#version-2 table")] == ["version changed"]


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/ui/agents?host=a/b", "host must be"),
        ("/ui/agents?unapproved=yes", "unapproved must be"),
        ("/ui/agents?q=" + "x" * 300, "at most 256"),
        ("/ui/agents?page=0", "page must be from 1"),
        ("/ui/agent?id=claude-code&vpage=x", "page must be a whole number"),
        ("/ui/advisories?severity=grave", "severity must be one of"),
        ("/ui/components?host=a%20b", "host must be"),
    ],
)
def test_a_bad_query_is_a_400_page_saying_why(
    site: tuple[Served, dict[str, str]], path: str, says: str
) -> None:
    served, tokens = site
    with signed_in_page(served.url, tokens["viewer"], 800, [], javascript=False) as page:
        answer = page.goto(served.url + path)
        assert answer.status == 400 and says in page.locator("main").inner_text()


def test_the_pages_need_a_sign_in_and_hold_no_script(site: tuple[Served, dict[str, str]]) -> None:
    served, _ = site
    for path in ("/ui/agents", f"/ui/agent?id={data.BOB}", "/ui/advisories"):
        answer = httpx.get(served.url + path, follow_redirects=False, timeout=30)
        assert answer.status_code == 303 and answer.headers["location"] == "/ui/login"
        assert "bob" not in answer.text and "acme" not in answer.text
    template = Path(__file__).resolve().parents[2] / "agbom" / "review" / "templates"
    for name in ("agents.html", "agent.html", "advisories.html"):
        text = (template / name).read_text()
        assert "<script" not in text and "style=" not in text, name
        assert not re.search(r"\son[a-z]+=", text), name


def test_the_host_choices_are_the_runtimes_agbom_serves() -> None:
    from agbom.adapters.replies import RUNTIMES
    from agbom.review.components import KNOWN_HOSTS

    assert KNOWN_HOSTS == tuple(sorted(RUNTIMES))


def test_without_osv_the_page_says_how_to_load_advisories(tmp_path: Path) -> None:
    need_browser()
    with open_store(tmp_path / "s.db") as store:
        data.build(store)
    reviewers = tmp_path / "reviewers.json"
    token = add_reviewer(reviewers, "vic", "viewer")
    server = Served(
        db=tmp_path / "s.db", log=tmp_path / "serve.log", extra=["--reviewers-file", str(reviewers)]
    ).start()
    try:
        with signed_in_page(server.url, token, 800, [], javascript=False) as page:
            page.goto(f"{server.url}/ui/advisories")
            assert "--osv" in page.locator("#no-osv").inner_text()
    finally:
        server.stop()
