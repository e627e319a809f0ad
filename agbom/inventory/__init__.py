"""Inventory layer: the canonical AgBOM model, its component graph and diffs. Does no I/O."""

from __future__ import annotations

from agbom.inventory.diff import (
    AgBOMDiff,
    ArtifactChange,
    apply_changed_payload,
    apply_diff,
    compute_diff,
    parse_diff,
)
from agbom.inventory.graph import ComponentGraph, EdgeKind
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
    "parse_diff",
]
