"""Rules layer: YAML rule packs compiled once and evaluated over the component graph."""

from __future__ import annotations

from agbom.rules.engine import RuleSet, load_rules
from agbom.rules.interface import (
    Action,
    EvalContext,
    Explanation,
    Finding,
    RuleError,
    Severity,
)
from agbom.rules.report import render_findings

__all__ = [
    "Action",
    "EvalContext",
    "Explanation",
    "Finding",
    "RuleError",
    "RuleSet",
    "Severity",
    "load_rules",
    "render_findings",
]
