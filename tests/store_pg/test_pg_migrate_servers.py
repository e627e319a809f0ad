"""``agbom store migrate`` copies server approvals (tool-set pins) and their history, keeps a
decision made on PostgreSQL since a first copy, and copies nothing twice."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agbom.cli import main
from agbom.store import open_store


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _snapshot(folder: Path, name: str, *tools: str) -> str:
    path = folder / f"{name}.json"
    listed = [{"name": t, "description": f"{t} things", "inputSchema": {}} for t in tools]
    path.write_bytes(orjson.dumps({"tools": listed}))
    return str(path)


def test_server_approvals_and_their_history_are_copied_once(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "agbom.db")
    for args in (
        ["approve", "fs", "--tools-from", _snapshot(tmp_path, "fs", "read"), "--by", "alice"],
        ["approve", "fs", "--tools-from", _snapshot(tmp_path, "fs", "read", "list"), "--by", "bob"],
        ["approve", "web", "--tools-from", _snapshot(tmp_path, "web", "get"), "--by", "alice"],
        ["revoke", "web", "--reason", "unused", "--by", "carol"],
    ):
        why = [] if "--reason" in args else ["--reason", "reviewed"]
        assert run(["servers", *args, "--db", db, *why], capsys)[0] == 0
    with open_store(db, create=False) as lite:
        pins, history = lite.list_server_pins(), lite.server_history()

    code, _, err = run(["store", "migrate", "--from", db, "--to", pg_url, "-q"], capsys)
    assert code == 0, err
    assert "server approvals: 2 copied of 2" in err
    assert "server approval history: 4 copied of 4" in err
    with open_store(pg_url, create=False) as pg:
        assert pg.list_server_pins() == pins and pg.server_history() == history

    # A decision on PostgreSQL after the copy is kept; one made since on SQLite is history.
    why = ["--reason", "retired"]
    assert run(["servers", "revoke", "fs", "--by", "pg-side", "--db", pg_url, *why], capsys)[0] == 0
    assert run(["servers", "revoke", "fs", "--by", "lite-side", "--db", db, *why], capsys)[0] == 0
    code, _, err = run(["store", "migrate", "--from", db, "--to", pg_url, "-q"], capsys)
    assert code == 0, err
    assert "server approvals: 0 copied of 2" in err and "kept" in err
    with open_store(pg_url, create=False) as pg:
        fs = pg.server_pin("fs")
        assert fs is not None and fs.decided_by == "pg-side"
        assert [h["actor"] for h in pg.server_history("fs")] == [
            "alice", "bob", "pg-side", "lite-side"
        ]  # fmt: skip
    code, _, err = run(["store", "migrate", "--from", db, "--to", pg_url, "-q"], capsys)
    assert code == 0 and "nothing new to copy" in err
