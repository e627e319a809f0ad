"""``agbom hook install|uninstall`` on fake HOMEs holding the configs users really have:
comments in JSONC, TOML with other tables, unknown keys, other tools' hooks. Each run is the
real command in a subprocess; the installed command is then run as the host would run it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agbom.hostconfig import jsonc_edit

AGBOM = [sys.executable, "-m", "agbom"]


def agbom(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"}
    for var in ("CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    return subprocess.run(
        [*AGBOM, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60, check=False
    )


def install(home: Path, host: str, *extra: str) -> subprocess.CompletedProcess[str]:
    done = agbom(home, "hook", "install", host, "--agbom", "/opt/agbom/bin/agbom", *extra)
    assert done.returncode == 0, done.stderr
    return done


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".agbom-backup-*"))


GEMINI_SETTINGS = """\
{
  // Gemini CLI settings, with comments (Gemini reads them as JSONC)
  "theme": "GitHub", /* kept */
  "mcpServers": {"crm": {"command": "npx", "args": ["-y", "crm-mcp"]}},
  "someFutureSetting": {"nested": [1, 2, 3]},
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}, // theirs
    ],
  },
}
"""


def test_gemini_jsonc_keeps_comments_and_other_hooks_is_idempotent_and_undone(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(GEMINI_SETTINGS)

    dry = install(home, "gemini-cli", "--server", "http://127.0.0.1:8787", "--dry-run")
    assert settings.read_text() == GEMINI_SETTINGS and not backups(settings)
    assert f"+++ {settings}" in dry.stdout and '+            "name": "agbom",' in dry.stdout

    install(home, "gemini-cli", "--server", "http://127.0.0.1:8787")
    text = settings.read_text()
    for kept in ("// Gemini CLI settings", "/* kept */", "// theirs", "someFutureSetting"):
        assert kept in text
    data = jsonc_edit.load(text)
    before_tool = data["hooks"]["BeforeTool"]
    assert before_tool[0]["hooks"][0]["command"] == "./lint.sh"
    ours = before_tool[1]
    assert ours["matcher"] == ".*" and ours["hooks"][0]["timeout"] == 10000
    assert shlex.split(ours["hooks"][0]["command"]) == [
        "/opt/agbom/bin/agbom", "hook", "gemini-cli", "--server", "http://127.0.0.1:8787",
    ]  # fmt: skip
    assert set(data["hooks"]) == {"BeforeTool", "BeforeAgent", "SessionStart"}
    assert [b.read_text() for b in backups(settings)] == [GEMINI_SETTINGS]

    again = install(home, "gemini-cli", "--server", "http://127.0.0.1:8787")
    assert "already installed" in again.stdout and settings.read_text() == text
    assert len(backups(settings)) == 1

    # Another server: agbom's entries are replaced, never doubled.
    install(home, "gemini-cli", "--server", "http://127.0.0.1:9999")
    moved = jsonc_edit.load(settings.read_text())["hooks"]
    assert len(moved["BeforeTool"]) == 2 and "9999" in moved["BeforeTool"][1]["hooks"][0]["command"]

    removed = agbom(home, "hook", "uninstall", "gemini-cli")
    assert removed.returncode == 0, removed.stderr
    assert settings.read_text() == GEMINI_SETTINGS


CODEX_REQUIREMENTS = """\
# The organisation's Codex requirements (kept)
allowed_approval_policies = ["on-request", "untrusted"]  # kept

[hooks]
managed_dir = "/opt/guards"

[[hooks.PreToolUse]]
matcher = "^Bash$"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "/opt/guards/other-guard"
timeout = 5

