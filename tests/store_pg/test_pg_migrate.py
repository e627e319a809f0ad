"""``agbom store migrate``: a SQLite store written by the real Guardian and CLI, copied into
the throwaway PostgreSQL cluster, then checked through the CLI on the PostgreSQL side."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from agbom.cli import main
from agbom.guardian import build_guardian
from agbom.store import Digest, open_store
from tests.guardian.acs import SAMPLE_AGBOM, SHA_A, digest, hello, new_session_id, request


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _session(guardian, *, end: bool) -> str:
    sid = new_session_id()
    guardian.handle(hello(sid))
    guardian.handle(request("steps/sessionStart", {}, session_id=sid))
    guardian.handle(request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid))
    register = {
        "skill_id": "helper",
        "definition": {"ref": "skills/helper", "digest": digest(SHA_A)},
        "declared_capabilities": ["fs.read"],
    }
    guardian.handle(request("steps/skillRegister", register, session_id=sid))
    changed = {"changed": [dict(SAMPLE_AGBOM["components"][1], version="2.0.0")]}
    guardian.handle(request("agbom/changed", changed, session_id=sid))
    if end:
        guardian.handle(request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))
    return sid


@pytest.fixture
def sqlite_store(tmp_path: Path, capsys) -> tuple[Path, list[str]]:
    """Two sessions (one ended and sealed, one open), a registration approved and another
    skill denied through the CLI."""
    db = tmp_path / "agbom.db"
    guardian = build_guardian(db)
    sessions = [_session(guardian, end=True), _session(guardian, end=False)]
    guardian.store.close()
    approve = ["skills", "approve", "helper", "--digest", f"sha256:{SHA_A}", "--db", str(db)]
    assert run([*approve, "--reason", "reviewed"], capsys)[0] == 0
    deny = ["skills", "deny", "other", "--digest", f"sha256:{'b' * 64}", "--db", str(db)]
    assert run([*deny, "--reason", "no"], capsys)[0] == 0
    return db, sessions


def _counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        tables = ("skills", "skill_history", "chain_entries", "sessions", "agbom_versions")
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        conn.close()


def test_migrate_copies_everything_and_the_chains_verify_there(
    sqlite_store, pg_url: str, pg_cluster, capsys
) -> None:
    db, sessions = sqlite_store
    source = _counts(db)
    assert source["chain_entries"] >= 8 and source["skill_history"] >= 3

    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url], capsys)
    assert code == 0, err
    assert pg_cluster.password not in err
    assert "every chain verified" in err
    assert f"chain entries: {source['chain_entries']} copied of {source['chain_entries']}" in err

    with psycopg.connect(pg_url) as raw:
        for table, count in source.items():
            assert raw.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == count, table

    # The same answers from both stores, through the same public reads.
    with open_store(db, create=False) as lite, open_store(pg_url, create=False) as pg:
        helper = Digest("sha256", SHA_A)
        assert pg.verdict("helper", helper, agent_id="agent-1", tenant_id=None).approved
        assert pg.history("helper") == lite.history("helper")
        assert pg.export_approvals() == lite.export_approvals()
        for sid in sessions:
            assert pg.chain_entries(sid) == lite.chain_entries(sid)
            assert pg.get_session(sid) == lite.get_session(sid)
            assert pg.agbom_version(sid) == lite.agbom_version(sid)
            assert pg.agbom_version(sid, 1) == lite.agbom_version(sid, 1)
        assert pg.get_session(sessions[0])["sealed_head"] is not None
        assert pg.list_components() == lite.list_components()

    code, out, err = run(["audit", "verify", "--db", pg_url], capsys)
    assert code == 0, err
    assert out.count("ok ") == 2 and "sealed" in out
    assert pg_cluster.password not in out + err


def test_a_second_run_copies_nothing_and_a_later_one_only_what_is_new(
    sqlite_store, pg_url: str, capsys
) -> None:
    db, sessions = sqlite_store
    assert run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)[0] == 0
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)
    assert code == 0, err
    assert "nothing new to copy" in err
    assert "chain entries: 0 copied of" in err

    # A revoke made on PostgreSQL after the first copy survives a later copy; the session
    # that went on in SQLite meanwhile arrives whole and sealed.
    pg_revoke = ["skills", "revoke", "helper", "--digest", f"sha256:{SHA_A}", "--db", pg_url]
    assert run([*pg_revoke, "--reason", "CVE"], capsys)[0] == 0
    guardian = build_guardian(db)
    later = _session(guardian, end=True)
    guardian.store.close()
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)
    assert code == 0, err
    assert "approvals: 0 copied of 2, 1 kept as the target has them" in err
    with open_store(pg_url, create=False) as pg:
        record = pg.get_skill("helper", Digest("sha256", SHA_A))
        assert record is not None and record.status == "revoked"
        assert pg.get_session(later)["sealed_head"] == pg.chain_head(later)
    code, out, _ = run(["audit", "verify", "--db", pg_url], capsys)
    assert code == 0 and out.count("ok ") == 3


def test_history_written_on_both_sides_after_a_first_copy_is_merged(
    sqlite_store, pg_url: str, capsys
) -> None:
    """A decision on PostgreSQL takes the next history id; the SQLite store, still in use,
    gives that id to a decision of its own. The next copy appends the SQLite one under a new
    id, and a copy after that finds nothing new."""
    db, _ = sqlite_store
    assert run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)[0] == 0
    other = f"sha256:{'c' * 64}"
    why = ["--reason", "no"]
    pg = ["skills", "deny", "pg-side", "--digest", other, "--db", pg_url, *why]
    assert run(pg, capsys)[0] == 0
    lite = ["skills", "deny", "lite-side", "--digest", other, "--db", str(db), *why]
    assert run(lite, capsys)[0] == 0
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)
    assert code == 0, err
    assert "approval history: 1 copied" in err
    with open_store(pg_url, create=False) as pg:
        assert [h["to_status"] for h in pg.history("pg-side")] == ["denied"]
        assert [h["to_status"] for h in pg.history("lite-side")] == ["denied"]
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)
    assert code == 0 and "nothing new to copy" in err


def test_diverged_chains_stop_the_copy_without_overwriting(
    sqlite_store, pg_url: str, capsys
) -> None:
    db, sessions = sqlite_store
    assert run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)[0] == 0
    with psycopg.connect(pg_url) as raw:
        before = raw.execute(
            "SELECT entry FROM chain_entries WHERE session_id = %s AND seq = 1", (sessions[0],)
        ).fetchone()[0]
    # Someone edits the source's first entry (its SQLite chain no longer verifies).
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE chain_entries SET entry = json_set(entry, '$.tampered', 1) "
        "WHERE session_id = ? AND seq = 1",
        (sessions[0],),
    )
    conn.commit()
    conn.close()
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)
    assert code == 1
    assert "diverged" in err and err.count("\n") == 1
    with psycopg.connect(pg_url) as raw:
        after = raw.execute(
            "SELECT entry FROM chain_entries WHERE session_id = %s AND seq = 1", (sessions[0],)
        ).fetchone()[0]
    assert after == before


def test_a_broken_source_chain_is_copied_and_reported(tmp_path, sqlite_store, pg_url, capsys):
    db, sessions = sqlite_store
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE chain_entries SET entry = json_set(entry, '$.tampered', 1) "
        "WHERE session_id = ? AND seq = 2",
        (sessions[1],),
    )
    conn.commit()
    conn.close()
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url, "-q"], capsys)
    assert code == 1
    assert "1 chain(s)" in err and "do not verify" in err and sessions[1] in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "sqlite:///x.db"], "must be a postgresql:// URL"),
        (["--to", "postgresql://agbom:pw@127.0.0.1:1/x?connect_timeout=3"], "cannot open store"),
    ],
)
def test_bad_targets_are_one_line_errors(sqlite_store, args, message, capsys) -> None:
    db, _ = sqlite_store
    code, out, err = run(["store", "migrate", "--from", str(db), *args], capsys)
    assert code in (1, 2) and message in err
    assert err.count("\n") == 1 and ":pw@" not in err and out == ""


def test_a_missing_source_is_an_error(tmp_path: Path, pg_url: str, capsys) -> None:
    code, _, err = run(
        ["store", "migrate", "--from", str(tmp_path / "none.db"), "--to", pg_url], capsys
    )
    assert code == 1 and "no SQLite store there" in err


def test_progress_lines_name_each_table(sqlite_store, pg_url: str, capsys) -> None:
    db, _ = sqlite_store
    code, _, err = run(["store", "migrate", "--from", str(db), "--to", pg_url], capsys)
    assert code == 0
    progress = [line for line in err.splitlines() if "/" in line and "copied" not in line]
    assert any(line.startswith("agbom: chain entries: ") for line in progress), err
