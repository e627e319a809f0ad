"""CycloneDX export: mapping, schema validity (checked by cyclonedx-python-lib), determinism."""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
import uuid

import pytest
from cyclonedx.schema import OutputFormat, SchemaVersion
from cyclonedx.validation import make_schemabased_validator
from cyclonedx.validation.json import JsonStrictValidator
from export_samples import DIGEST, every_type_document
from lxml import etree

from agbom.export import (
    FORMATS,
    SPEC_VERSIONS,
    CycloneDxJsonExporter,
    ExportError,
    build_cyclonedx,
    export,
    get_exporter,
)
from agbom.export.cyclonedx import AGENT_BOM_REF, SERIAL_NAMESPACE
from agbom.inventory import ROOT_ID, AgBOM, ComponentGraph, ComponentType

_SV = {"1.6": SchemaVersion.V1_6, "1.7": SchemaVersion.V1_7}
SAMPLE_NAMES = ["coding-agent.json", "multi-agent.json", "composed-skills.json"]


def _library_validate(fmt: str, spec_version: str, text: str) -> None:
    sv = _SV[spec_version]
    if fmt == "json":
        errors = [
            make_schemabased_validator(OutputFormat.JSON, sv).validate_str(text),
            JsonStrictValidator(sv).validate_str(text),
        ]
    else:
        errors = [make_schemabased_validator(OutputFormat.XML, sv).validate_str(text)]
    assert errors == [None] * len(errors), errors


def _agboms(asset) -> dict[str, AgBOM]:
    found = {name: AgBOM.from_document(asset(f"agboms/{name}")) for name in SAMPLE_NAMES}
    found["every-type"] = AgBOM.from_document(every_type_document())
    found["empty"] = AgBOM.from_document({"components": []})
    return found


def _by_ref(doc: dict) -> dict[str, dict]:
    entries = [*doc.get("components", []), *doc.get("services", [])]
    return {e["bom-ref"]: e for e in entries}


def _props(entry: dict) -> list[tuple[str, str]]:
    return [(p["name"], p["value"]) for p in entry.get("properties", [])]


@pytest.mark.parametrize("spec_version", SPEC_VERSIONS)
@pytest.mark.parametrize("fmt", ["json", "xml"])
def test_every_output_validates_with_the_library(asset, spec_version, fmt):
    for name, agbom in _agboms(asset).items():
        data = export(agbom, f"cyclonedx-{fmt}", spec_version)
        text = data.decode("utf-8")
        try:
            _library_validate(fmt, spec_version, text)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc


EXPECTED_PLACE = {
    ComponentType.MODEL: ("components", "machine-learning-model"),
    ComponentType.TOOL: ("components", "application"),
    ComponentType.AGENT_CAPABILITY: ("components", "application"),
    ComponentType.SKILL: ("components", "application"),
    ComponentType.MCP_SERVER: ("services", None),
    ComponentType.A2A_PEER: ("services", None),
    ComponentType.KNOWLEDGE_SOURCE: ("services", None),
    ComponentType.MEMORY_STORE: ("services", None),
}


def test_expected_place_covers_every_type():
    assert set(EXPECTED_PLACE) == set(ComponentType)


@pytest.mark.parametrize("ctype", list(ComponentType))
def test_every_component_type_maps(every_type, ctype):
    doc = build_cyclonedx(every_type)
    section, cdx_type = EXPECTED_PLACE[ctype]
    component = every_type.of_type(ctype)[0]
    matches = [e for e in doc.get(section, []) if e["bom-ref"] == component.id]
    assert len(matches) == 1
    entry = matches[0]
    assert entry.get("type") == cdx_type
    assert ("acs:type", ctype.value) in _props(entry)
    assert entry["name"] == component.name


