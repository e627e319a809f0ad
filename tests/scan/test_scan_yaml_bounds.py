"""YAML alias bombs and oversized YAML are refused per file, before expansion (issue 13, item 5).

A billion-laughs document is a few hundred bytes whose aliases expand to 10^9 values; before
the fix a SKILL.md holding one grew a 2-3 GB report. Each test here would hang (or exhaust
memory) if the document were expanded, so they also show that it is refused first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agbom.cli.app import app
from agbom.scan import FileStatus, scan_paths
from agbom.scan._parse import YAML_MAX_DEPTH, YAML_MAX_NODES


def billion_laughs(indent: str = "") -> str:
    """Nine levels of ten aliases each: 10^9 strings once expanded."""
    lines = [f'{indent}l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        aliases = ",".join([f"*l{level - 1}"] * 10)
        lines.append(f"{indent}l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def _one(result, name: str):
    reports = [r for r in result.files if r.path.endswith(name)]
    assert len(reports) == 1, result.files
    return reports[0]


@pytest.mark.parametrize("field", ["allowed-tools", "metadata"])
def test_alias_bomb_in_skill_frontmatter_is_a_located_error(
    write: Callable[..., Path], tmp_path: Path, field: str
) -> None:
    use = "[*l8]" if field == "allowed-tools" else "{bomb: *l8}"
    write(
        "skills/sk/SKILL.md",
        f"---\nname: sk\ndescription: d\n{billion_laughs()}{field}: {use}\n---\nBody\n",
    )
    write("skills/ok/SKILL.md", "---\nname: ok\ndescription: Fine.\n---\n")
    result = scan_paths([tmp_path / "skills"])
    bad = _one(result, "sk/SKILL.md")
    assert bad.status is FileStatus.ERROR
    (error,) = bad.errors
    assert error.reason.startswith("YAML anchors and aliases are not allowed")
    assert error.line is not None and 4 <= error.line <= 12  # one of the anchored lines
    # The skill is still on disk, so it is inventoried (invalid), without the bomb's values.
    skill = result.agbom.get("skill:sk")
    assert skill is not None and skill.get("valid") is False
    assert "declared_capabilities" not in skill.data and "metadata" not in skill.data
    assert _one(result, "ok/SKILL.md").status is FileStatus.OK


@pytest.mark.parametrize(
    ("rel", "doc"),
    [
        (
            ".config/goose/config.yaml",
            "extensions:\n  x:\n    type: stdio\n    cmd: npx\n    args: *l8\n",
        ),
        (
            ".continue/config.yaml",
            "mcpServers:\n  - name: x\n    command: npx\n    args: *l8\n",
        ),
        (
            ".continue/mcpServers/x.yaml",
            "mcpServers:\n  - name: x\n    command: npx\n    env: {A: *l8}\n",
        ),
    ],
    ids=["goose", "continue", "continue-block"],
)
def test_alias_bomb_in_goose_and_continue_configs_is_refused(
    write: Callable[..., Path], tmp_path: Path, rel: str, doc: str
) -> None:
    write(rel, billion_laughs() + doc)
    write("other/.mcp.json", {"mcpServers": {"ok": {"url": "https://ok.example/mcp"}}})
    result = scan_paths([tmp_path])
    report = _one(result, rel)
    assert report.status is FileStatus.ERROR and report.components == 0
    assert report.errors[0].reason.startswith("YAML anchors and aliases are not allowed")
    assert "mcp:https://ok.example/mcp" in result.agbom  # the scan went on


def test_a_single_alias_is_refused_too(write: Callable[..., Path], tmp_path: Path) -> None:
    path = write(
        ".continue/config.yaml",
        "base: &b {command: npx}\nmcpServers:\n  - name: x\n    <<: *b\n",
    )
    report = _one(scan_paths([path.parent]), "config.yaml")
    assert report.status is FileStatus.ERROR
    assert (report.errors[0].line, report.errors[0].column) == (1, 7)


def test_an_anchor_without_alias_is_harmless(write: Callable[..., Path], tmp_path: Path) -> None:
    path = write(
        ".continue/config.yaml", "mcpServers:\n  - &x\n    name: x\n    url: https://x/mcp\n"
    )
    report = _one(scan_paths([path.parent]), "config.yaml")
    assert report.status is FileStatus.OK and report.components == 1


def test_nesting_is_bounded(write: Callable[..., Path], tmp_path: Path) -> None:
    deep = "".join(f"{'  ' * i}k{i}:\n" for i in range(YAML_MAX_DEPTH + 1)) + "  " * 65 + "v\n"
    write("s/sk/SKILL.md", f"---\nname: sk\ndescription: d\nmetadata:\n{deep}---\n")
    report = _one(scan_paths([tmp_path / "s"]), "SKILL.md")
    assert report.status is FileStatus.ERROR
    assert f"nested deeper than {YAML_MAX_DEPTH} levels" in report.errors[0].reason
    assert report.errors[0].line is not None and report.errors[0].line > 4


def test_value_count_is_bounded(write: Callable[..., Path], tmp_path: Path) -> None:
    many = ",".join(["1"] * YAML_MAX_NODES)
    path = write(".continue/config.yaml", f"mcpServers: []\npadding: [{many}]\n")
    report = _one(scan_paths([path.parent]), "config.yaml")
    assert report.status is FileStatus.ERROR
    assert report.errors[0].reason == f"YAML document has more than {YAML_MAX_NODES} values"


def test_cli_scan_of_a_bomb_reports_and_exits_3(write: Callable[..., Path], tmp_path: Path) -> None:
    frontmatter = f"name: sk\ndescription: d\n{billion_laughs()}allowed-tools: *l8\n"
    write("sk/SKILL.md", f"---\n{frontmatter}---\n")
    result = CliRunner().invoke(app, ["scan", str(tmp_path), "-f", "json"])
    assert result.exit_code == 3, result.output
    assert "YAML anchors and aliases are not allowed" in result.output
    assert len(result.output) < 100_000  # nothing was expanded into the report
