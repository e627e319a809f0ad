"""A store that another user could have written is refused (issue 38 item 6).

The issue's reproduction: an ``agbom/`` folder in ``$XDG_DATA_HOME`` made by another user
(mode 777, ``agbom.db`` 666) held a planted approval, and the victim's standalone hook
allowed the skill. Here the real ``agbom hook claude-code`` and ``agbom`` CLI run as
subprocesses (as root, the tests' user: the "other user" is uid/gid 65534, ``nobody``), and
each way another user could have written the store is refused with one line that says how
to fix it, in the hook's own deny format (also with ``--fail-open``: whoever planted the
store would otherwise choose the answer). A store only its owner can write (default umask,
the tests' own temporary folders, a private group, a sticky folder above its own) is used.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agbom.store import open_store
from tests.adapters.hook_helpers import agbom_command, denial_reason, skill_event

OTHER = 65534  # nobody / nogroup
SKILL_MD = "---\nname: deploy-helper\n---\nDeploys the app.\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="gives files to another user")


def _env(home: Path, data: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"}
    for name in ("AGBOM_DB", "XDG_DATA_HOME"):
        env.pop(name, None)
    if data is not None:
        env["XDG_DATA_HOME"] = str(data)
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: bytes | None = None):
    return subprocess.run(
        [*agbom_command(), *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    folder = project / ".claude" / "skills" / "deploy-helper"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    return project


def _hook(project: Path, env: dict[str, str], *extra: str) -> tuple[dict, str]:
    event = skill_event(project, "deploy-helper", "2b7f3c1e-0d4a-4c55-9f0e-1a2b3c4d5e6f")
    done = _run(["hook", "claude-code", *extra], env, project, event)
    return json.loads(done.stdout), done.stderr.decode()


def _plant(tmp_path: Path, project: Path, db: Path) -> None:
    """Put an approval of the project's skill in ``db``, as the other user would: the pair
    comes from a hook run against a scratch store (its deny names the approve command)."""
    scratch = tmp_path / "scratch-home"
    scratch.mkdir()
    reason = denial_reason(_hook(project, _env(scratch))[0])
    command = re.search(r"agbom skills approve (\S+) --digest (sha256:[0-9a-f]{64})", reason)
    assert command is not None, reason
    db.parent.mkdir(parents=True, exist_ok=True)
    approve = _run(
        ["skills", "approve", command[1], "--digest", command[2], "--reason", "planted"]
        + ["--db", str(db)],
        _env(scratch),
        tmp_path,
    )
    assert approve.returncode == 0, approve.stderr


def _planted(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    """``(home, project, db, env)``: the default store ``$XDG_DATA_HOME/agbom/agbom.db``
    (``XDG_DATA_HOME`` = HOME/data) holding an approval of the project's skill."""
    home = tmp_path / "home"
    home.mkdir()
    data = home / "data"
    db = data / "agbom" / "agbom.db"
    project = _project(tmp_path)
    _plant(tmp_path, project, db)
    return home, project, db, _env(home, data)


def _give(path: Path, mode: int, uid: int = OTHER, gid: int = OTHER) -> None:
    os.chown(path, uid, gid)
    os.chmod(path, mode)


# Each way another user could have written the default store $XDG_DATA_HOME/agbom/agbom.db
# (with XDG_DATA_HOME = HOME/data): (what is changed, the words that must explain it).
Planting = Callable[[Path, Path], None]  # (home, db)


def _issue(home: Path, db: Path) -> None:  # the issue's reproduction, as it reported it
    _give(db.parent, 0o777)
    _give(db, 0o666)


def _other_folder(home: Path, db: Path) -> None:
    _give(db.parent, 0o700)
    _give(db, 0o600)


def _others_may_write_the_file(home: Path, db: Path) -> None:
    os.chmod(db, 0o666)


def _others_may_write_the_folder(home: Path, db: Path) -> None:
    os.chmod(db.parent, 0o777)


def _other_file(home: Path, db: Path) -> None:
    _give(db, 0o644)


def _shared_data_folder(home: Path, db: Path) -> None:
    os.chmod(db.parent.parent, 0o777)


def _shared_home(home: Path, db: Path) -> None:
    os.chmod(home, 0o777)


