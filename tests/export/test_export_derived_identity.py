"""Identities both exports derive from what the AgBOM says (issue 29 §3): the agent's
version, Hugging Face model purls, and the packages skills pin and MCP bundles ship."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cyclonedx.schema import OutputFormat, SchemaVersion
from cyclonedx.validation import make_schemabased_validator
from cyclonedx.validation.json import JsonStrictValidator
from test_export_spdx import spdx_check

from agbom.export import SPEC_VERSIONS, build_cyclonedx, export
from agbom.export.spdx import build_spdx
from agbom.inventory import AgBOM

_SV = {"1.6": SchemaVersion.V1_6, "1.7": SchemaVersion.V1_7}
COMMIT = "0123456789ABCDEF0123456789abcdef01234567"


def _model(cid: str, name: str, **extra: Any) -> dict[str, Any]:
    base = {"version": None, "provider": None, "endpoint": None, "context_window": None}
    return {"id": cid, "type": "model", "name": name, **base, **extra}


def _spdx_component(doc: dict[str, Any], cid: str) -> dict[str, Any]:
    (node,) = [n for n in doc["@graph"] if n.get("spdxId", "").endswith(f"/component/{cid}")]
    return node


def _valid(agbom: AgBOM) -> None:
    for sv in SPEC_VERSIONS:
        text = export(agbom, "cyclonedx-json", sv).decode()
        assert JsonStrictValidator(_SV[sv]).validate_str(text) is None
        xml = export(agbom, "cyclonedx-xml", sv).decode()
        assert make_schemabased_validator(OutputFormat.XML, _SV[sv]).validate_str(xml) is None
    spdx_check(build_spdx(agbom, timestamp="2026-01-01T00:00:00Z"))


# -- the agent's version ----------------------------------------------------------------------


def test_an_agent_without_a_version_gets_one_derived_from_the_agbom_hash():
    agbom = AgBOM.from_document({"agent": {"id": "a", "name": "A"}, "components": []})
    expected = "0.0.0+agbom." + agbom.agbom_hash.removeprefix("sha256:")[:12]
    meta = build_cyclonedx(agbom)["metadata"]["component"]
    assert meta["version"] == expected
    assert {"name": "agbom:version.derived_from", "value": "agbom_hash"} in meta["properties"]
    spdx = build_spdx(agbom, timestamp="2026-01-01T00:00:00Z")
    (agent,) = [n for n in spdx["@graph"] if n.get("spdxId", "").endswith("/agent")]
    assert agent["software_packageVersion"] == expected
    # another inventory, another version
    other = AgBOM.from_document({"agent": {"id": "b", "name": "A"}, "components": []})
    assert build_cyclonedx(other)["metadata"]["component"]["version"] != expected
    _valid(agbom)


def test_a_declared_agent_version_is_kept_and_not_marked():
    agbom = AgBOM.from_document({"agent": {"id": "a", "version": "2.1.0"}, "components": []})
    meta = build_cyclonedx(agbom)["metadata"]["component"]
    assert meta["version"] == "2.1.0"
    assert all(p["name"] != "agbom:version.derived_from" for p in meta["properties"])


# -- models from the Hugging Face Hub -----------------------------------------------------------


MODELS = [
    (_model("m1", "meta-llama/Llama-3.1-8B", provider="huggingface"), "name", None),
    (_model("m2", "hf.co/bartowski/Qwen2-GGUF:Q4_K_M", provider="ollama"), "name", None),
    (
        _model(
            "m3",
            "llama",
            provider="hf-inference",
            endpoint="https://api-inference.huggingface.co/models/org/Mo.del_1",
        ),
        "endpoint",
        None,
    ),
    (_model("m4", "org/name", provider="Hugging Face", version=COMMIT), "name", COMMIT.lower()),
    (_model("m5", "org/name", provider="huggingface", version="3.1"), "name", None),
]
PURLS = {
    "m1": "pkg:huggingface/meta-llama/Llama-3.1-8B",
    "m2": "pkg:huggingface/bartowski/Qwen2-GGUF",
    "m3": "pkg:huggingface/org/Mo.del_1",
    "m4": f"pkg:huggingface/org/name@{COMMIT.lower()}",
    "m5": "pkg:huggingface/org/name",  # "3.1" is not a revision: no version in the purl
}
NOT_FROM_THE_HUB = [
    _model("n1", "gpt-4o", provider="openai"),
    _model("n2", "org/name", provider="openai"),  # ORG/NAME alone is not a Hub claim
    _model("n3", "x", provider="huggingface", endpoint="https://router.huggingface.co/v1"),
    _model("n4", "no-slash", provider="huggingface"),
    _model("n5", "org/../../etc", provider="huggingface"),
    _model("n6", "org/name", provider="huggingface", purl="pkg:pypi/declared@1"),
]


def test_models_that_name_a_hub_repository_get_a_huggingface_purl():
    agbom = AgBOM.from_document(
        {"components": [entry for entry, _, _ in MODELS] + NOT_FROM_THE_HUB}
    )
    cdx = {c["bom-ref"]: c for c in build_cyclonedx(agbom)["components"]}
    spdx = build_spdx(agbom, timestamp="2026-01-01T00:00:00Z")
    for entry, field, _ in MODELS:
        assert cdx[entry["id"]]["purl"] == PURLS[entry["id"]]
        assert {"name": "agbom:purl.derived_from", "value": field} in cdx[entry["id"]]["properties"]
        assert _spdx_component(spdx, entry["id"])["software_packageUrl"] == PURLS[entry["id"]]
    for entry in NOT_FROM_THE_HUB[:-1]:
        assert "purl" not in cdx[entry["id"]], entry
        assert "software_packageUrl" not in _spdx_component(spdx, entry["id"])
    assert cdx["n6"]["purl"] == "pkg:pypi/declared@1"  # a declared purl always wins
    _valid(agbom)


# -- packages a skill pins, packages a bundle ships -------------------------------------------


def _skill(cid: str, packages: list[Any]) -> dict[str, Any]:
    digest = {"algorithm": "sha256", "value": "cd" * 32}
    return {
        "id": cid,
        "type": "skill",
        "name": cid,
        "description": "d",
        "definition": {"ref": f"skills/{cid}", "digest": digest},
        "packages": packages,
    }


def _bundle(packages: list[str]) -> dict[str, Any]:
    return {
        "id": "mcp:mcpb/w@1.4.2",
        "type": "mcp_server",
        "name": "weather",
        "version": "1.4.2",
        "endpoint": None,
        "tools": [],
        "bundle": {"server_type": "node"},
        "digest": {"algorithm": "sha256", "value": "ab" * 32},
        "packages": packages,
    }


@pytest.fixture
def with_packages() -> AgBOM:
    shared = "pkg:npm/%40acme/fs@1.4.1"
    return AgBOM.from_document(
        {
            "components": [
                _skill("s1", [shared, "pkg:pypi/requests@2.32.3", "pkg:pypi/unpinned", 7, "x"]),
                _skill("s2", [shared]),
                _bundle(["pkg:npm/left-pad@1.3.0", shared]),
            ]
        }
    )


def test_declared_packages_are_library_components_their_owner_depends_on(with_packages):
    doc = build_cyclonedx(with_packages)
    libraries = {c["purl"]: c for c in doc["components"] if c["type"] == "library"}
    # exact versions only; one component per purl, whoever declares it
    assert set(libraries) == {
        "pkg:npm/%40acme/fs@1.4.1",
        "pkg:pypi/requests@2.32.3",
        "pkg:npm/left-pad@1.3.0",
    }
    fs = libraries["pkg:npm/%40acme/fs@1.4.1"]
    assert (fs["group"], fs["name"], fs["version"]) == ("@acme", "fs", "1.4.1")
    deps = {d["ref"]: set(d["dependsOn"]) for d in doc["dependencies"]}
    ref = {purl: c["bom-ref"] for purl, c in libraries.items()}
    assert deps["s1"] == {ref["pkg:npm/%40acme/fs@1.4.1"], ref["pkg:pypi/requests@2.32.3"]}
    assert deps["s2"] == {ref["pkg:npm/%40acme/fs@1.4.1"]}
    # the bundle's package component contains its bundled dependencies
    (bundle,) = [c for c in doc["components"] if c.get("purl", "").startswith("pkg:generic/")]
    assert deps["mcp:mcpb/w@1.4.2"] == {bundle["bom-ref"]}
    assert deps[bundle["bom-ref"]] == {
        ref["pkg:npm/left-pad@1.3.0"],
        ref["pkg:npm/%40acme/fs@1.4.1"],
    }
    _valid(with_packages)


def test_declared_packages_in_spdx(with_packages):
    doc = build_spdx(with_packages, timestamp="2026-01-01T00:00:00Z")
    packages = {
        n["software_packageUrl"]: n for n in doc["@graph"] if "/package/" in n.get("spdxId", "")
    }
    assert set(packages) == {
        "pkg:npm/%40acme/fs@1.4.1",
        "pkg:pypi/requests@2.32.3",
        "pkg:npm/left-pad@1.3.0",
    }
    assert packages["pkg:npm/%40acme/fs@1.4.1"]["software_primaryPurpose"] == "library"
    s1 = _spdx_component(doc, "s1")["spdxId"]
    (depends,) = [
        n for n in doc["@graph"] if n.get("from") == s1 and n["relationshipType"] == "dependsOn"
    ]
    assert {packages["pkg:pypi/requests@2.32.3"]["spdxId"]} <= set(depends["to"])
    element = next(n for n in doc["@graph"] if n["type"] == "software_Sbom")["element"]
    assert all(p["spdxId"] in element for p in packages.values())


def test_the_package_limit_is_counted_not_silent(with_packages, monkeypatch):
    import agbom.export._identity as identity

    monkeypatch.setattr(identity, "MAX_DECLARED_PACKAGES", 1)
    doc = build_cyclonedx(with_packages)
    (s1,) = [c for c in doc["components"] if c["bom-ref"] == "s1"]
    assert {"name": "agbom:packages.omitted", "value": "1"} in s1["properties"]
    # a bundle's count goes on its package component, which holds the bundled packages
    (bundle,) = [c for c in doc["components"] if c.get("purl", "").startswith("pkg:generic/")]
    assert {"name": "agbom:packages.omitted", "value": "1"} in bundle["properties"]
    spdx = json.dumps(build_spdx(with_packages, timestamp="2026-01-01T00:00:00Z"))
    assert '"agbom:packages.omitted"' in spdx
