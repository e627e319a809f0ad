"""AGB-SEC-001 (a credential written in plaintext) points at the field that holds it: the
value of ``args[i]``, ``env.KEY``, ``headers.KEY`` or the URL, not the server's name, the same
way in SARIF, in the JSON report's locations and in the table's ``at:`` (issue 42 item 11).
Each place is checked against the file: the text there is the credential's value as written,
and the credential itself appears in no report. JSON, TOML and YAML client configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
STRIPE = "sk_live_" + "Z9y8X7w6V5u4T3s2R1q0"
PASSWORD = "S3cret-Passw0rd-42"
SLACK = "xoxb-" + "1234567890-abcdefghij"


def _tree(root: Path) -> Path:
    tree = root / "tree"
    (tree / "claude").mkdir(parents=True)
    servers = {
        "gh": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github@2.0.0"],
            "env": {"LOG_LEVEL": "debug", "GITHUB_TOKEN": GITHUB},
        },
        "pg": {
            "command": "npx",
            "args": ["-y", "@acme/pg-mcp@1.0.0", f"postgresql://admin:{PASSWORD}@db.example/app"],
        },
        "pay": {
            "type": "http",
            "url": "https://pay.example.com/mcp",
            "headers": {"Authorization": f"Bearer {STRIPE}"},
        },
    }
    (tree / "claude" / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    (tree / "codex" / ".codex").mkdir(parents=True)
    (tree / "codex" / ".codex" / "config.toml").write_text(
        '[mcp_servers.slack]\ncommand = "npx"\nargs = ["-y", "@acme/slack-mcp@1.2.3"]\n'
        f'\n[mcp_servers.slack.env]\nSLACK_BOT_TOKEN = "{SLACK}"\n'
    )
    (tree / "goose" / ".config" / "goose").mkdir(parents=True)
    (tree / "goose" / ".config" / "goose" / "config.yaml").write_text(
        "extensions:\n  github:\n    type: stdio\n    cmd: npx\n    args:\n"
        "      - '@acme/github-mcp@3.0.0'\n    envs:\n"
        f"      GITHUB_PERSONAL_ACCESS_TOKEN: {GITHUB}\n    enabled: true\n"
    )
    return tree


# Per server name: the field the finding names, and the text its place must hold.
EXPECTED = {
    "gh": ("env.GITHUB_TOKEN", json.dumps(GITHUB)),
    "pg": ("args[2]", json.dumps(f"postgresql://admin:{PASSWORD}@db.example/app")),
    "pay": ("headers.Authorization", json.dumps(f"Bearer {STRIPE}")),
    "slack": ("env.SLACK_BOT_TOKEN", json.dumps(SLACK)),
    "github": ("envs.GITHUB_PERSONAL_ACCESS_TOKEN", GITHUB),
}


def _agbom(*args: str, cwd: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "AGBOM_DEBUG": "0", "COLUMNS": "400"},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _text(path: Path, line: int, column: int, end_column: int) -> str:
    return path.read_text(encoding="utf-8").split("\n")[line - 1][column - 1 : end_column - 1]


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("secrets")
    _tree(root)
    return {
        "root": root,
        "sarif": json.loads(_agbom("scan", "tree", "-f", "sarif", cwd=root)),
        "json": json.loads(_agbom("scan", "tree", "-f", "json", cwd=root)),
        "table": _agbom("scan", "tree", cwd=root),
    }


def _server(message: str) -> str:
    return message.split("mcp_server ", 1)[1].split(" ", 1)[0]


def test_each_plaintext_credential_is_placed_on_its_value(scanned: dict[str, Any]) -> None:
    root = scanned["root"]
    findings = [f for f in scanned["json"]["findings"] if f["rule_id"] == "AGB-SEC-001"]
    assert sorted(_server(f["message"]) for f in findings) == sorted(EXPECTED)
    for finding in findings:
        field, written = EXPECTED[_server(finding["message"])]
        assert f": {field} (" in finding["message"]
        (place,) = finding["locations"]
        assert place["line"] == place["end_line"]
        text = _text(root / place["path"], place["line"], place["column"], place["end_column"])
        assert text == written, (finding["message"], place)


def test_sarif_and_the_table_give_the_same_places(scanned: dict[str, Any]) -> None:
    root = scanned["root"]
    places = {
        _server(f["message"]): f["locations"][0]
        for f in scanned["json"]["findings"]
        if f["rule_id"] == "AGB-SEC-001"
    }
    run = scanned["sarif"]["runs"][0]
    results = [r for r in run["results"] if r["ruleId"] == "AGB-SEC-001"]
    assert len(results) == len(EXPECTED)
    for result in results:
        place = places[_server(result["message"]["text"])]
        (location,) = result["locations"]
        region = location["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"], region["endColumn"]) == (
            place["line"],
            place["column"],
            place["end_column"],
        )
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        assert (root / uri).resolve() == (root / place["path"]).resolve()
    table = scanned["table"].splitlines()
    for index, line in enumerate(table):
        if "AGB-SEC-001" in line:
            place = places[_server(line.split("AGB-SEC-001", 1)[1].split(None, 1)[1])]
            shown = f"at: {place['path']}:{place['line']}:{place['column']}"
            assert table[index + 1].strip() == shown


def test_no_report_holds_a_credential(scanned: dict[str, Any]) -> None:
    for report in (json.dumps(scanned["sarif"]), json.dumps(scanned["json"]), scanned["table"]):
        for secret in (GITHUB, STRIPE, PASSWORD, SLACK):
            assert secret not in report
