"""Stage 5, decide: the method's payload schema (-32602) and its policy.

Guarantees to the next stage: ``context.decision`` is the method's policy verdict (rules,
approvals, inventory, flow, runtime pack, redaction), never a disposition the hook does not
allow nor one the client cannot apply (clamped and substituted, ``context.substitution``
saying what was substituted), a deferral past the session's limit turned into a deny.
Nothing is recorded yet: the policy's change to the session waits for the chain entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agbom.guardian.config import GuardianConfig
from agbom.guardian.decision import Decision, clamp
from agbom.guardian.stages.request import RequestContext
from agbom.guardian.substitution import substitute
from agbom.protocol import Disposition, validate_payload

if TYPE_CHECKING:
    from agbom.guardian.context import PreparedSnapshot
    from agbom.guardian.policies import Policies


def decide(
    context: RequestContext,
    policies: Policies,
    config: GuardianConfig,
    prepared: PreparedSnapshot | None,
) -> None:
    """Decide ``context``'s step; ``prepared`` is the snapshot work done ahead for this very
    request (its payload already validated), if any."""
    spec = context.spec
    assert spec is not None
    params = context.checked_params
    session = context.checked_session
    payload = params.get("payload")
    # payload schema (already checked when the snapshot was prepared, or by the HTTP front)
    if prepared is None:
        if context.prechecked is None:
            validate_payload(spec, payload)
    elif prepared.error is not None:
        raise prepared.error
    decision = policies.evaluate(context.method, spec, params, session)
    # never a disposition the hook does not allow, nor one the client cannot apply
    decision = clamp(decision, spec)
    decision, substitution = substitute(
        decision,
        spec,
        can_modify=session.can_modify,
        can_ask=session.can_ask,
        ask_fallback=config.ask_fallback,
    )
    if decision.disposition is Disposition.DEFER:
        session.deferrals += 1
        if session.deferrals > config.max_deferrals_per_session:
            decision = clamp(
                Decision.deny("too many deferrals in this session", "deferral_limit"), spec
            )
    context.decision, context.substitution = decision, substitution
