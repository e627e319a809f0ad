"""The inventory methods' policies: ``agbom/snapshot``, ``agbom/changed`` and components
observed in use (split from :mod:`agbom.guardian.policies`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agbom.guardian.decision import Decision
from agbom.inventory import (
    AgBOM,
    Component,
    ComponentGraph,
    InvalidAgBOM,
    apply_changed_payload,
    parse_component,
)
from agbom.protocol import AcsError, Disposition, lookup, validate_payload
from agbom.protocol import errors as codes
from agbom.store import AgbomDocument

if TYPE_CHECKING:
    from agbom.guardian.session import SessionState
    from agbom.store import Store

from agbom.guardian.context import PreparedSnapshot
from agbom.guardian.policy_base import PolicyBase, kept_findings


class InventoryPolicies(PolicyBase):
    """Snapshots and changes of the AgBOM: validated, annotated, judged by the rules."""

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
            change=_observed(component.id, session),
        )
        del previous


def _observed(component_id: str, session: SessionState) -> dict[str, Any]:
    """The change of a version that adds an observed component: the findings known of the
    session's AgBOM stay with it (the new component is not judged here)."""
    found = kept_findings(session.findings) if session.findings_known else []
    change: dict[str, Any] = {"method": "observed", "component": component_id}
    return {**change, "findings": found} if found else change
