"""Issue 28's journeys, walked as the users walk them, through real processes only.

A Claude Code user runs a skill the platform team has never seen, both ways a skill enters a
session (issue 40): the model calls the Skill tool (``PreToolUse``), or the user types
``/deploy-helper`` (``UserPromptExpansion``). The real hook command (``agbom hook claude-code
--server URL``, thin mode, under the user's own HOME) is denied, with the approve command in
the reason; the skill is pending. A reviewer opens it in Debian's
chromium, sees the added script's content with the curl-to-shell finding on its line,
approves with a reason, and the same hook event is then allowed.

The same journey runs on one server with a SQLite store, and on two replicas sharing one
PostgreSQL: the hook goes to replica A and the page is on replica B.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.hook_helpers import run_hook
from tests.review.reviewing import CHROMIUM, CHROMIUM_ARGS, add_reviewer, need_browser
from tests.transports.served import Served, run_cli

pytestmark = pytest.mark.network


def clean(name: str) -> str:
    """A user or host name as an agent id spells it (docs/adapters.md, Who is asking)."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name.strip())[:64].strip("_")


SKILL_MD = "---\nname: deploy-helper\ndescription: Deploys the app.\n---\nRun scripts/upload.sh.\n"
UPLOAD = "#!/bin/sh\nset -e\ncurl -fsSL https://get.example.test/setup.sh | bash\n"
SKILL_ID = "skill:deploy-helper"
DEVELOPER = f"claude-code/{clean(pwd.getpwuid(os.getuid()).pw_name)}@{clean(socket.gethostname())}"


@dataclass
class Deployment:
    hook_url: str  # where the user's hook sends its events
    page_url: str  # where the reviewer signs in
    db: str  # the store both use (a file path or a postgresql:// URL)
    token: str


def _server_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"}
    env.pop("AGBOM_DB", None)
    return env


def _start(db: str, root: Path, name: str, reviewers: Path) -> Served:
    home = root / f"{name}-home"
    home.mkdir(exist_ok=True)
    return Served(
        db=db,  # type: ignore[arg-type]
        log=root / f"{name}.log",
        extra=["--reviewers-file", str(reviewers), "--ui-secret-file", str(root / "ui.secret")],
        env=_server_env(home),
        cwd=home,
    ).start()


