"""Issue 45 item 4: ``serve --require-server-approval``, walked through real processes.

A Claude Code user calls a tool of an MCP server nobody approved (``mcp__docs__search``, the
real ``agbom hook claude-code --server URL`` subprocess). Without the option the call is left
to the rules (allowed, as before). With it the call is denied, and the reason names the
approve command; once ``agbom servers approve`` pins the server's tool set the same hook event
is allowed, and after ``agbom servers revoke`` it is denied again. The journey runs on a
SQLite store and on PostgreSQL (tests/pgcluster.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.adapters.hook_helpers import run_hook
from tests.transports.served import Served, run_cli

pytestmark = pytest.mark.network

SESSION = "6f1d0c2b-8e3a-4f4b-9c7d-0e1f2a3b4c5d"


def _event(project: Path, tool: str) -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(project / "transcript.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"query": "release notes"},
        }
    )


def _hook(url: str, home: Path, tool: str = "mcp__docs__search") -> dict[str, Any]:
    done = run_hook(
        ["claude-code", "--server", url, "--timeout", "30"],
        _event(home, tool),
        env={"HOME": str(home)},
    )
    assert done.code == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _denial(answer: dict[str, Any]) -> str | None:
    out = answer.get("hookSpecificOutput") or {}
    if out.get("permissionDecision") == "deny":
        return str(out["permissionDecisionReason"])
    return None


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "agbom.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def _serve(db: str, tmp_path: Path, name: str, *extra: str) -> Served:
    return Served(db=db, log=tmp_path / f"{name}.log", extra=list(extra)).start()  # type: ignore[arg-type]


@pytest.fixture
def required(db: str, tmp_path: Path) -> Iterator[Served]:
    served = _serve(db, tmp_path, "required", "--require-server-approval")
    yield served
    served.stop()


def _servers(db: str, *args: str) -> None:
    done = run_cli("servers", *args, "--db", db, "--reason", "reviewed the docs server")
    assert done.returncode == 0, done.stderr


def test_a_server_never_approved_is_allowed_by_default(db: str, tmp_path: Path, home: Path):
    served = _serve(db, tmp_path, "default")
    try:
        assert _denial(_hook(served.url, home)) is None
    finally:
        served.stop()


def test_require_server_approval_denies_until_approved_and_again_once_revoked(
    required: Served, db: str, tmp_path: Path, home: Path
) -> None:
    reason = _denial(_hook(required.url, home))
    assert reason is not None
    assert "MCP server docs was never approved" in reason, reason
    assert "agbom servers approve docs" in reason, reason
    # A built-in tool goes through no server: the option does not touch it.
    assert _denial(_hook(required.url, home, "Read")) is None

    snapshot = tmp_path / "docs.json"
    tool = {"name": "search", "description": "Search the docs", "inputSchema": {"type": "object"}}
    snapshot.write_bytes(orjson.dumps({"server": "docs", "result": {"tools": [tool]}}))
    _servers(db, "approve", "docs", "--tools-from", str(snapshot))
    assert _denial(_hook(required.url, home)) is None  # read at the decision: no restart

    _servers(db, "revoke", "docs")
    again = _denial(_hook(required.url, home))
    assert again is not None and "had its approval revoked" in again, again


# -- the journey on the review page's server queue -----------------------------------------


def _sign_in(page: Any, url: str, token: str) -> None:
    page.goto(f"{url}/ui/login")
    page.get_by_label("Reviewer token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/ui/queue")


def _post_decision(page: Any, url: str, action: str, pin: str, reason: str = "ok") -> Any:
    """The decision form posted from the signed-in page's session, with its CSRF token."""
    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    fields = {"csrf": csrf, "server": "docs", "pin": pin, "action": action, "reason": reason}
    return page.request.post(f"{url}/ui/servers/decide", form=fields, headers={"Origin": url},
                             max_redirects=0)  # fmt: skip


def _queue(db: str) -> list[dict[str, Any]]:
    from agbom.review.server_queue import server_queue
    from agbom.store import open_store

    with open_store(db) as store:
        servers: list[dict[str, Any]] = server_queue(store)["servers"]
    return servers


