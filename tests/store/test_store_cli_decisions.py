"""Every skill decision on the CLI records a reason and a person, as the review page does:
``--reason`` is required, and the actor is ``--by``, else ``$AGBOM_ACTOR``, else
``git config user.email``, else the login name unless that is ``root`` (then ``--by`` is
required). Real ``agbom`` processes, a real SQLite store, a real git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DIGEST = "sha256:" + "d" * 64


def _agbom(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "AGBOM_ACTOR"}
    # No global or system git config: only a repository's own user.email can name someone.
    base |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=base | env,
        timeout=120,
        check=False,
    )


def _actors(cwd: Path, db: Path, skill: str) -> list[str]:
    done = _agbom(cwd, "skills", "history", skill, "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    return [entry["actor"] for entry in json.loads(done.stdout)]


@pytest.mark.parametrize(
    "command",
    [
        ["skills", "approve", "s", "--digest", DIGEST],
        ["skills", "deny", "s", "--digest", DIGEST],
        ["skills", "revoke", "s", "--digest", DIGEST],
        ["servers", "approve", "fs", "--tools-from", "tools.json"],
        ["servers", "revoke", "fs"],
    ],
    ids=" ".join,
)
def test_a_decision_without_a_reason_is_refused_before_the_store_is_touched(
    tmp_path: Path, command: list[str]
) -> None:
    db = tmp_path / "s.db"
    done = _agbom(tmp_path, *command, "--db", str(db), USER="al")
    assert done.returncode == 2
    assert done.stderr.startswith("agbom: error: --reason is required: say why"), done.stderr
    assert "review page" in done.stderr and "Traceback" not in done.stderr
    empty = _agbom(tmp_path, *command, "--reason", "  ", "--db", str(db))
    assert empty.returncode == 2 and "--reason is empty" in empty.stderr
    assert not db.exists()


def test_root_without_a_git_email_must_say_who_decides(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    args = ["skills", "approve", "s", "--digest", DIGEST, "--reason", "ok", "--db", str(db)]
    refused = _agbom(tmp_path, *args, USER="root")
    assert refused.returncode == 2, refused.stderr
    assert "say who decides with --by NAME (or set $AGBOM_ACTOR)" in refused.stderr
    assert "'root'" in refused.stderr
    assert not db.exists()
    servers = _agbom(
        tmp_path, "servers", "revoke", "fs", "--reason", "x", "--db", str(db), USER="root"
    )
    assert servers.returncode == 2 and "--by NAME" in servers.stderr
    assert _agbom(tmp_path, *args, "--by", "dana", USER="root").returncode == 0
    assert _agbom(tmp_path, *args, USER="root", AGBOM_ACTOR="ci-bot").returncode == 0
    assert _actors(tmp_path, db, "s") == ["dana", "ci-bot"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_default_actor_is_the_git_email_then_a_login_name_that_is_not_root(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(
        ["git", "init", "-q", str(repo)], check=True, env={**os.environ, "HOME": str(repo)}
    )
    subprocess.run(
        ["git", "-C", str(repo), "config", "user.email", "alice@example.com"], check=True
    )
    db = tmp_path / "s.db"
    args = ["skills", "approve", "s", "--digest", DIGEST, "--reason", "reviewed", "--db", str(db)]
    assert _agbom(repo, *args, USER="root").returncode == 0  # git names her, root does not
    assert _agbom(tmp_path, *args, USER="bob").returncode == 0  # no repository: the login
    assert _agbom(repo, *args, "--by", "carol", USER="root").returncode == 0
    assert _actors(tmp_path, db, "s") == ["alice@example.com", "bob", "carol"]
    history = _agbom(tmp_path, "skills", "history", "s", "--db", str(db), "--format", "json")
    assert [entry["reason"] for entry in json.loads(history.stdout)] == ["reviewed"] * 3


def test_an_import_records_who_the_file_names_and_needs_a_name_only_for_the_others(
    tmp_path: Path,
) -> None:
    named = {"skill_id": "s", "digest": DIGEST, "status": "approved", "decided_by": "dana"}
    named["decided_at"] = "2026-01-01T00:00:00Z"  # a second import of it then changes nothing
    unnamed = {"skill_id": "t", "digest": DIGEST, "status": "denied", "reason": "no"}
    (tmp_path / "named.json").write_text(json.dumps({"approvals": [named]}))
    (tmp_path / "mixed.json").write_text(json.dumps({"approvals": [named, unnamed]}))
    db = tmp_path / "s.db"
    # Root with no git e-mail: the file says who decided every entry, so nothing is asked.
    done = _agbom(tmp_path, "skills", "import", "named.json", "--db", str(db), USER="root")
    assert done.returncode == 0, done.stderr
    assert _actors(tmp_path, db, "s") == ["dana"]
    # An entry that names nobody would be recorded under the importer, who must say who they are.
    mixed = ["skills", "import", "mixed.json", "--db", str(db)]
    refused = _agbom(tmp_path, *mixed, USER="root")
    assert refused.returncode == 2 and "--by NAME" in refused.stderr, refused.stderr
    assert _actors(tmp_path, db, "t") == []  # nothing of the file was applied
    assert _agbom(tmp_path, *mixed, "--by", "erin", USER="root").returncode == 0
    assert _actors(tmp_path, db, "t") == ["erin"]
    # A known importer is the history's actor; the record keeps who the file says decided.
    named["reason"] = "again"
    (tmp_path / "named.json").write_text(json.dumps({"approvals": [named]}))
    again = _agbom(tmp_path, "skills", "import", "named.json", "--db", str(db), USER="bob")
    assert again.returncode == 0, again.stderr
    assert _actors(tmp_path, db, "s") == ["dana", "bob"]
    shown = _agbom(tmp_path, "skills", "list", "--db", str(db), "--format", "json")
    assert {r["skill_id"]: r["decided_by"] for r in json.loads(shown.stdout)}["s"] == "dana"
