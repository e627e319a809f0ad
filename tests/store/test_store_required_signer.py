"""``agbom skills approve --require-signer IDENTITY`` over the command line, on a SQLite file and
on a real PostgreSQL database (tests/pgcluster.py): the requirement is stored with the
approval, shown by ``skills show`` and ``skills list`` and in the history, carried by ``skills
export``/``import`` and by ``store migrate``, and dropped by a later decision that does not
state it. (What the Guardian does with it: tests/review/test_review_signer_required.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.transports.served import run_cli

SIGNER = "skills@publisher.example"
DIGEST = "sha256:" + "ab" * 32


def _cli(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode() + done.stderr.decode()


def _show(db: str) -> dict[str, Any]:
    return orjson.loads(_cli("skills", "show", "release-helper", "--db", db, "--format", "json"))


def _approve(db: str, *extra: str) -> str:
    return _cli("skills", "approve", "release-helper", "--digest", DIGEST, "--db", db,
                "--by", "alice", "--reason", "reviewed", *extra)  # fmt: skip


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "agbom.db")
    return str(request.getfixturevalue("pg_url"))


def test_an_approval_requiring_a_signer_is_stored_shown_and_replaced(location: str) -> None:
    said = _approve(location, "--require-signer", SIGNER)
    assert f"required signer: {SIGNER}" in said
    doc = _show(location)
    assert doc["records"][0]["required_signer"] == SIGNER
    assert doc["history"][-1]["required_signer"] == SIGNER
    shown = _cli("skills", "show", "release-helper", "--db", location)
    assert f"signer        {SIGNER} (required" in shown
    listed = _cli("skills", "list", "--db", location).splitlines()
    assert f"all signer={SIGNER}" in listed[1]  # in the SCOPE column: what the approval needs

    _approve(location)  # a decision states the requirement anew: none this time
    doc = _show(location)
    assert doc["records"][0]["required_signer"] is None
    assert [h["required_signer"] for h in doc["history"]] == [SIGNER, None]


def test_the_requirement_travels_through_export_and_import(location: str, tmp_path: Path) -> None:
    _approve(location, "--require-signer", SIGNER)
    exported = tmp_path / "approvals.yaml"
    _cli("skills", "export", "--db", location, "--output", str(exported))
    entry = yaml.safe_load(exported.read_text())["approvals"][0]
    assert entry["required_signer"] == SIGNER
    fresh = str(tmp_path / "fresh.db")
    _cli("skills", "import", str(exported), "--db", fresh, "--by", "bob")
    assert _show(fresh)["records"][0]["required_signer"] == SIGNER
    _cli("skills", "import", str(exported), "--db", fresh, "--by", "bob")
    assert len(_show(fresh)["history"]) == 1  # the same file again changes nothing
    # A file without the requirement drops it (the import is a decision); the first file
    # brings it back.
    without = tmp_path / "without.yaml"
    without.write_text(yaml.safe_dump({"approvals": [{k: v for k, v in entry.items()
                                                      if k != "required_signer"}]}))  # fmt: skip
    _cli("skills", "import", str(without), "--db", location, "--by", "bob")
    assert _show(location)["records"][0]["required_signer"] is None
    _cli("skills", "import", str(exported), "--db", location, "--by", "bob")
    assert _show(location)["records"][0]["required_signer"] == SIGNER
    assert [h["required_signer"] for h in _show(location)["history"]] == [SIGNER, None, SIGNER]


def test_store_migrate_carries_the_requirement_to_postgres(tmp_path: Path, pg_url: str) -> None:
    db = str(tmp_path / "agbom.db")
    _approve(db, "--require-signer", SIGNER)
    _cli("store", "migrate", "--from", db, "--to", pg_url)
    doc = _show(pg_url)
    assert doc["records"][0]["required_signer"] == SIGNER
    assert doc["history"][-1]["required_signer"] == SIGNER


@pytest.mark.parametrize("bad", ["", " padded", "line\nbreak", "x" * 300])
def test_a_bad_signer_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    db = tmp_path / "agbom.db"
    done = run_cli("skills", "approve", "release-helper", "--digest", DIGEST, "--db", str(db),
                   "--by", "alice", "--reason", "r", "--require-signer", bad)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert b"--require-signer" in done.stderr and b"Traceback" not in done.stderr
    assert not db.exists()


def test_an_imported_denial_cannot_require_a_signer(tmp_path: Path) -> None:
    approvals = tmp_path / "approvals.yaml"
    approvals.write_text(yaml.safe_dump({"approvals": [{
        "skill_id": "x", "digest": DIGEST, "status": "denied", "required_signer": SIGNER,
    }]}))  # fmt: skip
    done = run_cli("skills", "import", str(approvals), "--db", str(tmp_path / "a.db"),
                   "--by", "bob")  # fmt: skip
    assert done.returncode != 0
    assert b"only an approval can require a signer" in done.stderr
