"""AGB-SEC-001 through ``agbom scan``: a credential written in plaintext in a real client config
in a home folder is a finding that names the field and never shows the value; references and
placeholders are not findings. The planted and benign cases below are also the recall and
precision figures of docs/rules.md (the test prints them with ``-s``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_agbom

STRIPE = "sk_live_51HzQkLmNoPqRsTuVwXyZa0b1"
PG_PASSWORD = "Tr1cky-pw-9931"
PAT = "ghp_R4nd0mL00k1ngT0k3nV4lu3abcdef12"
BEARER = "k9Qz7Lm2Wx4Vb8Np"
DB_ENV_PASSWORD = "Sup3rS3cretDbPw"
PLANTED_VALUES = (STRIPE, PG_PASSWORD, PAT, BEARER, DB_ENV_PASSWORD)


def _write(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))


def _planted_home(home: Path) -> dict[str, str]:
    """Configs with five plaintext credentials; returns ``server name -> field`` expected."""
    _write(
        home / ".cursor" / "mcp.json",
        {
            "mcpServers": {
                "stripe": {
                    "command": "npx",
                    "args": ["-y", "@stripe/mcp@0.2.4", "--tools=all", f"--api-key={STRIPE}"],
                },
                "search": {
                    "url": "https://search.example.net/mcp",
                    "headers": {"Authorization": f"Bearer {BEARER}"},
                },
            }
        },
    )
    _write(
        home / ".claude.json",
        {
            "mcpServers": {
                "postgres": {
                    "command": "npx",
                    "args": [
                        "-y",
                        "@modelcontextprotocol/server-postgres@0.6.2",
                        f"postgresql://app:{PG_PASSWORD}@db.internal:5432/app",
                    ],
                },
                "billing-db": {
                    "command": "uvx",
                    "args": ["billing-mcp==1.2.0"],
                    "env": {"DB_PASSWORD": DB_ENV_PASSWORD, "LOG_LEVEL": "debug"},
                },
            }
        },
    )
    _write(
        home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json",
        {
            "mcpServers": {
                "github": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8"],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": PAT},
                }
            }
        },
    )
    return {
        "stripe": "args[3]",
        "search": "headers.Authorization",
        "postgres": "args[2]",
        "billing-db": "env.DB_PASSWORD",
        "github": "env.GITHUB_PERSONAL_ACCESS_TOKEN",
    }


# Every way a config refers to a credential without holding it, and the placeholders that
# documentation and templates leave in place.
BENIGN_VALUES = (
    "${STRIPE_SECRET_KEY}",
    "${env:STRIPE_SECRET_KEY}",
    "${input:stripe-key}",
    "{env:STRIPE_SECRET_KEY}",
    "$STRIPE_SECRET_KEY",
    "<YOUR_KEY>",
    "xxxx",
    "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
    "changeme",
    "your-api-key",
    "YOUR_API_KEY_HERE",
    "********",
    "op://Private/stripe/credential",
)


def _benign_home(home: Path) -> int:
    servers: dict[str, Any] = {}
    for i, value in enumerate(BENIGN_VALUES):
        servers[f"arg-{i}"] = {
            "command": "npx",
            "args": ["-y", f"@acme/mcp-{i}@1.0.0", f"--api-key={value}"],
        }
        servers[f"env-{i}"] = {
            "command": "uvx",
            "args": [f"acme-mcp-{i}==1.0.0"],
            "env": {"ACME_API_KEY": value, "DEBUG": "1"},
        }
        servers[f"url-{i}"] = {
            "command": "npx",
            "args": [
                "-y",
                f"@modelcontextprotocol/server-postgres@0.6.{i}",
                f"postgresql://app:{value}@db.internal/app{i}",
            ],
        }
        servers[f"header-{i}"] = {
            "url": f"https://mcp{i}.example.net/mcp",
            "headers": {"Authorization": f"Bearer {value}"},
        }
    # Hidden by redaction, but no credential: a query value under an ordinary name.
    servers["query"] = {"url": "https://events.example.net/sse?region=eu-west-1"}
    servers["docker"] = {
        "command": "docker",
        "args": ["run", "-i", "--rm", "-e", "LOG_LEVEL=debug", "-e", "GITHUB_TOKEN", "mcp/gh:1.0"],
    }
    _write(home / ".cursor" / "mcp.json", {"mcpServers": servers})
    return len(servers)


def _scan(home: Path, *extra: str) -> Any:
    result = run_agbom("scan", "--home", str(home), *extra, cwd=home)
    assert result.returncode in (0, 1), result.stderr
    return result


def _sec_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f.get("rule_id") == "AGB-SEC-001"]


def test_each_planted_plaintext_credential_is_a_finding_naming_its_field(tmp_path: Path) -> None:
    expected = _planted_home(tmp_path)
    report = json.loads(_scan(tmp_path, "-f", "json").stdout)
    findings = _sec_findings(report)
    by_server: dict[str, str] = {}
    for finding in findings:
        assert finding["severity"] == "high"
        assert "${env:NAME}" in finding["remediation"]
        for name, field in expected.items():
            if f" {name} has a credential" in finding["message"]:
                by_server[name] = finding["message"]
                assert field in finding["message"], finding["message"]
    assert sorted(by_server) == sorted(expected), [f["message"] for f in findings]
    recall = len(by_server) / len(expected)
    print(f"AGB-SEC-001 recall on planted cases: {len(by_server)}/{len(expected)} = {recall:.0%}")
    assert "LOG_LEVEL" not in json.dumps(findings)  # an ordinary env value is no credential


@pytest.mark.parametrize("fmt", ["table", "json", "sarif", "cyclonedx-json", "spdx-json"])
def test_no_format_shows_a_planted_value(tmp_path: Path, fmt: str) -> None:
    _planted_home(tmp_path)
    result = _scan(tmp_path, "-f", fmt)
    out = result.stdout + result.stderr
    assert "AGB-SEC-001" in out or fmt in ("cyclonedx-json", "spdx-json")
    for value in PLANTED_VALUES:
        assert value not in out, (fmt, value)


def test_references_and_placeholders_are_not_findings(tmp_path: Path) -> None:
    servers = _benign_home(tmp_path)
    report = json.loads(_scan(tmp_path, "-f", "json").stdout)
    scanned = [c for c in report["agbom"]["components"] if c["type"] == "mcp_server"]
    assert len(scanned) == servers  # every benign entry was read and judged
    flagged = _sec_findings(report)
    print(f"AGB-SEC-001 on {servers} benign servers: {len(flagged)} flagged")
    assert flagged == [], [f["message"] for f in flagged]


def test_the_table_names_the_field_and_the_file(tmp_path: Path) -> None:
    _planted_home(tmp_path)
    out = _scan(tmp_path).stdout
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if "AGB-SEC-001" in ln and "stripe" in ln)
    assert "args[3] (a Stripe live key)" in lines[at]
    assert ".cursor/mcp.json" in "\n".join(lines[at + 1 : at + 3])  # its "at:" line
    failing = run_agbom("scan", "--home", str(tmp_path), "--fail-on", "high", cwd=tmp_path)
    assert failing.returncode == 1