def test_field_mapping_details(every_type):
    refs = _by_ref(build_cyclonedx(every_type, "1.7"))
    model = refs["model-1"]
    assert model["supplier"] == {"name": "anthropic"}
    assert model["purl"] == "pkg:huggingface/org/model@1"
    assert ("acs:context_window", "200000") in _props(model)
    assert ("acs:endpoint", "https://api.anthropic.com/v1") in _props(model)

    tool = refs["tool-1"]
    assert "version" not in tool  # null means unknown: omitted, not "None"
    assert [v for n, v in _props(tool) if n == "acs:capability"] == ["fs.read", "fs.list"]

    skill = refs["skill-1"]
    assert skill["hashes"] == [{"alg": "SHA-256", "content": DIGEST}]
    assert skill["externalReferences"][0]["url"] == "https://skills.example.com/review/SKILL.md"
    assert ("acs:declared_capability", "fs.read") in _props(skill)
    assert ("acs:registration_provenance.origin", "system") in _props(skill)
    # A digest CycloneDX cannot carry (wrong length for SHA-512) is kept as a property.
    skill2 = refs["skill-2"]
    assert "hashes" not in skill2
    assert ("acs:definition.digest", "sha512:" + "ab" * 20) in _props(skill2)
    assert ("acs:definition.ref", "skills/lint/SKILL.md") in _props(skill2)

    mcp = refs["mcp-1"]
    assert "endpoints" not in mcp  # stdio server: no network endpoint
    assert ("agbom:transport", "stdio") in _props(mcp)
    assert [v for n, v in _props(mcp) if n == "agbom:found_in"] == [
        "/home/u/.mcp.json",
        "/home/u/project/.mcp.json",
    ]
    # Services have no purl field: the package the server runs from is a component of its own.
    assert not any(n == "agbom:purl" for n, _ in _props(mcp))
    package = refs["package:pkg:npm/@scope/server-fs@1.0.0"]
    assert package["purl"] == "pkg:npm/%40scope/server-fs@1.0.0"
    assert (package["type"], package["group"], package["name"], package["version"]) == (
        "application",
        "@scope",
        "server-fs",
        "1.0.0",
    )

    peer = refs["peer-1"]
    assert peer["endpoints"] == ["https://peer.example.com/a2a?token=REDACTED"]
    assert peer["externalReferences"][0]["type"] == "other"
    assert ("acs:protocol_version", "0.2.5") in _props(peer)

    assert refs["kb-1"]["endpoints"] == ["https://vectors.example.com/c/docs"]
    assert ("acs:scope", "session") in _props(refs["mem-1"])
    assert ("acs:window_size", "20") in _props(refs["mem-1"])


def test_agent_metadata_and_tools(every_type):
    doc = build_cyclonedx(every_type)
    meta = doc["metadata"]
    assert meta["component"]["bom-ref"] == AGENT_BOM_REF == ROOT_ID
    assert meta["component"]["name"] == "Every Type Agent"
    assert meta["component"]["version"] == "1.2.3"
    assert [t["name"] for t in meta["tools"]["components"]] == ["agbom"]
    assert ("acs:agbom_hash", every_type.agbom_hash) in _props(meta)
    assert meta["timestamp"] == "2025-03-04T03:06:07Z"  # generated_at, normalized to UTC


def test_timestamp_explicit_then_generated_at_then_source_date_epoch_then_now(
    asset, every_type, monkeypatch
):
    agbom = AgBOM.from_document(asset("agboms/multi-agent.json"))  # no generated_at
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    now = dt.datetime.fromisoformat(build_cyclonedx(agbom)["metadata"]["timestamp"])
    assert before <= now <= dt.datetime.now(dt.UTC)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert build_cyclonedx(agbom)["metadata"]["timestamp"] == "2023-11-14T22:13:20Z"
    # The AgBOM's own generated_at wins over the environment; an explicit time over both.
    assert build_cyclonedx(every_type)["metadata"]["timestamp"] == "2025-03-04T03:06:07Z"
    stamped = build_cyclonedx(every_type, timestamp="2024-01-01T01:00:00+01:00")
    assert stamped["metadata"]["timestamp"] == "2024-01-01T00:00:00Z"
    with pytest.raises(ExportError, match="timezone"):
        build_cyclonedx(agbom, timestamp="2024-01-01T00:00:00")
    with pytest.raises(ExportError, match="timezone"):
        CycloneDxJsonExporter(timestamp="yesterday")  # refused before any export
    for bad in ("-1", "1.5", "soon", "99999999999999", "١٢٣"):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", bad)
        with pytest.raises(ExportError, match="SOURCE_DATE_EPOCH"):
            build_cyclonedx(agbom)


def test_serial_number_is_derived_from_the_agbom_hash(every_type, empty):
    doc = build_cyclonedx(every_type)
    expected = uuid.uuid5(SERIAL_NAMESPACE, every_type.agbom_hash)
    assert doc["serialNumber"] == f"urn:uuid:{expected}"
    assert build_cyclonedx(empty)["serialNumber"] != doc["serialNumber"]


def test_dependencies_are_complete_and_match_the_graph(asset):
    for agbom in _agboms(asset).values():
        doc = build_cyclonedx(agbom)
        assert all("dependsOn" in d for d in doc["dependencies"])  # [] on leaves (cdxgen)
        deps = {d["ref"]: set(d["dependsOn"]) for d in doc["dependencies"]}
        assert len(deps) == len(doc["dependencies"])  # each ref once
        assert set(deps) == {*_by_ref(doc), AGENT_BOM_REF}
        graph = ComponentGraph(agbom)
        edges = {(s, t) for s, t, _ in graph.edges()}
        packages = {e["bom-ref"] for e in doc.get("components", []) if _is_package(e)}
        package_edges = {(s, t) for s, targets in deps.items() for t in targets if t in packages}
        assert {(s, t) for s, targets in deps.items() for t in targets} - package_edges == edges
        # Each package edge starts at a service that carries that package's purl.
        for service_id, package_ref in package_edges:
            assert agbom.get(service_id).get("purl") == _by_ref(doc)[package_ref]["purl"]


