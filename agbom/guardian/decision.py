"""Decisions and the per-hook disposition clamp.

Whatever a rule or policy proposes, :func:`clamp` makes sure the disposition returned is one
the hook allows: no code path can answer DENY at postCompact or anything but ALLOW at an
audit-only hook.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agbom.protocol import Disposition, MethodSpec

EVALUATOR_VERSION = "agbom-guardian/0.1"


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyReference:
    """Which rule produced (part of) a decision."""

    policy_id: str
    rule_id: str
    policy_name: str | None = None
    policy_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"policy_id": self.policy_id, "rule_id": self.rule_id}
        if self.policy_name:
            out["policy_name"] = self.policy_name
        if self.policy_version:
            out["policy_version"] = self.policy_version
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A Guardian decision before it is put on the wire."""

    disposition: Disposition
    reasoning: str | None = None
    reason_codes: tuple[str, ...] = ()
    policy_references: tuple[PolicyReference, ...] = ()
    modifications: Mapping[str, Any] | None = None
    ask_details: Mapping[str, Any] | None = None
    defer_details: Mapping[str, Any] | None = None
    payload: Mapping[str, Any] | None = None
    findings: tuple[Mapping[str, Any], ...] = ()
    chain_hash: str | None = None
    evaluation_duration_ms: float | None = None
    # Provenance ids whose facts drove the decision (flow rules, guardian/flow.py).
    cited_provenance_ids: tuple[str, ...] = ()

    @classmethod
    def allow(cls, *, reason_codes: Iterable[str] = (), reasoning: str | None = None) -> Decision:
        return cls(
            disposition=Disposition.ALLOW, reason_codes=tuple(reason_codes), reasoning=reasoning
        )

    @classmethod
    def deny(
        cls,
        reasoning: str,
        *codes: str,
        references: Iterable[PolicyReference] = (),
        findings: Iterable[Mapping[str, Any]] = (),
    ) -> Decision:
        return cls(
            disposition=Disposition.DENY,
            reasoning=reasoning,
            reason_codes=tuple(codes),
            policy_references=tuple(references),
            findings=tuple(findings),
        )

    @property
    def decision(self) -> str:
        return self.disposition.value

    def to_result(
        self,
        *,
        request_id: str,
        acs_version: str,
        chain_hash: str | None = None,
        evaluation_duration_ms: float | None = None,
    ) -> dict[str, Any]:
        """The AcsResult object (without signature); the keyword values override the
        decision's own ``chain_hash`` and ``evaluation_duration_ms``."""
        chain_hash = chain_hash or self.chain_hash
        if evaluation_duration_ms is None:
            evaluation_duration_ms = self.evaluation_duration_ms
        result: dict[str, Any] = {
            "type": "final",
            "acs_version": acs_version,
            "request_id": request_id,
            "decision": self.disposition.value,
        }
        if self.reasoning:
            result["reasoning"] = self.reasoning
        if self.reason_codes:
            result["reason_codes"] = list(dict.fromkeys(self.reason_codes))
        if self.policy_references:
            result["policy_references"] = [p.to_json() for p in self.policy_references]
        if self.findings:
            result["policy_data"] = {"agbom": {"findings": list(self.findings)}}
        if self.cited_provenance_ids:
            result["cited_provenance_ids"] = list(self.cited_provenance_ids)
        if self.modifications is not None:
            result["modifications"] = dict(self.modifications)
        if self.ask_details is not None:
            result["ask_details"] = dict(self.ask_details)
        if self.defer_details is not None:
            result["defer_details"] = dict(self.defer_details)
        if self.payload is not None:
            result["payload"] = dict(self.payload)
        if chain_hash:
            result["chain_hash"] = chain_hash
        metadata: dict[str, Any] = {
            "evaluator": "deterministic",
            "evaluator_version": EVALUATOR_VERSION,
        }
        if evaluation_duration_ms is not None:
            # The schema types it as an integer: whole milliseconds, rounded half up.
            metadata["evaluation_duration_ms"] = int(evaluation_duration_ms + 0.5)
        result["metadata"] = metadata
        return result


DEFER_TIMEOUT_MS = 300_000


def defer_details(*, reason: str = "pending_dependency") -> dict[str, Any]:
    """Complete ``defer_details`` for a DEFER the Guardian cannot resolve on the wire: a human
    may decide out of band; past the timeout the client applies ``deny``."""
    return {
        "reason": reason,
        "resolution_method": "human_approval",
        "resolution_timeout_ms": DEFER_TIMEOUT_MS,
        "timeout_decision": "deny",
        "required_context": [],
    }


def clamp(decision: Decision, spec: MethodSpec) -> Decision:
    """Return ``decision`` turned into the nearest disposition ``spec`` allows.

    Fallbacks, most protective first: ASK → DEFER → DENY, DEFER → DENY, MODIFY → DENY; where DENY
    itself is not allowed (postCompact, audit-only hooks) the step proceeds as ALLOW and the
    reason codes record that a stronger disposition was wanted.
    """
    allowed = spec.allowed
    if decision.disposition in allowed:
        return decision
    wanted = decision.disposition
    chain = {
        Disposition.ASK: (Disposition.DEFER, Disposition.DENY),
        Disposition.DEFER: (Disposition.DENY,),
        Disposition.MODIFY: (Disposition.DENY,),
        Disposition.DENY: (),
    }.get(wanted, ())
    for fallback in chain:
        if fallback in allowed:
            if fallback is Disposition.DEFER:
                return replace(
                    decision,
                    disposition=Disposition.DEFER,
                    ask_details=None,
                    defer_details=defer_details(),
                    reason_codes=(*decision.reason_codes, "approver_unavailable"),
                )
            return replace(
                decision,
                disposition=fallback,
                modifications=None,
                ask_details=None,
                defer_details=None,
                reasoning=decision.reasoning or f"{wanted.value} is not available at this hook",
                reason_codes=(*decision.reason_codes, f"{wanted.value}_unsupported_here"),
            )
    return replace(
        decision,
        disposition=Disposition.ALLOW,
        modifications=None,
        ask_details=None,
        defer_details=None,
        reason_codes=(*decision.reason_codes, f"{wanted.value}_not_allowed_at_hook", "audit_only"),
    )


@dataclass(slots=True)
class DecisionCollector:
    """Accumulates partial verdicts from several policies and merges them (most severe wins)."""

    denials: list[Decision] = field(default_factory=list)
    asks: list[Decision] = field(default_factory=list)
    warnings: list[Mapping[str, Any]] = field(default_factory=list)
    references: list[PolicyReference] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def merge(self) -> Decision:
        if self.denials:
            first = self.denials[0]
            reasoning = "; ".join(d.reasoning or "" for d in self.denials if d.reasoning)
            return Decision(
                disposition=Disposition.DENY,
                reasoning=reasoning or "denied by policy",
                reason_codes=tuple(c for d in self.denials for c in d.reason_codes)
                + tuple(self.codes),
                policy_references=tuple(r for d in self.denials for r in d.policy_references)
                + tuple(self.references),
                findings=tuple(f for d in self.denials for f in d.findings) + tuple(self.warnings),
                payload=first.payload,
            )
        if self.asks:
            first = self.asks[0]
            return replace(
                first,
                reason_codes=tuple(c for d in self.asks for c in d.reason_codes)
                + tuple(self.codes),
                findings=tuple(f for d in self.asks for f in d.findings) + tuple(self.warnings),
            )
        return Decision(
            disposition=Disposition.ALLOW,
            reason_codes=tuple(self.codes),
            policy_references=tuple(self.references),
            findings=tuple(self.warnings),
        )
