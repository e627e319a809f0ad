"""The AgBOM hash assembled from cached component bytes equals a full RFC 8785 recomputation."""

from __future__ import annotations

import hashlib
from typing import Any

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