def _is_package(entry: dict) -> bool:
    return ("agbom:role", "package") in _props(entry)


@pytest.mark.parametrize("fmt", ["cyclonedx-json", "cyclonedx-xml"])
def test_reproducible_and_order_independent(fmt):
    document = every_type_document()
    first = export(AgBOM.from_document(document), fmt)
    assert export(AgBOM.from_document(document), fmt) == first
    shuffled = copy.deepcopy(document)
    random.Random(3).shuffle(shuffled["components"])
    shuffled["components"][0] = dict(reversed(list(shuffled["components"][0].items())))
    assert export(AgBOM.from_document(shuffled), fmt) == first


@pytest.mark.parametrize("fmt", ["cyclonedx-json", "cyclonedx-xml"])
def test_secrets_never_exported(every_type, fmt):
    data = export(every_type, fmt)
    for secret in (
        b"sk-ant-SECRET-MODEL-KEY",
        b"SECRET-CLI-KEY",
        b"ghp_SECRET_ENV_VALUE",
        b"SECRET-PASSWORD",
        b"SECRET-QUERY",
    ):
        assert secret not in data
    assert b"GITHUB_TOKEN" in data  # the key name is reported, its value is not


def test_invalid_purl_and_endpoint_become_properties():
    doc = every_type_document()
    doc["components"][0]["purl"] = "not a purl"
    doc["components"][4]["endpoint"] = "vector db on host 3"  # spaces: not an IRI
    refs = _by_ref(build_cyclonedx(AgBOM.from_document(doc)))
    assert "purl" not in refs["model-1"]
    assert ("agbom:purl", "not a purl") in _props(refs["model-1"])
    assert "endpoints" not in refs["kb-1"]
    assert ("acs:endpoint", "vector db on host 3") in _props(refs["kb-1"])
    _library_validate("json", "1.6", json.dumps(build_cyclonedx(AgBOM.from_document(doc))))


def test_hostile_strings_still_give_valid_xml_and_json():
    doc = every_type_document()
    doc["agent"]["name"] = 'a<b>&"c\x01\x1f\u2028'
    doc["components"][1]["name"] = "tool\x00with\x0bcontrol\ufffe"
    doc["components"][1]["note"] = {"nested": ["x", {"deep": True}], "password": "hunter2"}
    agbom = AgBOM.from_document(doc)
    for sv in SPEC_VERSIONS:
        _library_validate("xml", sv, export(agbom, "cyclonedx-xml", sv).decode())
        _library_validate("json", sv, export(agbom, "cyclonedx-json", sv).decode())
    assert b"hunter2" not in export(agbom, "cyclonedx-json")


def test_xml_and_json_carry_the_same_refs(every_type):
    doc = build_cyclonedx(every_type, "1.7")
    root = etree.fromstring(export(every_type, "cyclonedx-xml", "1.7"))
    ns = {"c": "http://cyclonedx.org/schema/bom/1.7"}
    query = "/c:bom/c:components/c:component | /c:bom/c:services/c:service"
    entries = root.xpath(query, namespaces=ns)
    xml_refs = {e.get("bom-ref") for e in entries}
    assert xml_refs == set(_by_ref(doc))
    assert root.get("serialNumber") == doc["serialNumber"]


def test_registry_names_versions_and_errors(every_type):
    assert FORMATS == ("cyclonedx-json", "cyclonedx-xml", "agbom-json", "spdx-json")
    assert get_exporter("cyclonedx-json@1.7").name == "cyclonedx-json@1.7"
    assert get_exporter("cyclonedx-xml", spec_version="1.7").name == "cyclonedx-xml@1.7"
    assert get_exporter("cyclonedx-json").name == "cyclonedx-json@1.6"
    assert "json" in get_exporter("cyclonedx-json").media_type
    with pytest.raises(ExportError, match=r"unknown export format 'spdx'.*cyclonedx-json@1\.6"):
        get_exporter("spdx")
    with pytest.raises(ExportError, match="no version '1.5'"):
        get_exporter("cyclonedx-json@1.5")
    with pytest.raises(ExportError, match="names version 1.7"):
        get_exporter("cyclonedx-json@1.7", spec_version="1.6")
    with pytest.raises(ExportError, match="unsupported CycloneDX spec version"):
        CycloneDxJsonExporter("2.0")
    canonical = json.loads(export(every_type, "agbom-json"))
    assert canonical["agbom_hash"] == every_type.agbom_hash
    assert AgBOM.from_document(canonical) == every_type
