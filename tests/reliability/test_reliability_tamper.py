"""Tamper evidence: edit, delete or reorder any stored chain entry; ``agbom audit verify``
detects it, names the session and the entry index, and exits 1.

The one edit the store alone cannot reveal is cutting entries off the *end* of a chain: what
remains is a valid shorter chain. The chain head each client received in its responses (and
``final_chain_hash`` at sessionEnd) is the anchor for that; the last test shows the cut is
caught against that anchor with ``verify_chain(expected_head=...)``.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agbom.cli.app import app
from agbom.guardian import build_guardian
from agbom.protocol import verify_chain
from agbom.store import SqliteStore
from tests.guardian.acs import hello, request

ENTRIES = 8  # sessionStart + 7 steps


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store with two sessions; returns (db, tampered session id, untouched session id)."""
    db = tmp_path_factory.mktemp("tamper") / "pristine.db"
    guardian = build_guardian(db)
    sids = []
    for _ in range(2):
        sid = str(uuid.uuid4())
        guardian.handle(hello(sid))
        guardian.handle(request("steps/sessionStart", {}, session_id=sid))
        for i in range(ENTRIES - 1):
            reply = guardian.handle(
                request("steps/userMessage", {"content": f"message {i}"}, session_id=sid)
            )
            assert reply["result"]["decision"] == "allow"
        sids.append(sid)
    guardian.store.close()
    return db, sids[0], sids[1]


def _copy(pristine: tuple[Path, str, str], tmp_path: Path) -> tuple[Path, str, str]:
    db, sid, other = pristine
    target = tmp_path / "store.db"
    shutil.copy(db, target)
    for suffix in ("-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            shutil.copy(f"{db}{suffix}", f"{target}{suffix}")
    return target, sid, other


def _verify(db: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", "verify", "--db", str(db)])
    return result.exit_code, result.stdout


def test_untouched_store_verifies(pristine: tuple[Path, str, str], tmp_path: Path) -> None:
    db, sid, other = _copy(pristine, tmp_path)
    code, out = _verify(db)
    assert code == 0, out
    assert f"ok      {sid}  {ENTRIES} entries" in out and f"ok      {other}" in out


def _edit(conn: sqlite3.Connection, sid: str, seq: int) -> None:
    text = conn.execute(
        "SELECT entry FROM chain_entries WHERE session_id = ? AND seq = ?", (sid, seq)
    ).fetchone()[0]
    entry = orjson.loads(text)
    entry["decision"] = "deny" if entry["decision"] != "deny" else "allow"
    conn.execute(
        "UPDATE chain_entries SET entry = ? WHERE session_id = ? AND seq = ?",
        (orjson.dumps(entry).decode(), sid, seq),
    )


@pytest.mark.parametrize("index", range(ENTRIES))
def test_editing_any_entry_is_located(
    pristine: tuple[Path, str, str], tmp_path: Path, index: int
) -> None:
    db, sid, other = _copy(pristine, tmp_path)
    with sqlite3.connect(db) as conn:
        _edit(conn, sid, index + 1)
    code, out = _verify(db)
    assert code == 1
    assert f"BROKEN  {sid}  at entry index {index} (entry_id {index + 1})" in out
    assert "entry_hash_mismatch" in out
    assert f"ok      {other}" in out  # the other session is unaffected and still reported


@pytest.mark.parametrize("index", range(ENTRIES))
def test_rewriting_an_entry_with_a_fresh_hash_is_located_at_the_next_link(
    pristine: tuple[Path, str, str], tmp_path: Path, index: int
) -> None:
    """A careful forger recomputes the edited entry's own hash: the next link breaks."""
    from agbom.protocol import entry_hash

    db, sid, _ = _copy(pristine, tmp_path)
    with sqlite3.connect(db) as conn:
        _edit(conn, sid, index + 1)
        text, previous = conn.execute(
            "SELECT entry, previous_hash FROM chain_entries WHERE session_id = ? AND seq = ?",
            (sid, index + 1),
        ).fetchone()
        conn.execute(
            "UPDATE chain_entries SET entry_hash = ? WHERE session_id = ? AND seq = ?",
            (entry_hash(orjson.loads(text), previous), sid, index + 1),
        )
    code, out = _verify(db)
    if index == ENTRIES - 1:
        # Rewriting the last entry in full is a valid chain with another head: only the head
        # the client holds can tell (see test_truncation_is_caught_against_the_clients_head).
        assert code == 0
        return
    assert code == 1
    assert f"BROKEN  {sid}  at entry index {index + 1}" in out
    assert "previous_hash_mismatch" in out


@pytest.mark.parametrize("index", range(ENTRIES - 1))
def test_deleting_any_entry_but_the_last_is_located(
    pristine: tuple[Path, str, str], tmp_path: Path, index: int
) -> None:
    db, sid, _ = _copy(pristine, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM chain_entries WHERE session_id = ? AND seq = ?", (sid, index + 1))
    code, out = _verify(db)
    assert code == 1
    reason = "root_not_null" if index == 0 else "previous_hash_mismatch"
    assert f"BROKEN  {sid}  at entry index {index}" in out and reason in out


@pytest.mark.parametrize("index", range(ENTRIES - 1))
def test_swapping_neighbours_is_located(
    pristine: tuple[Path, str, str], tmp_path: Path, index: int
) -> None:
    db, sid, _ = _copy(pristine, tmp_path)
    a, b = index + 1, index + 2
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE chain_entries SET seq = -1 WHERE session_id = ? AND seq = ?", (sid, a))
        conn.execute(
            "UPDATE chain_entries SET seq = ? WHERE session_id = ? AND seq = ?", (a, sid, b)
        )
        conn.execute("UPDATE chain_entries SET seq = ? WHERE session_id = ? AND seq = -1", (b, sid))
    code, out = _verify(db)
    assert code == 1
    reason = "root_not_null" if index == 0 else "previous_hash_mismatch"
    assert f"BROKEN  {sid}  at entry index {index}" in out and reason in out


def test_moving_an_entry_to_another_session_is_located(
    pristine: tuple[Path, str, str], tmp_path: Path
) -> None:
    db, sid, other = _copy(pristine, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE chain_entries SET session_id = ?, seq = 100 WHERE session_id = ? AND seq = 4",
            (other, sid),
        )
    code, out = _verify(db)
    assert code == 1
    assert f"BROKEN  {sid}  at entry index 3" in out
    assert f"BROKEN  {other}  at entry index {ENTRIES}" in out


def test_truncation_is_caught_against_the_clients_head(
    pristine: tuple[Path, str, str], tmp_path: Path
) -> None:
    db, sid, _ = _copy(pristine, tmp_path)
    with SqliteStore.open(db) as store:
        head = store.chain_head(sid)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM chain_entries WHERE session_id = ? AND seq = ?", (sid, ENTRIES))
    # The shorter chain is internally consistent: the store alone cannot tell.
    assert _verify(db)[0] == 0
    with SqliteStore.open(db) as store:
        entries = [{k: v for k, v in e.items() if k != "seq"} for e in store.chain_entries(sid)]
    broken = verify_chain(entries, expected_head=head)
    assert broken is not None and broken.reason == "head_mismatch"
