"""AgBOM diffs: round trips (property-tested), the wire payload, artifact flags, errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inventory_samples import HEX_A, HEX_B, MINIMAL, agbom_documents, full_document

from agbom.inventory import (
    AgBOM,
    AgBOMDiff,
    ArtifactChange,
    ComponentType,
    InvalidAgBOM,
    apply_changed_payload,
    apply_diff,
    compute_diff,
    parse_component,
    parse_diff,
)


def wire(value: Any) -> Any:
    """What the other side of a JSON-RPC connection would receive."""
    return json.loads(json.dumps(value))


# -- round trips ---------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_applying_the_computed_diff_gives_the_new_agbom(old_doc: Any, new_doc: Any) -> None:
    old, new = AgBOM.from_document(old_doc), AgBOM.from_document(new_doc)
    diff = compute_diff(old, new)
    applied = apply_diff(old, diff)
    assert applied == new
    assert applied.to_document() == new.to_document()
    assert applied.to_document(with_hash=True) == new.to_document(with_hash=True)
    assert diff.empty == (old == new)


@settings(max_examples=150, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_diff_survives_the_wire(old_doc: Any, new_doc: Any) -> None:
    old, new = AgBOM.from_document(old_doc), AgBOM.from_document(new_doc)
    payload = wire(compute_diff(old, new).to_payload())
    assert apply_diff(old, parse_diff(payload)).to_document() == new.to_document()
    via_changed, diff = apply_changed_payload(old, payload)
    assert via_changed.to_document() == new.to_document()
    # The diff returned is recomputed against the session's AgBOM, flags included.
    assert diff == compute_diff(old, new)


@settings(max_examples=60, deadline=None)
@given(agbom_documents(), agbom_documents())
def test_full_form_of_agbom_changed_replaces_the_agbom(old_doc: Any, new_doc: Any) -> None:
    old, new = AgBOM.from_document(old_doc), AgBOM.from_document(new_doc)
    result, diff = apply_changed_payload(old, wire({"agbom": new_doc, "change_reason": "x"}))
    assert result.to_document() == new.to_document()
    assert diff == compute_diff(old, new)


@settings(max_examples=60, deadline=None)
@given(agbom_documents(), st.randoms(use_true_random=False))
def test_diff_of_an_agbom_with_itself_is_empty(document: Any, rnd: Any) -> None:
    shuffled = copy.deepcopy(document)
    rnd.shuffle(shuffled["components"])
    diff = compute_diff(AgBOM.from_document(document), AgBOM.from_document(shuffled))
    assert diff.empty
    assert diff.to_payload() == {"added": [], "removed": [], "changed": []}


def test_full_form_without_a_prior_snapshot_diffs_against_empty() -> None:
    new, diff = apply_changed_payload(None, {"agbom": full_document()})
    assert new == AgBOM.from_document(full_document())
    assert sorted(c.id for c in diff.added) == sorted(c.id for c in new)
    assert diff.removed == () and diff.changed == ()


def test_compute_diff_lists_added_removed_changed_and_header() -> None:
    old = AgBOM.from_document(full_document())
    document = full_document()
    document["agent"]["version"] = "1.1"
    document["components"] = [c for c in document["components"] if c["id"] != "ks1"]
    document["components"].append({**MINIMAL["tool"], "id": "t2", "name": "write_file"})
    for component in document["components"]:
        if component["id"] == "mem1":
            component["window_size"] = 99
    diff = compute_diff(old, AgBOM.from_document(document))
    assert [c.id for c in diff.added] == ["t2"]
    assert diff.removed == ("ks1",)
    assert [c.id for c in diff.changed] == ["mem1"]
    assert diff.header is not None and diff.header["agent"]["version"] == "1.1"
    assert diff.artifact_changes == ()  # memory stores are not watched
    payload = diff.to_payload()
    assert payload["removed"] == ["ks1"]
    assert payload["changed"][0]["window_size"] == 99
    assert payload["header"]["agent"] == {"id": "agent-1", "name": "helper", "version": "1.1"}


# -- removed[] forms, changed[] is whole replacement --------------------------------------------


def test_removed_accepts_ids_and_objects_with_an_id() -> None:
    base = AgBOM.from_document(full_document())
    document = full_document()
    document["components"] = [
        c for c in document["components"] if c["id"] not in ("ks1", "mem1", "m1")
    ]
    for component in document["components"]:
        component.pop("models", None)
    skill = next(c for c in document["components"] if c["id"] == "sk1")
    payload = {"removed": ["ks1", {"id": "mem1", "type": "memory_store"}, {"id": "m1"}]}
    payload["changed"] = [skill]
    new, diff = apply_changed_payload(base, payload)
    assert new == AgBOM.from_document(document)
    assert sorted(diff.removed) == ["ks1", "m1", "mem1"]


def test_changed_entries_replace_the_whole_component() -> None:
    base = AgBOM.from_document(full_document())
    # A changed[] entry without the optional fields drops them: it is not a patch.
    new, _ = apply_changed_payload(base, {"changed": [MINIMAL["memory_store"]]})
    assert dict(new.get("mem1").data) == MINIMAL["memory_store"]  # type: ignore[union-attr]


def test_changed_may_change_a_components_type() -> None:
    base = AgBOM.from_document({"components": [MINIMAL["tool"]]})
    as_model = {**MINIMAL["model"], "id": "t1"}
    new, diff = apply_changed_payload(base, {"changed": [as_model]})
    assert new.get("t1").type is ComponentType.MODEL  # type: ignore[union-attr]
    assert new == AgBOM.from_document({"components": [as_model]})


def test_remove_then_add_the_same_id_in_one_diff() -> None:
    base = AgBOM.from_document({"components": [MINIMAL["tool"]]})
    replacement = {**MINIMAL["tool"], "name": "renamed"}
    new, _ = apply_changed_payload(base, {"removed": ["t1"], "added": [replacement]})
    assert new.get("t1").name == "renamed"  # type: ignore[union-attr]


def test_header_change_applies_like_a_fresh_snapshot() -> None:
    base = AgBOM.from_document({"agent": {"id": "a"}, "components": []})
    # A header carrying an agbom_hash (or components) is treated as the snapshot would be.
    header = {"agent": {"id": "b"}, "agbom_hash": "sha256:" + "0" * 64, "components": ["x"]}
    new, _ = apply_changed_payload(base, {"header": header})
    assert new == AgBOM.from_document({"agent": {"id": "b"}, "components": []})
    assert new.to_document() == {"agent": {"id": "b"}, "components": []}


# -- artifact-change flags -----------------------------------------------------------------------


def _with(document: dict[str, Any], component_id: str, **changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(document)
    for component in document["components"]:
        if component["id"] == component_id:
            component.update(changes)
    return document


def test_skill_digest_change_is_flagged() -> None:
    old_doc = full_document()
    skill = next(c for c in old_doc["components"] if c["id"] == "sk1")
    definition = {
        "ref": skill["definition"]["ref"],
        "digest": {"algorithm": "sha256", "value": HEX_B},
    }
    old = AgBOM.from_document(old_doc)
    new = AgBOM.from_document(_with(old_doc, "sk1", definition=definition))
    diff = compute_diff(old, new)
    old_text, new_text = "sha256:" + HEX_A, "sha256:" + HEX_B
    assert diff.artifact_changes == (
        ArtifactChange("sk1", ComponentType.SKILL, "digest", old_text, new_text),
    )
    assert diff.to_json()["artifact_changes"] == [
        {
            "component_id": "sk1",
            "type": "skill",
            "field": "digest",
            "old": old_text,
            "new": new_text,
        }
    ]


def test_digest_spelling_change_is_not_a_rug_pull() -> None:
    old_doc = full_document()
    respelled = {
        "ref": "skills/summarize",
        "digest": {"algorithm": "SHA-256", "value": HEX_A.upper()},
    }
    old = AgBOM.from_document(old_doc)
    diff = compute_diff(old, AgBOM.from_document(_with(old_doc, "sk1", definition=respelled)))
    assert [c.id for c in diff.changed] == ["sk1"]  # the document did change
    assert diff.artifact_changes == ()


@pytest.mark.parametrize(
    ("component_id", "ctype", "old", "new"),
    [
        ("srv1", ComponentType.MCP_SERVER, "1.2.0", "1.3.0"),
        ("srv1", ComponentType.MCP_SERVER, "1.2.0", None),
        ("t1", ComponentType.TOOL, "1.0", "1.0.1"),
        ("t1", ComponentType.TOOL, "1.0", None),
    ],
)
def test_version_change_of_server_and_tool_is_flagged(
    component_id: str, ctype: ComponentType, old: str, new: str | None
) -> None:
    old_doc = full_document()
    before = AgBOM.from_document(old_doc)
    after = AgBOM.from_document(_with(old_doc, component_id, version=new))
    _, diff = apply_changed_payload(before, wire(compute_diff(before, after).to_payload()))
    assert diff.artifact_changes == (ArtifactChange(component_id, ctype, "version", old, new),)


def test_unwatched_types_and_other_fields_are_not_flagged() -> None:
    old_doc = full_document()
    before = AgBOM.from_document(old_doc)
    for component_id, changes in [
        ("m1", {"version": "2026-01"}),  # models are not watched
        ("t1", {"provider": "other"}),  # only version and digest are
        ("srv1", {"endpoint": "http://127.0.0.1:9"}),
    ]:
        diff = compute_diff(before, AgBOM.from_document(_with(old_doc, component_id, **changes)))
        assert [c.id for c in diff.changed] == [component_id]
        assert diff.artifact_changes == ()


# -- errors --------------------------------------------------------------------------------------

SOURCE = "^agbom/changed payload is not a valid AgBOM: "


@pytest.fixture
def base() -> AgBOM:
    return AgBOM.from_document(full_document())


def test_removing_an_unknown_id(base: AgBOM) -> None:
    with pytest.raises(InvalidAgBOM, match=SOURCE + r"removed 'ghost': no such component$"):
        apply_changed_payload(base, {"removed": ["ghost"]})


def test_adding_an_existing_id(base: AgBOM) -> None:
    with pytest.raises(
        InvalidAgBOM, match=SOURCE + r"added 't1': a component with this id exists$"
    ):
        apply_changed_payload(base, {"added": [MINIMAL["tool"]]})


def test_changing_an_unknown_id(base: AgBOM) -> None:
    ghost = {**MINIMAL["tool"], "id": "ghost"}
    with pytest.raises(InvalidAgBOM, match=SOURCE + r"changed 'ghost': no such component$"):
        apply_changed_payload(base, {"changed": [ghost]})


def test_diff_that_leaves_a_dangling_reference(base: AgBOM) -> None:
    # t1 is still used by the MCP server, the capability and the skill.
    with pytest.raises(
        InvalidAgBOM,
        match=SOURCE + r"component 'cap1' field 'tools': dangling reference to unknown id 't1' "
        r"\(and 2 more problems\)$",
    ) as caught:
        apply_changed_payload(base, {"removed": ["t1"]})
    assert [p.location for p in caught.value.problems] == [
        "component 'cap1' field 'tools'",
        "component 'sk1' field 'tools'",
        "component 'srv1' field 'tools'",
    ]


def test_diff_that_adds_a_dangling_reference(base: AgBOM) -> None:
    server = {**MINIMAL["mcp_server"], "id": "srv2", "tools": ["t9"]}
    with pytest.raises(
        InvalidAgBOM,
        match=SOURCE + r"component 'srv2' field 'tools': dangling reference to unknown id 't9'$",
    ):
        apply_changed_payload(base, {"added": [server]})


def test_diff_that_retypes_a_referenced_component(base: AgBOM) -> None:
    with pytest.raises(InvalidAgBOM, match="reference 'm1' is a tool, expected model"):
        apply_changed_payload(base, {"changed": [{**MINIMAL["tool"], "id": "m1"}]})


def test_a_failed_diff_leaves_the_base_untouched(base: AgBOM) -> None:
    before = base.to_document(with_hash=True)
    with pytest.raises(InvalidAgBOM):
        apply_changed_payload(base, {"removed": ["t1"], "added": [MINIMAL["tool"], {"x": 1}]})
    assert base.to_document(with_hash=True) == before


def test_diff_without_a_prior_snapshot() -> None:
    with pytest.raises(
        InvalidAgBOM,
        match=SOURCE + r"payload: a diff needs a prior agbom/snapshot in this session$",
    ):
        apply_changed_payload(None, {"added": []})


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"added": {"t1": {}}}, r"added: must be an array of components$"),
        ({"changed": "t1"}, r"changed: must be an array of components$"),
        ({"removed": "t1"}, r"removed: must be an array of ids$"),
        ({"removed": ["t1", 7]}, r"removed\[1\]: must be an id or an object with an id$"),
        ({"removed": [{"name": "t1"}]}, r"removed\[0\]: must be an id or an object with an id$"),
        ({"removed": [""]}, r"removed\[0\]: must be an id or an object with an id$"),
        ({"header": ["agent"]}, r"header: must be an object$"),
        (
            {"added": [{"id": "t5", "type": "tool", "name": "x"}]},
            r"added\[0\] \(id 't5'\): missing required fields: version, provider, capability$",
        ),
        (
            {"changed": [{"id": "w", "type": "widget"}]},
            r"changed\[0\] \(id 'w'\): unknown component type 'widget'",
        ),
    ],
)
def test_malformed_diff_payloads(base: AgBOM, payload: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidAgBOM, match=SOURCE + message):
        apply_changed_payload(base, payload)


@pytest.mark.parametrize("payload", [5, "added", ["added"], None])
def test_non_object_payload_is_an_error_not_a_crash(base: AgBOM, payload: Any) -> None:
    with pytest.raises(InvalidAgBOM, match=SOURCE + r"payload: must be an object, not "):
        apply_changed_payload(base, payload)


def test_full_form_errors_are_located(base: AgBOM) -> None:
    with pytest.raises(InvalidAgBOM, match=SOURCE + r"components: required"):
        apply_changed_payload(base, {"agbom": {"agent": {}}})


def test_unhashable_values_in_a_diff_are_an_error_not_a_crash(base: AgBOM) -> None:
    big = {**MINIMAL["tool"], "id": "t2", "weight": 2**60}
    with pytest.raises(InvalidAgBOM, match=SOURCE + r"document: cannot be canonicalized"):
        apply_changed_payload(base, {"added": [big]})
    with pytest.raises(InvalidAgBOM, match=SOURCE + r"document: cannot be canonicalized"):
        apply_changed_payload(base, {"header": {"x": float("nan")}})


def test_parse_diff_keeps_components_and_header() -> None:
    diff = parse_diff({"added": [MINIMAL["tool"]], "removed": [{"id": "x"}], "header": {"a": 1}})
    assert diff == AgBOMDiff(
        added=(parse_component(MINIMAL["tool"], "added[0]"),), removed=("x",), header={"a": 1}
    )
    assert not diff.empty and AgBOMDiff().empty
