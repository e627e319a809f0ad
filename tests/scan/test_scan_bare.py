"""A bare ``agbom scan`` inventories what the current user has (issue 42 item 5): the working
folder, walked, and the places under HOME where agent clients keep configs and skills, never
the whole home folder; it says on stderr what it searched. Real ``agbom`` processes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _bare_scan(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGBOM_")}
    return subprocess.run(
        [sys.executable, "-m", "agbom", "scan", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "HOME": str(home)},
        timeout=300,
        check=False,
    )


def _home(tmp_path: Path) -> Path:
    """A home folder with a Claude Code user config, a user skill, and a project config in a
    folder no client reads from HOME (which a bounded scan leaves alone)."""
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "skills" / "pdf-report", home / ".claude" / "skills" / "pdf-report")
    (home / ".cursor").mkdir()
    shutil.copy(SAMPLES / "manifests" / "claude-code" / ".mcp.json", home / ".cursor" / "mcp.json")
    stray = home / "src" / "other-project"
    stray.mkdir(parents=True)
    shutil.copy(SAMPLES / "manifests" / "gemini" / ".gemini" / "settings.json", stray / "x.json")
    (stray / ".gemini").mkdir()
    shutil.copy(SAMPLES / "manifests" / "gemini" / ".gemini" / "settings.json", stray / ".gemini")
    return home


def _found_in(report: dict) -> set[str]:
    return {f["path"] for f in report["files"] if f["status"] == "ok" and f.get("reader")}


def test_a_bare_scan_reads_the_working_folder_and_the_clients_places_in_home(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path)
    project = tmp_path / "project"
    shutil.copytree(SAMPLES / "manifests" / "codex", project)
    done = _bare_scan(project, home, "--format", "json")
    assert done.returncode == 0, done.stderr
    found = _found_in(json.loads(done.stdout))
    assert ".codex/config.toml" in found  # the working folder, walked
    assert "~/.cursor/mcp.json" in found  # a client's place in HOME
    assert "~/.claude/skills/pdf-report/SKILL.md" in found
    assert not any("other-project" in path for path in found)  # not all of HOME
    said = done.stderr.splitlines()[0]
    assert said.startswith("agbom: no PATH given: scanning the working folder ")
    assert str(project) in said and str(home) in said and "configs and skills" in said


def test_a_bare_scan_from_home_reads_only_the_clients_places(tmp_path: Path) -> None:
    home = _home(tmp_path)
    done = _bare_scan(home, home, "--format", "json")
    assert done.returncode == 0, done.stderr
    found = _found_in(json.loads(done.stdout))
    assert "~/.cursor/mcp.json" in found
    assert not any("other-project" in path for path in found), found
    said = done.stderr.splitlines()[0]
    assert re.match(
        rf"agbom: no PATH given: scanning the \d+ places under {re.escape(str(home))} ", said
    )
    assert f"not the working folder {home}, which holds the home folder" in said
    # The same from a folder above HOME (a scan from / must not walk the disk).
    above = _bare_scan(tmp_path, home, "--format", "json")
    assert above.returncode == 0, above.stderr
    assert not any("other-project" in p for p in _found_in(json.loads(above.stdout)))


def test_a_bare_scan_with_nothing_to_find_is_an_empty_inventory(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "empty").mkdir()
    done = _bare_scan(tmp_path / "empty", tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "No components found." in done.stdout
    assert "scanned 0 file(s)" in done.stderr
