"""``agbom serve`` as a real subprocess on 127.0.0.1: JSON-RPC over HTTP and the read API."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from agbom.export import validate_cyclonedx_json
from tests.guardian.acs import SAMPLE_AGBOM, SHA_A, SHA_B, digest, hello, request
from tests.transports.served import Served, open_session, post, run_cli

pytestmark = pytest.mark.network

TOKEN = "t0ken-" + "x" * 26

AGBOM = SAMPLE_AGBOM


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve")
    token_file = folder / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    server = Served(
        db=folder / "store.db",
        log=folder / "serve.log",
        extra=["--api-token-file", str(token_file), "--max-body-bytes", "65536"],
    ).start()
    yield server
    server.stop()


def result(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in reply, reply
    return reply["result"]


def error(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" not in reply, reply
    return reply["error"]


def test_full_session_over_http_leaves_a_verifiable_chain(served: Served) -> None:
    sid = open_session(served.url)
    steps = [
        ("agbom/snapshot", {"agbom": AGBOM}, None),
        ("steps/turnStart", {"turn_id": "t1", "triggered_by": "user_message"}, "t1"),
        ("steps/userMessage", {"content": "list the repo"}, "t1"),
        (
            "steps/toolCallRequest",
            {"tool": {"name": "read_file"}, "arguments": {"path": {"value": "README.md"}}},
            "t1",
        ),
        ("steps/turnEnd", {"turn_id": "t1", "outcome": "completed", "step_count": 2}, "t1"),
    ]
    heads = []
    for method, payload, turn in steps:
        got = result(post(served.url, request(method, payload, session_id=sid, turn_id=turn)))
        assert got["decision"] == "allow", (method, got)
        heads.append(got["chain_hash"])
    assert len(set(heads)) == len(heads)
    end = result(
        post(
            served.url,
            request(
                "steps/sessionEnd",
                {"reason": "completed", "final_chain_hash": heads[-1]},
                session_id=sid,
            ),
        )
    )
    assert end["decision"] == "allow"
    # The store the server wrote is verifiable by the CLI while the server still runs.
    verify = run_cli("audit", "verify", sid, "--db", str(served.db))
    assert verify.returncode == 0, verify.stderr
    assert f"ok      {sid}  7 entries  head {end['chain_hash']}" in verify.stdout.decode()
    exported = orjson.loads(run_cli("audit", "export", sid, "--db", str(served.db)).stdout)
    assert [e["entry_hash"] for e in exported][-1] == end["chain_hash"]


def test_batch_answers_each_request_in_order(served: Served) -> None:
    sid = open_session(served.url)
    batch = [
        request("system/ping", {"echo": 1}, session_id=sid),
        request("steps/userMessage", {"content": "hi"}, session_id=sid),
        request("steps/noSuchHook", {}, session_id=sid),
    ]
    answers = post(served.url, batch)
    assert [a["id"] for a in answers] == [b["id"] for b in batch]
    assert answers[0]["result"]["payload"]["echo"] == 1
    assert answers[1]["result"]["decision"] == "allow"
    assert answers[2]["error"]["code"] == -32601


def test_oversized_body_is_payload_too_large(served: Served) -> None:
    sid = open_session(served.url)
    before = run_cli("audit", "export", sid, "--db", str(served.db)).stdout
    big = request("steps/userMessage", {"content": "x" * 70_000}, session_id=sid)
    reply = httpx.post(
        f"{served.url}/acs", content=orjson.dumps(big), headers={"Content-Type": "application/json"}
    )
    assert reply.status_code == 413  # and the JSON-RPC error says why
    err = error(reply.json())
    assert err["code"] == -32600 and err["data"]["reason"] == "payload_too_large"
    # Refused before the Guardian saw it: the chain did not move.
    assert run_cli("audit", "export", sid, "--db", str(served.db)).stdout == before


@pytest.mark.parametrize("body", [b"{not json", b"", b"\xff\xfe{}", b'{"a":'])
def test_parse_errors_are_32700_with_null_id(served: Served, body: bytes) -> None:
    reply = post(served.url, body)
    assert reply["id"] is None and error(reply)["code"] == -32700


def _register(url: str, sid: str, skill: str, value: str) -> dict[str, Any]:
    payload = {
        "skill_id": skill,
        "definition": {"ref": f"skills/{skill}", "digest": digest(value)},
        "declared_capabilities": [],
    }
    return result(post(url, request("steps/skillRegister", payload, session_id=sid)))


def _load(url: str, sid: str, skill: str, value: str) -> dict[str, Any]:
    payload = {
        "skill_id": skill,
        "digest": digest(value),
        "load_trigger": "user",
        "load_path": [{"skill_id": skill}],
        "digest_verified": True,
    }
    return result(post(url, request("steps/skillLoad", payload, session_id=sid)))


def test_cli_approval_takes_effect_without_restart(served: Served) -> None:
    sid = open_session(served.url)
    skill = f"pdf-{uuid.uuid4().hex[:8]}"
    first = _register(served.url, sid, skill, SHA_A)
    assert first["decision"] == "deny" and "approval_pending" in first["reason_codes"]
    assert _load(served.url, sid, skill, SHA_A)["decision"] == "deny"
    approve = run_cli(
        "skills", "approve", skill, "--digest", f"sha256:{SHA_A}", "--db", str(served.db),
        "--reason", "reviewed",
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr
    assert _register(served.url, sid, skill, SHA_A)["decision"] == "allow"
    assert _load(served.url, sid, skill, SHA_A)["decision"] == "allow"
    # The approval pins the digest: another digest of the same skill is still refused.
    assert _load(served.url, sid, skill, SHA_B)["decision"] == "deny"


def test_read_api_requires_the_token_and_leaks_nothing(served: Served) -> None:
    sid = open_session(served.url)
    skill = f"secret-skill-{uuid.uuid4().hex[:8]}"
    _register(served.url, sid, skill, SHA_A)
    path = f"{served.url}/v1/skills/{skill}"
    for headers in ({}, {"Authorization": "Bearer wrong-token-123456"}, {"Authorization": TOKEN}):
        reply = httpx.get(path, headers=headers)
        assert reply.status_code == 401
        assert skill not in reply.text and SHA_A not in reply.text
        assert reply.headers["www-authenticate"] == "Bearer"
    approval = f"{path}/approvals/sha256:{SHA_A}"
    assert httpx.get(approval).status_code == 401
    assert httpx.get(f"{served.url}/v1/sessions/{sid}/agbom").status_code == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    ok = httpx.get(path, headers=auth)
    assert ok.status_code == 200
    record = ok.json()
    assert record["skill_id"] == skill
    assert [d["digest"] for d in record["digests"]] == [{"algorithm": "sha256", "value": SHA_A}]
    verdict = httpx.get(approval, headers=auth).json()
    assert verdict["approved"] is False and verdict["status"] == "pending"
    assert httpx.get(f"{served.url}/v1/skills/nope-{sid}", headers=auth).status_code == 404
    # The ACS endpoint and health check need no token (ACS has its own signatures).
    assert httpx.get(f"{served.url}/healthz").status_code == 200


def test_session_agbom_in_canonical_and_cyclonedx(served: Served) -> None:
    sid = open_session(served.url)
    assert result(post(served.url, request("agbom/snapshot", {"agbom": AGBOM}, session_id=sid)))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    base = f"{served.url}/v1/sessions/{sid}/agbom"
    canonical = httpx.get(f"{base}?format=canonical", headers=auth)
    assert canonical.status_code == 200
    doc = canonical.json()
    assert {c["id"] for c in doc["components"]} == {"fs-read", "gh"}
    cdx = httpx.get(f"{base}?format=cyclonedx-json", headers=auth)
    assert cdx.status_code == 200
    assert cdx.headers["content-type"].startswith("application/vnd.cyclonedx+json")
    bom = cdx.json()
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.6"
    validate_cyclonedx_json(bom, "1.6")
    names = {c.get("name") for c in bom.get("components", [])} | {
        s.get("name") for s in bom.get("services", [])
    }
    assert {"read_file", "github"} <= names
    assert httpx.get(f"{base}?format=nope", headers=auth).status_code == 400
    assert httpx.get(f"{served.url}/v1/sessions/none/agbom", headers=auth).status_code == 404


def test_stdio_transport_with_content_length_framing(tmp_path: Path) -> None:
    sid = str(uuid.uuid4())
    messages = [
        hello(sid),
        request("steps/sessionStart", {}, session_id=sid),
        request("steps/userMessage", {"content": "hi"}, session_id=sid),
    ]
    stream = b""
    for message in messages:
        body = orjson.dumps(message)
        stream += b"Content-Length: %d\r\n\r\n" % len(body) + body
    stream += b"Content-Length: 9\r\n\r\n{not json"
    done = run_cli("serve", "--stdio", "--db", str(tmp_path / "s.db"), stdin=stream)
    assert done.returncode == 0, done.stderr
    replies = _unframe(done.stdout)
    assert len(replies) == 4
    assert "negotiated_version" in replies[0]["result"]
    assert replies[1]["result"]["decision"] == "allow"
    assert replies[2]["result"]["decision"] == "allow"
    assert replies[3]["error"]["code"] == -32700
    verify = run_cli("audit", "verify", sid, "--db", str(tmp_path / "s.db"))
    assert verify.returncode == 0 and b"2 entries" in verify.stdout


def test_stdio_bad_framing_is_answered_then_closed(tmp_path: Path) -> None:
    done = run_cli(
        "serve", "--stdio", "--db", str(tmp_path / "s.db"), stdin=b"Content-Length: abc\r\n\r\n{}"
    )
    replies = _unframe(done.stdout)
    assert replies[-1]["error"]["code"] == -32600
    assert replies[-1]["error"]["data"]["reason"] == "bad_framing"


def _unframe(data: bytes) -> list[Any]:
    out = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        out.append(orjson.loads(rest[:length]))
        data = rest[length:]
    return out


def test_replay_of_a_jsonl_file(tmp_path: Path) -> None:
    sid = str(uuid.uuid4())
    lines = [
        hello(sid),
        request("steps/sessionStart", {}, session_id=sid, timestamp="2020-01-01T00:00:00Z"),
        request(
            "steps/toolCallRequest",
            {"tool": {"name": "read_file"}, "arguments": {}},
            session_id=sid,
            timestamp="2020-01-01T00:00:01Z",
        ),
        request(
            "steps/skillLoad",
            {
                "skill_id": "never-approved",
                "digest": digest(SHA_A),
                "load_trigger": "user",
                "load_path": [{"skill_id": "never-approved"}],
            },
            session_id=sid,
            timestamp="2020-01-01T00:00:02Z",
        ),
    ]
    recording = tmp_path / "session.jsonl"
    recording.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n\n")
    db = tmp_path / "replay.db"
    done = run_cli("replay", str(recording), "--db", str(db))
    assert done.returncode == 0, done.stderr
    replies = [orjson.loads(x) for x in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [x["id"] for x in lines]
    assert replies[2]["result"]["decision"] == "allow"
    assert replies[3]["result"]["decision"] == "deny"
    assert run_cli("audit", "verify", "--db", str(db)).returncode == 0
    # --fail-on-deny turns the recorded deny into exit 1 (on a fresh store: ids are unseen).
    strict = run_cli("replay", str(recording), "--db", str(tmp_path / "r2.db"), "--fail-on-deny")
    assert strict.returncode == 1 and b"denied" in strict.stderr
    # Old timestamps are refused when the clock is checked.
    checked = run_cli(
        "replay", str(recording), "--db", str(tmp_path / "r3.db"), "--check-skew"
    ).stdout.splitlines()
    assert orjson.loads(checked[1])["error"]["code"] == -32006


def test_audit_verify_exit_codes_on_good_and_tampered_store(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "a.db"
    sid = str(uuid.uuid4())
    lines = [hello(sid), request("steps/sessionStart", {}, session_id=sid)]
    lines += [request("steps/userMessage", {"content": f"m{i}"}, session_id=sid) for i in range(4)]
    recording = tmp_path / "r.jsonl"
    recording.write_bytes(b"\n".join(orjson.dumps(x) for x in lines))
    assert run_cli("replay", str(recording), "--db", str(db)).returncode == 0
    good = run_cli("audit", "verify", "--db", str(db))
    assert good.returncode == 0 and b"5 entries" in good.stdout
    with sqlite3.connect(db) as conn:
        text = conn.execute(
            "SELECT entry FROM chain_entries WHERE session_id = ? AND seq = 3", (sid,)
        ).fetchone()[0]
        entry = orjson.loads(text)
        entry["decision"] = "deny"
        conn.execute(
            "UPDATE chain_entries SET entry = ? WHERE session_id = ? AND seq = 3",
            (orjson.dumps(entry).decode(), sid),
        )
    bad = run_cli("audit", "verify", "--db", str(db))
    assert bad.returncode == 1
    assert f"BROKEN  {sid}  at entry index 2".encode() in bad.stdout
    assert b"entry_hash_mismatch" in bad.stdout
    missing = run_cli("audit", "verify", "no-such-session", "--db", str(db))
    assert missing.returncode != 0 and b"Traceback" not in missing.stderr


def test_read_api_does_not_call_an_approval_that_requires_a_signer_approved(
    served: Served,
) -> None:
    # The approval holds only while the signer's signature verifies, which the read API
    # cannot check: a caller (an OPA, another Guardian) must not read it as a bare approval.
    sid = open_session(served.url)
    skill = f"signed-{uuid.uuid4().hex[:8]}"
    _register(served.url, sid, skill, SHA_A)
    approve = run_cli(
        "skills", "approve", skill, "--digest", f"sha256:{SHA_A}", "--db", str(served.db),
        "--reason", "reviewed", "--require-signer", "skills@publisher.example",
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr
    auth = {"Authorization": f"Bearer {TOKEN}"}
    verdict = httpx.get(f"{served.url}/v1/skills/{skill}/approvals/sha256:{SHA_A}", headers=auth)
    assert verdict.status_code == 200
    body = verdict.json()
    assert body["approved"] is False
    assert body["status"] == "signer_required"
    assert body["required_signer"] == "skills@publisher.example"
    assert body["record"]["status"] == "approved"
    assert body["record"]["required_signer"] == "skills@publisher.example"
    # Approving the pair again without the requirement makes it a bare approval again.
    again = run_cli(
        "skills", "approve", skill, "--digest", f"sha256:{SHA_A}", "--db", str(served.db),
        "--reason", "reviewed again",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    plain = httpx.get(f"{served.url}/v1/skills/{skill}/approvals/sha256:{SHA_A}", headers=auth)
    assert plain.json()["approved"] is True and plain.json()["status"] == "approved"
    assert "required_signer" not in plain.json()
