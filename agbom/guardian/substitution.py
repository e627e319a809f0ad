"""What a client that cannot apply MODIFY, or cannot answer ASK, gets instead (spec §6.5, §9.2).

The Guardian must never send such a client the disposition it cannot act on. The substitute
is chosen here, and the record of it goes into the step's chain entry, so every enforcement
gap is visible in the audit trail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agbom.guardian.decision import Decision, clamp, defer_details
from agbom.protocol import Disposition, MethodSpec


def substitute(
    decision: Decision, spec: MethodSpec, *, can_modify: bool, can_ask: bool, ask_fallback: str
) -> tuple[Decision, dict[str, str] | None]:
    """Replace a MODIFY or ASK the client cannot apply (spec §6.5, §9.2).

    Returns the decision to send and, when it was substituted, the audit record of the
    substitution that goes into the chain entry.
    """
    wanted = decision.disposition
    if wanted is Disposition.MODIFY and not can_modify:
        intended = _describe_modifications(decision.modifications)
        if Disposition.DENY in spec.allowed:
            new = replace(
                decision,
                disposition=Disposition.DENY,
                modifications=None,
                reasoning=f"{decision.reasoning or 'modification required'}; this client "
                f"cannot apply MODIFY, so the step is denied (intended: {intended})",
                reason_codes=(*decision.reason_codes, "modify_unsupported"),
            )
        else:  # postCompact: compaction already happened and DENY is not legal there
            new = replace(
                decision,
                disposition=Disposition.ALLOW,
                modifications=None,
                reasoning=f"this client cannot apply MODIFY; the original stands and the "
                f"intended rewrite was not delivered ({intended})",
                reason_codes=(*decision.reason_codes, "modify_unsupported"),
            )
        reason = "modify_unsupported"
    elif wanted is Disposition.ASK and not can_ask:
        if ask_fallback == "defer" and Disposition.DEFER in spec.allowed:
            new = replace(
                decision,
                disposition=Disposition.DEFER,
                ask_details=None,
                defer_details=defer_details(),
                reasoning=f"{decision.reasoning or 'approval required'}; this client cannot "
                "route ASK to an approver, so the step is deferred (denied on timeout)",
                reason_codes=(*decision.reason_codes, "approver_unavailable"),
            )
        else:
            new = replace(
                decision,
                disposition=Disposition.DENY,
                ask_details=None,
                reasoning=f"{decision.reasoning or 'approval required'}; this client cannot "
                "route ASK to an approver, so the step is denied",
                reason_codes=(*decision.reason_codes, "approver_unavailable"),
            )
        reason = "approver_unavailable"
    else:
        return decision, None
    new = clamp(new, spec)
    return new, {"from": wanted.value, "to": new.disposition.value, "reason": reason}


def _describe_modifications(modifications: Mapping[str, Any] | None) -> str:
    """What a MODIFY would have changed, named without its values (they may be secrets)."""
    if not modifications:
        return "a rewrite of the payload"
    parts: list[str] = []
    redactions = modifications.get("redactions")
    if isinstance(redactions, list) and redactions:
        paths = [str(r.get("path")) for r in redactions[:5] if isinstance(r, Mapping)]
        more = f" and {len(redactions) - 5} more" if len(redactions) > 5 else ""
        parts.append(f"redact {', '.join(paths)}{more}")
    overrides = modifications.get("parameter_overrides")
    if isinstance(overrides, Mapping) and overrides:
        parts.append(f"override {', '.join(sorted(str(k) for k in overrides)[:5])}")
    if "modified_content" in modifications:
        parts.append("replace the content")
    return "; ".join(parts) or "a rewrite of the payload"
