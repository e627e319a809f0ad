"""Package identity, licenses and versions in the standard CycloneDX fields (issue 14, 1-2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cyclonedx.schema import OutputFormat, SchemaVersion
from cyclonedx.validation import make_schemabased_validator
from cyclonedx.validation.json import JsonStrictValidator
from export_samples import SAMPLES, every_type_document

from agbom.export import SPEC_VERSIONS, build_cyclonedx, export
from agbom.inventory import AgBOM

_SV = {"1.6": SchemaVersion.V1_6, "1.7": SchemaVersion.V1_7}
DECLARED = "declared"


def _refs(doc: dict) -> dict[str, dict]:
    return {e["bom-ref"]: e for e in [*doc.get("components", []), *doc.get("services", [])]}


def _deps(doc: dict) -> dict[str, list[str]]:
    return {d["ref"]: d["dependsOn"] for d in doc["dependencies"]}


def _server(cid: str, purl: str | None, **extra: object) -> dict:
    entry: dict = {"id": cid, "type": "mcp_server", "name": cid, "version": None}
    entry.update({"endpoint": None, "tools": []})
    entry.update(extra)
    if purl is not None:
        entry["purl"] = purl
    return entry


def _valid_everywhere(agbom: AgBOM) -> None:
    for sv in SPEC_VERSIONS:
        text = export(agbom, "cyclonedx-json", sv).decode()
        assert JsonStrictValidator(_SV[sv]).validate_str(text) is None
        xml = export(agbom, "cyclonedx-xml", sv).decode()
        assert make_schemabased_validator(OutputFormat.XML, _SV[sv]).validate_str(xml) is None


def test_services_depend_on_one_package_component_per_purl():
    doc_in = {
        "components": [
            _server("a", "pkg:npm/%40acme/server@1.2.3"),
            _server("b", "pkg:npm/%40acme/server@1.2.3"),  # same package, two configs
            _server("c", "pkg:pypi/mcp-server-git@2025.7.1"),
            _server("d", "pkg:oci/srv?repository_url=ghcr.io/o/srv&tag=v1"),
            _server("e", "not a purl"),
            _server("f", None),
            # An AgBOM id that looks like the package ref must not be taken over.
            {
                "id": "package:pkg:pypi/mcp-server-git@2025.7.1",
                "type": "tool",
                "name": "t",
                "version": None,
                "provider": "p",
                "capability": "fs.read",
            },
        ]
    }
    agbom = AgBOM.from_document(doc_in)
    doc = build_cyclonedx(agbom)
    refs, deps = _refs(doc), _deps(doc)
    packages = {e["purl"]: e for e in doc["components"] if "purl" in e}
    assert set(packages) == {
        "pkg:npm/%40acme/server@1.2.3",
        "pkg:pypi/mcp-server-git@2025.7.1",
        "pkg:oci/srv?repository_url=ghcr.io/o/srv&tag=v1",
    }
    npm = packages["pkg:npm/%40acme/server@1.2.3"]
    assert deps["a"] == deps["b"] == [npm["bom-ref"]]
    assert "%40" not in npm["bom-ref"]  # cdxgen refuses encoded refs in dependencies
    assert deps[npm["bom-ref"]] == []
    git = packages["pkg:pypi/mcp-server-git@2025.7.1"]
    assert git["bom-ref"] != "package:pkg:pypi/mcp-server-git@2025.7.1"
    assert deps["c"] == [git["bom-ref"]]
    oci = packages["pkg:oci/srv?repository_url=ghcr.io/o/srv&tag=v1"]
    assert (oci["type"], oci["version"]) == ("container", "v1")
    # No package for an invalid purl or none: the invalid one stays a property.
    assert deps["e"] == deps["f"] == []
    assert {"name": "agbom:purl", "value": "not a purl"} in refs["e"]["properties"]
    assert len(doc["components"]) == 1 + 3
    _valid_everywhere(agbom)


def test_bundle_is_a_generic_package_with_its_archive_digest():
    digest = "ab" * 32
    server = _server(
        "mcp:mcpb/w@1.4.2",
        None,
        name="weather",
        version="1.4.2",
        bundle={"server_type": "node"},
        publisher="Example Tools",
        digest={"algorithm": "sha256", "value": digest},
    )
    agbom = AgBOM.from_document({"components": [server, _server("unversioned", None, bundle={})]})
    doc = build_cyclonedx(agbom)
    (package,) = doc["components"]
    assert package["purl"] == f"pkg:generic/weather@1.4.2?checksum=sha256:{digest}"
    assert package["hashes"] == [{"alg": "SHA-256", "content": digest}]
    assert package["publisher"] == "Example Tools"
    assert _deps(doc)["mcp:mcpb/w@1.4.2"] == [package["bom-ref"]]
    _valid_everywhere(agbom)


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("Apache-2.0", {"license": {"id": "Apache-2.0", "acknowledgement": DECLARED}}),
        ("mit", {"license": {"id": "MIT", "acknowledgement": DECLARED}}),
        ("MIT OR Apache-2.0", {"expression": "MIT OR Apache-2.0", "acknowledgement": DECLARED}),
        (
            "GPL-2.0-only WITH Classpath-exception-2.0",
            {
                "expression": "GPL-2.0-only WITH Classpath-exception-2.0",
                "acknowledgement": DECLARED,
            },
        ),
        ("LicenseRef-acme", {"expression": "LicenseRef-acme", "acknowledgement": DECLARED}),
        ("Proprietary", {"license": {"name": "Proprietary", "acknowledgement": DECLARED}}),
        ("MIT AND", {"license": {"name": "MIT AND", "acknowledgement": DECLARED}}),
        (
            "see LICENSE.txt",
            {"license": {"name": "see LICENSE.txt", "acknowledgement": DECLARED}},
        ),
    ],
)
def test_skill_license_goes_into_licenses(declared, expected):
    doc = every_type_document()
    skill = next(c for c in doc["components"] if c["id"] == "skill-1")
    skill["license"] = declared
    agbom = AgBOM.from_document(doc)
    entry = _refs(build_cyclonedx(agbom))["skill-1"]
    assert entry["licenses"] == [expected]
    assert not any(p["name"] == "agbom:license" for p in entry["properties"])
    _valid_everywhere(agbom)


def test_declared_versions_and_card_provider_use_standard_fields():
    doc = every_type_document()
    skill = next(c for c in doc["components"] if c["id"] == "skill-2")
    skill["metadata"] = {"version": "1.2", "author": "platform-team"}
    peer = next(c for c in doc["components"] if c["id"] == "peer-1")
    peer["agent_version"] = "2.1.0"
    peer["provider"] = "Example Corp"
    refs = _refs(build_cyclonedx(AgBOM.from_document(doc)))
    assert refs["skill-2"]["version"] == "1.2"
    assert refs["peer-1"]["version"] == "2.1.0"
    assert refs["peer-1"]["provider"] == {"name": "Example Corp"}
    names = {p["name"] for p in refs["peer-1"]["properties"]}
    assert "agbom:agent_version" not in names and "agbom:provider" not in names
    # An ACS version, when given, is never replaced by a declared one.
    skill["version"] = "3.0"
    assert _refs(build_cyclonedx(AgBOM.from_document(doc)))["skill-2"]["version"] == "3.0"


def test_scan_of_the_samples_puts_every_package_purl_in_components(tmp_path):
    env = {"SOURCE_DATE_EPOCH": "1767225600", "PATH": "/usr/bin:/bin"}
    report_path, bom_path = tmp_path / "report.json", tmp_path / "bom.json"
    base = [sys.executable, "-m", "agbom", "scan", str(SAMPLES)]
    for fmt, path in (("json", report_path), ("cyclonedx-json", bom_path)):
        done = subprocess.run([*base, "-f", fmt, "-o", str(path)], env=env, timeout=300)
        assert done.returncode in (0, 1), fmt  # 1: findings, which the samples have
    report = json.loads(report_path.read_text())["agbom"]["components"]
    bom = json.loads(bom_path.read_text())
    assert bom["metadata"]["timestamp"] == "2026-01-01T00:00:00Z"
    component_purls = {c["purl"] for c in bom["components"] if "purl" in c}
    deps = _deps(bom)
    by_ref = _refs(bom)
    launched = [c for c in report if c["type"] == "mcp_server" and c.get("purl")]
    assert launched  # the samples launch servers from npm, PyPI and OCI
    for server in launched:
        assert server["purl"] in component_purls, server["id"]
        assert any(by_ref[t].get("purl") == server["purl"] for t in deps[server["id"]])
    for skill in (c for c in report if c["type"] == "skill" and c.get("license")):
        assert "licenses" in by_ref[skill["id"]]


def test_every_a2a_interface_is_an_endpoint_of_the_service(tmp_path: Path) -> None:
    import shutil

    from agbom.scan import scan_paths

    fixture = Path(__file__).resolve().parents[1] / "scan" / "fixtures" / "a2a"
    shutil.copy(fixture / "v10-three-bindings.json", tmp_path / "agent-card.json")
    result = scan_paths([tmp_path])
    (peer,) = [c for c in result.agbom.components.values() if c.type.value == "a2a_peer"]
    urls = [i["url"] for i in peer.data["interfaces"]]
    assert len(urls) == 3
    bom = build_cyclonedx(result.agbom)
    (service,) = [s for s in bom["services"] if s["bom-ref"] == peer.id]
    assert service["endpoints"] == list(dict.fromkeys(urls))
