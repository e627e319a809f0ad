"""The rules layer's small public types: errors, severities, actions, findings, contexts.

The Guardian, ``agbom check`` and ``agbom scan`` all speak in these types; the engine that
produces them lives in :mod:`agbom.rules.engine`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import total_ordering
from typing import Any

from agbom.errors import AgbomError


class RuleError(AgbomError):
    """A rule pack or rule test cannot be used; the message names the file, rule and key."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        rule_id: str | None = None,
        key_path: str | None = None,
        line: int | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.rule_id = rule_id
        self.key_path = key_path
        self.line = line
        super().__init__(self.diagnostics())

    def diagnostics(self) -> str:
        where: list[str] = []
        if self.file:
            where.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.rule_id:
            where.append(f"rule {self.rule_id!r}")
        if self.key_path:
            where.append(f"at {self.key_path}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


@total_ordering
class Severity(enum.Enum):
    """How bad a finding is; orderable so that ``--fail-on`` can compare."""

    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        # By value: a member's own hash is Enum.__hash__, Python code, and findings are sorted
        # by rank on every change.
        return _SEVERITY_RANK[self._value_]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank < other.rank

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: str | Severity) -> Severity:
        """``"HIGH"``, ``"high"`` and ``Severity.HIGH`` all give ``Severity.HIGH``."""
        if isinstance(value, Severity):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            known = ", ".join(s.value for s in cls)
            raise RuleError(f"unknown severity {value!r} (known: {known})") from None


_SEVERITY_RANK = {s.value: i for i, s in enumerate(Severity)}


class Action(enum.StrEnum):
    """What a matching rule asks the Guardian to do."""

    DENY = "deny"
    WARN = "warn"
    ASK = "ask"
    # Flow rules only (the schema says so): the offending argument's value is withheld.
    MODIFY = "modify"


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule violation: which rule, on which components, along which graph path, and why."""

    rule_id: str
    severity: Severity
    action: Action
    message: str
    components: tuple[str, ...]
    path: tuple[str, ...] = ()
    explanation: str = ""
    pack: str = ""
    # How to fix it: one actionable line (rule packs' ``remediation``, or the code check's own).
    remediation: str = ""
    # Set on a finding a VEX statement suppresses: who said the vulnerability does not apply,
    # and why (docs/vex.md). A suppressed finding is listed, never counted or acted on.
    suppression: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def sort_key(self) -> tuple[int, str, tuple[str, ...], tuple[str, ...], str]:
        """Most severe first, then rule id, components, path: a total, stable order."""
        return (-self.severity.rank, self.rule_id, self.components, self.path, self.message)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output (``agbom check --format json`` and audit records)."""
        return {
            "rule_id": self.rule_id,
            "severity": self.severity.value,
            "action": self.action.value,
            "message": self.message,
            "components": list(self.components),
            "path": list(self.path),
            "explanation": self.explanation,
            "pack": self.pack,
            "remediation": self.remediation,
            **({"suppressed": dict(self.suppression)} if self.suppression is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        """Inverse of :meth:`to_json` (used to feed previous findings back in)."""
        return cls(
            rule_id=str(data["rule_id"]),
            severity=Severity.parse(data["severity"]),
            action=Action(data["action"]),
            message=str(data.get("message", "")),
            components=tuple(data.get("components", ())),
            path=tuple(data.get("path", ())),
            explanation=str(data.get("explanation", "")),
            pack=str(data.get("pack", "")),
            remediation=str(data.get("remediation", "")),
            suppression=data["suppressed"] if isinstance(data.get("suppressed"), dict) else None,
        )


@dataclass(frozen=True, slots=True)
class Explanation:
    """For ``agbom explain``: one rule considered for a component, and what came of it."""

    rule_id: str
    pack: str
    kind: str
    component: str | None
    matched: bool
    reasons: tuple[str, ...]
    findings: tuple[Finding, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "pack": self.pack,
            "kind": self.kind,
            "component": self.component,
            "matched": self.matched,
            "reasons": list(self.reasons),
            "findings": [f.to_json() for f in self.findings],
        }


ApprovedCapabilities = Callable[[str], "set[str] | frozenset[str] | None"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class EvalContext:
    """What evaluation may know beyond the graph.

    ``approved_capabilities(skill_id)`` returns the capabilities the skill was approved with,
    or ``None`` when the skill has no approval (the Guardian reads them from the skill store).
    ``now`` decides which rule exceptions have expired.
    """

    approved_capabilities: ApprovedCapabilities | None = None
    now: datetime = field(default_factory=_utc_now)
