"""``agbom inventory components --fleet`` in a subprocess, on SQLite and PostgreSQL: the
fleet's components as a table, JSON and CSV, its filters, and its usage errors (exit 2)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from agbom.store import Store
from tests import fleet_data
from tests.fleet_data import DEPLOY_D2, EXPECTED, FILESYSTEM_KEY, GITHUB_KEY
from tests.transports.served import run_cli

REPO = Path(__file__).resolve().parents[2]
FORMULA = {"id": "f", "type": "model", "name": "=HYPERLINK(\"x\")", "version": "1",
           "provider": None, "endpoint": None, "context_window": None}  # fmt: skip


@pytest.fixture
def fleet(store_factory: Any, store_location: str) -> str:
    store: Store = store_factory()
    fleet_data.build(store)
    return store_location


def fleet_cli(location: str, *args: str) -> Any:
    return run_cli("inventory", "components", "--fleet", "--db", location, *args)


def test_json_is_every_row(fleet: str, store_factory: Any) -> None:
    done = fleet_cli(fleet, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = orjson.loads(done.stdout)
    assert rows == store_factory().fleet_components()["components"]
    assert [(r["type"], r["ref"], r["version"]) for r in rows] == fleet_data.in_order(
        list(EXPECTED)
    )


def test_table(fleet: str) -> None:
    done = fleet_cli(fleet)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].split() == [
        "TYPE", "REF", "VERSION", "NAME", "PURL", "AGENTS", "DEVELOPERS", "HOSTS", "FIRST_SEEN",
        "LAST_SEEN", "STATUS", "SEVERITY", "FINDINGS",
    ]  # fmt: skip
    assert len(lines) == 1 + len(EXPECTED)
    github = next(line for line in lines if GITHUB_KEY[1] in line).split()
    assert github[0] == "mcp_server" and github[-3] == "approved" and "2" in github
    assert github[-2:] == ["medium", "AGB-GH-TOKEN"]


def test_findings_and_the_severity_filter(fleet: str) -> None:
    """Each row's worst finding and rule ids (one cell, comma-joined, in CSV); the filter
    keeps the components with a finding at least that severe."""
    done = fleet_cli(fleet, "--format", "csv", "--severity", "medium")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout.decode())))
    assert [(r["type"], r["ref"], r["version"] or None) for r in rows] == [
        FILESYSTEM_KEY, GITHUB_KEY
    ]  # fmt: skip
    assert [(r["severity"], r["findings"]) for r in rows] == [
        ("high", "AGB-FS-ROOT,AGB-FS-WRITE"), ("medium", "AGB-GH-TOKEN")
    ]  # fmt: skip
    every = orjson.loads(fleet_cli(fleet, "--format", "json").stdout)
    found = {(r["type"], r["ref"], r["version"]): (r["severity"], r["findings"]) for r in every}
    assert found == {
        key: fleet_data.FINDINGS.get(key, (None, [])) for key in EXPECTED
    }  # fmt: skip
    high = orjson.loads(fleet_cli(fleet, "--format", "json", "--severity", "critical").stdout)
    assert high == []


def test_csv_with_filters_and_formula_cells(fleet: str, store_factory: Any) -> None:
    store: Store = store_factory()
    store.save_agbom_version(
        "s-eve", agent_id="eve", document=fleet_data.doc("eve", FORMULA), agbom_hash="sha256:e"
    )
    done = fleet_cli(fleet, "--format", "csv", "--type", "model")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout.decode())))
    assert [r["name"] for r in rows] == ['\'=HYPERLINK("x")', "claude-sonnet-4"]
    assert rows[1]["ref"] == "anthropic/claude-sonnet-4" and rows[1]["agents"] == "2"
    assert rows[1]["status"] == "" and rows[1]["purl"] == ""
    done = fleet_cli(fleet, "--format", "csv", "--status", "pending", "--search", "DEPLOY")
    assert [(r["type"], r["ref"], r["version"]) for r in csv.DictReader(
        io.StringIO(done.stdout.decode()))] == [DEPLOY_D2]  # fmt: skip
    done = fleet_cli(fleet, "--format", "json", "--search", "server-filesystem")
    assert [(r["type"], r["ref"], r["version"]) for r in orjson.loads(done.stdout)] == [
        FILESYSTEM_KEY
    ]


def test_by_host_platform_with_developers(store_factory: Any, store_location: str) -> None:
    from tests import fleet_agents_data

    fleet_agents_data.build(store_factory())
    done = fleet_cli(store_location, "--format", "csv", "--host", "cursor")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout.decode())))
    assert [(r["name"], r["agents"], r["developers"], r["hosts"]) for r in rows] == [
        ("deploy", "1", "1", "1")
    ]
    every = orjson.loads(fleet_cli(store_location, "--format", "json").stdout)
    github = next(r for r in every if r["name"] == "github" and r["version"] == "0.6.2")
    assert (github["agents"], github["developers"]) == (1, 0)  # the nameless agent's


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--fleet", "--type", "tool"], "'tool' is not one of"),
        (["--fleet", "--status", "fine"], "is not one of"),
        (["--fleet", "--search", "x" * 300], "at most 256"),
        (["--fleet", "--search", "a\u202eb"], "invisible"),
        (["--fleet", "--name", "x"], "--search"),
        (["--fleet", "--format", "xml"], "--format"),
        (["--status", "approved"], "needs --fleet"),
        (["--search", "x"], "needs --fleet"),
        (["--host", "cursor"], "needs --fleet"),
        (["--fleet", "--host", "cursor/x"], "host must be"),
        (["--fleet", "--severity", "dire"], "is not one of"),
        (["--severity", "high"], "needs --fleet"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    done = run_cli("inventory", "components", "--db", str(tmp_path / "none.db"), *args)
    err = done.stderr.decode()
    assert done.returncode == 2 and says in err and "Traceback" not in err, err
    assert not (tmp_path / "none.db").exists()


@pytest.mark.sqlite_only
def test_a_refused_replay_is_not_in_use(tmp_path: Path) -> None:
    """The sample session, replayed with the default rules, has its AgBOM refused: the fleet
    holds nothing in use, while the plain listing shows what was refused."""
    db = str(tmp_path / "replayed.db")
    sample = str(REPO / "samples" / "sessions" / "coding-agent.jsonl")
    assert run_cli("replay", "--db", db, sample).returncode == 0
    refused = orjson.loads(
        run_cli("inventory", "components", "--db", db, "--format", "json").stdout
    )
    assert refused and {r["status"] for r in refused} == {"refused"}
    assert orjson.loads(fleet_cli(db, "--format", "json").stdout) == []
