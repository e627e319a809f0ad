"""The review page in a real browser: Debian's chromium, driven by Playwright, against a real
``agbom serve`` on 127.0.0.1. Screenshots go to tests/artifacts/review/ (git-ignored).

Without /usr/bin/chromium or playwright these tests skip, except under CI=true, where they
fail (.ci/run installs chromium).
"""

from __future__ import annotations

import copy
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.guardian.acs import SAMPLE_AGBOM
from tests.review.reviewing import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    add_reviewer,
    cli_status,
    load,
    need_browser,
    pair_fields,
    register,
    skill_folder,
    version_of,
)
from tests.transports.served import Served, run_cli

pytestmark = pytest.mark.network

V1_FILES = {
    "SKILL.md": "---\nname: release-notes\ndescription: Drafts release notes.\n---\n"
    "Read the changelog.\nWrite a summary.\n",
    "scripts/collect.sh": "#!/bin/sh\ngit log --oneline\n",
    "references/style.md": "Short sentences.\n",
}
V2_FILES = {
    "SKILL.md": "---\nname: release-notes\ndescription: Drafts release notes.\n---\n"
    "Read the changelog.\nWrite a summary.\nAlso post it to the team channel.\n",
    "scripts/collect.sh": "#!/bin/sh\ngit log --oneline --since=1.week\n",
    "references/tone.md": "Friendly.\n",
}


class Site:
    """The server under test and the reviewers' tokens."""

    def __init__(self, served: Served, db: Path, tokens: dict[str, str]) -> None:
        self.served = served
        self.db = db
        self.tokens = tokens

    @property
    def url(self) -> str:
        return self.served.url


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    need_browser()
    root = tmp_path_factory.mktemp("review")
    reviewers = root / "reviewers.json"
    tokens = {
        "alice": add_reviewer(reviewers, "alice", "approver"),
        "bob": add_reviewer(reviewers, "bob", "viewer"),
    }
    served = Served(
        db=root / "agbom.db", log=root / "serve.log", extra=["--reviewers-file", str(reviewers)]
    ).start()
    try:
        yield Site(served, root / "agbom.db", tokens)
    finally:
        served.stop()


@pytest.fixture(scope="module")
def browser_context(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = need_browser()
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(60_000)  # a loaded machine: bound, not a timing claim
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser_context: Any) -> Iterator[Any]:
    browser_context.clear_cookies()
    tab = browser_context.new_page()
    try:
        yield tab
    finally:
        tab.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page: Any, site: Site, who: str) -> None:
    page.goto(f"{site.url}/ui/login")
    page.get_by_label("Reviewer token").fill(site.tokens[who])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{site.url}/ui/queue")


def check_accessibility(page: Any) -> None:
    """One h1, headings that never skip a level, a label for every control, named buttons,
    a language."""
    report = page.evaluate(
        """() => {
        const levels = [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')]
            .map(h => Number(h.tagName[1]));
        const controls = [...document.querySelectorAll('input,select,textarea')]
            .filter(e => e.type !== 'hidden');
        const unlabelled = controls.filter(e => !(e.labels && e.labels.length) &&
            !e.getAttribute('aria-label')).map(e => e.name || e.id || e.outerHTML);
        const unnamed = [...document.querySelectorAll('button,a')]
            .filter(e => !e.textContent.trim() && !e.getAttribute('aria-label'))
            .map(e => e.outerHTML);
        return {levels, unlabelled, unnamed, lang: document.documentElement.lang};
    }"""
    )
    levels = report["levels"]
    assert levels.count(1) == 1 and levels[0] == 1, levels
    assert all(b - a <= 1 for a, b in zip(levels, levels[1:], strict=False)), levels
    assert report["unlabelled"] == [], report["unlabelled"]
    assert report["unnamed"] == [], report["unnamed"]
    assert report["lang"] == "en"


def post_form(page: Any, site: Site, fields: dict[str, str]) -> int:
    """Submit a form the page did not render (built in the DOM; the page's CSP forbids
    fetch), as a browser would, and return the answer's status."""
    with page.expect_response(f"{site.url}/ui/skill/decide") as answer:
        page.evaluate(
            """fields => { const form = document.createElement('form');
                form.method = 'post'; form.action = '/ui/skill/decide';
                for (const [name, value] of Object.entries(fields)) {
                    const input = document.createElement('input');
                    input.type = 'hidden'; input.name = name; input.value = value;
                    form.appendChild(input); }
                document.body.appendChild(form); form.submit(); }""",
            fields,
        )
    page.wait_for_load_state()
    return int(answer.value.status)


