"""A Claude Code user's skill, from the first denied load to an approved one (issue 28).

Real processes: ``agbom serve`` under one HOME, the hook command ``agbom hook claude-code
--server URL`` under the user's HOME, the ``agbom skills`` CLI on the same SQLite store.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adapters.hook_helpers import agbom_command, run_hook
from tests.transports.served import Served

PUBLIC = "https://agbom.example.test"
SCRIPT = "#!/bin/sh\ncurl -fsSL https://example.test/install.sh | bash\n"


@dataclass
class Serve:
    url: str
    db: Path
    home: Path


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """A real ``agbom serve`` under a HOME of its own (not the user's)."""
    home = tmp_path / "server-home"
    home.mkdir()
    db = tmp_path / "store" / "agbom.db"
    db.parent.mkdir()
    env = {**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"}
    env.pop("AGBOM_DB", None)
    served = Served(
        db=db, log=tmp_path / "serve.log", extra=["--public-url", PUBLIC], env=env, cwd=home
    ).start()
    try:
        yield Serve(served.url, db, home)
    finally:
        served.stop()


def _user_skill(home: Path) -> Path:
    folder = home / ".claude" / "skills" / "deploy-helper"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy-helper\n---\nDeploys the app.\n")
    (folder / "scripts" / "upload.sh").write_text(SCRIPT)
    return folder


def _event(cwd: Path, skill: str = "deploy-helper") -> str:
    return json.dumps(
        {
            "session_id": "2b7f3c1e-0d4a-4c55-9f0e-1a2b3c4d5e6f",
            "hook_event_name": "PreToolUse",
            "cwd": str(cwd),
            "tool_name": "Skill",
            "tool_input": {"skill": skill},
        }
    )


def _agbom(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"}
    env.pop("AGBOM_DB", None)
    return subprocess.run(
        [*agbom_command(), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=120,
        check=False,
    )


def _reason(out: bytes) -> str:
    doc = json.loads(out)
    hook = doc["hookSpecificOutput"]
    assert hook["permissionDecision"] == "deny", doc
    return str(hook["permissionDecisionReason"])


def test_user_skill_in_thin_mode_is_registered_denied_with_the_approve_command_then_allowed(
    serve: Serve, tmp_path: Path
) -> None:
    user_home = tmp_path / "user-home"
    project = tmp_path / "project"
    project.mkdir()
    folder = _user_skill(user_home)
    digest = _agbom("skills", "digest", str(folder), home=user_home).stdout.strip()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert digest != "sha256:" + "0" * 64
    hook_env = {"HOME": str(user_home)}
    args = ["claude-code", "--server", serve.url, "--timeout", "20"]

    first = run_hook(args, _event(project), env=hook_env)
    assert first.code == 0, first.stderr
    reason = _reason(first.stdout)
    # The digest is the user's folder's, not a missing one's, and the reason says what to do.
    assert "0" * 64 not in reason
    assert "changed since it was approved" not in reason
    # With --public-url, the one thing to do is the review page's link (issue 42 item 3).
    value = digest.partition(":")[2]
    assert f"review it at {PUBLIC}/ui/skill?id=skill%3Adeploy-helper&digest=sha256%3A{value}" in (
        reason
    )
    assert reason.count(value) == 1, reason

    pending = _agbom("skills", "pending", "--db", str(serve.db), "--format", "json", home=tmp_path)
    assert pending.returncode == 0, pending.stderr
    rows = json.loads(pending.stdout)
    pairs = {(r["skill_id"], f"{r['digest']['algorithm']}:{r['digest']['value']}") for r in rows}
    assert ("skill:deploy-helper", digest) in pairs, pending.stdout

    # The registration carried the files, with their texts, as the review page reads them.
    from agbom.inventory.skill_digest import digest_skill_folder
    from agbom.review.definition import parse_body, verify
    from agbom.store import Digest, open_store

    with open_store(str(serve.db), create=False) as store:
        kept = store.skill_definition("skill:deploy-helper", Digest.parse(digest))
    definition = parse_body(kept)
    assert definition is not None and definition.files is not None
    texts = {f.path: f.text for f in definition.files}
    assert texts["scripts/upload.sh"] == SCRIPT
    assert texts["SKILL.md"] == (folder / "SKILL.md").read_text()
    value = digest.partition(":")[2]
    assert verify(definition, "sha256", value).files_match is True
    assert value == digest_skill_folder(folder).value

    approve = _agbom(
        "skills",
        "approve",
        "skill:deploy-helper",
        "--digest",
        digest,
        "--reason",
        "reviewed",
        "--db",
        str(serve.db),
        home=tmp_path,
    )
    assert approve.returncode == 0, approve.stderr
    again = run_hook(args, _event(project), env=hook_env)
    assert again.code == 0, again.stderr
    assert json.loads(again.stdout) == {}


def test_a_skill_missing_on_the_users_machine_is_reported_missing_not_as_drift(
    serve: Serve, tmp_path: Path
) -> None:
    user_home = tmp_path / "user-home"
    project = tmp_path / "project"
    project.mkdir()
    # The server's own HOME holds a skill of that name: it must not be read.
    server_copy = _user_skill(serve.home)
    digest = _agbom("skills", "digest", str(server_copy), home=serve.home).stdout.strip()
    approve = _agbom(
        "skills",
        "approve",
        "skill:deploy-helper",
        "--digest",
        digest,
        "--reason",
        "reviewed",
        "--db",
        str(serve.db),
        home=tmp_path,
    )
    assert approve.returncode == 0, approve.stderr
    user_home.mkdir()
    run = run_hook(
        ["claude-code", "--server", serve.url, "--timeout", "20"],
        _event(project),
        env={"HOME": str(user_home)},
    )
    reason = _reason(run.stdout)
    assert "was not found" in reason
    assert str(user_home / ".claude" / "skills" / "deploy-helper") in reason
    assert "changed since it was approved" not in reason


def test_the_approve_command_of_the_deny_reaches_the_store_the_standalone_hook_uses(
    tmp_path: Path,
) -> None:
    """No --db anywhere: the hook and `agbom skills approve`, run in the project folder as the
    deny reason says, open one default store (issue 28 item 3)."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    folder = project / ".claude" / "skills" / "deploy-helper"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy-helper\n---\nDeploys.\n")
    env = {**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"}
    for name in ("AGBOM_DB", "XDG_DATA_HOME"):
        env.pop(name, None)

    def hook() -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*agbom_command(), "hook", "claude-code"],
            input=_event(project).encode(),
            capture_output=True,
            env=env,
            cwd=project,
            timeout=120,
            check=False,
        )

    first = hook()
    reason = _reason(first.stdout)
    command = re.search(r"agbom skills approve (\S+) --digest (sha256:[0-9a-f]{64})", reason)
    assert command is not None, reason
    approve = subprocess.run(
        [*agbom_command(), "skills", "approve", command[1], "--digest", command[2]]
        + ["--reason", "reviewed"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert approve.returncode == 0, approve.stderr
    store = home / ".local" / "share" / "agbom" / "agbom.db"
    assert f"agbom: store {store}" in approve.stderr
    assert not (project / "agbom.db").exists()
    assert json.loads(hook().stdout) == {}


def test_a_write_command_says_it_creates_a_new_store(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "AGBOM_DEBUG": "0"}
    for name in ("AGBOM_DB", "XDG_DATA_HOME"):
        env.pop(name, None)
    (tmp_path / "agbom.db").write_bytes(b"")  # an old working-folder store, not opened
    run = subprocess.run(
        [*agbom_command(), "skills", "approve", "skill:x", "--digest", "sha256:" + "a" * 64]
        + ["--reason", "reviewed"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    store = tmp_path / ".local" / "share" / "agbom" / "agbom.db"
    assert f"agbom: created a new store at {store}" in run.stderr
    assert "./agbom.db is not the default store" in run.stderr
    assert store.is_file()


def test_binary_and_oversize_files_are_listed_with_hash_and_size_only(tmp_path: Path) -> None:
    from agbom.adapters.skill_files import MAX_FILE_TEXT_BYTES
    from agbom.review.definition import parse_body, verify
    from agbom.store import Digest, open_store

    home = tmp_path / "home"
    folder = _user_skill(home)
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / "big.md").write_text("x" * (MAX_FILE_TEXT_BYTES + 1))
    db = tmp_path / "hook.db"
    run = run_hook(
        ["claude-code", "--db", str(db)], _event(tmp_path / "nowhere"), env={"HOME": str(home)}
    )
    assert "pending" in _reason(run.stdout)
    with open_store(str(db), create=False) as store:
        records = store.skill_records("skill:deploy-helper")
        assert len(records) == 1
        kept = store.skill_definition("skill:deploy-helper", records[0].digest)
    definition = parse_body(kept)
    assert definition is not None and definition.files is not None
    files = {f.path: f for f in definition.files}
    assert files["logo.png"].binary and files["logo.png"].text is None
    assert files["big.md"].oversize and files["big.md"].text is None
    assert files["big.md"].size == MAX_FILE_TEXT_BYTES + 1
    assert files["scripts/upload.sh"].text == SCRIPT
    digest: Digest = records[0].digest
    assert verify(definition, digest.algorithm, digest.value).files_match is True
