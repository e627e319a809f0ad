"""The configuration ``agbom hook install HOST`` writes, run as the host runs it: the entry's
command through a shell, with the entry's environment, the host's event on stdin, against a
real ``agbom serve``. So the tested config in docs/hosts/ is the one that decides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path
from typing import Any

import host_events as ev
import pytest
from hook_helpers import Server, agbom_command

pytestmark = pytest.mark.network


def _install(home: Path, host: str, server: Server, *extra: str) -> None:
    env = {**os.environ, "HOME": str(home)}
    for var in ("CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    program = agbom_command()[0] if len(agbom_command()) == 1 else None
    args = ["--agbom", program] if program else []
    done = subprocess.run(
        [sys.executable, "-m", "agbom", "hook", "install", host, "--server", server.url,
         "--timeout", "20", *args, *extra],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _run(command: str, event: bytes, env: dict[str, str] | None = None) -> tuple[int, bytes]:
    done = subprocess.run(
        ["bash", "-c", command],
        input=event,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout


def _flat(path: Path, event: str) -> dict[str, Any]:
    return dict(json.loads(path.read_text())["hooks"][event][0])


def test_installed_hooks_decide_as_the_hosts_run_them(server: Server, tmp_path: Path) -> None:
    home = tmp_path / "home"
    s = str(uuid.uuid4())
    for host in ("cursor", "copilot", "windsurf", "gemini-cli", "claude-code"):
        _install(home, host, server)
    _install(home, "codex", server, "--scope", "user")

    cursor = _flat(home / ".cursor" / "hooks.json", "beforeShellExecution")
    code, out = _run(cursor["command"], ev.cursor_shell(s, "ls"))
    assert code == 0 and json.loads(out)["permission"] == "deny" and cursor["failClosed"] is True

    copilot = _flat(home / ".copilot" / "hooks" / "agbom.json", "preToolUse")
    code, out = _run(copilot["bash"], ev.copilot_tool(s, "bash", {"command": "ls"}), copilot["env"])
    assert code == 0 and json.loads(out)["permissionDecision"] == "deny"

    windsurf = _flat(home / ".codeium" / "windsurf" / "hooks.json", "pre_run_command")
    code, out = _run(windsurf["command"], ev.windsurf("pre_run_command", s, {"command_line": "ls"}))
    assert (code, out) == (2, b"")

    gemini = json.loads((home / ".gemini" / "settings.json").read_text())
    command = gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    code, out = _run(command, ev.gemini_tool(s, "run_shell_command", {"command": "ls"}))
    assert code == 0 and json.loads(out)["decision"] == "deny"

    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())
    command = codex["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    code, out = _run(command, ev.codex_tool(s, "Bash", {"command": "ls"}))
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"

    claude = json.loads((home / ".claude" / "settings.json").read_text())
    command = claude["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    event = {"session_id": s, "hook_event_name": "PreToolUse", "cwd": "/tmp",
             "tool_name": "Bash", "tool_input": {"command": "ls"}}  # fmt: skip
    code, out = _run(command, json.dumps(event).encode())
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_hook_launcher_installed_decides_as_the_hosts_run_it(
    server: Server, tmp_path: Path
) -> None:
    # bin/agbom-hook as an installer leaves it: its first line names the interpreter.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "agbom-hook"
    source = (Path(__file__).resolve().parents[2] / "bin" / "agbom-hook").read_text()
    launcher.write_text(f"#!{sys.executable}\n" + source.split("\n", 1)[1])
    launcher.chmod(0o755)
    home = tmp_path / "home"
    s = str(uuid.uuid4())
    for host in ("cursor", "claude-code"):
        _install(home, host, server, "--agbom", str(launcher))

    cursor = _flat(home / ".cursor" / "hooks.json", "beforeShellExecution")
    assert cursor["command"].startswith(f"{launcher} cursor --server ")
    code, out = _run(cursor["command"], ev.cursor_shell(s, "ls"))
    assert code == 0 and json.loads(out)["permission"] == "deny"

    claude = json.loads((home / ".claude" / "settings.json").read_text())
    command = claude["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.startswith(f"{launcher} claude-code --server ")
    event = {"session_id": s, "hook_event_name": "PreToolUse", "cwd": "/tmp",
             "tool_name": "Read", "tool_input": {"file_path": "/etc/hosts"}}  # fmt: skip
    code, out = _run(command, json.dumps(event).encode())
    assert code == 0 and json.loads(out) == {}
    # The server down: the launcher's answer is Claude Code's fail-closed deny.
    down = command.replace(server.url, "http://127.0.0.1:9")
    event["tool_name"] = "Bash"
    code, out = _run(down, json.dumps(event).encode())
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
