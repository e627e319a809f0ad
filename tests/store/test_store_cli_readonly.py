"""Commands that only read never create a store; the standalone hook keeps its store in the
user's data folder, not in the project it runs in. Real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.transports.served import agbom_command, run_cli

READ_ONLY = [
    ["audit", "verify"],
    ["audit", "export", "some-session"],
    ["inventory", "agents"],
    ["inventory", "sessions"],
    ["inventory", "components"],
    ["inventory", "export", "some-session"],
    ["skills", "list"],
    ["skills", "pending"],
    ["skills", "show", "some-skill"],
    ["skills", "history", "some-skill"],
    ["skills", "export"],
    ["explain", "--session", "some-session", "--entry", "1"],
]


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: " ".join(c[:2]))
def test_a_read_only_command_refuses_a_missing_store(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / "typo.db"
    done = run_cli(*command, "--db", str(typo))
    assert done.returncode == 1, (command, done.stdout, done.stderr)
    assert f"{typo}: no store there".encode() in done.stderr
    assert b"Traceback" not in done.stderr
    assert not typo.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_command_that_writes_still_creates_its_store(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    digest = "sha256:" + "a" * 64
    done = run_cli("skills", "approve", "s", "--digest", digest, "--reason", "ok", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert db.exists()
    assert run_cli("skills", "list", "--db", str(db)).returncode == 0


def test_the_standalone_hook_stores_in_the_data_folder(tmp_path: Path) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "AGBOM_DB"}
    env |= {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path / "home"), "AGBOM_DEBUG": "0"}
    event = {
        "session_id": str(uuid.uuid4()),
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(project),
        "prompt": "hello",
    }
    done = subprocess.run(
        [*agbom_command(), "hook", "claude-code"],
        input=json.dumps(event).encode(),
        cwd=project,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list(project.iterdir()) == []
    store = data / "agbom" / "agbom.db"
    assert store.exists()
    assert (store.parent.stat().st_mode & 0o777) == 0o700
    # Without XDG_DATA_HOME, the home's .local/share.
    del env["XDG_DATA_HOME"]
    subprocess.run(
        [*agbom_command(), "hook", "claude-code"],
        input=json.dumps(event).encode(),
        cwd=project,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (tmp_path / "home" / ".local" / "share" / "agbom" / "agbom.db").exists()
    assert list(project.iterdir()) == []


def test_inventory_export_says_what_is_missing(tmp_path: Path) -> None:
    done = run_cli("inventory", "export", "--db", str(tmp_path / "s.db"))
    assert done.returncode == 2
    assert b"missing a SESSION_ID or --agent" in done.stderr
