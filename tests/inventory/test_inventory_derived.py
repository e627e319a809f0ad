"""What an AgBOM derived by a diff carries over from its base: the index by type (so a
change does not walk every component to find the servers) and, through ``with_replaced``,
the knowledge of which ids differ (so the hash resumes and a store compares only those)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from inventory_samples import MINIMAL

from agbom.inventory import (
    AgBOM,
    ComponentType,
    apply_changed_payload,
    parse_component,
    with_replaced,
)


def tool(tid: str) -> dict[str, Any]:
    return {**MINIMAL["tool"], "id": tid, "name": tid}


def memory(mid: str) -> dict[str, Any]:
    return {**MINIMAL["memory_store"], "id": mid, "name": mid}


@pytest.mark.parametrize("seed", range(5))
def test_the_index_by_type_follows_every_diff(seed: int) -> None:
    rng = random.Random(seed)
    current = AgBOM.from_document({"components": [tool(f"c{i:02}") for i in range(20)]})
    current.of_type(ComponentType.TOOL)  # built once on the base, then carried
    for step in range(40):
        ids = sorted(current.components)
        kind = rng.choice(["add", "remove", "retype", "same"])
        cid = rng.choice(ids)
        if kind == "add":
            payload = {"added": [rng.choice([tool, memory])(f"n{step:02}")]}
        elif kind == "remove" and len(ids) > 1:
            payload = {"removed": [cid]}
        elif kind == "retype":  # the same id, now of the other type
            now = current.components[cid].type
            payload = {"changed": [memory(cid) if now is ComponentType.TOOL else tool(cid)]}
        else:
            payload = {"changed": [dict(current.components[cid].data, description="x")]}
        current, _ = apply_changed_payload(current, payload)
        fresh = AgBOM.from_document(current.to_document())
        for ctype in (ComponentType.TOOL, ComponentType.MEMORY_STORE, ComponentType.MCP_SERVER):
            assert [c.id for c in current.of_type(ctype)] == [c.id for c in fresh.of_type(ctype)]
        assert current.agbom_hash == fresh.agbom_hash


def test_with_replaced_keeps_the_derivation_and_refuses_other_changes() -> None:
    base = AgBOM.from_document({"components": [tool("a"), tool("b"), tool("c")]})
    base.agbom_hash  # noqa: B018 - a base with its layout, as a session's AgBOM has
    changed, _ = apply_changed_payload(base, {"changed": [dict(tool("a"), description="new")]})
    marked = parse_component(dict(tool("c"), vulnerabilities=[{"id": "X-1"}]))
    result = with_replaced(changed, {"c": marked}, base=base)
    assert result.changed_since(base) == frozenset({"a", "c"})
    assert result.components["c"].data["vulnerabilities"] == [{"id": "X-1"}]
    assert result.agbom_hash == AgBOM.from_document(result.to_document()).agbom_hash

    with pytest.raises(ValueError, match="not derived"):
        with_replaced(base, {"c": marked}, base=changed)
    with pytest.raises(ValueError, match="keeps the component's id, type and links"):
        with_replaced(changed, {"c": parse_component(memory("c"))}, base=base)
    with pytest.raises(ValueError, match="keeps the component's id, type and links"):
        with_replaced(changed, {"zz": parse_component(tool("zz"))}, base=base)
