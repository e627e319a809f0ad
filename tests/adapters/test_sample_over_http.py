"""The README's "Try the Guardian" session over HTTP: each line of the bundled recording POSTed
to a real ``agbom serve`` ``/acs`` is decided as ``agbom replay`` decides it (issue 28 item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.cli_process import run_agbom
from tests.transports.served import Served, post

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"
APPROVALS = ROOT / "samples" / "approvals.yaml"
# The recording's timestamps are fixed; a live server checks them against its clock, so the
# README's HTTP variant gives the demo server a window covering the recording (ten years).
SKEW_MS = "315360000000"


def _outcome(answer: dict[str, object]) -> object:
    """What a response decided: the disposition, or the error's code."""
    if "error" in answer:
        return ("error", answer["error"]["code"])  # type: ignore[index]
    result = answer["result"]
    assert isinstance(result, dict)
    return result.get("decision", "hello")


def _over_http(db: Path, tmp: Path) -> list[object]:
    served = Served(
        db=db, log=tmp / f"serve-{db.stem}.log", extra=["--skew-window-ms", SKEW_MS], cwd=tmp
    ).start()
    try:
        lines = [line for line in SESSION.read_bytes().splitlines() if line.strip()]
        with httpx.Client() as client:
            return [_outcome(post(served.url, line, client=client)) for line in lines]
    finally:
        served.stop()


def _replayed(db: Path, tmp: Path) -> list[object]:
    run = run_agbom("replay", str(SESSION), "--db", str(db), "--format", "jsonl", cwd=tmp)
    assert run.returncode == 0, run.stderr
    return [_outcome(json.loads(line)) for line in run.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("approved", [False, True], ids=["no-approvals", "approvals-imported"])
def test_the_sample_session_over_http_decides_as_the_replay(tmp_path: Path, approved: bool) -> None:
    stores = [tmp_path / "replay.db", tmp_path / "http.db"]
    if approved:
        for db in stores:
            run = run_agbom("skills", "import", str(APPROVALS), "--db", str(db), cwd=tmp_path)
            assert run.returncode == 0, run.stderr
    replayed = _replayed(stores[0], tmp_path)
    over_http = _over_http(stores[1], tmp_path)
    assert over_http == replayed
    assert not any(isinstance(o, tuple) for o in over_http), over_http
    # The documented results: the snapshot denied, the token redacted, the skill refused
    # until approved.
    assert over_http[2] == "deny" and over_http[4] == "modify"
    assert over_http[5] == ("allow" if approved else "deny")
