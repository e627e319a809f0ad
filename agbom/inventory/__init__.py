"""Inventory layer: the canonical AgBOM model, its component graph and diffs. Does no I/O."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agbom.inventory.diff import (
    AgBOMDiff,
    ArtifactChange,
    apply_changed_payload,
    apply_diff,
    compute_diff,
    parse_diff,
    with_replaced,
)
from agbom.inventory.model import (
    REFERENCE_FIELDS,
    ROOT_ID,
    AgBOM,
    Component,
    ComponentType,
    InvalidAgBOM,
    Problem,
    normalize_algorithm,
    parse_component,
)

if TYPE_CHECKING:
    from agbom.inventory.graph import ComponentGraph, EdgeKind

__all__ = [
    "REFERENCE_FIELDS",
    "ROOT_ID",
    "AgBOM",
    "AgBOMDiff",
    "ArtifactChange",
    "Component",
    "ComponentGraph",
    "ComponentType",
    "EdgeKind",
    "InvalidAgBOM",
    "Problem",
    "apply_changed_payload",
    "apply_diff",
    "compute_diff",
    "normalize_algorithm",
    "parse_component",
    "with_replaced",
    "parse_diff",
]


def __getattr__(name: str) -> Any:
    # The graph needs networkx (about 0.1 s to import): load it only when something uses it,
    # so that commands which never build a graph (``--help``, ``skills list``) start faster.
    if name in ("ComponentGraph", "EdgeKind"):
        from agbom.inventory import graph

        return getattr(graph, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
