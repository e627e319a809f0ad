"""Secrets never leave the machine: grep every output format for the planted values."""
# ruff: noqa: E501 - fixture data reads better on one line

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agbom.cli.app import app
from agbom.scan import redact_args, redact_url, scan_paths

SECRETS = {
    "env": "envvalue-9f8e7d6c5b4a",
    "header": "Bearer hdr-1a2b3c4d5e6f",
    "flag": "flagsecret-777888999",
    "ghp": "ghp_" + "Z" * 36,
    "url_password": "urlpw-4455667788",
    "query": "qtoken-123123123",
    "docker_env": "dockerval-abcabcabc",
    "opencode": "oc-envvalue-xyz987",
    "codex": "codex-token-654321",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".codex").mkdir(parents=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "a": {"command": "npx", "args": ["-y", "srv-a@1.0.0", "--api-key", SECRETS["flag"], SECRETS["ghp"]],
              "env": {"A_TOKEN": SECRETS["env"]}},
        "b": {"type": "http", "url": f"https://user:{SECRETS['url_password']}@b.example/mcp?key={SECRETS['query']}",
              "headers": {"Authorization": SECRETS["header"]}},
        "c": {"command": "docker", "args": ["run", "-i", "-e", f"GH={SECRETS['docker_env']}", "mcp/gh:1.0"]},
    }}))  # fmt: skip
    (root / "opencode.json").write_text(
        json.dumps(
            {
                "mcp": {
                    "o": {
                        "type": "local",
                        "command": ["uvx", "mcp-o==1.0"],
                        "environment": {"X": SECRETS["opencode"]},
                    }
                }
            }
        )
    )
    (root / ".codex" / "config.toml").write_text(
        f'[mcp_servers.k]\ncommand = "uvx"\nargs = ["mcp-k==1.0"]\nenv = {{ K = "{SECRETS["codex"]}" }}\n'
    )
    return root


def _assert_clean(text: str) -> None:
    for name, secret in SECRETS.items():
        core = secret.split()[-1]
        assert core not in text, f"{name} secret leaked"


def test_components_report_presence_not_values(tree: Path) -> None:
    agbom = scan_paths([tree]).agbom
    a = agbom.get("mcp:npm/srv-a@1.0.0")
    assert a.get("env_keys") == ["A_TOKEN"]
    assert a.get("redacted") == ["env.A_TOKEN", "args[3]", "args[4]"]
    assert a.get("args")[3:] == ["<redacted>", "<redacted>"]
    b = agbom.get("mcp:https://user:<redacted>@b.example/mcp")
    assert b.get("endpoint") == "https://user:<redacted>@b.example/mcp?key=<redacted>"
    assert set(b.get("redacted")) == {"headers.Authorization", "endpoint"}
    c = agbom.get("mcp:docker/mcp/gh@1.0")
    assert "GH=<redacted>" in c.get("command")


@pytest.mark.parametrize("fmt", ["table", "json", "cyclonedx-json", "cyclonedx-xml", "sarif"])
def test_no_secret_in_any_output_format(tree: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    result = CliRunner().invoke(app, ["scan", str(tree), "--format", fmt, "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    text = out.read_text()
    assert len(text) > 100
    _assert_clean(text)
    _assert_clean(result.output)


def test_errors_do_not_quote_file_content(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        '{"mcpServers": {"a": {"env": {"T": "' + SECRETS["env"] + '"}},,}}'
    )
    (tmp_path / "s" / "x").mkdir(parents=True)
    (tmp_path / "s" / "x" / "SKILL.md").write_text(
        f"---\nname: x\ntoken: {SECRETS['flag']}: [\n---\n"
    )
    result = scan_paths([tmp_path])
    _assert_clean(json.dumps(result.to_json()))
    assert len(result.errors) == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--token", "abc"], ["--token", "<redacted>"]),
        (["--token=abc"], ["--token=<redacted>"]),
        (["API_KEY=abc"], ["API_KEY=<redacted>"]),
        (["-e", "ANY=abc"], ["-e", "ANY=<redacted>"]),
        (["-e", "NAME_ONLY"], ["-e", "NAME_ONLY"]),
        # A passed-through variable named like a scheme word hides nothing after it.
        (
            ["run", "-e", "TOKEN", "ghcr.io/org/srv:v1"],
            ["run", "-e", "TOKEN", "ghcr.io/org/srv:v1"],
        ),
        (["--env", "Bearer", "img:1"], ["--env", "Bearer", "img:1"]),
        (["Authorization: Bearer abc.def"], ["Authorization: Bearer <redacted>"]),
        (["xoxb-1234567890-abcdefghij"], ["<redacted>"]),
        (["--verbose", "/data", "mode=fast"], ["--verbose", "/data", "mode=fast"]),
        # Issue 13 item 6: every rule on every part of every argument.
        (["DATABASE_URL=postgres://u:pw@h/db"], ["DATABASE_URL=postgres://u:<redacted>@h/db"]),
        (
            ["-c", "curl -H 'Authorization: Bearer X1' https://h.example/a"],
            ["-c", "curl -H 'Authorization: Bearer <redacted>' https://h.example/a"],
        ),
        (["run", "--env=API_KEY=X1", "img:1"], ["run", "--env=API_KEY=<redacted>", "img:1"]),
        (["--header=X-Api-Key: X1"], ["--header=X-Api-Key: <redacted>"]),
        (["-k", "X1"], ["-k", "<redacted>"]),
        (["--api_key:X1"], ["--api_key:<redacted>"]),
        (["token: X1"], ["token: <redacted>"]),
        (["/apikey:X1"], ["/apikey:<redacted>"]),
        (["node --token=X1 srv.js"], ["node --token=<redacted> srv.js"]),
        (["srv --token", "X1"], ["srv --token", "<redacted>"]),
        (["--password=two words"], ["--password=<redacted>"]),
        (
            ["-H", "Authorization:", "Bearer", "X1"],
            ["-H", "Authorization:", "Bearer", "<redacted>"],
        ),
        (['--config={"apiKey":"X1","port":1}'], ['--config={"apiKey":"<redacted>","port":1}']),
        (["--opts=user=a,password=X1"], ["--opts=user=a,password=<redacted>"]),
        (["--proxy=user:X1@proxy.example:8080"], ["--proxy=user:<redacted>@proxy.example:8080"]),
        (["--token:https://h.example/x"], ["--token:<redacted>"]),
        (["https://h.example/ghp_" + "a" * 36 + "/mcp"], ["https://h.example/<redacted>/mcp"]),
        # Harmless text is kept exactly as written, quoting included.
        (
            ["sh -c 'echo \"hi\"'", "C:\\Users\\x\\srv.exe", "--no-auth", "--port", "1"],
            ["sh -c 'echo \"hi\"'", "C:\\Users\\x\\srv.exe", "--no-auth", "--port", "1"],
        ),
    ],
)
def test_redact_args(args: list[str], expected: list[str]) -> None:
    assert redact_args(args)[0] == expected


def test_redact_url_keeps_harmless_url() -> None:
    assert redact_url("https://a.example/mcp") == ("https://a.example/mcp", False)
