"""``agbom audit seal`` stores the head it signs with the chain, and ``audit verify`` checks
the chain against it, on SQLite and on PostgreSQL, and ``store migrate`` carries it (issue
42 item 9). On main the statement was printed only: ``audit verify --public-key`` said
UNSIGNED right after a seal.

A seal of an open session is a checkpoint: the session goes on, ``audit verify`` says which
entries the seal covers and that the later ones are not (PARTIAL), a new seal takes the
checkpoint's place, and so does the Guardian's own seal at ``sessionEnd``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.evidence import independent
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post, run_cli

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"
SESSION_ID = json.loads(SESSION.read_text().splitlines()[1])["params"]["metadata"]["session_id"]
TOOL_CALL = {"tool": {"name": "read_file"}, "arguments": {"path": {"value": "README.md"}}}


def keypair(folder: Path, name: str, algorithm: str = "ML-DSA-65") -> tuple[Path, Path, bytes]:
    done = run_cli("keys", "generate", "-a", algorithm, "--out", str(folder / name))
    assert done.returncode == 0, done.stderr
    public = folder / f"{name}.pub"
    return folder / f"{name}.key", public, independent.raw_public_key(public.read_bytes())[1]


def seal(db: str, sid: str, key: Path) -> tuple[dict[str, Any], str]:
    done = run_cli("audit", "seal", sid, "--db", db, "--signing-key", str(key))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr.decode()


def verify(db: str, sid: str, public: Path) -> tuple[int, str]:
    done = run_cli("audit", "verify", sid, "--db", db, "--public-key", str(public))
    return done.returncode, done.stdout.decode() + done.stderr.decode()


def entries(db: str, sid: str) -> list[dict[str, Any]]:
    done = run_cli("audit", "export", sid, "--db", db)
    assert done.returncode == 0, done.stderr
    chain: list[dict[str, Any]] = json.loads(done.stdout)
    return chain


def _sealed_and_verified(db: str, folder: Path) -> dict[str, Any]:
    private, public, raw = keypair(folder, "guardian")
    code, said = verify(db, SESSION_ID, public)
    assert code == 1 and f"UNSIGNED {SESSION_ID}" in said  # nothing sealed yet
    statement, told = seal(db, SESSION_ID, private)
    code, said = verify(db, SESSION_ID, public)
    assert code == 0, said
    assert "stored the signed head of" in told
    assert f"ok      {SESSION_ID}" in said and statement["chain_hash"] in said
    # What is stored is what was printed, and an independent verifier accepts it.
    chain = entries(db, SESSION_ID)
    assert independent.acs_signature_verifies(statement, raw)
    assert independent.chain_recomputes(chain, statement["chain_hash"])
    assert statement["entry_count"] == len(chain)
    # Sealing again changes nothing: the first seal of this head stands.
    other, _, _ = keypair(folder, "other")
    _, told = seal(db, SESSION_ID, other)
    assert "already sealed" in told and "that seal stands" in told
    assert verify(db, SESSION_ID, public)[0] == 0
    return statement


def test_a_seal_is_stored_and_verified_on_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    done = run_cli("replay", str(SESSION), "--db", db)
    assert done.returncode == 0, done.stderr
    _sealed_and_verified(db, tmp_path)


def test_a_seal_is_stored_on_postgresql_and_migrated_there(tmp_path: Path, pg_url: str) -> None:
    # Sealed on SQLite, then migrated: the seal travels with the chain.
    db = str(tmp_path / "s.db")
    assert run_cli("replay", str(SESSION), "--db", db).returncode == 0
    statement = _sealed_and_verified(db, tmp_path)
    done = run_cli("store", "migrate", "--from", db, "--to", pg_url, "--quiet")
    assert done.returncode == 0, done.stderr
    code, said = verify(pg_url, SESSION_ID, tmp_path / "guardian.pub")
    assert code == 0 and statement["chain_hash"] in said, said


def test_a_seal_made_on_postgresql_is_stored_there(tmp_path: Path, pg_url: str) -> None:
    done = run_cli("replay", str(SESSION), "--db", pg_url)
    assert done.returncode == 0, done.stderr
    _sealed_and_verified(pg_url, tmp_path)


@pytest.mark.network
def test_a_checkpoint_of_an_open_session_gives_way_to_later_seals(tmp_path: Path) -> None:
    private, public, _ = keypair(tmp_path, "guardian")
    server = Served(
        tmp_path / "s.db", tmp_path / "serve.log", extra=["--signing-key", str(private)]
    ).start()
    db = str(server.db)
    sid = str(uuid.uuid4())
    try:
        assert "result" in post(server.url, hello(sid))
        for step in ("steps/sessionStart", "steps/toolCallRequest"):
            payload = TOOL_CALL if step == "steps/toolCallRequest" else {}
            assert post(server.url, request(step, payload, session_id=sid))["result"]
        first, told = seal(db, sid, private)
        assert verify(db, sid, public)[0] == 0
        assert first["entry_count"] == 2 and "stored" in told
        # The session goes on: the checkpoint covers the first two entries only.
        post(server.url, request("steps/toolCallRequest", TOOL_CALL, session_id=sid))
        code, said = verify(db, sid, public)
        assert code == 1 and f"PARTIAL {sid}  2 of 3 entries sealed" in said, said
        # A bundle needs a head of the whole chain.
        exporter, _, _ = keypair(tmp_path, "exporter", "Ed25519")
        out = tmp_path / "b.json"
        bundled = run_cli(
            "audit", "export", sid, "--db", db, "--bundle", str(out),
            "--signing-key", str(exporter),
        )  # fmt: skip
        assert bundled.returncode == 1 and b"checkpoint of 2 of its 3 entries" in bundled.stderr
        # Sealed again, the later head takes the checkpoint's place.
        second, told = seal(db, sid, private)
        assert second["entry_count"] == 3 and "in place of the checkpoint of 2" in told
        assert verify(db, sid, public)[0] == 0
        # And at sessionEnd the Guardian's own seal takes the place of that one.
        post(server.url, request("steps/toolCallRequest", TOOL_CALL, session_id=sid))
        ended = post(
            server.url, request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)
        )
        assert ended.get("result", {}).get("decision") == "allow", ended
    finally:
        server.stop()
    code, said = verify(db, sid, public)
    assert code == 0 and "  5 entries  " in said, said
    assert len(entries(db, sid)) == 5
