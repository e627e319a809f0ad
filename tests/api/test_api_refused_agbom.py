"""A refused AgBOM is never missing (issue 42 item 10): after the README demo's denied snapshot
(a real ``agbom replay``), ``agbom inventory export SESSION`` exports it marked refused, the
read API's 404 says why there is no AgBOM in use and where the refused one is, and
``inventory components`` names, per component, only the rules that refused it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_process import run_agbom
from tests.transports.served import Served

SESSION = Path(__file__).resolve().parents[2] / "samples" / "sessions" / "coding-agent.jsonl"
SESSION_ID = "7f1c2a9e-5b3d-4e8f-9a61-0c2d4e6f8a10"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:
    root = tmp_path_factory.mktemp("refused-agbom")
    db = root / "demo.db"
    replay = run_agbom("replay", str(SESSION), "--db", str(db), cwd=root)
    snapshot = json.loads(replay.stdout.splitlines()[2])["result"]
    assert snapshot["decision"] == "deny", snapshot
    yield db, snapshot


def test_inventory_export_of_a_session_exports_its_refused_agbom(demo, tmp_path: Path) -> None:
    db, _ = demo
    done = run_agbom("inventory", "export", SESSION_ID, "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    sample = json.loads(SESSION.read_text().splitlines()[2])["params"]["payload"]["agbom"]
    assert {c["id"] for c in document["components"]} == {c["id"] for c in sample["components"]}
    assert f"version 1 of session {SESSION_ID} was refused by the Guardian" in done.stderr
    assert "never in use" in done.stderr
    unknown = run_agbom("inventory", "export", "no-such-session", "--db", str(db), cwd=tmp_path)
    assert unknown.returncode == 1 and "no stored AgBOM for session" in unknown.stderr


def test_components_name_only_the_rules_that_refused_each(demo, tmp_path: Path) -> None:
    db, snapshot = demo
    denied = {
        f["rule_id"]: set(f["components"])
        for f in snapshot["policy_data"]["agbom"]["findings"]
        if f["action"] == "deny"
    }
    warned = {
        f["rule_id"] for f in snapshot["policy_data"]["agbom"]["findings"] if f["action"] == "warn"
    }
    assert denied and warned  # the demo's snapshot has both
    done = run_agbom("inventory", "components", "--db", str(db), "--format", "json", cwd=tmp_path)
    rows = {r["component_id"]: r for r in json.loads(done.stdout)}
    for cid, row in rows.items():
        expected = sorted(rule for rule, ids in denied.items() if cid in ids)
        assert row["status"] == "refused"
        assert row["findings"] == (",".join(expected) or "-"), cid
        assert not set(row["findings"].split(",")) & warned
    table = run_agbom("inventory", "components", "--db", str(db), cwd=tmp_path).stdout
    assert "['" not in table and "coding-agent" in table  # agents, not a Python list
    run_tests = next(line for line in table.splitlines() if line.startswith("skill-run-tests "))
    assert "  coding-agent  " in run_tests


@pytest.fixture(scope="module")
def served(demo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db, _ = demo
    server = Served(db=db, log=tmp_path_factory.mktemp("serve") / "serve.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_read_api_says_why_an_agent_has_no_agbom(served: Served) -> None:
    reply = httpx.get(f"{served.url}/v1/agents/coding-agent/agbom", timeout=30)
    assert reply.status_code == 404
    body = reply.json()
    assert body["error"] == "not_found" and "refused by the Guardian" in body["message"]
    assert "AGB-PATH-001" in body["message"]
    assert body["refused"]["session_id"] == SESSION_ID and body["refused"]["version"] == 1
    kept = httpx.get(f"{served.url}/v1/sessions/{SESSION_ID}/agbom?version=1", timeout=30)
    assert kept.status_code == 200 and kept.json()["components"]
    session = httpx.get(f"{served.url}/v1/sessions/{SESSION_ID}/agbom", timeout=30)
    assert session.status_code == 404 and "?version=1" in session.json()["message"]
    nobody = httpx.get(f"{served.url}/v1/agents/nobody/agbom", timeout=30)
    assert nobody.status_code == 404
    assert nobody.json()["message"] == "no AgBOM is stored for agent nobody"
    late = httpx.get(f"{served.url}/v1/sessions/{SESSION_ID}/agbom?version=9", timeout=30)
    assert late.json()["message"] == f"session {SESSION_ID} has no AgBOM version 9"
