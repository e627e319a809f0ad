"""What the Guardian decides at each method, and the state it keeps once a step commits.

``evaluate`` proposes a decision without touching session state; ``after_commit`` applies the
state change only after the chain entry is committed, so a refused or failed step leaves the
session as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from agbom.guardian.decision import Decision, DecisionCollector, PolicyReference
from agbom.guardian.secrets import REDACTED, secret_pointers
from agbom.guardian.session import SkillPair
from agbom.inventory import (
    AgBOM,
    AgBOMDiff,
    Component,
    ComponentGraph,
    ComponentType,
    InvalidAgBOM,
    apply_changed_payload,
    parse_component,
)
from agbom.inventory.graph import GraphUndo
from agbom.protocol import AcsError, Disposition, MethodSpec, lookup, validate_payload
from agbom.protocol import errors as codes
from agbom.rules import Action, EvalContext, Finding
from agbom.rules.matchers import covered_by_any, normalize_caps
from agbom.store import AgbomDocument, Digest, SkillRecord, StoreError

if TYPE_CHECKING:
    from agbom.guardian.core import Guardian
    from agbom.guardian.session import SessionState
    from agbom.guardian.signals import GuardianSignals
    from agbom.store import Store

# Steps whose content may be rewritten (MODIFY) to redact credentials.
_CONTENT_STEPS = frozenset(
    {
        "steps/userMessage",
        "steps/agentResponse",
        "steps/toolCallRequest",
        "steps/toolCallResult",
        "steps/knowledgeRetrieval",
        "steps/memoryContextRetrieval",
        "steps/memoryStore",
        "steps/agentTrigger",
        "steps/postCompact",
    }
)

# Rule findings (rule id and severity) kept with a refused AgBOM version; its chain entry
# holds the full decision.
REFUSED_FINDINGS_KEPT = 50

# Tools outside the session's inventory whose rule findings are remembered (per rule set and
# UTC day); past this many distinct tools the memory starts over, so hostile names cannot grow it.
MAX_REMEMBERED_TOOLS = 1024

# The digest a client sends for a skill it found no files for (hooks: not on the disk).
_NO_FILES = "0" * 64


def approval_hint(skill_id: str, digest: str, public_url: str | None) -> str:
    """What a skill denial tells the user to do: the exact approve command for the pair, and
    the review page's address of it when ``serve --public-url`` gave one."""
    import shlex
    from urllib.parse import urlencode

    command = (
        f"agbom skills approve {shlex.quote(skill_id)} --digest {shlex.quote(digest)} "
        '--reason "..."'
    )
    text = f"; to approve it: {command}"
    if public_url:
        query = urlencode({"id": skill_id, "digest": digest})
        text += f", or review it at {public_url.rstrip('/')}/ui/skill?{query}"
    return text


# Statuses of a skill verdict and the reason code each denial carries.
_SKILL_DENIAL = {
    "pending": "approval_pending",
    "unknown": "approval_pending",
    "denied": "skill_denied",
    "revoked": "skill_revoked",
    "expired": "approval_expired",
    "out_of_scope": "approval_out_of_scope",
}


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


@dataclass(slots=True)
class PreparedSnapshot:
    """The state-free work of an ``agbom/snapshot``, done ahead and off the Guardian's lock
    (see :meth:`Guardian.prepare`): the validated inventory, its graph, its findings and its
    stored form, or the payload's refusal."""

    params: dict[str, Any]  # the request's params object: the work is for that request only
    agent_id: str
    tenant_id: str | None
    agbom: AgBOM | None = None
    graph: ComponentGraph | None = None
    findings: list[Finding] | None = None
    document: Mapping[str, Any] | None = None
    error: AcsError | None = None


def _reference(finding: Finding) -> PolicyReference:
    return PolicyReference(policy_id=finding.pack or "agbom", rule_id=finding.rule_id)


