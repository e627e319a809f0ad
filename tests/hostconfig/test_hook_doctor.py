"""``agbom hook doctor`` on a fake machine: hosts found by program or folder, what agbom
installed where, the events gated and not, and what the host's version leaves open."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

AGBOM = [sys.executable, "-m", "agbom"]


def _program(folder: Path, name: str, says: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{says}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _agbom(home: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "PATH": path}
    for var in ("CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    return subprocess.run(
        [*AGBOM, *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_doctor_reports_installs_gaps_and_version_notes(tmp_path: Path) -> None:
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    bin_dir.mkdir()
    _program(bin_dir, "codex", "codex-cli 0.120.3")
    _program(bin_dir, "gemini", "0.56.0")
    path = f"{bin_dir}:{os.environ['PATH']}"
    (home / ".cursor").mkdir(parents=True)  # found by its folder, nothing installed
    installed = _agbom(
        home, path, "hook", "install", "codex", "--scope", "user",
        "--server", "http://127.0.0.1:9", "--agbom", str(tmp_path / "gone" / "agbom"),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    # Gemini: only the tool gate, by hand; the prompt gate is missing.
    exe = sys.executable
    settings.write_text(
        json.dumps(
            {"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [
                {"type": "command", "command": f"{exe} -m agbom hook gemini-cli"}
            ]}]}}
        )
    )  # fmt: skip
    done = _agbom(home, path, "hook", "doctor", "--format", "json")
    assert done.returncode == 0, done.stderr
    reports = {r["host"]: r for r in json.loads(done.stdout)}
    assert set(reports) >= {"codex", "gemini-cli", "cursor"}
    assert "copilot" not in reports and "windsurf" not in reports  # not on this machine

    codex = reports["codex"]
    assert codex["version"] == "0.120.3"
    assert codex["found_by"][0] == str(bin_dir / "codex")
    [user] = codex["installed"]
    assert user["scope"] == "user" and set(user["events"]) == {
        "PreToolUse", "UserPromptSubmit", "SessionStart",
    }  # fmt: skip
    problems = " | ".join(user["problems"])
    assert "missing or not executable" in problems
    assert "does not answer /healthz" in problems and "trusted in /hooks" in problems
    assert any("0.124.0" in line for line in codex["open_paths"])

    gemini = reports["gemini-cli"]
    assert gemini["version"] == "0.56.0" and gemini["not_gated"] == ["BeforeAgent", "SessionStart"]
    assert any(
        line.startswith("BeforeAgent (prompts): no agbom entry") for line in gemini["open_paths"]
    )
    assert gemini["installed"][0]["problems"] == []

    cursor = reports["cursor"]
    assert cursor["installed"] == [] and cursor["open_paths"][0].startswith(
        "agbom is not installed"
    )
    assert any("failClosed" in line for line in cursor["fails_open"])

    table = _agbom(home, path, "hook", "doctor", "--no-versions")
    assert "Codex CLI (codex" in table.stdout and "open: " in table.stdout


def test_doctor_on_a_machine_without_hosts(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _agbom(tmp_path / "home", str(empty), "hook", "doctor")
    assert done.returncode == 0 and "No agent host found" in done.stdout
