"""The AgBOM model: every type, every located error, extra fields, agbom_hash, schemas."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys
from importlib import resources
from typing import Any

import fastjsonschema
import jsonschema
import pytest
from inventory_samples import FULL, HEX_A, MINIMAL, SKILL2, full_document, minimal_document
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from agbom._schema import SCHEMA_BASE, compiled_validator, load_schema
from agbom.inventory import (
    ROOT_ID,
    AgBOM,
    Component,
    ComponentType,
    InvalidAgBOM,
    normalize_algorithm,
    parse_component,
)
from agbom.inventory import model as model_module

TYPES = [t.value for t in ComponentType]


def doc(*components: dict[str, Any], **header: Any) -> dict[str, Any]:
    return {**header, "components": [copy.deepcopy(c) for c in components]}


# -- every type, minimal and full ----------------------------------------------------------------


@pytest.mark.parametrize("ctype", TYPES)
def test_minimal_component_of_every_type_is_valid(ctype: str) -> None:
    component = parse_component(copy.deepcopy(MINIMAL[ctype]))
    assert component.type is ComponentType(ctype)
    assert component.id == MINIMAL[ctype]["id"]
    assert dict(component.data) == MINIMAL[ctype]


def test_minimal_document_with_all_types() -> None:
    agbom = AgBOM.from_document(minimal_document())
    assert {c.type.value for c in agbom} == set(TYPES)
    assert len(agbom) == 8


@pytest.mark.parametrize("ctype", TYPES)
def test_full_component_of_every_type_keeps_every_field(ctype: str) -> None:
    agbom = AgBOM.from_document(full_document())
    component = agbom.get(FULL[ctype]["id"])
    assert component is not None
    assert component.type is ComponentType(ctype)
    assert dict(component.data) == FULL[ctype]
    assert component.get("registration_provenance") == FULL[ctype]["registration_provenance"]


def test_references_of_the_full_skill() -> None:
    skill = AgBOM.from_document(full_document()).get("sk1")
    assert skill is not None
    assert sorted((f, t) for f, t, _ in skill.references()) == [
        ("a2a_peers", "peer1"),
        ("composed_skills", "sk2"),
        ("mcp_servers", "srv1"),
        ("models", "m1"),
        ("tools", "t1"),
    ]


def test_null_means_unknown_on_nullable_required_fields() -> None:
    model = {**MINIMAL["model"], "version": None, "provider": None, "endpoint": None}
    model["context_window"] = None
    server = {**MINIMAL["mcp_server"], "version": None, "endpoint": None}
    tool = {**MINIMAL["tool"], "version": None, "provider": None, "capability": None}
    agbom = AgBOM.from_document(doc(model, server, tool))
    assert agbom.get("m1").version is None  # type: ignore[union-attr]
    assert agbom.get("m1").get("context_window", "absent") is None  # type: ignore[union-attr]


def test_component_accessors() -> None:
    agbom = AgBOM.from_document(full_document())
    peer = agbom.get("peer1")
    assert peer is not None and peer.name == "billing-agent"
    bare_peer = parse_component(MINIMAL["a2a_peer"])
    assert bare_peer.name == "peer1"  # a2a_peer has no required name: falls back to the id
    assert agbom.get("t1").version == "1.0"  # type: ignore[union-attr]
    assert agbom.get("sk1").digest == ("sha256", HEX_A)  # type: ignore[union-attr]
    assert agbom.get("t1").digest is None  # type: ignore[union-attr]
    assert [c.id for c in agbom.of_type(ComponentType.SKILL)] == ["sk1", "sk2"]
    assert agbom.agent_id == "agent-1"
    assert "sk1" in agbom and "nope" not in agbom
    assert AgBOM.from_document({"components": []}).agent_id == "agent"


def test_digest_algorithm_and_value_are_normalized() -> None:
    skill = copy.deepcopy(MINIMAL["skill"])
    skill["definition"]["digest"] = {"algorithm": "SHA-256", "value": HEX_A.upper()}
    assert parse_component(skill).digest == ("sha256", HEX_A)
    assert normalize_algorithm(" Sha_256 ") == "sha256"


# -- extra fields are kept -----------------------------------------------------------------------


def test_unknown_extra_fields_are_kept_on_components_and_header() -> None:
    server = {
        **MINIMAL["mcp_server"],
        "purl": "pkg:npm/%40acme/files@1.2.0",
        "transport": "stdio",
        "command": "npx",
        "found_in": {"path": "mcp.json", "reader": "mcp-client-config"},
        "disabled": False,
    }
    document = doc(server, x_vendor={"team": "platform"}, agent={"id": "a", "tier": 2})
    out = AgBOM.from_document(document).to_document()
    assert out == document
    assert out["components"][0]["found_in"] == {"path": "mcp.json", "reader": "mcp-client-config"}


def test_to_document_sorts_components_by_id_and_is_a_copy() -> None:
    agbom = AgBOM.from_document(full_document())
    out = agbom.to_document()
    assert [c["id"] for c in out["components"]] == sorted(c["id"] for c in out["components"])
    out["components"][0]["name"] = "mutated"
    out["agent"]["id"] = "mutated"
    assert agbom.to_document() != out


def test_incoming_agbom_hash_is_ignored_and_exported_on_request() -> None:
    document = full_document()
    plain = AgBOM.from_document(document)
    stale = AgBOM.from_document({**document, "agbom_hash": "sha256:" + "0" * 64})
    assert stale == plain
    exported = plain.to_document(with_hash=True)
    assert exported["agbom_hash"] == plain.agbom_hash
    assert "agbom_hash" not in plain.to_document()
    assert AgBOM.from_document(exported).agbom_hash == plain.agbom_hash


# -- snapshot payload ----------------------------------------------------------------------------


def test_snapshot_payload_in_both_forms() -> None:
    document = full_document()
    wrapped = AgBOM.from_payload({"agbom": document, "trigger_step_id": "s-1"})
    bare = AgBOM.from_payload(document)
    assert wrapped == bare == AgBOM.from_document(document)
    assert wrapped.to_document() == bare.to_document()


def test_snapshot_payload_error_is_attributed_to_the_payload() -> None:
    with pytest.raises(InvalidAgBOM, match=r"^agbom/snapshot payload is not a valid AgBOM: "):
        AgBOM.from_payload({"agbom": {"components": "nope"}})


# -- located errors ------------------------------------------------------------------------------


def bad(ctype: str, **changes: Any) -> dict[str, Any]:
    component = copy.deepcopy(MINIMAL[ctype])
    for key, value in changes.items():
        if value is _DROP:
            del component[key]
        else:
            component[key] = value
    return component


_DROP = object()

ERROR_CASES = [
    pytest.param(
        [1, 2],
        "document: must be an object, not list",
        id="document-not-object",
    ),
    pytest.param(
        {"agent": {}},
        "components: required, and must be an array of components",
        id="components-missing",
    ),
    pytest.param(
        {"components": {"m1": {}}},
        "components: required, and must be an array of components",
        id="components-not-array",
    ),
    pytest.param(
        doc("m1"),
        "components[0]: must be an object, not str",
        id="component-not-object",
    ),
    pytest.param(
        doc({"id": "w1", "type": "widget"}),
        "components[0] (id 'w1'): unknown component type 'widget' (known: model, mcp_server, "
        "a2a_peer, tool, knowledge_source, memory_store, agent_capability, skill)",
        id="unknown-type",
    ),
    pytest.param(
        doc({"id": "w1", "type": ["model"]}),
        "components[0] (id 'w1'): unknown component type ['model']",
        id="unhashable-type",
    ),
    pytest.param(
        doc({"id": "w1"}),
        "components[0] (id 'w1'): unknown component type None",
        id="type-missing",
    ),
    pytest.param(
        doc(bad("model", context_window=_DROP)),
        "components[0] (id 'm1'): missing required field: context_window",
        id="missing-one-required",
    ),
    pytest.param(
        doc({"id": "t9", "type": "tool"}),
        "components[0] (id 't9'): missing required fields: name, version, provider, capability",
        id="missing-many-required",
    ),
    pytest.param(
        doc(bad("skill", id=_DROP)),
        "components[0]: missing required field: id",
        id="missing-id",
    ),
    pytest.param(
        doc(bad("tool", id="")),
        "components[0]: field 'id' must be longer than or equal to 1 characters",
        id="empty-id",
    ),
    pytest.param(
        doc(bad("model", context_window="big")),
        "components[0] (id 'm1'): field 'context_window' must be integer or null",
        id="wrong-field-type",
    ),
    pytest.param(
        doc(bad("model", context_window=-1)),
        "components[0] (id 'm1'): field 'context_window' must be bigger than or equal to 0",
        id="negative-context-window",
    ),
    pytest.param(
        doc(bad("knowledge_source", source_type="spreadsheet")),
        "components[0] (id 'ks1'): field 'source_type' must be one of "
        "['vector_db', 'search_index', 'knowledge_base', 'web_search', 'other']",
        id="bad-enum",
    ),
    pytest.param(
        doc(bad("memory_store", scope="planet")),
        "components[0] (id 'mem1'): field 'scope' must be one of",
        id="bad-scope",
    ),
    pytest.param(
        doc(bad("skill", definition={"ref": "x", "digest": {"algorithm": "sha", "value": "zz"}})),
        "components[0] (id 'sk1'): field 'definition.digest.value' must match pattern",
        id="bad-digest",
    ),
    pytest.param(
        doc(bad("skill", definition={"ref": "x"})),
        "components[0] (id 'sk1'): field 'definition' missing required field: digest",
        id="definition-without-digest",
    ),
    pytest.param(
        doc(bad("tool", registration_provenance={"origin": "the-internet"})),
        "components[0] (id 't1'): field 'registration_provenance.origin' must be one of",
        id="bad-provenance-origin",
    ),
    pytest.param(
        doc(bad("mcp_server", tools="t1")),
        "components[0] (id 'srv1'): field 'tools' must be array",
        id="references-not-array",
    ),
    pytest.param(
        doc(bad("tool", id=ROOT_ID)),
        "components[0] (id '@agent'): the id '@agent' is reserved for the agent itself",
        id="reserved-root-id",
    ),
    pytest.param(
        doc(MINIMAL["tool"], {**MINIMAL["model"], "id": "t1"}),
        "components[1]: duplicate component id 't1'",
        id="duplicate-id",
    ),
    pytest.param(
        doc(bad("mcp_server", tools=["t1", "ghost"]), MINIMAL["tool"]),
        "component 'srv1' field 'tools': dangling reference to unknown id 'ghost'",
        id="dangling-reference",
    ),
    pytest.param(
        doc(bad("skill", models=["t1"]), MINIMAL["tool"]),
        "component 'sk1' field 'models': reference 't1' is a tool, expected model",
        id="reference-to-wrong-type",
    ),
    pytest.param(
        doc(bad("skill", composed_skills=["sk1", "sk9"])),
        "component 'sk1' field 'composed_skills': dangling reference to unknown id 'sk9'",
        id="dangling-composed-skill",
    ),
    pytest.param(
        doc(MINIMAL["tool"], agent="agent-1"),
        "agent: must be an object",
        id="agent-not-object",
    ),
    pytest.param(
        doc(bad("tool", weight=float("nan"))),
        "document: cannot be canonicalized (RFC 8785): nan is not representable in JCS",
        id="nan",
    ),
    pytest.param(
        doc(bad("tool", weight=float("inf"))),
        "document: cannot be canonicalized (RFC 8785)",
        id="infinity",
    ),
    pytest.param(
        doc(bad("model", context_window=2**53 + 1)),
        "document: cannot be canonicalized (RFC 8785): 9007199254740993 exceeds safe integer",
        id="int-beyond-2^53",
    ),
    pytest.param(
        doc(MINIMAL["tool"], x_counter=-(2**60)),
        "document: cannot be canonicalized (RFC 8785)",
        id="big-int-in-header",
    ),
]


@pytest.mark.parametrize(("document", "message"), ERROR_CASES)
def test_located_errors(document: Any, message: str) -> None:
    expected = "^" + re.escape("AgBOM is not a valid AgBOM: " + message)
    with pytest.raises(InvalidAgBOM, match=expected):
        AgBOM.from_document(document)


def test_every_problem_is_collected_and_counted() -> None:
    document = doc(
        {"id": "w1", "type": "widget"},
        bad("model", context_window=_DROP),
        bad("mcp_server", tools=["ghost"]),
    )
    with pytest.raises(InvalidAgBOM, match=r"\(and 2 more problems\)$") as caught:
        AgBOM.from_document(document, source="agent.json")
    assert str(caught.value).startswith("agent.json is not a valid AgBOM: components[0] (id 'w1')")
    assert [p.location for p in caught.value.problems] == [
        "components[0] (id 'w1')",
        "components[1] (id 'm1')",
        "component 'srv1' field 'tools'",
    ]
    assert caught.value.diagnostics() == str(caught.value)


def test_one_more_problem_is_singular() -> None:
    with pytest.raises(InvalidAgBOM, match=r"\(and 1 more problem\)$"):
        AgBOM.from_document(doc({"id": "a", "type": "x"}, {"id": "b", "type": "y"}))


def test_parse_component_error_names_its_location() -> None:
    with pytest.raises(
        InvalidAgBOM,
        match=r"^added\[3\] is not a valid AgBOM: added\[3\] \(id 'm1'\): missing required field",
    ):
        parse_component(bad("model", provider=_DROP), "added[3]")


def test_too_many_components(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "MAX_COMPONENTS", 2)
    tools = [{**MINIMAL["tool"], "id": f"t{i}"} for i in range(3)]
    with pytest.raises(InvalidAgBOM, match=r"components: more than 2 components$"):
        AgBOM.from_document(doc(*tools))


def test_deep_nesting_is_a_located_error_not_a_recursion_crash() -> None:
    # Parsed from JSON text, as it arrives; 400 levels is within json's limit but would
    # exhaust the recursion limit in deepcopy (to_document) without the depth bound.
    deep = "[" * 400 + "]" * 400
    text = '{"components": [{"id": "k", "type": "knowledge_source", "name": "n", '
    text += f'"source_type": "other", "x": {deep}}}]}}'
    expected = r"components\[0\] \(id 'k'\): nested deeper than 64 levels"
    with pytest.raises(InvalidAgBOM, match=expected):
        AgBOM.from_document(json.loads(text))
    header = json.loads('{"components": [], "x": ' + deep + "}")
    with pytest.raises(InvalidAgBOM, match=r"document: header nested deeper than 64 levels"):
        AgBOM.from_document(header)
    ok = json.loads('{"components": [], "x": ' + "[" * 60 + "]" * 60 + "}")
    assert AgBOM.from_document(ok).to_document() == ok


def test_from_components_rechecks_ids_and_references() -> None:
    tool = parse_component(MINIMAL["tool"])
    server = parse_component(bad("mcp_server", tools=["t1"]))
    assert AgBOM.from_components([tool, server]).get("srv1") == server
    with pytest.raises(InvalidAgBOM, match="t1: duplicate component id"):
        AgBOM.from_components([tool, tool])
    with pytest.raises(InvalidAgBOM, match="dangling reference to unknown id 't1'"):
        AgBOM.from_components([server])


# -- agbom_hash ----------------------------------------------------------------------------------

# The canonical form of doc(TINY_TOOL, agent={"id": "a1"}), written out by hand from RFC 8785:
# keys sorted, no whitespace, components sorted by id.
TINY_TOOL = {
    "type": "tool",
    "id": "t1",
    "name": "read",
    "version": None,
    "provider": "acme",
    "capability": "fs.read",
}
TINY_CANONICAL = (
    b'{"agent":{"id":"a1"},"components":[{"capability":"fs.read","id":"t1","name":"read",'
    b'"provider":"acme","type":"tool","version":null}]}'
)


def test_agbom_hash_is_sha256_of_the_jcs_form() -> None:
    agbom = AgBOM.from_document(doc(TINY_TOOL, agent={"id": "a1"}))
    assert agbom.agbom_hash == "sha256:" + hashlib.sha256(TINY_CANONICAL).hexdigest()


def test_agbom_hash_is_independent_of_component_and_key_order() -> None:
    document = full_document()
    reference = AgBOM.from_document(document).agbom_hash
    reordered = copy.deepcopy(document)
    reordered["components"].reverse()
    reordered["components"] = [dict(reversed(c.items())) for c in reordered["components"]]
    reordered = dict(reversed(reordered.items()))
    assert AgBOM.from_document(reordered).agbom_hash == reference
    assert AgBOM.from_document(reordered) == AgBOM.from_document(document)


def test_agbom_hash_is_stable_across_processes() -> None:
    script = (
        "import json, sys\n"
        "from agbom.inventory import AgBOM\n"
        "print(AgBOM.from_document(json.load(sys.stdin)).agbom_hash)\n"
    )
    text = json.dumps(full_document())
    hashes = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], input=text, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        hashes.add(done.stdout.strip())
    assert hashes == {AgBOM.from_document(full_document()).agbom_hash}


def _leaf_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaf_paths(v, (*prefix, k))]
    if isinstance(value, list) and value and all(not isinstance(v, str) for v in value):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, (*prefix, i))]
    return [prefix]


def test_agbom_hash_changes_when_any_field_changes() -> None:
    document = full_document()
    reference = AgBOM.from_document(document).agbom_hash
    # Every scalar except ids and types (changing those breaks references or validity).
    leaves = [p for p in _leaf_paths(document) if p[-1] not in ("id", "type")]
    assert len(leaves) > 40
    seen = {reference}
    for path in leaves:
        changed = copy.deepcopy(document)
        parent = changed
        for key in path[:-1]:
            parent = parent[key]
        old = parent[path[-1]]
        if isinstance(old, list):
            continue  # reference and capability lists: one is covered below
        if isinstance(old, bool) or old is None:
            parent[path[-1]] = "changed"
        elif isinstance(old, int | float):
            parent[path[-1]] = old + 1
        elif path[-1] == "value":
            parent[path[-1]] = HEX_A if old != HEX_A else SKILL2["definition"]["digest"]["value"]
        elif path[-1] in ("origin", "source_type", "scope"):
            parent[path[-1]] = {"origin": "external", "source_type": "other"}.get(path[-1], "user")
        else:
            parent[path[-1]] = old + "-changed"
        new_hash = AgBOM.from_document(changed).agbom_hash
        assert new_hash not in seen, path
        seen.add(new_hash)
    dropped = copy.deepcopy(document)
    dropped["components"][0]["tools"] = []  # capability no longer uses t1
    assert AgBOM.from_document(dropped).agbom_hash not in seen


def test_rfc8785_integral_floats_hash_like_integers() -> None:
    as_float = AgBOM.from_document(doc(TINY_TOOL, agent={"id": "a1"}, weight=1.0, tiny=1e-7))
    as_int = AgBOM.from_document(doc(TINY_TOOL, agent={"id": "a1"}, weight=1, tiny=1e-7))
    assert as_float.agbom_hash == as_int.agbom_hash
    expected = TINY_CANONICAL[:-1] + b',"tiny":1e-7,"weight":1}'
    assert as_float.agbom_hash == "sha256:" + hashlib.sha256(expected).hexdigest()


def test_rfc8785_sorts_keys_by_utf16_code_units() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in UTF-16, so it sorts before U+FFFD, although
    # its code point is larger.
    header = {"agent": {"id": "a1"}, "x": {"\ufffd": 2, "\U0001f600": 1}}
    agbom = AgBOM.from_document(doc(TINY_TOOL, **header))
    expected = TINY_CANONICAL[:-1] + ',"x":{"\U0001f600":1,"\ufffd":2}}'.encode()
    assert agbom.agbom_hash == "sha256:" + hashlib.sha256(expected).hexdigest()


def test_equality_and_hashing_follow_agbom_hash() -> None:
    one = AgBOM.from_document(full_document())
    two = AgBOM.from_document(full_document())
    assert one == two and hash(one) == hash(two) and len({one, two}) == 1
    assert one != AgBOM.from_document(minimal_document())
    assert one != "not an agbom"
    assert repr(one).startswith("AgBOM(agent='agent-1', components=9, sha256:")


# -- schemas -------------------------------------------------------------------------------------

SCHEMA_FILES = sorted(
    p.name
    for p in resources.files("agbom.inventory").joinpath("schemas").iterdir()
    if p.name.endswith(".json")
)
# Keywords added after Draft-07; fastjsonschema's Draft-07 mode would silently ignore them.
LATER_KEYWORDS = {
    "$defs",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "minContains",
    "maxContains",
}


def _registry() -> Registry:
    return Registry().with_resources(
        (SCHEMA_BASE + name, Resource.from_contents(load_schema(name), DRAFT7))
        for name in SCHEMA_FILES
    )


def _jsonschema_validator(name: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(load_schema(name), registry=_registry())


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_every_schema_is_shipped() -> None:
    expected = {f"component-{t}.json" for t in TYPES}
    expected |= {"component.json", "common.json", "document.json"}
    expected |= {"agbom-snapshot.json", "agbom-changed.json"}
    assert set(SCHEMA_FILES) == expected


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_every_schema_is_valid_draft7(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"] == SCHEMA_BASE + name
    assert not (_keys(schema) & LATER_KEYWORDS)


def _case(ctype: str, **changes: Any) -> dict[str, Any]:
    return bad(ctype, **changes)


AGREEMENT_CASES = [
    *[pytest.param(MINIMAL[t], True, id=f"minimal-{t}") for t in TYPES],
    *[pytest.param(FULL[t], True, id=f"full-{t}") for t in TYPES],
    pytest.param(_case("tool", purl="pkg:pypi/x@1", extra={"a": [1]}), True, id="extra-fields"),
    pytest.param(_case("tool", capability=None), True, id="null-capability"),
    pytest.param(_case("model", context_window=None), True, id="null-context-window"),
    pytest.param(_case("model", context_window=1.0), True, id="integral-float-is-integer"),
    pytest.param(_case("model", context_window=1.5), False, id="fractional-context-window"),
    pytest.param(_case("tool", capability=["a", 1]), False, id="capability-list-of-non-str"),
    pytest.param(_case("model", context_window="1"), False, id="context-window-string"),
    pytest.param(_case("model", context_window=True), False, id="context-window-bool"),
    pytest.param(_case("model", context_window=-5), False, id="context-window-negative"),
    pytest.param(_case("model", name=_DROP), False, id="missing-name"),
    pytest.param(_case("model", args=[]), False, id="args-not-object"),
    pytest.param(_case("mcp_server", tools=[""]), False, id="empty-reference"),
    pytest.param(_case("mcp_server", version=3), False, id="version-number"),
    pytest.param(_case("a2a_peer", protocol_version=None), False, id="protocol-version-null"),
    pytest.param(_case("knowledge_source", source_type="wiki"), False, id="bad-source-type"),
    pytest.param(_case("memory_store", window_size=-1), False, id="negative-window"),
    pytest.param(_case("memory_store", window_size=2.5), False, id="fractional-window"),
    pytest.param(_case("agent_capability", description=None), False, id="null-description"),
    pytest.param(_case("skill", definition={"ref": "r"}), False, id="definition-no-digest"),
    pytest.param(
        _case("skill", definition={"ref": "r", "digest": {"algorithm": "sha256"}}),
        False,
        id="digest-no-value",
    ),
    pytest.param(_case("skill", declared_capabilities="fs"), False, id="declared-not-array"),
    pytest.param(_case("tool", registration_provenance={}), False, id="provenance-no-origin"),
    pytest.param(_case("tool", id=""), False, id="empty-id"),
    pytest.param(_case("tool", id="x" * 513), False, id="id-too-long"),
    pytest.param({"id": "x", "type": "widget"}, False, id="unknown-type"),
    pytest.param({"type": "tool"}, False, id="no-id"),
    pytest.param("tool", False, id="not-an-object"),
]


@pytest.mark.parametrize(("component", "valid"), AGREEMENT_CASES)
def test_jsonschema_and_fastjsonschema_agree(component: Any, valid: bool) -> None:
    results = {}
    names = ["component.json"]
    if isinstance(component, dict) and component.get("type") in TYPES:
        names.append(f"component-{component['type']}.json")
    for name in names:
        results[f"jsonschema {name}"] = _jsonschema_validator(name).is_valid(component)
        try:
            compiled_validator(name)(component)
            results[f"fastjsonschema {name}"] = True
        except fastjsonschema.JsonSchemaValueException:
            results[f"fastjsonschema {name}"] = False
    assert set(results.values()) == {valid}, results


def test_integral_float_in_an_integer_field_is_accepted_and_hashes_as_the_integer() -> None:
    # Draft-07 counts 1.0 as an integer (both validators agree, see AGREEMENT_CASES), and
    # RFC 8785 writes it as 1, so the two spellings are the same AgBOM.
    as_float = AgBOM.from_document(doc(_case("model", context_window=128000.0)))
    as_int = AgBOM.from_document(doc(MINIMAL["model"]))
    assert as_float == as_int


PAYLOAD_CASES = [
    ("document.json", minimal_document(), True),
    ("document.json", {"components": [MINIMAL["tool"]], "agbom_hash": "sha256:x"}, True),
    ("document.json", {"agent": {"id": 5}, "components": []}, False),
    ("document.json", {"agent": {}}, False),
    ("agbom-snapshot.json", {"agbom": full_document()}, True),
    ("agbom-snapshot.json", full_document(), True),
    ("agbom-snapshot.json", {"agbom": {"components": [{"id": "x", "type": "w"}]}}, False),
    ("agbom-snapshot.json", {"trigger_step_id": "s"}, False),
    ("agbom-changed.json", {"agbom": minimal_document()}, True),
    ("agbom-changed.json", {"added": [MINIMAL["tool"]], "removed": ["a", {"id": "b"}]}, True),
    ("agbom-changed.json", {"changed": [MINIMAL["skill"]], "change_reason": "hot-swap"}, True),
    ("agbom-changed.json", {"removed": [""]}, False),
    ("agbom-changed.json", {"removed": [{"name": "x"}]}, False),
    ("agbom-changed.json", {"added": [{"id": "t", "type": "tool"}]}, False),
    ("agbom-changed.json", {"trigger_step_id": "s"}, False),
]


@pytest.mark.parametrize(("name", "payload", "valid"), PAYLOAD_CASES)
def test_payload_schemas_agree_with_each_other(name: str, payload: Any, valid: bool) -> None:
    by_jsonschema = _jsonschema_validator(name).is_valid(payload)
    try:
        compiled_validator(name)(payload)
        by_fast = True
    except fastjsonschema.JsonSchemaValueException:
        by_fast = False
    assert (by_jsonschema, by_fast) == (valid, valid)


def test_component_is_frozen() -> None:
    component = parse_component(MINIMAL["tool"])
    with pytest.raises(AttributeError):
        component.id = "other"  # type: ignore[misc]
    assert isinstance(component, Component)