def tab_to(page: Any, selector: str, limit: int = 80) -> None:
    """Press Tab until ``selector`` has the focus: the control is reachable by keyboard."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} cannot be reached with the Tab key")


def test_a_reviewer_sees_what_changed_and_approves_with_a_reason(
    site: Site, page: Any, tmp_path: Path
) -> None:
    agbom = copy.deepcopy(SAMPLE_AGBOM)
    v1 = version_of(
        "release-notes", skill_folder(tmp_path / "v1", V1_FILES, ("scripts/collect.sh",))
    )
    v2 = version_of(
        "release-notes", skill_folder(tmp_path / "v2", V2_FILES, ("scripts/collect.sh",))
    )
    register(
        site.url, v1, agent_id="agent-1", capabilities=["fs.read"], tools=["fs-read"], agbom=agbom
    )
    approved = run_cli(
        "skills",
        "approve",
        "release-notes",
        "--digest",
        v1.digest,
        "--db",
        str(site.db),
        "--by",
        "carol",
        "--reason",
        "first review",
    )
    assert approved.returncode == 0, approved.stderr
    _, answer = register(
        site.url, v2, agent_id="agent-1", capabilities=["fs.read"], tools=["fs-read"], agbom=agbom
    )
    assert answer["result"]["decision"] == "deny"
    assert "approval_pending" in answer["result"]["reason_codes"]
    assert load(site.url, v2, agent_id="agent-1")["result"]["decision"] == "deny"

    # The registration is in the queue, flagged as a change of an approved skill.
    sign_in(page, site, "alice")
    row = page.locator("#queue-rows tr", has_text="release-notes")
    assert row.count() == 1
    assert "changed since approval" in row.inner_text()
    assert v2.value[:16] in row.inner_text()
    check_accessibility(page)
    shot(page, "queue")

    # The skill page: the diff against the approved digest.
    row.get_by_role("link", name="release-notes").click()
    page.wait_for_url("**/ui/skill?**")
    changes = {
        tr.locator("td").nth(0).inner_text(): tr.locator("td").nth(1).inner_text()
        for tr in page.locator("#file-changes tbody tr").all()
    }
    assert changes == {
        "SKILL.md": "changed",
        "references/style.md": "removed",
        "references/tone.md": "added",
        "scripts/collect.sh": "changed",
    }
    diff = page.locator("#skill-md-diff").inner_text()
    assert "+Also post it to the team channel." in diff
    assert v1.value in page.get_by_text("Compared with the approved digest").inner_text()
    assert page.get_by_text("matches the digest").count() == 1
    assert page.get_by_text("matches the file list").count() == 1
    check_accessibility(page)
    shot(page, "skill")
    page.locator("#changes-h").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "skill-what-changed.png"))  # docs/reviewing.md's

    # Approve it with the keyboard only: the reason, then the Approve button. The agent sent
    # no text for scripts/collect.sh, so there is no plain Approve: the approver must say
    # they read it elsewhere (issue 38 item 2), and the button waits for the box.
    assert page.locator("#approve").count() == 0
    assert page.locator("#unshown-files").inner_text() == "scripts/collect.sh"
    assert page.locator("#approve-reviewed-elsewhere").is_disabled()
    tab_to(page, "#reason")
    page.keyboard.type("reviewed: posting to the channel is expected")
    tab_to(page, "#reviewed-elsewhere")
    page.keyboard.press("Space")
    tab_to(page, "button[value=approve]")
    page.keyboard.press("Enter")
    page.wait_for_url("**done=approved**")
    assert page.get_by_role("status").inner_text() == "Approved by alice."
    last = page.locator("#history tbody tr").last.inner_text()
    assert "alice" in last and "ui" in last and "posting to the channel is expected" in last
    shot(page, "approved")

    # The next load of the pair is allowed, and the store's history names the reviewer.
    assert load(site.url, v2, agent_id="agent-1")["result"]["decision"] == "allow"
    status = cli_status(site.db, "release-notes", v2.digest)
    assert status["record"]["status"] == "approved"
    assert status["record"]["decided_by"] == "alice"
    decided = [h for h in status["history"] if h["to_status"] == "approved"]
    assert decided[-1]["actor"] == "alice" and decided[-1]["source"] == "ui"
    assert decided[-1]["reason"] == (
        "reviewed: posting to the channel is expected "
        "[reviewed elsewhere, not shown on the page: scripts/collect.sh]"
    )


class _AttackerPage(http.server.BaseHTTPRequestHandler):
    html = b""

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_cross_site_post_without_the_csrf_token_is_refused(
    site: Site, page: Any, tmp_path: Path
) -> None:
    version = version_of("csrf-target", skill_folder(tmp_path / "s", {"SKILL.md": "hi\n"}))
    register(site.url, version, agent_id="agent-2", capabilities=[])
    sign_in(page, site, "alice")  # the victim is signed in: the browser holds the cookie
    form = (
        f'<form id="f" method="post" action="{site.url}/ui/skill/decide">'
        '<input name="action" value="approve"><input name="reason" value="pwned">'
        + "".join(
            f'<input name="{k}" value="{v}">'
            for k, v in pair_fields("csrf-target", version.digest).items()
        )
        + '</form><script>document.getElementById("f").submit()</script>'
    )

    class Handler(_AttackerPage):
        html = form.encode()

    # Another origin on the same host (same site, so a SameSite cookie alone would not stop
    # it): the Origin and Sec-Fetch-Site checks and the missing token must.
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=attacker.serve_forever, daemon=True)
    thread.start()
    try:
        with page.expect_response(f"{site.url}/ui/skill/decide") as answer:
            page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
        assert answer.value.status == 403
        page.wait_for_load_state()
        assert "cannot change anything here" in page.locator("[role=alert]").inner_text()
    finally:
        attacker.shutdown()
        attacker.server_close()
    # A same-origin POST that lacks the token is refused too.
    page.goto(f"{site.url}/ui/queue")
    fields = {"action": "approve", **pair_fields("csrf-target", version.digest)}
    assert post_form(page, site, {**fields, "reason": "no token"}) == 403
    assert cli_status(site.db, "csrf-target", version.digest)["record"]["status"] == "pending"


def test_a_viewer_cannot_approve(site: Site, page: Any, tmp_path: Path) -> None:
    version = version_of("viewer-target", skill_folder(tmp_path / "s", {"SKILL.md": "hi\n"}))
    register(site.url, version, agent_id="agent-3", capabilities=[])
    sign_in(page, site, "bob")
    page.locator("#queue-rows").get_by_role("link", name="viewer-target").click()
    page.wait_for_url("**/ui/skill?**")
    assert page.locator("#decide").count() == 0
    assert "viewer" in page.locator("#viewer-note").inner_text()
    check_accessibility(page)
    shot(page, "viewer")
    # Even with the viewer's own valid CSRF token, the server refuses the decision.
    token = page.locator("form[action='/ui/logout'] input[name=csrf]").get_attribute("value")
    fields = {"action": "approve", **pair_fields("viewer-target", version.digest)}
    assert post_form(page, site, {**fields, "reason": "viewer tries", "csrf": token}) == 403
    assert "viewer and cannot decide" in page.locator("[role=alert]").inner_text()
    assert cli_status(site.db, "viewer-target", version.digest)["record"]["status"] == "pending"


def test_a_script_in_a_description_renders_as_text(site: Site, page: Any, tmp_path: Path) -> None:
    hostile = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
    skill_md = f"---\nname: hostile\ndescription: {hostile}\n---\n{hostile}\n"
    version = version_of("hostile-skill", skill_folder(tmp_path / "s", {"SKILL.md": skill_md}))
    agbom = copy.deepcopy(SAMPLE_AGBOM)
    agbom["agent"]["id"] = "agent-4"
    agbom["components"].append(
        {
            "id": "hostile-skill",
            "type": "skill",
            "name": hostile,
            "description": hostile,
            "definition": {
                "ref": "file:///skills/hostile",
                "digest": {"algorithm": "sha256", "value": version.value},
            },
        }
    )
    agbom["components"][0]["name"] = hostile
    register(
        site.url,
        version,
        agent_id="agent-4",
        capabilities=["fs.read"],
        tools=["fs-read"],
        agbom=agbom,
    )
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    sign_in(page, site, "alice")
    page.goto(f"{site.url}/ui/skill?id=hostile-skill&digest={version.digest}")
    assert page.locator("#description").inner_text() == hostile
    assert hostile in page.locator('section.file[data-path="SKILL.md"] pre.body').inner_text()
    labels = [t.text_content() for t in page.locator("svg.graph text").all()]
    assert any(label.startswith(hostile[:20]) for label in labels), labels
    page.goto(f"{site.url}/ui/agent?id=agent-4")
    assert hostile in page.locator("#components").inner_text()
    for path in (f"/ui/skill?id=hostile-skill&digest={version.digest}", "/ui/agent?id=agent-4"):
        page.goto(site.url + path)
        assert page.evaluate("typeof window.__pwned") == "undefined"
        scripts = page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))")
        assert len(scripts) == 1 and scripts[0].startswith("/ui/static/review."), scripts
        assert page.locator("img").count() == 0
    shot(page, "hostile")
    assert requested and all(u.startswith(site.url + "/") for u in requested), requested


def test_every_page_is_accessible_and_keyboard_reachable(site: Site, page: Any) -> None:
    page.goto(f"{site.url}/ui/login")
    check_accessibility(page)
    tab_to(page, "#token")
    sign_in(page, site, "alice")
    for path in ("/ui/queue?status=all", "/ui/fleet", "/ui/decisions", "/ui/agent?id=agent-1"):
        page.goto(site.url + path)
        check_accessibility(page)
    page.goto(f"{site.url}/ui/decisions?decision=deny")
    link = page.get_by_role("link", name="explain").first
    link.click()
    page.wait_for_url("**/ui/explain?**")
    check_accessibility(page)
    shot(page, "explain")


def test_approve_on_a_look_alike_page_decides_exactly_the_pair_shown(site: Site, page: Any) -> None:
    """Two registrations whose ids differ only in a line break (a legacy or hostile record:
    the wire refuses such ids now). The browser's form encoding turns a raw ``\\n`` in a
    hidden field into ``\\r\\n``, so a form carrying the raw id approved the other pair,
    with its capabilities. The form names its pair by ASCII hex and a key instead."""
    from agbom.store import Digest, open_store

    harmless, dangerous = "deploy\nhelper", "deploy\r\nhelper"
    digest = Digest.parse("sha256:" + "c" * 64)
    with open_store(str(site.db)) as store:
        for skill_id, caps in ((harmless, []), (dangerous, ["process.execute", "network.egress"])):
            store.record_registration(
                skill_id=skill_id,
                digest=digest,
                ref="file:///skills/deploy-helper",
                declared_capabilities=caps,
                composition={},
                provenance=None,
                agent_id="agent-lookalike",
                tenant_id=None,
            )
    sign_in(page, site, "alice")
    page.goto(f"{site.url}/ui/skill?id=deploy%0Ahelper&digest={digest}")
    # The id is shown with its line break escaped, so the two pages do not look alike.
    assert page.locator("h1 .id").inner_text() == "deploy\\nhelper"
    page.get_by_label("Reason (kept in the history)").fill("no capabilities: harmless")
    # No definition was registered, so the page shows no file: the approver confirms.
    page.locator("#reviewed-elsewhere").check()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_load_state()
    shot(page, "lookalike-approved")
    status = {
        sid: cli_status(site.db, sid, str(digest))["record"]["status"]
        for sid in (harmless, dangerous)
    }
    assert status == {harmless: "approved", dangerous: "pending"}, status
    # A form whose id came back altered is refused, and decides nothing.
    altered = {**pair_fields(harmless, str(digest)), "skill_id_hex": dangerous.encode().hex()}
    csrf = page.locator("#decide input[name=csrf]").first.get_attribute("value")
    sent = {"action": "approve", "reason": "altered", "csrf": csrf or "", **altered}
    assert post_form(page, site, sent) == 400
    assert cli_status(site.db, dangerous, str(digest))["record"]["status"] == "pending"
    # The queue, too, shows the two ids apart, their line breaks escaped.
    page.goto(f"{site.url}/ui/queue?status=all&q=deploy")
    listed = page.locator("#queue-rows").inner_text()
    assert "deploy\\nhelper" in listed and "deploy\\r\\nhelper" in listed, listed
