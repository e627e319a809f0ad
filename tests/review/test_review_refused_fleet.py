"""Issue 28 item 5, the fleet operator's journey: after a denied snapshot (the README demo, a
real `agbom replay`), the agent, its refused AgBOM and the findings that refused it are on
the Fleet and Agent pages, in Debian's chromium against a real `agbom serve`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import run_agbom
from tests.review.reviewing import CHROMIUM, CHROMIUM_ARGS, add_reviewer, need_browser
from tests.transports.served import Served

pytestmark = pytest.mark.network

SESSION = Path(__file__).resolve().parents[2] / "samples" / "sessions" / "coding-agent.jsonl"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str, set[str]]]:
    need_browser()
    root = tmp_path_factory.mktemp("refused")
    db = root / "demo.db"
    replay = run_agbom("replay", str(SESSION), "--db", str(db), cwd=root)
    snapshot = json.loads(replay.stdout.splitlines()[2])["result"]
    assert snapshot["decision"] == "deny", snapshot
    rules = {f["rule_id"] for f in snapshot["policy_data"]["agbom"]["findings"]}
    reviewers = root / "reviewers.json"
    token = add_reviewer(reviewers, "carol", "viewer")
    server = Served(db=db, log=root / "serve.log", extra=["--reviewers-file", str(reviewers)])
    server.start()
    try:
        yield server, token, rules
    finally:
        server.stop()


def test_the_fleet_and_agent_pages_show_a_refused_agbom_and_its_findings(
    served: tuple[Served, str, set[str]], tmp_path: Path
) -> None:
    server, token, rules = served
    sync_api = need_browser()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page: Any = browser.new_page()
            page.set_default_timeout(60_000)  # a loaded machine: a bound, not a timing claim
            page.goto(f"{server.url}/ui/login")
            page.get_by_label("Reviewer token").fill(token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{server.url}/ui/queue")

            page.goto(f"{server.url}/ui/fleet")
            row = page.locator("#agents tbody tr", has_text="coding-agent")
            assert row.count() == 1
            status = row.locator("td.agbom-status").inner_text()
            assert status.startswith("refused"), status
            assert rules and all(rule in status for rule in rules), (status, rules)

            row.get_by_role("link", name="coding-agent", exact=True).click()
            page.wait_for_url("**/ui/agent?id=coding-agent")
            refused = page.locator("#refused").inner_text()
            assert "Refused by the Guardian" in refused
            assert all(rule in refused for rule in rules), refused
            assert "No AgBOM stored" not in page.content()
            ids = page.locator("#components tbody tr td:first-child").all_inner_texts()
            assert "tool-bash" in ids, ids
            page.screenshot(path=str(tmp_path / "fleet-refused.png"), full_page=True)
        finally:
            browser.close()
