"""Merging across files, the canonical AgBOM, and the ``agbom scan`` command contract."""
# ruff: noqa: E501 - fixture data reads better on one line

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from agbom.cli.app import app
from agbom.inventory import AgBOM
from agbom.scan import scan_paths

SERVER = {"command": "npx", "args": ["-y", "@acme/files@1.2.3"]}


def test_same_server_in_several_files_is_one_component(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write("a/.mcp.json", {"mcpServers": {"files": {**SERVER, "env": {"A": "1"}}}})
    write("b/.cursor/mcp.json", {"mcpServers": {"fs": {**SERVER, "env": {"B": "2"}}}})
    write(
        "c/.codex/config.toml",
        '[mcp_servers.f]\ncommand = "npx"\nargs = ["-y", "@acme/files@1.2.3"]\nenabled = false\n',
    )
    result = scan_paths([tmp_path])
    (component,) = list(result.agbom)
    assert component.id == "mcp:npm/@acme/files@1.2.3"
    prefix = str(tmp_path) + "/"
    assert [(f["path"].removeprefix(prefix), f["reader"]) for f in component.get("found_in")] == [
        ("a/.mcp.json", "claude-code"),
        ("b/.cursor/mcp.json", "cursor"),
        ("c/.codex/config.toml", "codex"),
    ]
    assert component.get("found_in")[2]["disabled"] is True
    assert component.get("disabled") is None  # enabled elsewhere
    assert component.get("env_keys") == ["A", "B"]


def test_pinned_and_unpinned_are_different_components(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write("a/.mcp.json", {"mcpServers": {"x": {"command": "npx", "args": ["@acme/files@1.2.3"]}}})
    write("b/.mcp.json", {"mcpServers": {"x": {"command": "npx", "args": ["@acme/files"]}}})
    ids = sorted(scan_paths([tmp_path]).agbom.components)
    assert ids == ["mcp:npm/@acme/files", "mcp:npm/@acme/files@1.2.3"]


def test_same_skill_name_different_content(write: Callable[..., Path], tmp_path: Path) -> None:
    write("one/pdf/SKILL.md", "---\nname: pdf\ndescription: A.\n---\n")
    write("two/pdf/SKILL.md", "---\nname: pdf\ndescription: B.\n---\n")
    write("three/pdf/SKILL.md", "---\nname: pdf\ndescription: A.\n---\n")
    agbom = scan_paths([tmp_path]).agbom
    assert len(agbom) == 2
    assert all(c.id.startswith("skill:pdf@") for c in agbom)
    assert sorted(len(c.get("found_in")) for c in agbom) == [1, 2]


def test_result_is_a_valid_agbom_and_deterministic(asset: Callable[[str], Path]) -> None:
    first = scan_paths([asset("manifests"), asset("skills")])
    second = scan_paths([asset("skills"), asset("manifests")])
    document = first.agbom.to_document()
    assert AgBOM.from_document(document) == first.agbom
    assert first.agbom.agbom_hash == second.agbom.agbom_hash
    for component in first.agbom:
        assert component.get("found_in"), component.id


def test_progress_callback(asset: Callable[[str], Path]) -> None:
    seen: list[tuple[int, int]] = []
    scan_paths([asset("manifests")], progress=lambda done, total, path: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] == len(seen)


# -- CLI -----------------------------------------------------------------------------------------


def test_cli_table_and_cyclonedx(asset: Callable[[str], Path], tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["scan", str(asset("manifests/cursor"))])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].split() == [
        "TYPE",
        "ID",
        "VERSION",
        "DETAIL",
        "FOUND",
        "IN",
    ]
    assert "mcp:npm/@playwright/mcp" in result.stdout
    assert "AGB-HYG-001" in result.stdout  # the default pack's unpinned-package rule
    out = tmp_path / "bom.cdx.json"
    result = runner.invoke(
        app, ["scan", str(asset("manifests")), "-f", "cyclonedx-json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    bom = json.loads(out.read_text())
    assert bom["bomFormat"] == "CycloneDX"
    refs = {c["bom-ref"] for c in bom.get("components", []) + bom.get("services", [])}
    assert "mcp:npm/@modelcontextprotocol/server-filesystem@2025.8.21" in refs


def test_cli_json_report_lists_every_file(write: Callable[..., Path], tmp_path: Path) -> None:
    write("ok/.mcp.json", {"mcpServers": {"a": {"url": "https://a/mcp"}}})
    write("bad/.mcp.json", "{nope")
    write("skip/.vscode/settings.json", "{}")
    result = CliRunner().invoke(app, ["scan", str(tmp_path), "-f", "json"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    statuses = {f["path"].split(str(tmp_path) + "/")[-1]: f["status"] for f in report["files"]}
    assert statuses == {
        "bad/.mcp.json": "error",
        "ok/.mcp.json": "ok",
        "skip/.vscode/settings.json": "skipped",
    }
    bad = next(f for f in report["files"] if f["status"] == "error")
    assert bad["error"]["line"] == 1 and bad["error"]["column"] == 2
    assert report["errors"][0]["path"].endswith("bad/.mcp.json")
    assert report["summary"]["error"] == 1 and report["agbom"]["agbom_hash"].startswith("sha256:")
    assert "bad/.mcp.json:1:2: not valid JSON" in result.stderr


def test_cli_exit_codes(write: Callable[..., Path], tmp_path: Path) -> None:
    runner = CliRunner()
    write("clean/.mcp.json", {"mcpServers": {"a": {"command": "npx", "args": ["x@1.0.0"]}}})
    assert runner.invoke(app, ["scan", str(tmp_path / "clean")]).exit_code == 0
    write("unpinned/.mcp.json", {"mcpServers": {"a": {"command": "npx", "args": ["x"]}}})
    assert (
        runner.invoke(app, ["scan", str(tmp_path / "unpinned"), "--fail-on", "medium"]).exit_code
        == 1
    )
    assert (
        runner.invoke(app, ["scan", str(tmp_path / "unpinned"), "--fail-on", "high"]).exit_code == 0
    )
    write("broken/.mcp.json", "{")
    assert runner.invoke(app, ["scan", str(tmp_path / "broken")]).exit_code == 3
    # Findings at the threshold win over file errors.
    both = [str(tmp_path / "broken"), str(tmp_path / "unpinned"), "--fail-on", "medium"]
    assert runner.invoke(app, ["scan", *both]).exit_code == 1
    assert runner.invoke(app, ["scan", str(tmp_path / "missing")]).exit_code == 2
    assert runner.invoke(app, ["scan", str(tmp_path), "-f", "yaml"]).exit_code == 2
    assert runner.invoke(app, ["scan", str(tmp_path), "--fail-on", "severe"]).exit_code != 0


def test_cli_sarif(asset: Callable[[str], Path]) -> None:
    result = CliRunner().invoke(app, ["scan", str(asset("manifests/cursor")), "-f", "sarif"])
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0"
    assert any(r["ruleId"] == "AGB-HYG-001" for r in sarif["runs"][0]["results"])


def test_cli_subprocess_no_progress_when_not_a_tty(
    asset: Callable[[str], Path], tmp_path: Path
) -> None:
    out = tmp_path / "bom.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", str(asset("skills")), "-f", "cyclonedx-xml", "-o", str(out)],
        capture_output=True, text=True, check=False, env={**os.environ, "COLUMNS": "120"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"agbom: scanned 3 file(s) (3 ok, 0 with errors, 0 skipped): 3 component(s), "
        f"{proc.stderr.split('component(s), ')[1].split(' finding')[0]} finding(s); rule packs: default; wrote {out}"
    ]
    assert out.read_text().startswith("<?xml")


def test_parallel_read_matches_serial(write: Callable[..., Path], tmp_path: Path) -> None:
    from agbom.scan.scanner import PARALLEL_MIN_FILES

    for i in range(PARALLEL_MIN_FILES // 2):
        write(f"s/sk-{i}/SKILL.md", f"---\nname: sk-{i}\ndescription: Skill {i}.\n---\n")
        write(
            f"c/{i}/.mcp.json", {"mcpServers": {"s": {"command": "uvx", "args": [f"srv-{i % 7}"]}}}
        )
    write("c/bad/.mcp.json", "{")
    ran: list[int] = []
    serial = scan_paths([tmp_path], workers=1)
    parallel = scan_paths([tmp_path], workers=2, background=lambda: ran.append(1))
    assert ran == [1]
    assert parallel.agbom.agbom_hash == serial.agbom.agbom_hash
    assert parallel.files == serial.files
    assert parallel.findings == serial.findings
    assert len(parallel.files) == PARALLEL_MIN_FILES + 1
