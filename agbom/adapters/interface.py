"""The adapter contract: a runtime's hook event in, the same runtime's hook answer out.

An adapter translates one runtime event onto one ACS step (:class:`StepCall`), lets the Guardian
decide it exactly as it would decide the ACS request, and translates the decision
(:class:`Verdict`) back into the bytes, exit code and HTTP status that runtime expects
(:class:`HookReply`). Nothing here imports the Guardian: adapters receive it as an argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from agbom.errors import AgbomError


class AdapterError(AgbomError):
    """A hook event cannot be handled (unknown runtime, malformed input)."""


class MalformedEvent(AdapterError):
    """The runtime sent something that is not a well-formed event of its hook contract."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookReply:
    """What a handler answers: ``body`` goes to stdout (command) or the HTTP response body."""

    body: bytes
    exit_code: int = 0
    stderr: str = ""
    http_status: int = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCall:
    """One runtime event expressed as an ACS step for :meth:`Guardian.decide`.

    ``method`` is None for events that have no ACS counterpart: they are answered without a
    decision. ``blocking`` is False for observe-only events, whose decision is recorded but never
    turned into a deny. ``components`` are AgBOM components the event shows the agent using; they
    are added to the session's observed inventory before the decision.
    """

    runtime: str
    event: str
    method: str | None
    payload: dict[str, Any]
    session_id: str
    agent_id: str
    turn_id: str | None = None
    blocking: bool = True
    components: tuple[dict[str, Any], ...] = ()
    subject: str = ""
    # Steps decided first, in order, in the same session (a Skill call's skillRegister before
    # its skillLoad); their decisions are recorded, the reply is ``method``'s.
    before: tuple[tuple[str, dict[str, Any]], ...] = ()
    # Steps decided after ``before`` and before ``method``, whose decision is the reply when it
    # is not an allow (a typed /skill's load, ahead of the prompt it arrives in).
    gates: tuple[tuple[str, dict[str, Any]], ...] = ()
    # Appended to a non-allow reply's message (what the hook found, or did not, on its machine).
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The parts of a Guardian decision a runtime reply can carry."""

    disposition: str
    reasoning: str | None = None
    reason_codes: tuple[str, ...] = ()
    rule_ids: tuple[str, ...] = ()
    chain_hash: str | None = None
    question: str | None = None
    modifications: Mapping[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def from_decision(cls, decision: Any) -> Verdict:
        """Read a :class:`agbom.guardian.Decision` (or anything shaped like one)."""
        disposition = getattr(decision, "disposition", "deny")
        disposition = str(getattr(disposition, "value", disposition)).lower()
        refs = getattr(decision, "policy_references", ()) or ()
        rule_ids = tuple(
            str(getattr(r, "rule_id", None) or (r.get("rule_id") if isinstance(r, dict) else ""))
            for r in refs
        )
        ask = getattr(decision, "ask_details", None) or {}
        return cls(
            disposition=disposition,
            reasoning=getattr(decision, "reasoning", None),
            reason_codes=tuple(str(c) for c in (getattr(decision, "reason_codes", ()) or ())),
            rule_ids=tuple(r for r in rule_ids if r),
            chain_hash=getattr(decision, "chain_hash", None),
            question=ask.get("question") if isinstance(ask, Mapping) else None,
            modifications=getattr(decision, "modifications", None),
        )

    @property
    def code(self) -> str:
        """One machine-readable reason (the first reason code), for runtimes that take one."""
        return self.reason_codes[0] if self.reason_codes else f"policy_{self.disposition}"

    def message(self, subject: str = "") -> str:
        """A one-line human explanation naming the rules involved."""
        text = self.reasoning or f"{self.disposition} by agbom policy"
        if self.disposition == "modify":
            # Hooks cannot carry the Guardian's rewrite, so the step is refused instead (§6.5).
            text = (
                f"refused, as the required change cannot be applied through this hook: {text}; "
                "send it again without that content (for a secret, name where it is kept, "
                "such as an environment variable, instead of pasting it)"
            )
        unnamed = [r for r in dict.fromkeys(self.rule_ids) if r not in text]
        if unnamed:
            text += f" (rule {', '.join(unnamed)})"
        return f"agbom: {subject}: {text}" if subject else f"agbom: {text}"


class Adapter(Protocol):
    """A command/HTTP hook handler for one agent runtime."""

    name: str

    def handle(
        self, raw: bytes, guardian: Any, *, env: Mapping[str, str], fail_open: bool
    ) -> HookReply:
        """Translate ``raw`` in, let ``guardian`` decide, translate the decision out."""
        ...

    def malformed(
        self,
        reason: str,
        *,
        fail_open: bool,
        event: str | None = None,
        code: str = "malformed_input",
        hook_id: str = "agbom",
    ) -> HookReply:
        """The reply to input that cannot be handled, per the runtime's failure semantics.

        ``event`` is the runtime's event name when known (an observe-only event is never
        denied); ``code`` the machine-readable reason; ``hook_id`` Meerkat's Deny ``hook_id``.
        """
        ...
