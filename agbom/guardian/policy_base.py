"""The state and shared judgement every per-method policy builds on: the Guardian, the step
being decided (its pending state change), the rule context for a session, and how rule
findings become a decision.

Split from :mod:`agbom.guardian.policies` along its seams: inventory
(:mod:`agbom.guardian.policy_inventory`) and skills (:mod:`agbom.guardian.policy_skills`)
build on this class, and :class:`agbom.guardian.policies.Policies` joins them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from agbom.guardian.context import PolicyHost
from agbom.guardian.decision import Decision, DecisionCollector, PolicyReference
from agbom.guardian.session import SkillPair
from agbom.inventory import (
    AgBOM,
    AgBOMDiff,
    Component,
    ComponentGraph,
    ComponentType,
)
from agbom.inventory.graph import GraphUndo
from agbom.protocol import Disposition
from agbom.rules import Action, EvalContext, Finding
from agbom.store import Digest, StoreError

if TYPE_CHECKING:
    from agbom.guardian.runtime_pack import RuntimePacks
    from agbom.guardian.session import SessionState
    from agbom.guardian.signals import GuardianSignals
    from agbom.store import Store


@dataclass(slots=True)
class _Pending:
    """State a step will apply to its session once its chain entry is committed."""

    request_id: str
    agbom: AgBOM | None = None
    graph: ComponentGraph | None = None
    findings: list[Finding] | None = None
    diff: AgBOMDiff | None = None
    change: Mapping[str, Any] | None = None
    skill_pair: SkillPair | None = None  # the (skill_id, digest) a skillRegister names
    entry: dict[str, Any] | None = None  # more fields for the step's chain entry
    document: Mapping[str, Any] | None = None  # agbom's canonical document, when already built
    undo: GraphUndo | None = None  # takes back the diff patched into the session's graph


def _reference(finding: Finding) -> PolicyReference:
    return PolicyReference(policy_id=finding.pack or "agbom", rule_id=finding.rule_id)


# Rule findings (rule id, severity, action, the components each names) kept with an AgBOM
# version, refused or accepted; a refused one's chain entry holds the full decision.
REFUSED_FINDINGS_KEPT = 50
REFUSED_COMPONENTS_KEPT = 16  # of each kept finding


def kept_findings(findings: Any) -> list[dict[str, Any]]:
    """The findings stored with an AgBOM version (bounded), which of them refused which
    components (a deny's), and which named which (a warning's: the fleet's findings)."""
    return [
        {
            "rule_id": f.rule_id,
            "severity": f.severity.value,
            "action": f.action.value,
            "components": list(f.components[:REFUSED_COMPONENTS_KEPT]),
        }
        for f in (findings or [])[:REFUSED_FINDINGS_KEPT]
    ]


class PolicyBase:
    """What every per-method policy shares: the Guardian, the pending step, rule context."""

    def __init__(self, guardian: PolicyHost) -> None:
        self.g = guardian
        self._pending: _Pending | None = None
        # Findings of tools outside any inventory, by what the call said about the tool; valid
        # for one rule set on one UTC day (the day decides which rule exceptions have expired).
        self._observed_findings: dict[tuple[Any, ...], tuple[Finding, ...]] = {}
        self._observed_scope: tuple[object, date] | None = None
        # `serve --osv/--lock`: advisories and tool-set drift put on each AgBOM as it is
        # parsed (guardian/signals.py). None: no export and no lock; the servers' approved
        # pins are still read from the store (_pins()).
        self.signals: GuardianSignals | None = None
        self._approvals_only: GuardianSignals | None = None
        # `serve --pack`: the runtime packs each tool call is checked against, loaded here
        # so that a bad pack stops the Guardian from starting (guardian/runtime_pack.py).
        self.runtime: RuntimePacks | None = None
        config = guardian.config
        if config.runtime_packs:
            from agbom.guardian.runtime_pack import RuntimePacks, load_pack

            self.runtime = RuntimePacks(
                [
                    load_pack(
                        name,
                        egress_allow=config.egress_allow,
                        tools=config.known_tools,
                        egress=config.egress,
                    )
                    for name in config.runtime_packs
                ]
            )

    def _pins(self) -> GuardianSignals:
        """The signals to annotate with: ``serve``'s, else ones with no export and no lock
        that judge only the servers approved in the store (imported on first use: the
        signals bring the scanner's modules, a quarter second that ``agbom hook`` must not
        pay when no server is approved)."""
        if self.signals is not None:
            return self.signals
        if self._approvals_only is None:
            from agbom.guardian.signals import GuardianSignals

            self._approvals_only = GuardianSignals(None, None)
        return self._approvals_only

    def _annotate(self, agbom: AgBOM, store: Store) -> AgBOM:
        """``agbom`` with the signals on it (``serve --osv/--lock``, approved server pins).

        Without ``serve``'s signals this is one lookup of the AgBOM's server names (none
        without an MCP server); only an AgBOM with an approval row goes on to be compared
        (and then looks its rows up again, in the signals)."""
        if self.signals is None and self._approvals_only is None:
            if not _has_server_approval(store, agbom.of_type(ComponentType.MCP_SERVER)):
                return agbom
        return self._pins().annotate(agbom, store)

    def _annotate_change(
        self, before: AgBOM | None, agbom: AgBOM, diff: AgBOMDiff
    ) -> tuple[AgBOM, tuple[Component, ...], tuple[Component, ...]]:
        """``agbom`` (``before`` with ``diff`` applied) annotated, and the diff's components
        as annotated plus the others whose signals moved (see :func:`_annotated_change`).

        When signals are in use and ``before`` carries them, only what the diff touched is
        judged again (``GuardianSignals.annotate_change``): a one-tool change to a large
        AgBOM then costs in proportion to the change, not to the AgBOM."""
        store = self.g.store
        signals = self.signals if self.signals is not None else self._approvals_only
        if before is not None and signals is not None:
            found = signals.annotate_change(before, agbom, store)
            if found is not None:
                annotated, replaced = found
                return _as_annotated(annotated, diff, sorted(replaced - _named(diff)))
        return _annotated_change(self._annotate, store, before, agbom, diff)

    # -- rule findings -----------------------------------------------------------------------------

    def findings_of(self, session: SessionState) -> list[Finding]:
        """The rule findings on the session's AgBOM. A session restored from the store has its
        AgBOM but not its findings: they are evaluated again here, once, on first use, so
        that a restart or a stale replica neither forgets a finding (a change or a subagent
        allowed that the findings refuse) nor takes every one for new."""
        if not session.findings_known:
            if session.agbom is not None:
                session.findings = self._evaluate(session, session.ensure_graph())
            session.findings_known = True
        return session.findings

    def _evaluate(self, session: SessionState, graph: ComponentGraph) -> list[Finding]:
        """Every rule on ``graph``, with what the session's skills were approved with."""
        return self.g.rules.evaluate(graph, context=self._context(session, graph))

    def _context(self, session: SessionState, graph: ComponentGraph | None) -> EvalContext:
        return self.context_for(session.agent_id, session.tenant_id, graph, self.g.store)

    def context_for(
        self, agent_id: str, tenant_id: str | None, graph: ComponentGraph | None, store: Store
    ) -> EvalContext:
        """Rule context: what each skill in ``graph`` was approved with.

        The approval is looked up for the exact artifact in the graph (the skill's digest),
        for this agent and tenant: another digest's approval, or one out of scope or expired,
        approves nothing here.
        """

        def approved_capabilities(skill_id: str) -> set[str] | None:
            component = graph.component(skill_id) if graph is not None else None
            pair = component.digest if component is not None else None
            if not pair:
                return None
            try:
                digest = Digest(algorithm=pair[0], value=pair[1])
            except StoreError:
                return None
            verdict = store.verdict(skill_id, digest, agent_id=agent_id, tenant_id=tenant_id)
            if not verdict.approved or verdict.record is None:
                return None
            return set(verdict.record.declared_capabilities)

        return EvalContext(approved_capabilities=approved_capabilities)

    def _findings_decision(
        self, findings: Iterable[Finding], *, what: str, extra_codes: tuple[str, ...] = ()
    ) -> Decision:
        """Deny findings deny, ask findings ask, warnings ride along.

        An ASK proposed at a hook that does not allow it is turned into the most protective
        disposition the hook allows by the clamp (DEFER, else DENY): an ask rule never fails
        open.
        """
        collector = DecisionCollector()
        asks: list[Finding] = []
        for finding in findings:
            if finding.action is Action.DENY:
                collector.denials.append(
                    Decision.deny(
                        f"{finding.rule_id}: {finding.message}",
                        "rule_violation",
                        finding.rule_id,
                        references=[_reference(finding)],
                        findings=[finding.to_json()],
                    )
                )
            elif finding.action is Action.ASK:
                asks.append(finding)
            else:
                collector.warnings.append(finding.to_json())
                collector.codes.append(f"warn:{finding.rule_id}")
        collector.codes.extend(extra_codes)
        if not collector.denials and asks:
            first = asks[0]
            collector.asks.append(
                Decision(
                    disposition=Disposition.ASK,
                    reasoning=f"{first.rule_id}: {first.message}",
                    reason_codes=("rule_requires_approval", *(a.rule_id for a in asks)),
                    policy_references=tuple(_reference(a) for a in asks),
                    findings=tuple(a.to_json() for a in asks),
                    ask_details={
                        "approver": {"type": "human", "id": "platform-team"},
                        "question": f"Allow {what}? {first.message}",
                        "context": first.explanation,
                        "options": ["allow", "deny"],
                        "timeout_seconds": 300,
                        "timeout_disposition": "deny",
                    },
                )
            )
        return collector.merge()


def _has_server_approval(
    store: Store, servers: Sequence[Component], names: Sequence[str] = ()
) -> bool:
    """Whether the store holds an approval row (approved or revoked) for any of ``servers``
    (by id or name) or ``names``: one lookup, none when there is nothing to look up."""
    wanted = [*names, *(s.id for s in servers), *(s.name for s in servers if s.name)]
    return bool(wanted) and bool(store.server_pins_for(wanted))


def _annotated_change(
    annotate: Callable[[AgBOM, Store], AgBOM],
    store: Store,
    before: AgBOM | None,
    agbom: AgBOM,
    diff: AgBOMDiff,
) -> tuple[AgBOM, tuple[Component, ...], tuple[Component, ...]]:
    """``agbom`` annotated (``serve --osv/--lock``, approved server pins) and the diff's
    components as annotated.

    A component the change did not name can still gain or lose a signal (a server whose tool
    set drifted because one of its tools changed, every component after a reload of the
    export): such components join ``changed``, so the incremental evaluation sees them.
    """
    from agbom.guardian.signals import SIGNAL_FIELDS

    annotated = annotate(agbom, store)
    if annotated is agbom:
        return agbom, diff.added, diff.changed
    named = _named(diff)
    moved: list[str] = []
    if before is not None:
        for component in annotated:
            was = before.get(component.id) if component.id not in named else None
            if was is not None and any(
                component.data.get(k) != was.data.get(k) for k in SIGNAL_FIELDS
            ):
                moved.append(component.id)
    return _as_annotated(annotated, diff, moved)


def _named(diff: AgBOMDiff) -> set[str]:
    """The ids of the components a diff brings (added or changed)."""
    return {c.id for c in diff.added} | {c.id for c in diff.changed}


def _as_annotated(
    annotated: AgBOM, diff: AgBOMDiff, moved: Iterable[str]
) -> tuple[AgBOM, tuple[Component, ...], tuple[Component, ...]]:
    """``annotated``, the diff's components as annotated, and as changed also the components
    ``moved`` (ids in id order) that the diff did not name but whose signals moved."""
    added = tuple(annotated.get(c.id) or c for c in diff.added)
    changed = [annotated.get(c.id) or c for c in diff.changed]
    changed.extend(c for c in (annotated.get(cid) for cid in moved) if c is not None)
    return annotated, added, tuple(changed)