class Policies:
    """The Guardian's per-method policy table."""

    def __init__(self, guardian: Guardian) -> None:
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

    # -- dispatch ------------------------------------------------------------------------------

    def evaluate(
        self, method: str, spec: MethodSpec, params: dict[str, Any], session: SessionState
    ) -> Decision:
        stale = self._pending
        if stale is not None and stale.undo is not None:
            stale.undo.undo()  # that step never reached after_commit: its change never happened
        self._pending = _Pending(request_id=params["request_id"])
        payload: dict[str, Any] = params.get("payload") or {}
        handler = _HANDLERS.get(method)
        if handler is not None:
            decision = handler(self, payload, params, session)
        elif method.startswith(("protocols/", "wrapped:")):
            decision = self._mcp_message(payload, params, session, method)
        else:
            decision = Decision.allow()
        if (
            decision.disposition is Disposition.ALLOW
            and method in _CONTENT_STEPS
            and self.g.config.redact_secrets
        ):
            decision = self._redact(method, payload, decision)
        return decision

    def entry_extras(self, method: str, session: SessionState) -> dict[str, Any]:
        pending = self._pending
        if pending is not None and pending.agbom is not None:
            return {"agbom_hash": pending.agbom.agbom_hash}
        if pending is not None and pending.entry:
            return dict(pending.entry)
        if pending is not None and pending.skill_pair is not None:
            # On the record so that a restored session knows how its registrations went.
            skill_id, algorithm, value = pending.skill_pair
            return {"skill": {"skill_id": skill_id, "algorithm": algorithm, "value": value}}
        return {}

    def after_commit(
        self, method: str, params: dict[str, Any], session: SessionState, decision: Decision
    ) -> None:
        pending, self._pending = self._pending, None
        allowed = decision.disposition is not Disposition.DENY
        if pending is not None and pending.undo is not None and not allowed:
            pending.undo.undo()
        store = self.g.store
        if method == "steps/sessionStart":
            session.started = True
            session.closed = not allowed
            self.g._persist_session(session, status="open" if allowed else "closed")
        elif method == "steps/sessionEnd":
            session.closed = True
            self.g._persist_session(session, status="closed")
            store.seal_session(session.session_id, session.head)
        elif method == "steps/turnStart" and allowed:
            session.turn_id = (params.get("payload") or {}).get("turn_id") or params[
                "metadata"
            ].get("turn_id")
        elif method == "steps/turnEnd":
            session.turn_id = None
        elif method == "steps/toolCallRequest":
            session.remember_tool_call(params["request_id"])
        elif method == "steps/skillLoad" and allowed:
            store.record_skill_event(session.session_id, params["payload"]["skill_id"], "load")
        if pending is not None and pending.skill_pair is not None:
            session.remember_registration(pending.skill_pair, allowed)
        elif method == "steps/subagentStart" and allowed:
            child = (params.get("payload") or {}).get("subagent_session_id")
            if isinstance(child, str):
                store.upsert_session(
                    child,
                    agent_id=session.agent_id,
                    tenant_id=session.tenant_id,
                    parent_session_id=session.session_id,
                    status="pending",
                )
        if pending is None:
            return
        if method in ("agbom/snapshot", "agbom/changed") and not allowed and pending.agbom:
            # Kept for audit and `agbom explain`, never as the session's inventory.
            store.save_agbom_version(
                session.session_id,
                agent_id=session.agent_id,
                document=pending.document or AgbomDocument(pending.agbom),
                agbom_hash=pending.agbom.agbom_hash,
                change={
                    **(pending.change or {}),
                    "decision": "deny",
                    # what refused it, for `agbom inventory` and the Fleet page (bounded)
                    "findings": [
                        {"rule_id": f.rule_id, "severity": f.severity.value}
                        for f in (pending.findings or [])[:REFUSED_FINDINGS_KEPT]
                    ],
                },
                accepted=False,
            )
            if method == "agbom/snapshot":
                # A snapshot states what the agent is made of, accepted or not: later diffs
                # apply to it. A refused diff was not applied, so the base stays as it was.
                session.refused_agbom = pending.agbom
        elif (
            method in ("agbom/snapshot", "agbom/changed") and allowed and pending.agbom is not None
        ):
            # Held until stored: the store finds the changed components by comparing the new
            # AgBOM's with this one's, for as long as it is alive (store/sqlite/versions.py).
            previous = session.agbom
            session.refused_agbom = None
            session.agbom = pending.agbom
            session.graph = pending.graph
            session.findings = list(pending.findings or [])
            session.findings_known = True
            session.agbom_version = store.save_agbom_version(
                session.session_id,
                agent_id=session.agent_id,
                document=pending.document or AgbomDocument(pending.agbom),
                agbom_hash=pending.agbom.agbom_hash,
                change=pending.change,
            )
            del previous
        elif pending.graph is not None and allowed and method.startswith("steps/skill"):
            session.graph = pending.graph

    # -- inventory -----------------------------------------------------------------------------

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

    def prepare_snapshot(
        self, params: dict[str, Any], agent_id: str, tenant_id: str | None, store: Store
    ) -> PreparedSnapshot:
        """The state-free part of :meth:`_snapshot`; safe to run off the Guardian's lock, with
        a store connection of the caller's own for the approvals the rules read."""
        prepared = PreparedSnapshot(params=params, agent_id=agent_id, tenant_id=tenant_id)
        payload = params.get("payload")
        spec = lookup("agbom/snapshot")
        assert spec is not None
        try:
            validate_payload(spec, payload)
            agbom = AgBOM.from_payload(payload)
        except AcsError as exc:
            prepared.error = exc
            return prepared
        except InvalidAgBOM as exc:
            prepared.error = AcsError(codes.INVALID_PARAMS, "invalid_agbom", exc.diagnostics())
            return prepared
        agbom = self._annotate(agbom, store)
        graph = ComponentGraph(agbom)
        context = self.context_for(agent_id, tenant_id, graph, store)
        prepared.agbom, prepared.graph = agbom, graph
        prepared.findings = self.g.rules.evaluate(graph, context=context)
        prepared.document = AgbomDocument(agbom)
        return prepared

    def _snapshot(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        pending = self._pending
        assert pending is not None
        prepared = self.g.prepared_for(params, session)
        if prepared is not None and prepared.agbom is not None:
            agbom, graph = prepared.agbom, prepared.graph
            findings = prepared.findings or []
            pending.document = prepared.document
        else:
            try:
                agbom = AgBOM.from_payload(payload)
            except InvalidAgBOM as exc:
                raise AcsError(codes.INVALID_PARAMS, "invalid_agbom", exc.diagnostics()) from exc
            agbom = self._annotate(agbom, self.g.store)
            graph = ComponentGraph(agbom)
            findings = self._evaluate(session, graph)
        pending.agbom, pending.graph, pending.findings = agbom, graph, findings
        pending.change = {"method": "agbom/snapshot"}
        return self._findings_decision(findings, what="this AgBOM")

    def _changed(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        # The base is the last AgBOM received: after a refused one, that one. A change to a
        # refused base is never judged against it (it never passed): the AgBOM it yields is
        # evaluated whole, and every finding on it counts, as for a new snapshot.
        refused_base = session.refused_agbom is not None and "agbom" not in payload
        base = session.refused_agbom if refused_base else session.agbom
        try:
            agbom, diff = apply_changed_payload(base, payload)
        except InvalidAgBOM as exc:
            raise AcsError(codes.INVALID_PARAMS, "invalid_agbom", exc.diagnostics()) from exc
        agbom, added, changed = self._annotate_change(base, agbom, diff)
        if refused_base:
            graph = ComponentGraph(agbom)
            findings = self._evaluate(session, graph)
        elif session.agbom is not None and "agbom" not in payload:
            # Incremental: patch the session's graph in place (taken back unless the change is
            # committed as allowed), re-evaluate only what changed.
            graph = session.ensure_graph()
            undo = graph.apply_undoable(added, diff.removed, changed)
            try:
                context = self._context(session, graph)
                touched = [
                    *(c.id for c in added),
                    *diff.removed,
                    *(c.id for c in changed),
                ]
                findings = self.g.rules.evaluate_incremental(
                    graph, touched, self.findings_of(session), context=context, moved=undo.nodes
                )
            except BaseException:
                undo.undo()
                raise
            assert self._pending is not None
            self._pending.undo = undo
        else:
            graph = ComponentGraph(agbom)
            findings = self._evaluate(session, graph)
        pending = self._pending
        assert pending is not None
        pending.agbom, pending.graph, pending.findings, pending.diff = agbom, graph, findings, diff
        pending.change = {
            "method": "agbom/changed",
            "added": [c.id for c in diff.added],
            "removed": list(diff.removed),
            "changed": [c.id for c in diff.changed],
            "artifact_changes": [a.to_json() for a in diff.artifact_changes],
        }
        if refused_base:
            pending.change["base"] = "refused"
        previous = set() if refused_base else {f.sort_key() for f in self.findings_of(session)}
        new_findings = [f for f in findings if f.sort_key() not in previous]
        decision = self._findings_decision(new_findings, what="this AgBOM change")
        if diff.artifact_changes and decision.disposition is Disposition.ALLOW:
            decision = replace(
                decision,
                reason_codes=(*decision.reason_codes, "artifact_changed"),
                reasoning="; ".join(
                    f"{a.component_id} {a.field} changed {a.old} -> {a.new}"
                    for a in diff.artifact_changes
                ),
            )
        return decision

    def observe_component(self, session: SessionState, raw: dict[str, Any]) -> None:
        """Record a component seen in use; anything new becomes a new AgBOM version.

        A component seen again with more references (a second tool of the same MCP server)
        is merged, so later tools stay linked to their server and its rules.
        """
        try:
            component = parse_component(raw, "observed component")
        except InvalidAgBOM:
            return
        current = session.agbom or AgBOM({}, {"agent": {"id": session.agent_id}})
        existing = current.get(component.id)
        if existing is not None:
            merged = dict(existing.data)
            grew = False
            for field, _, _ in component.references():
                old = list(merged.get(field) or [])
                for target in component.data.get(field) or []:
                    if target not in old:
                        old.append(target)
                        grew = True
                merged[field] = old
            if not grew:
                return
            component = Component(id=component.id, type=component.type, data=merged)
        components = dict(current.components)
        components[component.id] = component
        for _, target, _ in component.references():
            if target not in components:
                return  # the caller adds referenced components first
        agbom = AgBOM(components, current.header)
        previous = session.agbom  # held until stored, as in after_commit
        session.agbom = agbom
        graph = session.ensure_graph()
        graph.upsert(component)
        session.agbom_version = self.g.store.save_agbom_version(
            session.session_id,
            agent_id=session.agent_id,
            document=AgbomDocument(agbom),
            agbom_hash=agbom.agbom_hash,
            change={"method": "observed", "component": component.id},
        )
        del previous

    # -- tools ---------------------------------------------------------------------------------

    def _find_tool(self, session: SessionState, name: str, tool_id: str = "") -> Component | None:
        agbom = session.agbom
        if agbom is None:
            return None
        # An id names one tool exactly; a bare name can be shared by tools of several servers.
        by_id = agbom.get(tool_id) if tool_id else None
        if by_id is not None and by_id.type is ComponentType.TOOL:
            return by_id
        direct = agbom.get(name)
        if direct is not None and direct.type is ComponentType.TOOL:
            return direct
        # By name: an index built once per inventory (AgBOMs are replaced, never changed), so
        # the lookup costs the same at 10 or 10,000 components. The first tool of a name wins,
        # in inventory order, as the linear search did.
        if session.tools_by_name_of is not agbom:
            index: dict[str, Component] = {}
            for component in agbom.of_type(ComponentType.TOOL):
                index.setdefault(component.name, component)
            session.tools_by_name, session.tools_by_name_of = index, agbom
        return session.tools_by_name.get(name)

    def _tool_call(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        tool = payload.get("tool") or {}
        name = str(tool.get("name") or tool.get("id") or "")
        component = self._find_tool(session, name, str(tool.get("id") or ""))
        if component is None:
            if self.g.config.strict_inventory:
                return Decision.deny(
                    f"tool {name!r} is not in this session's AgBOM", "unknown_component"
                )
            findings = self._observed_tool_findings(
                session, name, tool.get("version"), tool.get("provider"), payload.get("capability")
            )
            return self._findings_decision(
                findings, what=f"tool {name}", extra_codes=("unknown_component",)
            )
        graph = session.ensure_graph()
        context = self._context(session, graph)
        findings = list(self.g.rules.evaluate_component(component, graph, context=context))
        for parent in graph.graph.predecessors(component.id):
            server = graph.component(parent)
            if server is not None and server.type is ComponentType.MCP_SERVER:
                server = self._live_drift(session, server)
                findings.extend(self.g.rules.evaluate_component(server, graph, context=context))
        return self._findings_decision(findings, what=f"tool {name}")

    def _live_drift(self, session: SessionState, server: Component) -> Component:
        """``server`` with the drift its live ``tools/list`` showed in this session, if any;
        drift an approval judged counts only while that approval stands (read now: a revoked
        approval stops pinning at once, on every replica)."""
        judged = server.data.get("tools_drift")
        if self.signals is None and self._approvals_only is None and judged is None:
            return server  # nothing can be remembered, nothing was judged: no import
        from agbom.guardian.signals import approval_stands, with_drift
        from agbom.scan.lock import TOOLS_DRIFT

        store = self.g.store
        found = self._pins().drifted(session.session_id, server.id, store)
        if found is None:
            if isinstance(judged, Mapping) and not approval_stands(store, judged):
                data = {k: v for k, v in server.data.items() if k != TOOLS_DRIFT}
                return Component(id=server.id, type=server.type, data=data)
            return server
        return Component(id=server.id, type=server.type, data=with_drift(server.data, found))

    def _observed_tool_findings(
        self, session: SessionState, name: str, version: Any, provider: Any, capability: Any
    ) -> Sequence[Finding]:
        """The rule findings for a tool the session's inventory does not hold.

        Without a graph they depend only on the tool as the call describes it, the rule set,
        and the UTC day (rule exceptions expire by date; no skill approval applies outside a
        graph), so they are remembered for calls that describe the tool in exactly the same
        plain strings: the rules run once per tool and day, not on every call. Anything else
        (a list of capabilities, a number for a version) is evaluated afresh each time.
        """
        now = datetime.now(UTC)
        scope = (self.g.rules, now.date())
        if self._observed_scope != scope:
            self._observed_findings.clear()
            self._observed_scope = scope
        key = (name, version, provider, capability)
        rememberable = all(type(part) is str or part is None for part in key)
        if rememberable:
            remembered = self._observed_findings.get(key)
            if remembered is not None:
                return remembered
        observed = Component(
            id=f"tool:{name}",
            type=ComponentType.TOOL,
            data={
                "id": f"tool:{name}",
                "type": "tool",
                "name": name,
                "version": version,
                "provider": provider,
                "capability": capability,
            },
        )
        context = replace(self._context(session, None), now=now)
        findings = tuple(self.g.rules.evaluate_component(observed, None, context=context))
        if rememberable:
            if len(self._observed_findings) >= MAX_REMEMBERED_TOOLS:
                self._observed_findings.clear()
            self._observed_findings[key] = findings
        return findings

    def _tool_result(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        ref = payload.get("request_id_ref")
        if isinstance(ref, str) and ref not in session.tool_calls:
            # A result that names no toolCallRequest of this session (none, or another
            # session's): recorded as a finding; whether it is grounds to deny is policy.
            if self._pending is not None:
                self._pending.entry = {
                    "request_id_ref": ref,
                    "finding": "request_id_ref_unresolved",
                }
            return Decision.allow(
                reason_codes=("request_id_ref_unresolved",),
                reasoning=f"request_id_ref {ref[:80]} names no toolCallRequest of this session",
            )
        return Decision.allow()

    def _mcp_message(
        self,
        payload: dict[str, Any],
        params: dict[str, Any],
        session: SessionState,
        method: str = "",
    ) -> Decision:
        if payload.get("method") == "tools/call":
            inner = payload.get("params") or {}
            name = inner.get("name") if isinstance(inner, dict) else None
            if isinstance(name, str):
                return self._tool_call({"tool": {"name": name}}, params, session)
        if "result" in payload and method.endswith("/tools/list"):
            return self._tools_list(payload, params, session)
        return Decision.allow()

    def _tools_list(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        """A wrapped ``tools/list`` result against the lock (``serve --lock``) or the server's
        approved pin (``agbom servers approve``, read now): drift is remembered for the
        session's tool calls to that server, and the result itself is decided by the server's
        rules (AGB-LOCK-001 denies it: the model never reads it)."""
        metadata = params.get("metadata") or {}
        named = metadata.get("mcp_server") if isinstance(metadata, dict) else None
        if self.signals is None and self._approvals_only is None:
            servers = (
                session.agbom.of_type(ComponentType.MCP_SERVER) if session.agbom is not None else []
            )
            names = [named] if isinstance(named, str) else []
            if not _has_server_approval(self.g.store, servers, names):
                return Decision.allow()
        drifts = self._pins().tools_list_drift(
            session.session_id,
            named if isinstance(named, str) else None,
            payload["result"],
            store=self.g.store,
            agbom=session.agbom,
        )
        if not drifts:
            return Decision.allow()
        from agbom.guardian.signals import with_drift

        graph = session.graph
        context = self._context(session, graph)
        findings: list[Finding] = []
        for server_id, drifted in drifts:
            # One pair, or under a lock that cannot tell whose list it is, each server it
            # could be (all of them drifted: their later tool calls are judged with it).
            current = session.agbom.get(server_id) if session.agbom is not None else None
            data = dict(current.data) if current is not None else {
                "id": server_id, "type": "mcp_server", "name": server_id, "tools": [],
            }  # fmt: skip
            server = Component(
                id=server_id, type=ComponentType.MCP_SERVER, data=with_drift(data, drifted)
            )
            findings.extend(self.g.rules.evaluate_component(server, graph, context=context))
        whose = drifts[0][0] if len(drifts) == 1 else f"one of {len(drifts)} locked servers"
        return self._findings_decision(findings, what=f"the tools/list of {whose}")

    def _redact(self, method: str, payload: dict[str, Any], decision: Decision) -> Decision:
        pointers = sorted(set(secret_pointers(payload)))
        if not pointers:
            return decision
        return replace(
            decision,
            disposition=Disposition.MODIFY,
            reasoning=f"{len(pointers)} credential-shaped value(s) redacted",
            reason_codes=(*decision.reason_codes, "secret_redacted"),
            modifications={"redactions": [{"path": p, "replacement": REDACTED} for p in pointers]},
        )

    # -- skills --------------------------------------------------------------------------------

    def _skill_register(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        config, store = self.g.config, self.g.store
        skill_id: str = payload["skill_id"]
        definition = payload["definition"]
        try:
            digest = Digest.from_wire(definition["digest"])
        except StoreError as exc:
            raise AcsError(codes.INVALID_PARAMS, "invalid_digest", str(exc)) from exc
        if self._pending is not None:
            self._pending.skill_pair = (skill_id, digest.algorithm, digest.value)
        composition = payload.get("composition") or {}
        declared = [str(c) for c in payload.get("declared_capabilities") or []]
        previously_approved = [d for d in store.approved_digests(skill_id) if d != digest]
        store.record_registration(
            skill_id=skill_id,
            digest=digest,
            ref=definition.get("ref"),
            declared_capabilities=declared,
            composition=composition,
            provenance=payload.get("registration_provenance"),
            agent_id=session.agent_id,
            tenant_id=session.tenant_id,
        )
        if "body" in definition:  # for the review page; never part of the decision
            from agbom.review.definition import remember

            remember(store, skill_id, digest, definition["body"])
        skill = self._skill_component(skill_id, definition, declared, composition, session)
        graph = self._graph_with(session, skill)
        self._pending_graph(graph)
        collector = DecisionCollector()
        if previously_approved:
            collector.codes.append("artifact_changed")
        verdict = store.verdict(
            skill_id, digest, agent_id=session.agent_id, tenant_id=session.tenant_id
        )
        if verdict.approved and verdict.record is not None:
            exceeding = _capabilities_exceeding(skill_id, declared, verdict.record)
            if exceeding is not None:
                collector.denials.append(exceeding)
        if not verdict.approved:
            code = _SKILL_DENIAL.get(verdict.status, "approval_pending")
            replaced = (
                f"; it replaces approved digest {previously_approved[0]}"
                if previously_approved
                else ""
            )
            message = f"skill {skill_id} {digest} is {verdict.status}{replaced}"
            message += approval_hint(skill_id, str(digest), config.public_url)
            if config.mode == "observe" and verdict.status in ("pending", "unknown"):
                collector.codes.extend(["observe_mode", code])
            else:
                collector.denials.append(
                    Decision.deny(
                        message,
                        code,
                        references=[PolicyReference(policy_id="agbom", rule_id="skill-approval")],
                    )
                )
        unknown = [t for t in composition.get("tools") or [] if graph.component(str(t)) is None]
        if unknown:
            # Capabilities of tools the inventory has never described cannot be checked: say so
            # on the record rather than pass silently (the approval still decides).
            collector.codes.append("composition_unverified")
        if config.deny_overbroad_capabilities:
            over = self._overbroad(declared, composition, graph)
            if over:
                collector.denials.append(
                    Decision.deny(
                        f"skill {skill_id} declares {', '.join(over)}, "
                        "which none of its tools expose",
                        "capabilities_overbroad",
                        references=[
                            PolicyReference(policy_id="agbom", rule_id="skill-least-privilege")
                        ],
                    )
                )
        self._skill_rules(collector, skill, graph, session)
        return collector.merge()

    def _skill_rules(
        self,
        collector: DecisionCollector,
        skill: Component,
        graph: ComponentGraph,
        session: SessionState,
    ) -> None:
        """Rule findings on a skill join ``collector``: denials, asks, and warnings."""
        context = self._context(session, graph)
        findings = self.g.rules.evaluate_component(skill, graph, context=context)
        verdict = self._findings_decision(findings, what=f"skill {skill.id}")
        if verdict.disposition is Disposition.DENY:
            collector.denials.append(verdict)
        elif verdict.disposition is Disposition.ASK:
            collector.asks.append(verdict)
        else:
            collector.warnings.extend(verdict.findings)
            collector.codes.extend(verdict.reason_codes)

    def _overbroad(
        self, declared: list[str], composition: Mapping[str, Any], graph: ComponentGraph
    ) -> list[str]:
        tool_ids = composition.get("tools") or []
        if not tool_ids or not declared:
            return []
        exposed: set[str] = set()
        for tool_id in tool_ids:
            component = graph.component(tool_id)
            if component is None:
                return []  # cannot judge tools we have never seen
            capability = component.get("capability")
            if isinstance(capability, str):
                exposed.add(capability)
            elif isinstance(capability, list):
                exposed.update(str(c) for c in capability)
        return [
            cap
            for cap in declared
            if not any(e == cap or e.startswith(cap.rstrip("*").rstrip(".") + ".") for e in exposed)
        ]

    def _skill_component(
        self,
        skill_id: str,
        definition: Mapping[str, Any],
        declared: list[str],
        composition: Mapping[str, Any],
        session: SessionState,
    ) -> Component:
        existing = session.agbom.get(skill_id) if session.agbom is not None else None
        data: dict[str, Any] = dict(existing.data) if existing is not None else {}
        data.update(
            {
                "id": skill_id,
                "type": "skill",
                "name": data.get("name") or skill_id,
                "description": data.get("description") or "",
                "definition": {"ref": definition.get("ref") or "", "digest": definition["digest"]},
                "declared_capabilities": declared,
            }
        )
        for key in ("tools", "mcp_servers", "a2a_peers", "models", "composed_skills"):
            if composition.get(key):
                data[key] = [str(x) for x in composition[key]]
        return Component(id=skill_id, type=ComponentType.SKILL, data=data)

    def _graph_with(self, session: SessionState, skill: Component) -> ComponentGraph:
        """A copy of the session graph with ``skill`` (and its composition edges) upserted."""
        graph = (
            ComponentGraph(session.agbom) if session.graph is None else _copy_graph(session.graph)
        )
        graph.upsert(skill)
        return graph

    def _pending_graph(self, graph: ComponentGraph) -> None:
        if self._pending is not None:
            self._pending.graph = graph

    def _composed_skills(self, skill_id: str, session: SessionState) -> set[str] | None:
        """The skills ``skill_id`` declares it may load, from the session or its registration."""
        graph = session.graph
        if graph is not None:
            component = graph.component(skill_id)
            if component is not None and component.type is ComponentType.SKILL:
                return set(component.get("composed_skills") or [])
        found: set[str] | None = None
        for record in self.g.store.skill_records(skill_id):
            composed = (record.composition or {}).get("composed_skills")
            found = (found or set()) | set(composed or [])
        return found

    def _skill_load(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        config, store = self.g.config, self.g.store
        skill_id: str = payload["skill_id"]
        try:
            digest = Digest.from_wire(payload["digest"])
        except StoreError as exc:
            raise AcsError(codes.INVALID_PARAMS, "invalid_digest", str(exc)) from exc
        path = [str(step.get("skill_id")) for step in payload.get("load_path") or []]
        if not path or path[-1] != skill_id:
            path.append(skill_id)
        shown = " -> ".join(path)
        collector = DecisionCollector()

        def deny(message: str, code: str, rule: str) -> None:
            collector.denials.append(
                Decision.deny(
                    message,
                    code,
                    references=[PolicyReference(policy_id="agbom", rule_id=rule)],
                    findings=[{"rule_id": rule, "path": path, "components": [skill_id]}],
                )
            )

        # A load stands on the registration of its pair: one this session saw denied (over-broad,
        # beyond its approval, ...) cannot be loaded, whatever the load message itself carries.
        if session.registrations.get((skill_id, digest.algorithm, digest.value)) is False:
            deny(
                f"the registration of skill {skill_id} {digest} in this session was denied; "
                "a load cannot stand on it (register the skill again once it is approved)",
                "registration_denied",
                "skill-load-registration",
            )
        # The Guardian checks the binding itself; digest_verified from the framework is ignored.
        verdict = store.verdict(
            skill_id, digest, agent_id=session.agent_id, tenant_id=session.tenant_id
        )
        missing = digest.algorithm == "sha256" and digest.value == _NO_FILES
        if missing and not verdict.approved:
            # What a hook sends for a skill it cannot find or digest: not a changed skill.
            deny(
                f"skill {skill_id} was not found (or could not be digested) where the agent "
                "runs, so there is nothing to check against an approval",
                "skill_not_found",
                "skill-load-approval",
            )
        elif not verdict.approved:
            approved = store.approved_digests(skill_id)
            hint = approval_hint(skill_id, str(digest), config.public_url)
            if approved and verdict.status in ("unknown", "pending"):
                deny(
                    f"skill {skill_id} digest {digest} differs from the approved {approved[0]}"
                    + hint,
                    "digest_mismatch",
                    "skill-load-digest",
                )
            elif verdict.status in ("pending", "unknown") and config.mode == "observe":
                collector.codes.extend(["observe_mode", "skill_unverifiable"])
            else:
                code = (
                    "skill_unverifiable"
                    if verdict.status == "unknown"
                    else _SKILL_DENIAL.get(verdict.status, "skill_unverifiable")
                )
                deny(
                    f"skill {skill_id} {digest} cannot be tied to an approved registration "
                    f"({verdict.status})" + hint,
                    code,
                    "skill-load-approval",
                )
        load_declared = payload.get("declared_capabilities")
        if verdict.approved and verdict.record is not None and isinstance(load_declared, list):
            exceeding = _capabilities_exceeding(
                skill_id, [str(c) for c in load_declared], verdict.record
            )
            if exceeding is not None:
                collector.denials.append(exceeding)
        if len(set(path)) != len(path):
            deny(f"load path revisits a skill: {shown}", "load_path_cycle", "skill-load-cycle")
        if len(path) > config.max_load_path_depth:
            deny(
                f"load path is {len(path)} deep, over the limit of "
                f"{config.max_load_path_depth}: {shown}",
                "load_path_too_deep",
                "skill-load-depth",
            )
        for parent, child in zip(path, path[1:], strict=False):
            allowed = self._composed_skills(parent, session)
            if allowed is None or child not in allowed:
                deny(
                    f"{parent} loaded {child}, which is outside its declared composed_skills "
                    f"(path {shown})",
                    "composition_violation",
                    "skill-load-composition",
                )
                break
        record = verdict.record
        skill = self._skill_component(
            skill_id,
            {"ref": record.ref if record else "", "digest": digest.to_wire()},
            list(record.declared_capabilities) if record else [],
            record.composition if record else {},
            session,
        )
        graph = self._graph_with(session, skill)
        self._pending_graph(graph)
        self._skill_rules(collector, skill, graph, session)
        return collector.merge()

    def _skill_unload(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        skill_id = payload["skill_id"]
        count = self.g.store.record_skill_event(session.session_id, skill_id, "unload")
        codes_: list[str] = []
        if count >= self.g.config.skill_churn_threshold:
            codes_.append("skill_churn")
        return Decision.allow(
            reason_codes=codes_,
            reasoning=f"{skill_id} unloaded {count} times in this session" if codes_ else None,
        )

    # -- lifecycle -----------------------------------------------------------------------------

    def _session_start(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        stored = self.g.store.get_session(session.session_id)
        if stored and stored.get("parent_session_id"):
            session.parent_session_id = stored["parent_session_id"]
        return Decision.allow()

    def _subagent_start(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        child = payload.get("subagent_session_id")
        if child == session.session_id:
            return Decision.deny(
                "a subagent needs a session id of its own", "invalid_subagent_session"
            )
        if self.g.store.get_session(str(child)) is not None:
            return Decision.deny(f"session {child} already exists", "subagent_session_exists")
        # A session whose inventory carries denied components may not spawn more agents.
        denied = [f for f in self.findings_of(session) if f.action is Action.DENY]
        if denied:
            return self._findings_decision(denied, what="spawning a subagent")
        return Decision.allow()

    def _subagent_stop(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        child = payload.get("subagent_session_id")
        final = payload.get("final_chain_hash")
        if isinstance(child, str) and isinstance(final, str):
            head = self.g.store.chain_head(child)
            if head is not None and head != final:
                return Decision.allow(
                    reason_codes=["chain_mismatch"],
                    reasoning=f"subagent {child} reported a final chain hash that is not its head",
                )
        return Decision.allow()

    def _session_end(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        final = payload.get("final_chain_hash")
        if isinstance(final, str) and final != session.head:
            return Decision.allow(
                reason_codes=["chain_mismatch"],
                reasoning="final_chain_hash is not the Guardian's chain head",
            )
        return Decision.allow()


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


def _copy_graph(graph: ComponentGraph) -> ComponentGraph:
    clone = ComponentGraph()
    clone.graph = graph.graph.copy()
    clone.agent = dict(graph.agent)
    return clone


def _capabilities_exceeding(
    skill_id: str, declared: Iterable[str], record: SkillRecord
) -> Decision | None:
    """A denial when ``declared`` asks for capabilities the approved ``record`` does not cover.

    Coverage is the rules layer's (``fs`` and ``fs.*`` cover ``fs.read``), so this check and
    ``unless: approved_capabilities`` agree on what an approval grants.
    """
    approved = record.declared_capabilities
    granted = normalize_caps(approved)
    extra = [
        cap
        for cap in dict.fromkeys(c.strip() for c in declared)
        if cap and not covered_by_any(granted, cap)
    ]
    if not extra:
        return None
    return Decision.deny(
        f"skill {skill_id} {record.digest} declares {', '.join(extra)}, beyond what it was "
        f"approved with ({', '.join(approved) or 'no capabilities'}); approve the pair again "
        "with these capabilities to allow them",
        "capabilities_exceed_approval",
        references=[PolicyReference(policy_id="agbom", rule_id="skill-approved-capabilities")],
    )


_HANDLERS = {
    "agbom/snapshot": Policies._snapshot,
    "agbom/changed": Policies._changed,
    "steps/toolCallRequest": Policies._tool_call,
    "steps/toolCallResult": Policies._tool_result,
    "steps/skillRegister": Policies._skill_register,
    "steps/skillLoad": Policies._skill_load,
    "steps/skillUnload": Policies._skill_unload,
    "steps/sessionStart": Policies._session_start,
    "steps/subagentStart": Policies._subagent_start,
    "steps/subagentStop": Policies._subagent_stop,
    "steps/sessionEnd": Policies._session_end,
}