@pytest.mark.parametrize("width", [1280, 800])
def test_a_server_seen_by_a_hook_is_approved_on_the_page_and_a_changed_tool_set_is_denied(
    db: str, tmp_path: Path, home: Path, width: int
) -> None:
    from tests.review.reviewing import CHROMIUM, CHROMIUM_ARGS, add_reviewer, need_browser

    sync_api = need_browser()
    reviewers = tmp_path / "reviewers.json"
    approver = add_reviewer(reviewers, "alice", "approver")
    viewer = add_reviewer(reviewers, "victor", "viewer")
    assert run_cli("reviewers", "secret", str(tmp_path / "ui.secret")).returncode == 0
    served = _serve(
        db, tmp_path, "page", "--require-server-approval", "--reviewers-file", str(reviewers),
        "--ui-secret-file", str(tmp_path / "ui.secret"),
    )  # fmt: skip
    try:
        # 1. The hook's call through a server nobody approved: denied; the server is pending.
        reason = _denial(_hook(served.url, home))
        assert reason is not None and "agbom servers approve docs" in reason, reason
        pending = _queue(db)
        assert [(s["server"], s["status"]) for s in pending] == [("docs", "unapproved")]
        assert [t["name"] for t in pending[0]["tools"]] == ["search"]

        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            try:
                # 2. A viewer sees the queue and no decision form.
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.set_default_timeout(60_000)  # a bound for a loaded machine
                _sign_in(page, served.url, viewer)
                page.get_by_role("link", name="Servers").click()
                page.wait_for_url(f"{served.url}/ui/servers")
                assert page.get_by_role("heading", name="docs unapproved").count() == 1
                assert page.get_by_role("button", name="Approve this tool set").count() == 0
                assert "You are a viewer" in page.content()
                # ... and a viewer's post, with a good CSRF token, decides nothing.
                refused = _post_decision(page, served.url, "approve", pending[0]["tool_set"])
                assert refused.status == 403, refused.status
                width_now = page.evaluate("document.documentElement.scrollWidth")
                assert width_now <= width, width_now  # nothing wider than the window
                page.close()

                # 3. The approver approves it with a reason.
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.set_default_timeout(60_000)
                _sign_in(page, served.url, approver)
                page.goto(f"{served.url}/ui/servers")
                # A form for a tool set other than the one shown: 409, nothing decided.
                stale = _post_decision(page, served.url, "approve", "0" * 64)
                assert stale.status == 409, stale.status
                without = _post_decision(page, served.url, "approve", pending[0]["tool_set"], "")
                assert without.status == 400, without.status  # a reason is required
                page.get_by_label("Reason for docs").fill("read the search tool: read-only")
                page.get_by_role("button", name="Approve this tool set").click()
                page.wait_for_url(f"{served.url}/ui/servers?done=approved")
                assert page.get_by_role("status").inner_text() == "The server was approved."
                assert "No MCP server waits for a decision." in page.content()
            finally:
                browser.close()

        # 4. The next call through the hook is allowed.
        assert _denial(_hook(served.url, home)) is None
        history = run_cli("servers", "history", "docs", "--db", db, "--format", "json")
        assert history.returncode == 0, history.stderr
        last = json.loads(history.stdout)[-1]
        assert last["actor"] == "alice" and last["reason"] == "read the search tool: read-only"

        # 5. A tool the approval did not pin: the server's tool set expanded. Denied, and
        # the queue shows it again with the difference.
        changed = _denial(_hook(served.url, home, "mcp__docs__delete_all"))
        assert changed is not None, "a changed tool set must be denied"
        again = _queue(db)
        assert [s["server"] for s in again] == ["docs"], again
        assert again[0]["status"] == "approved" and again[0]["diff"] is not None
        assert "delete_all" in again[0]["diff"].get("added", []), again[0]["diff"]
    finally:
        served.stop()


def test_the_server_queue_shows_hostile_tool_descriptions_escaped_and_bounded(
    tmp_path: Path,
) -> None:
    """A server author's text is hostile: markup stays text, invisible characters are spelled
    out, and a description past 4,096 characters is cut (page and read API)."""
    import httpx

    from tests.guardian.acs import request
    from tests.review.reviewing import CHROMIUM, CHROMIUM_ARGS, add_reviewer, need_browser
    from tests.transports.served import open_session, post

    sync_api = need_browser()
    hostile = '<img src=x id="injected">Search\u202e the docs\u200b' + "A" * 10_000
    agbom = {
        "agent": {"id": "agent-1", "name": "coder"},
        "components": [
            {"id": "t1", "type": "tool", "name": "search", "version": "1.0.0",
             "provider": "evil", "capability": "net.read", "description": hostile,
             "inputSchema": {"type": "object"}},
            {"id": "evil", "type": "mcp_server", "name": "evil", "version": "1.0.0",
             "purl": "pkg:npm/evil-mcp@1.0.0", "endpoint": None, "tools": ["t1"]},
        ],
    }  # fmt: skip
    reviewers = tmp_path / "reviewers.json"
    viewer = add_reviewer(reviewers, "victor", "viewer")
    assert run_cli("reviewers", "secret", str(tmp_path / "ui.secret")).returncode == 0
    db = str(tmp_path / "agbom.db")
    served = _serve(
        db, tmp_path, "hostile", "--reviewers-file", str(reviewers),
        "--ui-secret-file", str(tmp_path / "ui.secret"),
    )  # fmt: skip
    try:
        sid = open_session(served.url)
        reply = post(served.url, request("agbom/snapshot", {"agbom": agbom}, session_id=sid))
        assert reply["result"]["decision"] == "allow", reply
        api = httpx.get(f"{served.url}/v1/servers/queue", timeout=30).json()
        (entry,) = api["servers"]
        assert entry["server"] == "evil" and entry["status"] == "unapproved"
        (tool,) = entry["tools"]
        assert len(tool["description"]) == 4096 and tool["truncated"] is True
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = browser.new_page(viewport={"width": 800, "height": 900})
                page.set_default_timeout(60_000)
                _sign_in(page, served.url, viewer)
                page.goto(f"{served.url}/ui/servers")
                assert page.locator("#injected").count() == 0  # markup stays text
                shown = page.locator("table.tools pre").inner_text()
                assert shown.startswith('<img src=x id="injected">Search\\u202e the docs\\u200b')
                assert "\u202e" not in shown and "\u200b" not in shown
                assert shown.count("A") < 4096 and "cut at 4,096 characters" in page.content()
                width_now = page.evaluate("document.documentElement.scrollWidth")
                assert width_now <= 800, width_now
            finally:
                browser.close()
    finally:
        served.stop()
