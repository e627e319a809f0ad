"""Issue 28 item 5: an agent whose snapshot was denied is in the inventory, marked refused
with the rule ids that refused it, on SQLite and PostgreSQL (real `agbom replay` and
`agbom inventory` child processes)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_process import run_agbom

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"


def _walk(db: str, cwd: Path) -> None:
    replay = run_agbom("replay", str(SESSION), "--db", db, cwd=cwd)
    assert replay.returncode in (0, 1), replay.stderr
    agents = run_agbom("inventory", "agents", "--db", db, "--format", "json", cwd=cwd)
    assert agents.returncode == 0, agents.stderr
    (agent,) = json.loads(agents.stdout)
    assert agent["agent_id"] == "coding-agent"
    assert agent["status"] == "refused"
    assert agent["findings"], agent  # the rule ids that refused it
    rules = set(agent["findings"].split(","))

    components = run_agbom("inventory", "components", "--db", db, "--format", "json", cwd=cwd)
    assert components.returncode == 0, components.stderr
    rows = json.loads(components.stdout)
    refused = [r for r in rows if r["status"] == "refused"]
    assert refused, rows
    assert {r["agents"][0] for r in refused} == {"coding-agent"}
    # Each component names only the rules that refused it (issue 42 item 10), not the
    # version's warnings nor what refused the others.
    by_id = {r["component_id"]: r["findings"] for r in refused}
    assert by_id["tool-bash"] == by_id["skill-run-tests"] == "AGB-PATH-001"
    assert by_id["model-claude"] == "-"
    assert all(set(found.split(",")) <= rules | {"-"} for found in by_id.values())
    assert "tool-bash" in {r["component_id"] for r in refused}

    only_tools = run_agbom(
        "inventory", "components", "--db", db, "--type", "tool", "--format", "json", cwd=cwd
    )
    assert {r["type"] for r in json.loads(only_tools.stdout)} == {"tool"}

    table = run_agbom("inventory", "components", "--db", db, cwd=cwd)
    assert "refused" in table.stdout and "STATUS" in table.stdout

    export = run_agbom("inventory", "export", "--agent", "coding-agent", "--db", db, cwd=cwd)
    assert export.returncode == 0, export.stderr
    assert "refused by the Guardian" in export.stderr
    assert {c["id"] for c in json.loads(export.stdout)["components"]} >= {"tool-bash"}


def test_a_denied_snapshot_is_refused_inventory_on_sqlite(tmp_path: Path) -> None:
    _walk(str(tmp_path / "demo.db"), tmp_path)


def test_a_denied_snapshot_is_refused_inventory_on_postgres(pg_url: str, tmp_path: Path) -> None:
    _walk(pg_url, tmp_path)
