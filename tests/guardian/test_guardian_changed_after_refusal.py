"""Issue 28 item 5: an ``agbom/changed`` after a refused snapshot diffs against that snapshot
(the last one received), and the AgBOM it yields is judged on its own: a refused base never
counts as accepted. Walked through a real ``agbom replay`` child process on a SQLite file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_process import run_agbom

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"


def _changed(number: int, template: dict[str, Any], **payload: Any) -> dict[str, Any]:
    params = json.loads(json.dumps(template["params"]))
    params["request_id"] = f"00000000-0000-4000-8000-{number:012d}"
    params["payload"] = payload
    return {"jsonrpc": "2.0", "method": "agbom/changed", "id": number, "params": params}


def _model(snapshot: dict[str, Any], version: str) -> dict[str, Any]:
    components = snapshot["params"]["payload"]["agbom"]["components"]
    (model,) = [c for c in components if c["id"] == "model-claude"]
    return {**model, "version": version}


def _replay(tmp_path: Path, *changes: dict[str, Any]) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in SESSION.read_text().splitlines()[:3]]
    methods = lines[0]["params"]["payload"]["methods_implemented"]
    if "agbom/changed" not in methods:
        methods.append("agbom/changed")
    recording = tmp_path / "session.jsonl"
    recording.write_text("".join(json.dumps(x) + "\n" for x in [*lines, *changes]))
    done = run_agbom("replay", str(recording), "--db", str(tmp_path / "g.db"), cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _decision(answer: dict[str, Any]) -> str:
    assert "result" in answer, answer
    return str(answer["result"]["decision"])


def test_a_change_to_a_refused_snapshot_applies_to_it_and_is_judged_whole(
    tmp_path: Path,
) -> None:
    snapshot = json.loads(SESSION.read_text().splitlines()[2])
    answers = _replay(
        tmp_path,
        # Removes nothing the refusal was about: still refused, on the same finding.
        _changed(20, snapshot, added=[], removed=[], changed=[_model(snapshot, "20250601")]),
        # Removes the skill that reached bash without approval: now accepted.
        _changed(21, snapshot, added=[], removed=["skill-run-tests"], changed=[]),
    )
    assert _decision(answers[2]) == "deny"  # the snapshot
    unrelated, fixed = answers[3], answers[4]
    assert _decision(unrelated) == "deny", unrelated
    assert "AGB-PATH-001" in unrelated["result"]["reason_codes"]
    assert _decision(fixed) == "allow", fixed

    agents = run_agbom(
        "inventory", "agents", "--db", str(tmp_path / "g.db"), "--format", "json", cwd=tmp_path
    )
    (agent,) = json.loads(agents.stdout)
    assert agent["status"] == "accepted"
    export = run_agbom(
        "inventory", "export", "--agent", "coding-agent", "--db", str(tmp_path / "g.db"),
        cwd=tmp_path,
    )  # fmt: skip
    ids = {c["id"] for c in json.loads(export.stdout)["components"]}
    assert "skill-run-tests" not in ids and "tool-bash" in ids
    (model,) = [c for c in json.loads(export.stdout)["components"] if c["id"] == "model-claude"]
    # Built on the refused snapshot, not on the refused change: a denied diff was never applied
    # (the agent was told not to), so the next one starts where the last snapshot left off.
    assert model["version"] == "20250514"