def _sticky_own_folder(home: Path, db: Path) -> None:
    os.chmod(db.parent, 0o1777)  # sticky or not, others could plant a -wal beside the store


def _group_writable_folder(home: Path, db: Path) -> None:
    os.chown(db.parent, 0, OTHER)
    os.chmod(db.parent, 0o770)


def _other_wal(home: Path, db: Path) -> None:
    wal = Path(f"{db}-wal")
    wal.write_bytes(b"")
    _give(wal, 0o644)


PLANTINGS: dict[str, tuple[Planting, str]] = {
    "issue: folder 777 and file 666 of another user": (_issue, "belongs to uid 65534"),
    "folder of another user": (_other_folder, "belongs to uid 65534"),
    "file of another user": (_other_file, "belongs to uid 65534"),
    "file others may write": (_others_may_write_the_file, "is writable by others (mode 0666)"),
    "folder others may write": (_others_may_write_the_folder, "chmod 700"),
    "sticky own folder": (_sticky_own_folder, "is writable by others (mode 1777)"),
    "folder its group may write": (_group_writable_folder, "is writable by its group"),
    "data folder others may write": (_shared_data_folder, "chmod go-w"),
    "home others may write": (_shared_home, "chmod go-w"),
    "-wal of another user": (_other_wal, "-wal belongs to uid 65534"),
}


@pytest.mark.parametrize("name", list(PLANTINGS))
def test_a_planted_approval_in_a_store_another_user_could_write_is_refused(
    tmp_path: Path, name: str
) -> None:
    planting, words = PLANTINGS[name]
    home, project, db, env = _planted(tmp_path)
    planting(home, db)

    for extra in ((), ("--fail-open",)):
        doc, stderr = _hook(project, env, *extra)
        reason = denial_reason(doc)
        assert f"store {db}: " in reason, reason
        assert words in reason, reason
        assert "Traceback" not in stderr and "\n" not in reason

    listing = _run(["skills", "list"], env, tmp_path)
    assert listing.returncode == 1, listing.stderr
    message = listing.stderr.decode()
    assert message.count("\n") == 1 and message.startswith(f"agbom: error: store {db}: "), message
    assert words in message and "planted" not in listing.stdout.decode()


def test_the_same_store_when_only_its_owner_can_write_it_is_used(tmp_path: Path) -> None:
    """The control: the planted approval is found (so the refusals above are what denies),
    in a store made with the default umask (folders 0755, file 0644), whose folder root's
    private group may also write."""
    home, project, db, env = _planted(tmp_path)
    os.chown(db.parent, 0, 0)
    os.chmod(db.parent, 0o770)  # root's own group: no other member
    doc, stderr = _hook(project, env)
    assert doc == {}, (doc, stderr)


def test_a_store_in_a_folder_of_its_own_under_a_sticky_shared_folder_is_used(
    tmp_path: Path,
) -> None:
    """Outside the home folder, the folders are checked up to ``/``; a shared sticky folder
    (as ``/tmp``) above the store's own is fine, a store right in it is not."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    mine = shared / "mine"
    mine.mkdir(mode=0o700)
    home = tmp_path / "home"
    home.mkdir()
    with open_store(mine / "s.db"):
        pass
    ok = _run(["skills", "list", "--db", str(mine / "s.db")], _env(home), tmp_path)
    assert ok.returncode == 0, ok.stderr
    refused = _run(["skills", "list", "--db", str(shared / "s.db")], _env(home), tmp_path)
    assert refused.returncode == 1
    assert f"the folder {shared} is writable by others (mode 1777); chmod 700 {shared}" in (
        refused.stderr.decode()
    )


def test_serve_refuses_such_a_store_at_start(tmp_path: Path) -> None:
    db = tmp_path / "store" / "agbom.db"
    db.parent.mkdir()
    with open_store(db):
        pass
    os.chmod(db.parent, 0o777)
    done = _run(["serve", "--port", "0", "--db", str(db)], _env(tmp_path), tmp_path)
    assert done.returncode != 0
    stderr = done.stderr.decode()
    assert f"the folder {db.parent} is writable by others (mode 0777)" in stderr
    assert "Traceback" not in stderr
