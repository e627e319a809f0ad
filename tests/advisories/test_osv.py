"""Offline OSV matching: loading an export (folder or all.zip), range evaluation per ecosystem,
fail-closed loading, and the CLI end to end (rules, CycloneDX vulnerabilities[], SARIF)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from agbom.advisories import AdvisoryError, annotate, load_osv
from agbom.inventory import AgBOM
from tests.cli_process import run_agbom

FIXTURE = Path(__file__).parent / "fixtures" / "osv"
FS_ADVISORY = "GHSA-7q2m-agb1-fs01"
FETCH_ADVISORY = "PYSEC-2099-41"
SHELL_ADVISORY = "GHSA-3h9c-agb2-sh02"


@pytest.fixture(scope="module")
def database():
    return load_osv(FIXTURE)


def _ids(database, purl: str) -> list[str]:
    return [m.id for m in database.match(purl)]


@pytest.mark.parametrize(
    ("purl", "expected"),
    [
        # npm semver: introduced 0 .. fixed 1.4.2, and 2.0.0-beta.1 .. fixed 2.1.0
        ("pkg:npm/%40acme/mcp-filesystem@0.0.1", [FS_ADVISORY]),
        ("pkg:npm/%40acme/mcp-filesystem@1.4.1", [FS_ADVISORY]),
        ("pkg:npm/%40acme/mcp-filesystem@1.4.2", []),  # fixed is exclusive
        ("pkg:npm/%40acme/mcp-filesystem@1.10.0", []),  # semver, not text order
        ("pkg:npm/%40acme/mcp-filesystem@2.0.0-alpha.3", []),  # prerelease before beta.1
        ("pkg:npm/%40acme/mcp-filesystem@2.0.0-beta.2", [FS_ADVISORY]),
        ("pkg:npm/%40acme/mcp-filesystem@2.0.9", [FS_ADVISORY]),
        ("pkg:npm/%40acme/mcp-filesystem@2.1.0", []),
        # npm names are exact: case is part of the name (legacy names hold capitals)
        ("pkg:npm/%40ACME/MCP-Filesystem@1.0.0", []),
        ("pkg:npm/%40acme/mcp_filesystem@1.0.0", []),
        ("pkg:npm/mcp-filesystem@1.0.0", []),  # the scope is part of the name
        # last_affected is inclusive
        ("pkg:npm/mcp-shell-runner@1.3.0", [SHELL_ADVISORY]),
        ("pkg:npm/mcp-shell-runner@1.3.1", []),
        ("pkg:npm/mcp-shell-runner@0.9.0", []),
        # PyPI PEP 440: two intervals, names normalized per PEP 503
        ("pkg:pypi/mcp-server-fetch@0.1", []),
        ("pkg:pypi/mcp-server-fetch@0.2", [FETCH_ADVISORY]),
        ("pkg:pypi/mcp-server-fetch@0.6.2rc1", [FETCH_ADVISORY]),  # a pre-release of the fix
        ("pkg:pypi/mcp-server-fetch@0.6.2", []),
        ("pkg:pypi/mcp-server-fetch@0.9", []),
        ("pkg:pypi/Mcp.Server_Fetch@1.0.2", [FETCH_ADVISORY]),
        ("pkg:pypi/mcp-server-fetch@1.0.3", []),
        # GIT ranges name commits: not evaluated; OCI by exact listed version
        ("pkg:pypi/mcp-server-git@1.0", []),
        ("pkg:oci/mcp-gateway@0.9.1", ["AGB-OCI-2099-5"]),
        ("pkg:oci/mcp-gateway@0.9.2", []),
        # an unknown version is never assumed affected
        ("pkg:npm/%40acme/mcp-filesystem", []),
        ("pkg:npm/%40acme/mcp-filesystem@not-a-version", []),
    ],
)
def test_ranges_per_ecosystem(database, purl: str, expected: list[str]) -> None:
    assert _ids(database, purl) == expected


def test_a_match_names_id_aliases_severity_and_fixed_versions(database) -> None:
    (match,) = database.match("pkg:pypi/mcp-server-fetch@1.0.0")
    assert match.aliases == ("CVE-2099-10041", "GHSA-p4p4-agb4-py41")
    assert match.severity == "high"  # from affected[].ecosystem_specific
    assert match.fixed == ("0.6.2", "1.0.3")
    (shell,) = database.match("pkg:npm/mcp-shell-runner@1.2.0")
    assert shell.severity == "medium"  # GHSA "MODERATE"
    assert shell.fixed == ()


def test_withdrawn_advisories_affect_nothing(database) -> None:
    assert database.stats.withdrawn == 1
    assert "GHSA-9x9x-agb3-wd03" not in _ids(database, "pkg:npm/mcp-shell-runner@5.0.0")


def _zip_of(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*.json")):
            archive.write(file, file.name)
    return target


def test_all_zip_reads_like_the_folder(tmp_path: Path, database) -> None:
    from_zip = load_osv(_zip_of(FIXTURE, tmp_path / "all.zip"))
    assert len(from_zip) == len(database) == 6
    for purl in ("pkg:npm/%40acme/mcp-filesystem@1.0.0", "pkg:pypi/mcp-server-fetch@1.0.0"):
        assert from_zip.match(purl) == database.match(purl)


def test_unsorted_events_are_sorted_before_walking(tmp_path: Path) -> None:
    record = {
        "id": "X-1",
        "affected": [
            {
                "package": {"ecosystem": "PyPI", "name": "pkg"},
                "ranges": [
                    {
                        "type": "ECOSYSTEM",
                        "events": [{"fixed": "2.0"}, {"introduced": "1.5"}, {"introduced": "0"},
                                   {"fixed": "1.0"}],
                    }
                ],
            }
        ],
    }  # fmt: skip
    (tmp_path / "x.json").write_text(json.dumps(record))
    database = load_osv(tmp_path)
    assert [bool(database.match(f"pkg:pypi/pkg@{v}")) for v in ("0.5", "1.2", "1.7", "2.0")] == [
        True,
        False,
        True,
        False,
    ]


def _one_advisory(folder: Path, advisory_id: str, package: dict[str, str]) -> None:
    record = {
        "id": advisory_id,
        "affected": [{"package": package, "ranges": [
            {"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "9.0.0"}]}
        ], "versions": ["v1.0.0", "12.0.0"]}],
    }  # fmt: skip
    (folder / f"{advisory_id}.json").write_text(json.dumps(record))


def test_package_names_are_normalized_per_ecosystem(tmp_path: Path) -> None:
    # npm names compare exactly: socket.io, socket-io and socket_io are three packages, and an
    # advisory for one must not deny the others. PyPI folds case and runs of -_. (PEP 503), as
    # the OSV schema says its names are normalized. By ecosystem/name or by purl alike.
    _one_advisory(tmp_path, "NPM-1", {"ecosystem": "npm", "name": "socket.io"})
    _one_advisory(tmp_path, "NPM-2", {"ecosystem": "npm", "name": "JSONStream"})
    _one_advisory(tmp_path, "PY-1", {"ecosystem": "PyPI", "name": "zope.interface"})
    _one_advisory(tmp_path, "GO-1", {"ecosystem": "Go", "name": "x",
                                     "purl": "pkg:golang/github.com/Acme/Lib"})  # fmt: skip
    _one_advisory(tmp_path, "NUGET-1", {"ecosystem": "NuGet", "name": "x",
                                        "purl": "pkg:nuget/Newtonsoft.Json"})  # fmt: skip
    database = load_osv(tmp_path)
    assert _ids(database, "pkg:npm/socket.io@4.0.0") == ["NPM-1"]
    for other in ("socket-io", "socket_io", "Socket.io", "socket..io", "socketio"):
        assert _ids(database, f"pkg:npm/{other}@4.0.0") == [], other
    assert _ids(database, "pkg:npm/JSONStream@1.0.0") == ["NPM-2"]
    assert _ids(database, "pkg:npm/jsonstream@1.0.0") == []
    for same in ("zope.interface", "zope-interface", "Zope_Interface", "zope--.interface"):
        assert _ids(database, f"pkg:pypi/{same}@5.0") == ["PY-1"], same
    assert _ids(database, "pkg:pypi/zopeinterface@5.0") == []
    assert _ids(database, "pkg:golang/github.com/Acme/Lib@v1.0.0") == ["GO-1"]
    assert _ids(database, "pkg:golang/github.com/acme/lib@v1.0.0") == []  # module paths: exact
    assert _ids(database, "pkg:golang/github.com/Acme/Lib-x@v1.0.0") == []
    # NuGet documents its package ids as case-insensitive: case folds, separators do not.
    assert _ids(database, "pkg:nuget/newtonsoft.json@12.0.0") == ["NUGET-1"]
    assert _ids(database, "pkg:nuget/Newtonsoft-Json@12.0.0") == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"summary": "no id"}', "without a string 'id'"),
        (b'{"id": "A", "affected": {"package": 1}}', "'affected' of A must be a list"),
    ],
)
def test_malformed_records_fail_closed(tmp_path: Path, content: bytes, message: str) -> None:
    shutil.copytree(FIXTURE, tmp_path / "db")
    (tmp_path / "db" / "zz-bad.json").write_bytes(content)
    with pytest.raises(AdvisoryError, match=message):
        load_osv(tmp_path / "db")


def test_unusable_paths_fail_closed(tmp_path: Path) -> None:
    with pytest.raises(AdvisoryError, match="No such file"):
        load_osv(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(AdvisoryError, match="no OSV records"):
        load_osv(tmp_path / "empty")
    (tmp_path / "notzip").write_bytes(b"plain text")
    with pytest.raises(AdvisoryError, match="not a zip archive"):
        load_osv(tmp_path / "notzip")


def test_an_oversized_entry_is_refused_even_when_its_header_lies(tmp_path: Path) -> None:
    from agbom.advisories import osv

    big = b'{"id": "BIG", "summary": "' + b"x" * 2048 + b'"}'
    archive = tmp_path / "all.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("BIG.json", big)
    original = osv.MAX_ADVISORY_BYTES
    osv.MAX_ADVISORY_BYTES = 1024
    try:
        with pytest.raises(AdvisoryError, match="larger than 1024 bytes"):
            load_osv(archive)
    finally:
        osv.MAX_ADVISORY_BYTES = original


def test_links_in_a_folder_export_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.json").write_text('{"id": "EVIL", "affected": []}')
    db = tmp_path / "db"
    shutil.copytree(FIXTURE, db)
    os.symlink(outside / "evil.json", db / "link.json")
    os.symlink(outside, db / "linked-dir")
    assert len(load_osv(db)) == 6


def test_annotate_replaces_what_the_input_claimed(database) -> None:
    agbom = AgBOM.from_document(
        {
            "components": [
                {
                    "id": "mcp:fs",
                    "type": "mcp_server",
                    "name": "fs",
                    "version": "1.4.2",
                    "endpoint": "stdio",
                    "tools": [],
                    "purl": "pkg:npm/%40acme/mcp-filesystem@1.4.2",
                    # a client-sent claim that must not survive: the database decides
                    "vulnerabilities": [{"id": "FAKE", "severity": "critical"}],
                }
            ]
        }
    )
    assert "vulnerabilities" not in annotate(agbom, database).components["mcp:fs"].data


# -- the CLI, end to end ---------------------------------------------------------------------

MCP_CONFIG = {
    "mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@acme/mcp-filesystem@1.4.1", "/data"]},
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch==0.6.1"]},
        "fixed": {"command": "npx", "args": ["-y", "@acme/mcp-filesystem@1.4.2"]},
    }
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".mcp.json").write_text(json.dumps(MCP_CONFIG))
    return tmp_path


def test_scan_osv_findings_and_exit_code(project: Path) -> None:
    proc = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "json", "--fail-on", "critical",
                  cwd=project)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    by_rule = {f["rule_id"]: f for f in report["findings"] if f["rule_id"].startswith("AGB-VULN")}
    assert set(by_rule) == {"AGB-VULN-001", "AGB-VULN-002"}
    critical = by_rule["AGB-VULN-001"]
    assert critical["action"] == "deny"
    assert FS_ADVISORY in critical["message"] and "CVE-2099-10001" in critical["message"]
    assert "fixed in 1.4.2" in critical["message"]
    assert "PYSEC-2099-41" in by_rule["AGB-VULN-002"]["message"]
    without = run_agbom("scan", ".", "-f", "json", cwd=project)
    assert not [f for f in json.loads(without.stdout)["findings"] if "VULN" in f["rule_id"]]


def test_scan_osv_cyclonedx_vulnerabilities_validate(project: Path) -> None:
    for version, schema in (("1.6", SchemaVersion.V1_6), ("1.7", SchemaVersion.V1_7)):
        proc = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "cyclonedx-json",
                      "--spec-version", version, cwd=project)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert JsonStrictValidator(schema).validate_str(proc.stdout) is None
        doc = json.loads(proc.stdout)
        refs = {c["bom-ref"] for c in doc["components"]} | {s["bom-ref"] for s in doc["services"]}
        vulns = {v["id"]: v for v in doc["vulnerabilities"]}
        assert set(vulns) == {FS_ADVISORY, FETCH_ADVISORY}
        fs = vulns[FS_ADVISORY]
        assert fs["ratings"][0]["severity"] == "critical"
        assert [r["id"] for r in fs["references"]] == ["CVE-2099-10001"]
        assert all(a["ref"] in refs for v in vulns.values() for a in v["affects"])
        assert fs["affects"][0]["versions"] == [{"version": "1.4.1", "status": "affected"}]


def test_scan_osv_sarif_carries_the_finding(project: Path) -> None:
    proc = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "sarif", cwd=project)
    log = json.loads(proc.stdout)
    results = [r for r in log["runs"][0]["results"] if r["ruleId"] == "AGB-VULN-001"]
    assert len(results) == 1
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith(".mcp.json")
    assert FS_ADVISORY in results[0]["message"]["text"]


def test_check_osv_and_rules_on_aliases(project: Path) -> None:
    scanned = run_agbom("scan", ".", "-f", "json", cwd=project)
    (project / "agbom.json").write_text(json.dumps(json.loads(scanned.stdout)["agbom"]))
    pack = project / "packs"
    pack.mkdir()
    (pack / "cve.yaml").write_text(
        "pack: cve\nrules:\n  - id: TEAM-CVE\n    kind: ban\n    severity: high\n"
        "    action: deny\n    message: 'banned advisory: {reason}'\n"
        "    match: {vulnerability: {alias: 'CVE-2099-1004*'}}\n"
    )
    proc = run_agbom("check", "agbom.json", "--osv", str(FIXTURE), "--rules", str(pack),
                  "--no-default-rules", "-f", "json", "--fail-on", "high", cwd=project)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [f["components"] for f in findings] == [["mcp:pypi/mcp-server-fetch@0.6.1"]]


@pytest.mark.parametrize("bad", ["missing", "not-a-zip"])
def test_a_bad_export_is_a_usage_error_before_anything_runs(project: Path, bad: str) -> None:
    if bad == "not-a-zip":
        (project / bad).write_text("nope")
    for command in (["scan", "."], ["check", "agbom.json"]):
        proc = run_agbom(*command, "--osv", bad, "-o", "out.json", cwd=project)
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert not (project / "out.json").exists()


def test_unknown_severity_in_a_rule_is_a_load_error(tmp_path: Path) -> None:
    from agbom.rules import load_rules
    from agbom.rules.interface import RuleError

    (tmp_path / "p.yaml").write_text(
        "rules:\n  - id: X\n    kind: ban\n    severity: high\n    action: deny\n"
        "    message: m\n    match: {vulnerability: {severity: severe}}\n"
    )
    with pytest.raises(RuleError, match="unknown severity 'severe'"):
        load_rules(tmp_path)


def test_live_database_reloads_on_sighup_and_keeps_the_old_one_on_a_bad_export(
    tmp_path: Path,
) -> None:
    import signal
    import threading
    import time

    from agbom.advisories.live import LiveAdvisories

    db = tmp_path / "db"
    shutil.copytree(FIXTURE, db)
    messages: list[str] = []
    live = LiveAdvisories(db, report=messages.append)
    assert len(live.database) == 6
    previous = signal.getsignal(signal.SIGHUP)
    try:
        live.install_sighup()
        (db / "new.json").write_text('{"id": "NEW-1", "affected": []}')
        os.kill(os.getpid(), signal.SIGHUP)
        deadline = time.monotonic() + 120  # a bound, not a timing claim
        while live.generation == 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live.generation == 2 and len(live.database) == 7
        (db / "broken.json").write_text("{")
        assert live.reload() is False
        assert len(live.database) == 7 and "keeping the loaded database" in messages[-1]
    finally:
        signal.signal(signal.SIGHUP, previous)
        for thread in threading.enumerate():
            if thread.name == "osv-reload":
                thread.join(timeout=60)


def test_packages_a_skill_pins_are_matched(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "fetcher"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: fetcher\ndescription: Fetches.\n---\nBody.\n")
    (skill / "requirements.txt").write_text(
        "# pinned\nMCP_Server.Fetch[cli]==0.6.1  # the fetch server\nrequests>=2\n"
    )
    dependencies = {"@acme/mcp-filesystem": "1.4.1", "left-pad": "^1.3.0", "x": "git+https://x"}
    (skill / "scripts" / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    proc = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "json", cwd=tmp_path)
    report = json.loads(proc.stdout)
    (component,) = [c for c in report["agbom"]["components"] if c["type"] == "skill"]
    assert component["packages"] == [
        "pkg:npm/%40acme/mcp-filesystem@1.4.1",
        "pkg:pypi/mcp-server-fetch@0.6.1",
    ]
    assert sorted(v["id"] for v in component["vulnerabilities"]) == [FS_ADVISORY, FETCH_ADVISORY]
    rules = {f["rule_id"] for f in report["findings"] if f["components"] == ["skill:fetcher"]}
    assert {"AGB-VULN-001", "AGB-VULN-002"} <= rules
    cdx = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "cyclonedx-json", cwd=tmp_path)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(cdx.stdout) is None
    bom = json.loads(cdx.stdout)
    affects = {a["ref"] for v in bom["vulnerabilities"] for a in v["affects"]}
    # each pinned package is a library component of its own, which the skill depends on
    pins = {"package:pkg:npm/@acme/mcp-filesystem@1.4.1", "package:pkg:pypi/mcp-server-fetch@0.6.1"}
    assert affects == pins
    (skill_deps,) = [d["dependsOn"] for d in bom["dependencies"] if d["ref"] == "skill:fetcher"]
    assert pins <= set(skill_deps)


def test_scan_osv_cyclonedx_xml_carries_the_vulnerabilities(project: Path) -> None:
    from cyclonedx.schema import OutputFormat
    from cyclonedx.validation import make_schemabased_validator
    from lxml import etree

    for version, schema in (("1.6", SchemaVersion.V1_6), ("1.7", SchemaVersion.V1_7)):
        proc = run_agbom("scan", ".", "--osv", str(FIXTURE), "-f", "cyclonedx-xml",
                      "--spec-version", version, cwd=project)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        validator = make_schemabased_validator(OutputFormat.XML, schema)
        assert validator.validate_str(proc.stdout) is None
        ns = {"c": f"http://cyclonedx.org/schema/bom/{version}"}
        root = etree.fromstring(proc.stdout.encode())
        ids = root.xpath("/c:bom/c:vulnerabilities/c:vulnerability/c:id/text()", namespaces=ns)
        assert sorted(ids) == [FS_ADVISORY, FETCH_ADVISORY]
