"""The CLI and the Guardian on a PostgreSQL store, as the README's demo runs them on SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agbom.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_demo_on_postgresql(pg_url: str, pg_cluster, capsys) -> None:
    session = str(SAMPLES / "sessions" / "coding-agent.jsonl")
    code, _, err = run(
        ["skills", "import", str(SAMPLES / "approvals.yaml"), "--db", pg_url], capsys
    )
    assert code == 0, err
    code, out, err = run(["replay", session, "--db", pg_url, "--format", "jsonl"], capsys)
    assert code == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert answers and all("result" in a or "error" in a for a in answers)
    code, verified, err = run(["audit", "verify", "--db", pg_url], capsys)
    assert code == 0, err
    assert verified.startswith("ok ") and "sealed" in verified
    code, out, err = run(["inventory", "sessions", "--db", pg_url, "--format", "json"], capsys)
    assert code == 0 and len(json.loads(out)) == 1
    # The same recording again is refused: its session is in the store already.
    code, again, err = run(["replay", session, "--db", pg_url, "--format", "jsonl"], capsys)
    assert code == 1 and again == "" and "already" in err
    assert pg_cluster.password not in err and "postgresql://agbom@127.0.0.1:" in err
    code, out, _ = run(["audit", "verify", "--db", pg_url], capsys)
    assert code == 0 and out == verified
