"""The Guardian's store-facing commands: inventory, audit and replay, through the real CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import orjson
import pytest

from agbom.cli import main
from agbom.guardian import build_guardian
from tests.guardian.acs import SAMPLE_AGBOM, hello, new_session_id, request


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """A store holding one session with a snapshot and a change."""
    db = tmp_path / "store.db"
    guardian = build_guardian(db)
    sid = new_session_id()
    guardian.handle(hello(sid))
    guardian.handle(request("steps/sessionStart", {}, session_id=sid))
    guardian.handle(request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid))
    changed = {"changed": [dict(SAMPLE_AGBOM["components"][1], version="2.0.0")]}
    guardian.handle(request("agbom/changed", changed, session_id=sid))
    guardian.store.close()
    return db, sid


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_inventory_agents_sessions_components(recorded: tuple[Path, str], capsys) -> None:
    db, sid = recorded
    code, out, _ = run(["inventory", "agents", "--db", str(db), "--format", "json"], capsys)
    assert code == 0
    agents = json.loads(out)
    assert [a["agent_id"] for a in agents] == ["agent-1"]
    code, out, _ = run(["inventory", "sessions", "--db", str(db)], capsys)
    assert code == 0 and sid in out and "agent-1" in out
    code, out, _ = run(
        ["inventory", "components", "--db", str(db), "--type", "mcp_server", "--format", "json"],
        capsys,
    )
    assert code == 0
    names = {row["name"] for row in json.loads(out)}
    assert names == {"github"}


def test_inventory_export_versions_and_formats(recorded: tuple[Path, str], capsys) -> None:
    db, sid = recorded
    code, out, _ = run(["inventory", "export", sid, "--db", str(db)], capsys)
    latest = json.loads(out)
    assert code == 0 and latest["agbom_hash"].startswith("sha256:")
    assert {c["id"]: c.get("version") for c in latest["components"]}["gh"] == "2.0.0"
    code, out, _ = run(["inventory", "export", sid, "--version", "1", "--db", str(db)], capsys)
    assert {c["id"]: c.get("version") for c in json.loads(out)["components"]}["gh"] == "1.2.0"
    code, out, _ = run(
        [
            "inventory",
            "export",
            "--agent",
            "agent-1",
            "--format",
            "cyclonedx-json",
            "--db",
            str(db),
        ],
        capsys,
    )
    bom = json.loads(out)
    assert code == 0 and bom["bomFormat"] == "CycloneDX"
    code, _, err = run(["inventory", "export", "no-such-session", "--db", str(db)], capsys)
    assert code == 1 and err.startswith("agbom: error: no stored AgBOM for session no-such-session")


def test_audit_export_and_verify_detect_an_edit(recorded: tuple[Path, str], capsys) -> None:
    db, sid = recorded
    code, out, err = run(["audit", "verify", "--db", str(db)], capsys)
    assert code == 0 and out.startswith("ok ") and "1 chain(s) verified" in err
    code, out, _ = run(["audit", "export", sid, "--db", str(db)], capsys)
    entries = json.loads(out)
    assert code == 0 and [e["step_type"] for e in entries] == [
        "steps/sessionStart",
        "agbom/snapshot",
        "agbom/changed",
    ]
    assert all("seq" not in e for e in entries)
    # Edit the stored decision of the second entry behind agbom's back.
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT seq, entry FROM chain_entries WHERE session_id = ? ORDER BY seq", (sid,)
        ).fetchall()
        edited = orjson.loads(rows[1][1])
        edited["decision"] = "deny"
        conn.execute(
            "UPDATE chain_entries SET entry = ? WHERE session_id = ? AND seq = ?",
            (orjson.dumps(edited).decode(), sid, rows[1][0]),
        )
    code, out, err = run(["audit", "verify", sid, "--db", str(db)], capsys)
    assert code == 1
    assert "BROKEN" in out and "entry index 1" in out and "entry_hash_mismatch" in out
    assert err.strip() == "agbom: error: 1 of 1 chain(s) broken"


def test_replay_prints_one_response_per_request(tmp_path: Path, capsys) -> None:
    sid = new_session_id()
    lines = [
        hello(sid),
        request("steps/sessionStart", {}, session_id=sid),
        request("steps/toolCallRequest", {"tool": {"name": "x"}, "arguments": {}}, session_id=sid),
        request("steps/noSuchHook", {}, session_id=sid),
    ]
    recording = tmp_path / "session.jsonl"
    recording.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n\n")
    db = tmp_path / "replay.db"
    code, out, _ = run(["replay", str(recording), "--db", str(db)], capsys)
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(answers) == 4
    assert answers[2]["result"]["decision"] == "allow"
    assert answers[3]["error"]["code"] == -32601
    code, _, err = run(
        ["replay", str(recording), "--db", str(tmp_path / "r2.db"), "--fail-on-deny"], capsys
    )
    assert code == 1 and "denied or refused" in err


def test_serve_refuses_bad_settings_in_one_line(tmp_path: Path, capsys) -> None:
    code, _, err = run(["serve", "--db", str(tmp_path / "s.db"), "--require-signatures"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--secret-file" in err
    code, _, err = run(
        ["serve", "--db", str(tmp_path / "s.db"), "--max-load-path-depth", "0"], capsys
    )
    assert code == 2 and "must be positive" in err


def test_verify_finds_entries_cut_from_the_end_of_a_sealed_chain(tmp_path: Path, capsys) -> None:
    db = tmp_path / "sealed.db"
    guardian = build_guardian(db)
    sid = new_session_id()
    guardian.handle(hello(sid))
    guardian.handle(request("steps/sessionStart", {}, session_id=sid))
    guardian.handle(request("steps/userMessage", {"content": "hi"}, session_id=sid))
    end = guardian.handle(request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))
    guardian.store.close()
    stored = build_guardian(db).store.get_session(sid)
    assert stored is not None and stored["sealed_head"] == end["result"]["chain_hash"]
    code, out, _ = run(["audit", "verify", "--db", str(db)], capsys)
    assert code == 0 and "sealed" in out
    # Cutting the last entry leaves every remaining link intact: only the seal shows it.
    with sqlite3.connect(db) as conn:
        conn.execute(
            "DELETE FROM chain_entries WHERE session_id = ? AND seq = "
            "(SELECT MAX(seq) FROM chain_entries WHERE session_id = ?)",
            (sid, sid),
        )
    code, out, _ = run(["audit", "verify", "--db", str(db)], capsys)
    assert code == 1 and "head_mismatch" in out


def test_verify_checks_an_open_session_against_the_head_a_client_holds(
    recorded: tuple[Path, str], capsys
) -> None:
    db, sid = recorded
    code, _, _ = run(["audit", "verify", sid, "--db", str(db), "--expected-head", "0" * 64], capsys)
    assert code == 1
    code, _, err = run(["audit", "verify", "--db", str(db), "--expected-head", "0" * 64], capsys)
    assert code == 2 and "needs a SESSION_ID" in err


def test_explain_a_recorded_decision(tmp_path: Path, capsys) -> None:
    db = tmp_path / "explain.db"
    guardian = build_guardian(db)
    sid = new_session_id()
    guardian.handle(hello(sid))
    guardian.handle(request("steps/sessionStart", {}, session_id=sid))
    # The sample's components carry no registration provenance: AGB-HYG-004 warns.
    snap = guardian.handle(request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid))
    assert "warn:AGB-HYG-004" in snap["result"]["reason_codes"]
    guardian.store.close()
    code, out, _ = run(["explain", "--session", sid, "--entry", "2", "--db", str(db)], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "entry 2 agbom/snapshot: allow warn:AGB-HYG-004"
    assert lines[1].startswith("AGB-HYG-004 (hygiene, pack default): MATCHED")
    assert "mcp_server github has no registration provenance" in out
    code, _, err = run(["explain", "--session", sid, "--entry", "99", "--db", str(db)], capsys)
    assert code == 1 and "has no entry 99" in err


SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _decisions(out: str) -> list[str]:
    found = []
    for line in out.splitlines():
        answer = json.loads(line)
        result = answer.get("result") or {}
        found.append(
            result.get("decision") or ("hello" if "negotiated_version" in result else "error")
        )
    return found


def test_bundled_session_replays_with_and_without_the_bundled_approvals(
    tmp_path: Path, capsys
) -> None:
    recording = str(SAMPLES / "sessions" / "coding-agent.jsonl")
    bare = str(tmp_path / "bare.db")
    code, out, _ = run(["replay", recording, "--db", bare], capsys)
    assert code == 0
    # hello, start, snapshot (a skill reaches bash unapproved), turn, message with a token,
    # register and load of an unapproved skill, tool call, turn end, session end.
    assert _decisions(out) == [
        "hello",
        "allow",
        "deny",
        "allow",
        "modify",
        "deny",
        "deny",
        "allow",
        "allow",
        "allow",
    ]
    approved = str(tmp_path / "approved.db")
    code, _, _ = run(
        ["skills", "import", str(SAMPLES / "approvals.yaml"), "--db", approved], capsys
    )
    assert code == 0
    code, out, _ = run(["replay", recording, "--db", approved], capsys)
    assert _decisions(out)[5:7] == ["allow", "allow"]
    code, out, _ = run(["audit", "verify", "--db", approved], capsys)
    assert code == 0 and "sealed" in out
    # The refused snapshot is kept for explanation, not as the session's inventory.
    sid = "7f1c2a9e-5b3d-4e8f-9a61-0c2d4e6f8a10"
    code, out, _ = run(["explain", "--session", sid, "--entry", "2", "--db", approved], capsys)
    headers = [line for line in out.splitlines() if not line.startswith(" ")]
    assert headers == [
        "entry 2 agbom/snapshot: deny rule_violation AGB-PATH-001 warn:AGB-HYG-001 warn:AGB-LP-001",
        "AGB-HYG-001 (hygiene, pack default): MATCHED",
        "AGB-PATH-001 (path, pack default): MATCHED",
        "AGB-LP-001 (least_privilege, pack default): MATCHED",
    ]
    # ... and listed in the inventory as refused, with what refused it (issue 28 item 5).
    code, out, _ = run(["inventory", "components", "--db", approved, "--format", "json"], capsys)
    rows = json.loads(out)
    assert code == 0 and rows, out
    assert {r["status"] for r in rows} == {"refused"}, rows
    refusing = {r["component_id"]: r["findings"] for r in rows}
    assert refusing["tool-bash"] == "AGB-PATH-001" and refusing["mcp-github"] == "-", rows