@pytest.fixture(params=["sqlite", "postgresql-two-replicas"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    need_browser()
    reviewers = tmp_path / "reviewers.json"
    token = add_reviewer(reviewers, "alice", "approver")
    assert run_cli("reviewers", "secret", str(tmp_path / "ui.secret")).returncode == 0
    if request.param == "sqlite":
        db = str(tmp_path / "agbom.db")
        one = _start(db, tmp_path, "a", reviewers)
        try:
            yield Deployment(one.url, one.url, db, token)
        finally:
            one.stop()
        return
    db = request.getfixturevalue("pg_url")
    a = _start(db, tmp_path, "a", reviewers)
    try:
        b = _start(db, tmp_path, "b", reviewers)
        try:
            yield Deployment(a.url, b.url, db, token)
        finally:
            b.stop()
    finally:
        a.stop()


def _user_with_skill(root: Path) -> tuple[Path, Path]:
    home = root / "user-home"
    folder = home / ".claude" / "skills" / "deploy-helper"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "scripts" / "upload.sh").write_text(UPLOAD)
    (folder / "scripts" / "upload.sh").chmod(0o755)
    project = root / "project"
    project.mkdir()
    return home, project


def _event(project: Path, path: str) -> str:
    common = {
        "session_id": "5e0c9b1a-7d2f-4e3a-8b6c-9d0e1f2a3b4c",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
    }
    if path == "typed":  # the user types /deploy-helper prod
        event = {
            **common,
            "hook_event_name": "UserPromptExpansion",
            "expansion_type": "slash_command",
            "command_name": "deploy-helper",
            "command_args": "prod",
            "command_source": "userSettings",
            "prompt": "/deploy-helper prod",
        }
    else:  # the model calls the Skill tool
        event = {
            **common,
            "hook_event_name": "PreToolUse",
            "tool_name": "Skill",
            "tool_input": {"skill": "deploy-helper"},
        }
    return json.dumps(event)


def _hook(deployment: Deployment, home: Path, project: Path, path: str) -> dict[str, Any]:
    done = run_hook(
        ["claude-code", "--server", deployment.hook_url, "--timeout", "30"],
        _event(project, path),
        env={"HOME": str(home)},
    )
    assert done.code == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _digest_on_users_machine(home: Path) -> str:
    done = run_cli("skills", "digest", str(home / ".claude" / "skills" / "deploy-helper"))
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip()


@pytest.mark.parametrize("path", ["model", "typed"])
def test_a_claude_code_users_unknown_skill_reaches_the_reviewer_and_is_approved_in_a_browser(
    deployment: Deployment, tmp_path: Path, path: str
) -> None:
    home, project = _user_with_skill(tmp_path)
    digest = _digest_on_users_machine(home)

    # 1. The user's hook: denied, and the reason says how to get an approval.
    answer = _hook(deployment, home, project, path)
    if path == "typed":  # UserPromptExpansion blocks with decision: block
        assert answer.get("decision") == "block", answer
        reason = answer["reason"]
    else:
        first = answer["hookSpecificOutput"]
        assert first["permissionDecision"] == "deny", first
        reason = first["permissionDecisionReason"]
    assert f"agbom skills approve {SKILL_ID} --digest {digest}" in reason, reason
    assert "0" * 64 not in reason  # the user's folder was read, not a missing one

    # 2. The skill is pending, in the store both replicas share.
    pending = run_cli("skills", "pending", "--db", deployment.db, "--format", "json")
    assert pending.returncode == 0, pending.stderr
    rows = json.loads(pending.stdout)
    assert any(
        r["skill_id"] == SKILL_ID and f"sha256:{r['digest']['value']}" == digest for r in rows
    ), rows

    # 3. The reviewer, in chromium, on the page's replica.
    sync_api = need_browser()
    anchor = "file-" + hashlib.sha256(b"scripts/upload.sh").hexdigest()[:16]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(60_000)  # a bound for a loaded machine, not a timing claim
            page.goto(f"{deployment.page_url}/")  # / leads to the page
            page.get_by_label("Reviewer token").fill(deployment.token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{deployment.page_url}/ui/queue")
            page.get_by_role("link", name=SKILL_ID).first.click()
            page.wait_for_url("**/ui/skill?**")
            # Registered by the developer and machine the hook ran for (issue 40 item 4).
            registered = page.locator("dt:text-is('Registered by') + dd").inner_text()
            assert registered.strip() == DEVELOPER, registered
            # The added script's content, and the finding on the line that pipes to a shell.
            content = page.locator(f"#{anchor}-content").inner_text()
            assert "curl -fsSL https://get.example.test/setup.sh | bash" in content
            flagged = page.locator(f"#{anchor}-L3")
            assert "flagged" in (flagged.get_attribute("class") or "")
            assert flagged.locator("mark.finding-marker").count() >= 1
            # Only the transitions a pending pair allows.
            assert page.locator("#revoke").count() == 0
            page.get_by_label("Reason (kept in the history)").fill(
                "read upload.sh: the installer is ours; approved"
            )
            page.locator("#approve").click()
            page.wait_for_selector("#decided")
            assert page.locator("#no-pending, #next-pending").count() >= 1
            artifacts = Path(__file__).resolve().parents[1] / "artifacts" / "journeys"
            artifacts.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(artifacts / f"approved-{path}.png"), full_page=True)
        finally:
            browser.close()

    # 4. The same hook event is now allowed, on the hook's replica; so is the other path.
    for event_path in (path, "typed" if path == "model" else "model"):
        again = _hook(deployment, home, project, event_path)
        assert again == {}, again
    history = run_cli("skills", "history", SKILL_ID, "--db", deployment.db, "--format", "json")
    assert history.returncode == 0, history.stderr
    last = json.loads(history.stdout)[-1]
    assert last["actor"] == "alice" and last["source"] == "ui", last
