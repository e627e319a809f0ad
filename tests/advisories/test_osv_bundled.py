"""An MCP bundle's bundled dependencies (``node_modules`` package.json files and ``*.dist-info``
folders inside the ``.mcpb`` zip) are matched by ``--osv`` like a skill's pins, within bounds."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from agbom.scan import mcpb
from tests.cli_process import run_agbom

FIXTURE = Path(__file__).parent / "fixtures" / "osv"
FS_ADVISORY = "GHSA-7q2m-agb1-fs01"  # npm @acme/mcp-filesystem, 1.4.1 affected
FETCH_ADVISORY = "PYSEC-2099-41"  # PyPI mcp-server-fetch, 0.6.1 affected
SERVER_ID = "mcp:mcpb/files-bundle@2.0.0"
MANIFEST = {
    "manifest_version": "0.2",
    "name": "files-bundle",
    "version": "2.0.0",
    "server": {
        "type": "node",
        "entry_point": "server/index.js",
        "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]},
    },
}


def _package_json(name: str, version: str) -> str:
    return json.dumps({"name": name, "version": version, "main": "index.js"})


def _bundle(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(MANIFEST))
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def _scan(folder: Path, *extra: str) -> dict[str, Any]:
    proc = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "json", *extra, cwd=folder)
    assert proc.stdout, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def _server(report: dict[str, Any]) -> dict[str, Any]:
    (server,) = [c for c in report["agbom"]["components"] if c["id"] == SERVER_ID]
    return server


def test_bundled_node_and_python_packages_are_matched(tmp_path: Path) -> None:
    _bundle(
        tmp_path / "files.mcpb",
        {
            "server/index.js": "require('@acme/mcp-filesystem')\n",
            "node_modules/@acme/mcp-filesystem/package.json": _package_json(
                "@acme/mcp-filesystem", "1.4.1"
            ),
            "node_modules/@acme/mcp-filesystem/lib/package.json": _package_json("inner", "9.9.9"),
            "node_modules/left-pad/package.json": _package_json("left-pad", "1.3.0"),
            "node_modules/left-pad/node_modules/ranged/package.json": _package_json("ranged", "^1"),
            "lib/MCP_Server.Fetch-0.6.1.dist-info/METADATA": "Name: mcp-server-fetch\n",
            "lib/MCP_Server.Fetch-0.6.1.dist-info/RECORD": "",
            "lib/notaversion-latest.dist-info/METADATA": "",
        },
    )
    report = _scan(tmp_path)
    server = _server(report)
    assert server["packages"] == [
        "pkg:npm/%40acme/mcp-filesystem@1.4.1",
        "pkg:npm/left-pad@1.3.0",
        "pkg:pypi/mcp-server-fetch@0.6.1",
    ]
    assert sorted(v["id"] for v in server["vulnerabilities"]) == sorted(
        [FETCH_ADVISORY, FS_ADVISORY]
    )
    findings = [f for f in report["findings"] if f["components"] == [SERVER_ID]]
    vuln = {f["rule_id"] for f in findings if f["rule_id"].startswith("AGB-VULN-")}
    assert {"AGB-VULN-001", "AGB-VULN-002"} <= vuln
    assert any(FS_ADVISORY in f["message"] for f in findings)
    assert report["summary"]["error"] == 0  # nothing crossed a bound: no warning

    cdx = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "cyclonedx-json", cwd=tmp_path)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(cdx.stdout) is None
    document = json.loads(cdx.stdout)
    assert {v["id"] for v in document["vulnerabilities"]} == {FS_ADVISORY, FETCH_ADVISORY}
    assert "pkg:npm/%40acme/mcp-filesystem@1.4.1" in cdx.stdout  # the AgBOM shows the package

    sarif = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "sarif", cwd=tmp_path)
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert any(FS_ADVISORY in r["message"]["text"] for r in results)


def test_traversal_names_are_ignored(tmp_path: Path) -> None:
    _bundle(
        tmp_path / "files.mcpb",
        {
            "../node_modules/@acme/mcp-filesystem/package.json": _package_json(
                "@acme/mcp-filesystem", "1.4.1"
            ),
            "/abs/node_modules/x/package.json": _package_json("x", "1.0.0"),
            "node_modules/../node_modules/y/package.json": _package_json("y", "1.0.0"),
            "node_modules\\z\\package.json": _package_json("z", "1.0.0"),
            "lib/../mcp_server_fetch-0.6.1.dist-info/METADATA": "",
            "node_modules/ok/package.json": _package_json("ok", "2.0.0"),
        },
    )
    server = _server(_scan(tmp_path))
    assert server["packages"] == ["pkg:npm/ok@2.0.0"]
    assert "vulnerabilities" not in server


def _file_reasons(report: dict[str, Any]) -> list[str]:
    return [e["reason"] for e in report["errors"] if e["path"].endswith("files.mcpb")]


def test_an_oversized_package_json_is_skipped_with_a_warning(tmp_path: Path) -> None:
    padded = json.dumps(
        {"name": "@acme/mcp-filesystem", "version": "1.4.1", "pad": "x" * (70 * 1024)}
    )
    _bundle(
        tmp_path / "files.mcpb",
        {
            "node_modules/@acme/mcp-filesystem/package.json": padded,
            "lib/mcp_server_fetch-0.6.1.dist-info/METADATA": "",
        },
    )
    report = _scan(tmp_path)
    server = _server(report)
    assert server["packages"] == ["pkg:pypi/mcp-server-fetch@0.6.1"]
    assert [v["id"] for v in server["vulnerabilities"]] == [FETCH_ADVISORY]
    reasons = _file_reasons(report)
    assert any("package.json over 65536 bytes skipped" in r for r in reasons), reasons


def test_too_many_entries_are_skipped_with_a_warning(tmp_path: Path) -> None:
    members: dict[str, str | bytes] = {
        f"server/file{i}.js": "" for i in range(mcpb.DEPENDENCY_MAX_ENTRIES)
    }
    members["node_modules/@acme/mcp-filesystem/package.json"] = _package_json(
        "@acme/mcp-filesystem", "1.4.1"
    )  # after manifest.json and the files: past the bound
    _bundle(tmp_path / "files.mcpb", members)
    report = _scan(tmp_path)
    server = _server(report)
    assert "packages" not in server
    assert "vulnerabilities" not in server
    reasons = _file_reasons(report)
    bound = mcpb.DEPENDENCY_MAX_ENTRIES
    assert any(f"only the first {bound} of {bound + 2} zip entries" in r for r in reasons), reasons


def test_the_inflated_total_is_bounded_before_inflating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 2 * len(_package_json("a", "1.0.0"))  # room for two of the three files
    monkeypatch.setattr(mcpb, "DEPENDENCY_MAX_INFLATED", budget)
    archive = _bundle(
        tmp_path / "files.mcpb",
        {
            "node_modules/a/package.json": _package_json("a", "1.0.0"),
            "node_modules/b/package.json": _package_json("b", "1.0.0"),
            "node_modules/c/package.json": _package_json("c", "1.0.0"),
        },
    )
    with zipfile.ZipFile(archive) as opened:
        packages, warnings = mcpb._bundled_packages(opened)
    assert packages == ["pkg:npm/a@1.0.0", "pkg:npm/b@1.0.0"]
    assert len(warnings) == 1
    assert f"past {budget} bytes in all" in warnings[0].reason
