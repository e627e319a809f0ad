"""SPDX 3.0.1 export, checked with the official SPDX 3 Python bindings (spdx-python-model).

The bindings are generated from the SPDX 3.0.1 SHACL model, and reading a JSON-LD document
through them enforces its constraints: known classes only, no abstract class, no unknown
property, every value of its datatype and pattern (timestamps, semver), enumerations
(purposes, relationship types, hash algorithms), the class a reference must point to,
IRIs where an IRI is required, and (on writing back) every minimum and maximum count.
``spdx_check`` adds what the bindings leave to the caller: the context URL, that every
reference resolves inside the document, and that the document reads back unchanged (so
nothing was ignored).
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from export_samples import DIGEST, SAMPLES, every_type_document
from spdx_python_model import v3_0_1 as spdx3

from agbom.cli import main
from agbom.export import ExportError, get_exporter
from agbom.export.spdx import (
    PROFILE_EXTENSION,
    SPDX_CONTEXT,
    SpdxJsonExporter,
    build_spdx,
    creation_time,
)
from agbom.inventory import AgBOM

REPO = Path(__file__).resolve().parents[2]
EPOCH = "1700000000"  # 2023-11-14T22:13:20Z


class SpdxInvalid(Exception):
    """The document is not valid SPDX 3.0.1 JSON-LD."""


def _normal(value: Any) -> Any:
    """A form of a JSON-LD node that ignores key order, list order and blank-node names."""
    if isinstance(value, dict):
        return tuple(
            sorted(
                (k, _normal(v))
                for k, v in value.items()
                if not (k == "@id" and str(v).startswith("_:"))
            )
        )
    if isinstance(value, list):
        return tuple(sorted((_normal(v) for v in value), key=repr))
    if isinstance(value, str) and value.startswith("_:"):
        return "_:"
    if value == PROFILE_EXTENSION:
        # The bindings read the full IRI as the extension profile and write the short word
        # back (which the 3.0.1 context expands wrongly: see PROFILE_EXTENSION): same value.
        return "extension"
    return value


def spdx_check(doc: dict[str, Any]) -> spdx3.SHACLObjectSet:
    """Validate ``doc`` with spdx-python-model; raise :class:`SpdxInvalid` with the reason."""
    if doc.get("@context") not in spdx3.CONTEXT_URLS:
        raise SpdxInvalid(f"@context {doc.get('@context')!r} is not {spdx3.CONTEXT_URLS}")
    objects = spdx3.SHACLObjectSet()
    try:
        spdx3.JSONLDDeserializer().deserialize_data(copy.deepcopy(doc), objects)
        missing = objects.link()
        if missing:
            raise SpdxInvalid(f"references to elements not in the document: {sorted(missing)}")
        written = spdx3.JSONLDSerializer().serialize_data(objects)  # checks the counts
    except (ValueError, TypeError, KeyError, NotImplementedError) as exc:
        raise SpdxInvalid(f"{type(exc).__name__}: {exc}") from exc
    if sorted(map(_normal, doc["@graph"]), key=repr) != sorted(
        map(_normal, written["@graph"]), key=repr
    ):
        raise SpdxInvalid("the document does not read back as written")
    return objects


def _export(agbom: AgBOM, timestamp: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SpdxJsonExporter(timestamp=timestamp).export(agbom))
    return doc


def _by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["spdxId"]: node for node in doc["@graph"] if "spdxId" in node}


def _component(doc: dict[str, Any], component_id: str) -> dict[str, Any]:
    from urllib.parse import quote

    suffix = "/component/" + quote(component_id, safe="")
    (node,) = [n for n in doc["@graph"] if n.get("spdxId", "").endswith(suffix)]
    return node


def _relations(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    nodes = _by_id(doc)
    out: set[tuple[str, str, str]] = set()
    for node in doc["@graph"]:
        if node["type"] in ("Relationship", "LifecycleScopedRelationship"):
            source = nodes[node["from"]]["name"]
            out.update((source, node["relationshipType"], nodes[t]["name"]) for t in node["to"])
    return out


def _props(node: dict[str, Any]) -> list[tuple[str, str]]:
    (extension,) = node["extension"]
    assert extension["type"] == "extension_CdxPropertiesExtension"
    return [
        (p["extension_cdxPropName"], p["extension_cdxPropValue"])
        for p in extension["extension_cdxProperty"]
    ]


@pytest.fixture
def source_date_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


# -- the validator can fail -----------------------------------------------------------------


def _first(doc: dict[str, Any], cls: str) -> dict[str, Any]:
    return next(n for n in doc["@graph"] if n["type"] == cls and "/component/" in n["spdxId"])


BREAKAGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "Service is not a 3.0.1 class": lambda d: _first(d, "software_Package").update(type="Service"),
    "abstract class": lambda d: _first(d, "software_Package").update(type="Artifact"),
    "unknown purpose": lambda d: _first(d, "software_Package").update(
        software_primaryPurpose="service"
    ),
    "unknown property": lambda d: _first(d, "software_Package").update(software_endpoint="x"),
    "missing creationInfo": lambda d: _first(d, "software_Package").pop("creationInfo"),
    "dataset without datasetType": lambda d: _first(d, "dataset_DatasetPackage").pop(
        "dataset_datasetType"
    ),
    "fractional seconds": lambda d: d["@graph"][0].update(created="2025-01-01T00:00:00.5Z"),
    "no creator": lambda d: d["@graph"][0].pop("createdBy"),
    "spec version not semver": lambda d: d["@graph"][0].update(specVersion="3.0"),
    "unknown relationship type": lambda d: next(
        n for n in d["@graph"] if n["type"] == "LifecycleScopedRelationship"
    ).update(relationshipType="uses"),
    "dangling relationship target": lambda d: next(
        n for n in d["@graph"] if n["type"] == "LifecycleScopedRelationship"
    )["to"].append("https://agbom.dev/spdx/nowhere"),
    "supplier is not an agent": lambda d: _first(d, "ai_AIPackage").update(
        suppliedBy=_first(d, "software_Package")["spdxId"]
    ),
    "hash without value": lambda d: next(n for n in d["@graph"] if n.get("verifiedUsing"))[
        "verifiedUsing"
    ][0].pop("hashValue"),
    "blank node as element id": lambda d: _first(d, "software_Package").update(spdxId="_:x"),
    "SPDX 3.0.0 context": lambda d: d.update(
        {"@context": "https://spdx.org/rdf/3.0.0/spdx-context.jsonld"}
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_validator_rejects_a_broken_document(every_type, source_date_epoch, breakage):
    doc = _export(every_type)
    spdx_check(doc)  # the unbroken document passes ...
    BREAKAGES[breakage](doc)
    with pytest.raises(SpdxInvalid):  # ... and each single breakage is caught
        spdx_check(doc)


# -- what is exported validates -------------------------------------------------------------


def test_scan_of_the_samples_validates(tmp_path):
    target = tmp_path / "scan.spdx.json"
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    cmd = [sys.executable, "-m", "agbom", "scan", "samples/", "-f", "spdx-json", "-o", str(target)]
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    first = target.read_bytes()
    objects = spdx_check(json.loads(first))
    packages = list(objects.foreach_type(spdx3.software_Package))
    # the agent plus one package per component (models and datasets are packages too)
    components = [p for p in packages if "/component/" in p._id]
    declared = [p for p in packages if "/package/" in p._id]  # skills' pins, bundled files
    assert len(components) > 40 and len(packages) == len(components) + len(declared) + 1
    purls = {p.software_packageUrl for p in components if p.software_packageUrl}
    assert "pkg:npm/%40modelcontextprotocol/server-filesystem@2025.8.21" in purls
    assert "pkg:pypi/mcp-server-git@2025.7.1" in purls
    assert len(list(objects.foreach_type(spdx3.ai_AIPackage))) >= 1
    assert len(list(objects.foreach_type(spdx3.dataset_DatasetPackage))) >= 2
    (info,) = objects.foreach_type(spdx3.CreationInfo)
    assert info.created.isoformat() == "2023-11-14T22:13:20+00:00"
    rerun = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, timeout=300)
    assert rerun.returncode == 0 and target.read_bytes() == first


@pytest.mark.parametrize("name", sorted(p.name for p in (SAMPLES / "agboms").glob("*.json")))
def test_sample_agboms_export_and_validate(capsys, source_date_epoch, name):
    code = main(["export", str(SAMPLES / "agboms" / name), "--format", "spdx-json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    doc = json.loads(out)
    spdx_check(doc)
    agbom = AgBOM.from_document(json.loads((SAMPLES / "agboms" / name).read_text()))
    agent = _by_id(doc)[doc["@graph"][4]["rootElement"][0]]
    depends = next(
        n
        for n in doc["@graph"]
        if n.get("from") == agent["spdxId"] and n.get("relationshipType") == "dependsOn"
    )
    assert len(depends["to"]) == len(agbom)  # ACS: the agent DEPENDS_ON every component


def test_every_type_validates(every_type):
    spdx_check(_export(every_type, timestamp="2025-01-01T00:00:00Z"))


def test_empty_agbom_validates(empty, source_date_epoch):
    doc = _export(empty)
    spdx_check(doc)
    assert [n["type"] for n in doc["@graph"]] == [
        "CreationInfo",
        "SoftwareAgent",
        "Tool",
        "SpdxDocument",
        "software_Sbom",
        "software_Package",
    ]


# -- the mapping ----------------------------------------------------------------------------


def test_classes_and_purposes(every_type, source_date_epoch):
    doc = _export(every_type)
    seen = {
        cid: (_component(doc, cid)["type"], _component(doc, cid)["software_primaryPurpose"])
        for cid in (c.id for c in every_type)
    }
    assert seen == {
        "model-1": ("ai_AIPackage", "model"),
        "tool-1": ("software_Package", "application"),
        "mcp-1": ("software_Package", "application"),
        "peer-1": ("software_Package", "other"),
        "kb-1": ("dataset_DatasetPackage", "data"),
        "mem-1": ("dataset_DatasetPackage", "data"),
        "cap-1": ("software_Package", "other"),
        "skill-1": ("software_Package", "module"),
        "skill-2": ("software_Package", "module"),
    }
    for cid in ("mcp-1", "peer-1"):
        assert "has no Service class" in _component(doc, cid)["comment"]
    assert dict(_props(_component(doc, "kb-1")))["acs:type"] == "knowledge_source"


def test_relationships_follow_the_acs_mapping(every_type, source_date_epoch):
    doc = _export(every_type)
    relations = _relations(doc)
    agent = "Every Type Agent"
    assert {(agent, "dependsOn", c.name) for c in every_type} <= relations
    assert {
        ("code", "usesTool", "read_file"),
        ("code", "usesTool", "filesystem"),
        ("code", "usesTool", "flights"),
        ("filesystem", "contains", "read_file"),
        ("review", "usesTool", "read_file"),
        ("review", "dependsOn", "claude"),
        ("review", "dependsOn", "lint"),
    } <= relations
    runtime = [n for n in doc["@graph"] if n["type"] == "LifecycleScopedRelationship"]
    assert runtime and all(n["scope"] == "runtime" for n in runtime)


def test_purl_digest_endpoint_and_supplier(every_type, source_date_epoch):
    doc = _export(every_type)
    mcp = _component(doc, "mcp-1")
    purl = "pkg:npm/%40scope/server-fs@1.0.0"
    assert mcp["software_packageUrl"] == purl
    assert mcp["externalIdentifier"] == [
        {"type": "ExternalIdentifier", "externalIdentifierType": "packageUrl", "identifier": purl}
    ]
    assert mcp["software_packageVersion"] == "1.0.0"
    skill = _component(doc, "skill-1")
    (digest,) = skill["verifiedUsing"]
    assert (digest["algorithm"], digest["hashValue"]) == ("sha256", DIGEST)  # lower-cased
    assert skill["software_downloadLocation"] == "https://skills.example.com/review/SKILL.md"
    # sha512 with a 40-hex value cannot be an SPDX Hash: kept as a property, not dropped
    lint = _component(doc, "skill-2")
    assert "verifiedUsing" not in lint
    assert ("acs:definition.digest", "sha512:" + "ab" * 20) in _props(lint)
    model = _component(doc, "model-1")
    assert _by_id(doc)[model["suppliedBy"]] == {
        "type": "Organization",
        "spdxId": model["suppliedBy"],
        "creationInfo": "_:creationinfo",
        "name": "anthropic",
    }
    peer = _component(doc, "peer-1")
    assert [r["locator"] for r in peer["externalRef"]] == [
        ["https://peer.example.com/.well-known/agent-card.json"],
        ["https://peer.example.com/a2a?token=REDACTED"],
    ]


def test_skill_license_version_and_nested_data(source_date_epoch):
    document = every_type_document()
    skill = document["components"][-1]
    skill.update(license="mit or apache-2.0", metadata={"version": "1.2", "author": "me"})
    document["components"][-2]["license"] = "Proprietary, see LICENSE.txt"
    doc = _export(AgBOM.from_document(document))
    spdx_check(doc)
    lint = _component(doc, "skill-2")
    assert lint["software_packageVersion"] == "1.2"
    (declared,) = [n for n in doc["@graph"] if n.get("relationshipType") == "hasDeclaredLicense"]
    assert declared["from"] == lint["spdxId"]
    assert _by_id(doc)[declared["to"][0]]["simplelicensing_licenseExpression"] == (
        "MIT OR Apache-2.0"
    )
    # not an SPDX expression: kept as text, never passed off as one
    assert ("agbom:license", "Proprietary, see LICENSE.txt") in _props(_component(doc, "skill-1"))
    assert "simpleLicensing" in doc["@graph"][3]["profileConformance"]


def test_no_secret_is_exported(every_type, source_date_epoch):
    body = get_exporter("spdx-json").export(every_type)
    for secret in (
        b"SECRET-MODEL-KEY",
        b"SECRET-CLI-KEY",
        b"SECRET_ENV_VALUE",
        b"SECRET-PASSWORD",
        b"SECRET-QUERY",
    ):
        assert secret not in body
    mcp = dict(_props(_component(json.loads(body), "mcp-1")))
    assert mcp["agbom:env.key"] == "GITHUB_TOKEN"


def test_ids_stay_distinct_for_ids_that_look_alike(source_date_epoch):
    names = ["a b", "a%20b", "a/b", "a%2Fb", "agent", "@agent2", "ü", "%C3%BC"]
    agbom = AgBOM.from_document(
        {
            "components": [
                {
                    "id": n,
                    "type": "tool",
                    "name": n,
                    "version": None,
                    "provider": "p",
                    "capability": "c",
                }
                for n in names
            ]
        }
    )
    doc = _export(agbom)
    spdx_check(doc)
    ids = [n["spdxId"] for n in doc["@graph"] if "spdxId" in n]
    assert len(ids) == len(set(ids))
    assert len({_component(doc, n)["spdxId"] for n in names}) == len(names)


# -- reproducibility ------------------------------------------------------------------------


def test_same_inventory_same_bytes_in_any_order(source_date_epoch):
    document = every_type_document()
    first = get_exporter("spdx-json").export(AgBOM.from_document(document))
    shuffled = copy.deepcopy(document)
    random.Random(7).shuffle(shuffled["components"])
    shuffled = dict(reversed(list(shuffled.items())))  # header keys in another order too
    assert get_exporter("spdx-json").export(AgBOM.from_document(shuffled)) == first


def test_ids_change_with_the_inventory(source_date_epoch):
    document = every_type_document()
    before = _export(AgBOM.from_document(document))
    document["components"][0]["version"] = "5"
    after = _export(AgBOM.from_document(document))
    assert _component(before, "model-1")["spdxId"] != _component(after, "model-1")["spdxId"]


def test_creation_time_precedence(every_type, empty):
    env = {"SOURCE_DATE_EPOCH": EPOCH}
    assert creation_time(empty, None, env) == "2023-11-14T22:13:20Z"
    # the header's generated_at (+02:00) describes the inventory and wins over the env
    assert creation_time(every_type, None, env) == "2025-03-04T03:06:07Z"
    assert creation_time(every_type, "2024-02-03T04:05:06.789+01:00", env) == (
        "2024-02-03T03:05:06Z"
    )
    for bad in ("yesterday", "-5", "1e9", "9" * 20):
        with pytest.raises(ExportError, match="SOURCE_DATE_EPOCH"):
            creation_time(empty, None, {"SOURCE_DATE_EPOCH": bad})
    with pytest.raises(ExportError, match="timestamp"):
        creation_time(empty, "2024-02-03T04:05:06", env)  # no timezone
    clock = creation_time(empty, None, {})
    assert len(clock) == 20 and clock.endswith("Z")


def test_bad_source_date_epoch_is_one_line_without_traceback(tmp_path):
    env = {**os.environ, "SOURCE_DATE_EPOCH": "next tuesday"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "agbom",
            "export",
            "samples/agboms/multi-agent.json",
            "-f",
            "spdx-json",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=120,
    )
    err = run.stderr.decode()
    assert run.returncode == 1 and run.stdout == b""
    assert err.count("\n") == 1 and "SOURCE_DATE_EPOCH" in err and "Traceback" not in err


def test_registry_and_scan_format_choice(capsys):
    exporter = get_exporter("SPDX-JSON")
    assert (exporter.name, exporter.media_type) == ("spdx-json@3.0.1", "application/spdx+json")
    assert (
        build_spdx(AgBOM.from_document({"components": []}), timestamp="2025-01-01T00:00:00Z")[
            "@context"
        ]
        == SPDX_CONTEXT
    )
    code = main(["scan", "--help"])
    out, _ = capsys.readouterr()
    assert code == 0 and "spdx-json" in out
