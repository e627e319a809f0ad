"""The AgBOM hash assembled from cached component bytes equals a full RFC 8785 recomputation."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.inventory import AgBOM
from agbom.inventory.diff import apply_changed_payload

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)
# Keys that sort differently by UTF-16 code units and by code points, and ASCII ones.
_keys = st.sampled_from(["x-ü", "x-\U0001f600", "x-\uffff", "x-a", "x-Z", "x-é"]) | _text.map(
    lambda t: "x-" + t
)


def _tool(index: int, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"t-{index:03d}-\u00e9",
        "type": "tool",
        "name": f"tool {index}",
        "version": "1",
        "provider": "local",
        "capability": "fs.read",
        **extra,
    }


def _reference_hash(agbom: AgBOM) -> str:
    document = dict(agbom.header)
    document["components"] = [dict(c.data) for c in agbom]
    return "sha256:" + hashlib.sha256(rfc8785.dumps(document)).hexdigest()


@settings(max_examples=150, deadline=None)
@given(
    header=st.dictionaries(_keys, _values, max_size=4),
    extras=st.lists(st.dictionaries(_keys, _values, max_size=3), min_size=0, max_size=5),
)
def test_hash_matches_full_rfc8785_recomputation(
    header: dict[str, Any], extras: list[dict[str, Any]]
) -> None:
    document = {
        **header,
        "agent": {"id": "agent-ü", "x": 1.5},
        "components": [_tool(i, e) for i, e in enumerate(extras)],
    }
    agbom = AgBOM.from_document(document)
    assert agbom.agbom_hash == _reference_hash(agbom)
    assert agbom.canonical_document() == rfc8785.dumps(
        {**agbom.header, "components": [dict(c.data) for c in agbom]}
    )


@settings(max_examples=60, deadline=None)
@given(
    extras=st.lists(st.dictionaries(_keys, _values, max_size=3), min_size=2, max_size=5),
    replacement=st.dictionaries(_keys, _values, max_size=3),
)
def test_hash_after_a_diff_matches_recomputation(
    extras: list[dict[str, Any]], replacement: dict[str, Any]
) -> None:
    base = AgBOM.from_document({"components": [_tool(i, e) for i, e in enumerate(extras)]})
    payload = {
        "added": [_tool(99, replacement)],
        "removed": [_tool(0, {})["id"]],
        "changed": [_tool(1, replacement)],
    }
    new, diff = apply_changed_payload(base, payload)
    assert new.agbom_hash == _reference_hash(new)
    fresh = AgBOM.from_document(new.to_document())
    assert fresh.agbom_hash == new.agbom_hash
    assert [c.id for c in diff.added] == [_tool(99, {})["id"]]
    assert list(diff.removed) == [_tool(0, {})["id"]]


def test_to_document_keeps_values_as_given_and_is_independent() -> None:
    agbom = AgBOM.from_document({"agent": {"id": "a"}, "components": [_tool(1, {"x-f": 1.0})]})
    document = agbom.to_document()
    assert document["components"][0]["x-f"] == 1.0
    assert isinstance(document["components"][0]["x-f"], float)
    document["components"][0]["name"] = "changed"
    document["agent"]["id"] = "changed"
    assert agbom.get(_tool(1, {})["id"]).name == "tool 1"  # type: ignore[union-attr]
    assert agbom.agent_id == "a"


# A chain of diffs: each AgBOM's hash resumes from the previous one's chunked layout
# (agbom/inventory/_layout.py). Small chunks make every case happen with few components:
# a chunk split, emptied, the first and last chunk changed, the header changed.
_steps = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "change", "header"]),
        st.integers(min_value=0, max_value=40),
        st.dictionaries(_keys, _values, max_size=2),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=120, deadline=None)
@given(
    start=st.integers(min_value=0, max_value=12),
    chunk=st.integers(min_value=1, max_value=4),
    steps=_steps,
)
def test_hash_along_a_chain_of_diffs_matches_recomputation(
    start: int, chunk: int, steps: list[tuple[str, int, dict[str, Any]]]
) -> None:
    from agbom.inventory import _layout

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_layout, "CHUNK_TARGET", chunk)
        current = AgBOM.from_document(
            {"agent": {"id": "a"}, "components": [_tool(i, {}) for i in range(start)]}
        )
        assert current.agbom_hash == _reference_hash(current)
        for action, index, extra in steps:
            tool_id = _tool(index, {})["id"]
            if action == "header":
                payload: dict[str, Any] = {"header": {"agent": {"id": "a"}, **extra}}
            elif action == "add" and tool_id not in current:
                payload = {"added": [_tool(index, extra)]}
            elif action == "remove" and tool_id in current:
                payload = {"removed": [tool_id]}
            elif tool_id in current:
                payload = {"changed": [_tool(index, extra)]}
            else:
                continue
            current, _ = apply_changed_payload(current, payload)
            assert current.agbom_hash == _reference_hash(current)


def test_hash_of_a_large_agbom_through_many_one_component_changes() -> None:
    # Default chunk size, enough components for several chunks; changes at the start, in
    # the middle, at the end, adds that split a chunk and removes that empty one.
    count = 1_300
    current = AgBOM.from_document({"components": [_tool(i, {}) for i in range(count)]})
    payloads: list[dict[str, Any]] = [
        {"changed": [_tool(0, {"x-a": 1})]},
        {"changed": [_tool(650, {"x-a": "é"})]},
        {"changed": [_tool(count - 1, {"x-a": [1.5]})]},
        {"added": [{**_tool(i, {}), "id": f"t-500-{i:04d}"} for i in range(1_100)]},
        {"removed": [_tool(i, {})["id"] for i in range(100, 700)]},
        {"header": {"agent": {"id": "b"}}},
        {"changed": [_tool(800, {"x-\U0001f600": None})]},
    ]
    for payload in payloads:
        current, _ = apply_changed_payload(current, payload)
        assert current.agbom_hash == _reference_hash(current)
    assert current.agbom_hash == AgBOM.from_document(current.to_document()).agbom_hash
