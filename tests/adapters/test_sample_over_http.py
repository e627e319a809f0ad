"""The README's "Try the Guardian" session over HTTP: each line of the bundled recording POSTed
to a real ``agbom serve`` ``/acs`` is decided as ``agbom replay`` decides it (issue 28 item 6)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.adapters.hook_helpers import agbom_command, free_port

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"
APPROVALS = ROOT / "samples" / "approvals.yaml"
# The recording's timestamps are fixed; a live server checks them against its clock, so the
# README's HTTP variant gives the demo server a window covering the recording (ten years).
SKEW_MS = "315360000000"


def _agbom(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "AGBOM_DEBUG": "0"},
        timeout=300,
        check=False,
    )


def _outcome(answer: dict[str, object]) -> object:
    """What a response decided: the disposition, or the error's code."""
    if "error" in answer:
        return ("error", answer["error"]["code"])  # type: ignore[index]
    result = answer["result"]
    assert isinstance(result, dict)
    return result.get("decision", "hello")


def _over_http(db: Path, tmp: Path) -> list[object]:
    port = free_port()
    log = tmp / f"serve-{db.stem}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [*agbom_command(), "serve", "--host", "127.0.0.1", "--port", str(port)]
            + ["--db", str(db), "--skew-window-ms", SKEW_MS],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=tmp,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"agbom serve exited {proc.returncode}: {log.read_text()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"agbom serve did not start: {log.read_text()}")
            time.sleep(0.1)
        outcomes = []
        for line in SESSION.read_bytes().splitlines():
            if not line.strip():
                continue
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/acs", body=line, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200, body
            outcomes.append(_outcome(json.loads(body)))
        return outcomes
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _replayed(db: Path, tmp: Path) -> list[object]:
    run = _agbom("replay", str(SESSION), "--db", str(db), "--format", "jsonl", cwd=tmp)
    assert run.returncode == 0, run.stderr
    return [_outcome(json.loads(line)) for line in run.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("approved", [False, True], ids=["no-approvals", "approvals-imported"])
def test_the_sample_session_over_http_decides_as_the_replay(tmp_path: Path, approved: bool) -> None:
    stores = [tmp_path / "replay.db", tmp_path / "http.db"]
    if approved:
        for db in stores:
            run = _agbom("skills", "import", str(APPROVALS), "--db", str(db), cwd=tmp_path)
            assert run.returncode == 0, run.stderr
    replayed = _replayed(stores[0], tmp_path)
    over_http = _over_http(stores[1], tmp_path)
    assert over_http == replayed
    assert not any(isinstance(o, tuple) for o in over_http), over_http
    # The documented results: the snapshot denied, the token redacted, the skill refused
    # until approved.
    assert over_http[2] == "deny" and over_http[4] == "modify"
    assert over_http[5] == ("allow" if approved else "deny")
