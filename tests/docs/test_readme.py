"""The README is a contract too: its quick start runs, and it names every command."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start_lines() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_lines_and_ci_runs_the_second() -> None:
    lines = _quick_start_lines()
    assert len(lines) == 2
    assert "pytest" in lines[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert lines[1] in ci


def test_the_main_job_line_runs_on_the_bundled_samples(tmp_path: Path) -> None:
    main_line = _quick_start_lines()[0]
    # The part after the install is what a user sees; the install itself is this test run.
    commands = main_line.split("pip install -e . && ", 1)[1]
    agbom = shutil.which("agbom") or ""
    if not agbom:
        pytest.skip("the agbom entry point is not installed")
    work = tmp_path / "checkout"
    shutil.copytree(ROOT / "samples", work / "samples")
    result = subprocess.run(
        commands,
        shell=True,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(Path(agbom).parent) + ":/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "mcp_server" in result.stdout and "findings" in result.stdout
    bom = json.loads((work / "agbom.cdx.json").read_text())
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.6"
    assert len(bom["components"]) + len(bom.get("services", [])) >= 50


def test_every_command_is_in_the_readme() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agbom", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    commands = re.findall(r"^\s{2}(\w[\w-]*)\s{2,}", result.stdout, flags=re.M)
    commands = [c for c in commands if c not in ("install-completion", "show-completion")]
    assert len(commands) >= 12
    missing = [c for c in commands if f"agbom {c}" not in README]
    assert missing == []


def test_every_subcommand_is_in_the_readme_table() -> None:
    """Each command of each group (``agbom reviewers secret``, ``agbom skills diff``) is named
    in the README's command table, written ``agbom GROUP SUB`` or in a ``SUB1|SUB2`` list."""
    from agbom.cli.app import COMMANDS, build_command

    table = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    named: set[tuple[str, str]] = set()
    for group, subs in re.findall(r"agbom ([a-z-]+) ((?:[a-z-]+\\\|)*[a-z-]+)", table):
        named |= {(group, sub) for sub in subs.split("\\|")}
    groups = {name: getattr(build_command(name), "commands", {}) for name in COMMANDS}
    every = [(name, sub) for name, subs in groups.items() for sub in subs]
    assert [f"agbom {name} {sub}" for name, sub in every if (name, sub) not in named] == []