[mcp_servers.docs]
url = "https://docs.example.com/mcp"
"""


def test_codex_is_a_managed_hook_in_requirements_toml_by_default(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    requirements = root / "etc" / "codex" / "requirements.toml"
    requirements.parent.mkdir(parents=True)
    requirements.write_text(CODEX_REQUIREMENTS)
    done = install(home, "codex", "--root", str(root), "--server", "http://127.0.0.1:8787")
    assert "(managed)" in done.stdout and "trusted in /hooks" not in done.stderr
    text = requirements.read_text()
    assert "# The organisation's Codex requirements (kept)" in text and "# kept" in text
    data = tomllib.loads(text)
    assert data["hooks"]["managed_dir"] == "/opt/guards"
    assert data["mcp_servers"]["docs"]["url"] == "https://docs.example.com/mcp"
    pre = data["hooks"]["PreToolUse"]
    assert pre[0]["hooks"][0]["command"] == "/opt/guards/other-guard"
    assert pre[1]["matcher"] == ".*" and pre[1]["hooks"][0]["type"] == "command"
    assert pre[1]["hooks"][0]["timeout"] == 10
    assert "hook codex --server" in data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    again = install(home, "codex", "--root", str(root), "--server", "http://127.0.0.1:8787")
    assert "already installed" in again.stdout and requirements.read_text() == text
    undone = agbom(home, "hook", "uninstall", "codex", "--root", str(root))
    assert undone.returncode == 0 and requirements.read_text() == CODEX_REQUIREMENTS


def test_codex_user_scope_says_it_must_be_trusted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "gpt-5-codex"\n\n[mcp_servers.crm]\ncommand = "npx"\n')
    done = install(home, "codex", "--scope", "user")
    assert "trusted in /hooks" in done.stderr
    assert tomllib.loads(config.read_text())["model"] == "gpt-5-codex"


CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}
        ]
    },
    "env": {"FOO": "1"},
}


def test_claude_code_settings_keep_other_hooks_and_blocking_events_fail_closed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = json.dumps(CLAUDE_SETTINGS, indent=2) + "\n"
    settings.write_text(original)
    install(home, "claude-code", "--server", "http://127.0.0.1:8787", "--timeout", "3")
    data = json.loads(settings.read_text())  # still strict JSON
    assert data["permissions"] == CLAUDE_SETTINGS["permissions"] and data["env"] == {"FOO": "1"}
    pre = data["hooks"]["PreToolUse"]
    assert pre[0] == CLAUDE_SETTINGS["hooks"]["PreToolUse"][0]  # type: ignore[index]
    handler = pre[1]["hooks"][0]
    assert pre[1]["matcher"] == "*" and handler["onFailure"] == "block"
    assert "--timeout 3" in handler["command"]
    assert "onFailure" not in data["hooks"]["PostToolUse"][0]["hooks"][0]
    from agbom.hostconfig.specs import HOSTS

    assert set(data["hooks"]) == {e.name for e in HOSTS["claude-code"].events}
    agbom(home, "hook", "uninstall", "claude-code")
    assert settings.read_text() == original


def test_cursor_file_is_created_fail_closed_and_removed_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    install(home, "cursor", "--server", "http://127.0.0.1:8787")
    hooks_json = home / ".cursor" / "hooks.json"
    data = json.loads(hooks_json.read_text())
    assert data["version"] == 1
    for event, entries in data["hooks"].items():
        assert len(entries) == 1
        assert entries[0].get("failClosed") is (True if event != "sessionStart" else None)
        assert "timeout" not in entries[0]  # its unit is not documented
    agbom(home, "hook", "uninstall", "cursor")
    assert not hooks_json.exists()


def test_cursor_file_with_other_hooks_and_unknown_keys(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hooks_json = home / ".cursor" / "hooks.json"
    hooks_json.parent.mkdir(parents=True)
    original = (
        '{\n  "version": 1,\n  "teamPolicy": {"x": true},\n  "hooks": {\n'
        '    "afterFileEdit": [{"command": "./format.sh"}],\n'
        '    "beforeShellExecution": [{"command": "./audit.sh", "timeout": 5}]\n  }\n}\n'
    )
    hooks_json.write_text(original)
    install(home, "cursor")
    data = json.loads(hooks_json.read_text())
    shell = data["hooks"]["beforeShellExecution"]
    assert shell[0] == {"command": "./audit.sh", "timeout": 5} and len(shell) == 2
    assert shlex.split(shell[1]["command"])[1:] == ["hook", "cursor"]  # standalone: no --server
    assert data["teamPolicy"] == {"x": True}
    agbom(home, "hook", "uninstall", "cursor")
    assert hooks_json.read_text() == original


def test_copilot_command_and_http_entries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    install(home, "copilot", "--server", "http://127.0.0.1:8787")
    path = home / ".copilot" / "hooks" / "agbom.json"
    data = json.loads(path.read_text())
    assert data["version"] == 1
    pre = data["hooks"]["preToolUse"][0]
    assert pre["type"] == "command" and pre["env"] == {"AGBOM_HOOK_EVENT": "preToolUse"}
    assert pre["timeoutSec"] == 10
    http = install(home, "copilot", "--server", "https://agbom.example.com", "--transport", "http")
    assert http.returncode == 0
    entries = json.loads(path.read_text())["hooks"]["preToolUse"]
    assert entries == [
        {
            "type": "http",
            "url": "https://agbom.example.com/hooks/copilot",
            "headers": {"X-Agbom-Hook-Event": "preToolUse"},
            "timeoutSec": 10,
        }
    ]
    refused = agbom(home, "hook", "install", "cursor", "--transport", "http", "--server", "x")
    assert refused.returncode == 2 and "copilot only" in refused.stderr


def test_windsurf_and_opencode(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hooks_json = home / ".codeium" / "windsurf" / "hooks.json"
    hooks_json.parent.mkdir(parents=True)
    hooks_json.write_text(
        '{"hooks": {"post_write_code": [{"command": "fmt", "show_output": false}]}}'
    )
    install(home, "windsurf", "--server", "http://127.0.0.1:8787")
    data = json.loads(hooks_json.read_text())
    assert data["hooks"]["post_write_code"] == [{"command": "fmt", "show_output": False}]
    assert data["hooks"]["pre_run_command"][0]["show_output"] is True
    plugin = home / ".config" / "opencode" / "plugins" / "agbom.ts"
    install(home, "opencode", "--server", "http://127.0.0.1:8787")
    text = plugin.read_text()
    assert "agbom-managed" in text.splitlines()[0]
    assert (
        '["/opt/agbom/bin/agbom", "hook", "opencode", "--server", "http://127.0.0.1:8787"]' in text
    )
    assert (
        "already installed" in install(home, "opencode", "--server", "http://127.0.0.1:8787").stdout
    )
    agbom(home, "hook", "uninstall", "opencode")
    assert not plugin.exists()
    plugin.write_text("export const Mine = async () => ({})\n")
    foreign = agbom(home, "hook", "install", "opencode")
    assert foreign.returncode == 1 and "not written by agbom" in foreign.stderr
    assert "uninstall" in agbom(home, "hook", "uninstall", "opencode").stdout or plugin.exists()
    assert plugin.read_text() == "export const Mine = async () => ({})\n"


@pytest.mark.parametrize(
    ("relative", "content", "error"),
    [
        (".gemini/settings.json", '{"hooks": {', "not valid JSON"),
        (".gemini/settings.json", '["not", "an", "object"]', "not a JSON object"),
        (".gemini/settings.json", '{"hooks": []}', "'hooks' is not an object"),
        (".codex/config.toml", "model = \n", "not valid TOML"),
    ],
)
def test_a_broken_config_is_refused_in_one_line_and_left_alone(
    tmp_path: Path, relative: str, content: str, error: str
) -> None:
    home = tmp_path / "home"
    path = home / relative
    path.parent.mkdir(parents=True)
    path.write_text(content)
    host = "gemini-cli" if "gemini" in relative else "codex"
    done = agbom(home, "hook", "install", host, "--scope", "user")
    assert done.returncode == 1 and error in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert path.read_text() == content and not backups(path)


def test_a_linked_config_is_not_followed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "hooks.json").symlink_to(elsewhere)
    done = agbom(home, "hook", "install", "cursor")
    assert done.returncode == 1 and "symbolic link" in done.stderr
    assert elsewhere.read_text() == "{}"


def test_usage_errors(tmp_path: Path) -> None:
    for args, said in (
        (["hook", "install", "vim"], "unknown host 'vim'"),
        (["hook", "install", "cursor", "--scope", "team"], "--scope"),
        (["hook", "install", "opencode", "--scope", "managed"], "no managed hook"),
    ):
        done = agbom(tmp_path, *args)
        assert done.returncode in (1, 2) and said in done.stderr, done.stderr


def test_the_hook_launcher_runs_the_host_without_the_hook_word_and_is_found_again(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(GEMINI_SETTINGS)
    url = "http://127.0.0.1:8787"
    launcher = ["--agbom", "/opt/agbom/bin/agbom-hook"]
    assert agbom(home, "hook", "install", "gemini-cli", "--server", url, *launcher).returncode == 0
    before_tool = jsonc_edit.load(settings.read_text())["hooks"]["BeforeTool"]
    command = shlex.split(before_tool[1]["hooks"][0]["command"])
    assert command == ["/opt/agbom/bin/agbom-hook", "gemini-cli", "--server", url]
    again = agbom(home, "hook", "install", "gemini-cli", "--server", url, *launcher)
    assert "already installed" in again.stdout
    # Installed again with the agbom program: agbom's entry is replaced, not doubled.
    install(home, "gemini-cli", "--server", url)
    before_tool = jsonc_edit.load(settings.read_text())["hooks"]["BeforeTool"]
    assert len(before_tool) == 2
    assert shlex.split(before_tool[1]["hooks"][0]["command"])[:3] == [
        "/opt/agbom/bin/agbom", "hook", "gemini-cli",
    ]  # fmt: skip
    assert agbom(home, "hook", "install", "gemini-cli", "--server", url, *launcher).returncode == 0
    assert agbom(home, "hook", "uninstall", "gemini-cli").returncode == 0
    assert settings.read_text() == GEMINI_SETTINGS


def test_the_default_program_is_the_hook_launcher_installed_beside_agbom(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agbom.cli.hook_setup import default_agbom

    bindir = tmp_path / "bin"
    bindir.mkdir()
    program = bindir / "agbom"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(program), "hook", "install", "cursor"])
    assert default_agbom() == [str(program.resolve())]
    launcher = bindir / "agbom-hook"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o644)  # not executable: not used
    assert default_agbom() == [str(program.resolve())]
    launcher.chmod(0o755)
    assert default_agbom() == [str(launcher.resolve())]
    # Run as the launcher itself (agbom-hook install ...): the same.
    monkeypatch.setattr(sys, "argv", [str(launcher), "install", "cursor"])
    assert default_agbom() == [str(launcher.resolve())]
