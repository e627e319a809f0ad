"""What the Guardian decides at each method, and the state it keeps once a step commits.

``evaluate`` proposes a decision without touching session state; ``after_commit`` applies the
state change only after the chain entry is committed, so a refused or failed step leaves the
session as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from agbom.guardian import redaction
from agbom.guardian.decision import Decision, PolicyReference
from agbom.guardian.flow import FlowGuard
from agbom.inventory import (
    Component,
    ComponentType,
)
from agbom.protocol import Disposition, MethodSpec
from agbom.rules import Action, Finding
from agbom.store import AgbomDocument

if TYPE_CHECKING:
    from agbom.guardian.session import SessionState

from agbom.guardian.context import PreparedSnapshot
from agbom.guardian.policy_base import (
    REFUSED_FINDINGS_KEPT,
    PolicyBase,
    _has_server_approval,
    _Pending,
    kept_findings,
)
from agbom.guardian.policy_inventory import InventoryPolicies
from agbom.guardian.policy_skills import SkillPolicies, approval_hint, command_store

__all__ = [
    "MAX_REMEMBERED_TOOLS",
    "REFUSED_FINDINGS_KEPT",
    "Policies",
    "PolicyBase",
    "PreparedSnapshot",
    "approval_hint",
]

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

# Tools outside the session's inventory whose rule findings are remembered (per rule set and
# UTC day); past this many distinct tools the memory starts over, so hostile names cannot grow it.
MAX_REMEMBERED_TOOLS = 1024


class Policies(InventoryPolicies, SkillPolicies):
    """The Guardian's per-method policy table: dispatch, the state a committed step applies,
    tool calls, redaction and the session lifecycle; inventory and skill methods come from
    the classes it joins."""

    @cached_property
    def flow(self) -> FlowGuard:
        """Each session's provenance lineage and the flow rules' verdicts."""
        return FlowGuard(self)

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
        # Information flow (guardian/flow.py): lineage, acs-provenance, flow rules.
        decision, flow_entry = self.flow.decide(method, payload, params, session, decision)
        if flow_entry:
            self._pending.entry = {**(self._pending.entry or {}), **flow_entry}
        if self.runtime is not None:  # serve --pack: the tool call as it is about to run
            from agbom.guardian.runtime_pack import combine

            judged = combine(decision, self.runtime.evaluate(method, payload))
            # The lineage ids the flow rules relied on stay cited whichever verdict stands
            # (a runtime denial is merged afresh, without them: issue 42 item 12).
            decision = replace(judged, cited_provenance_ids=decision.cited_provenance_ids)
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
        self.flow.commit(session, pending.entry if pending is not None else None)
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
                    "findings": kept_findings(pending.findings),
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
            # its findings kept with it (warnings: a deny would have refused it), for the
            # findings of each component across the fleet (agbom/store/_fleet_scan.py)
            found = kept_findings(pending.findings)
            session.agbom_version = store.save_agbom_version(
                session.session_id,
                agent_id=session.agent_id,
                document=pending.document or AgbomDocument(pending.agbom),
                agbom_hash=pending.agbom.agbom_hash,
                change={**(pending.change or {}), "findings": found} if found else pending.change,
            )
            del previous
        elif pending.graph is not None and allowed and method.startswith("steps/skill"):
            session.graph = pending.graph

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
        if self.g.config.require_server_approval:
            refused = self._unapproved_server(session, tool, component)
            if refused is not None:
                return refused
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

    def _unapproved_server(
        self, session: SessionState, tool: Mapping[str, Any], component: Component | None
    ) -> Decision | None:
        """``serve --require-server-approval``: the denial of a call through an MCP server
        that no approval stands for (never approved, or revoked), or of a tool its approved
        tool set does not hold (the set grew: a tool set is approved whole), naming how to
        approve it; None for a built-in tool or a pinned tool of an approved server (whose
        tool set the pins then judge).
        The server is the call's ``provider`` (``mcp__<server>__<tool>``) or the tool's
        server in the session's AgBOM."""
        names: list[str] = []
        provider = tool.get("provider")
        if isinstance(provider, str) and provider.strip():
            names.append(provider)
        if component is not None and session.agbom is not None:
            graph = session.ensure_graph()
            for parent in graph.graph.predecessors(component.id):
                server = graph.component(parent)
                if server is not None and server.type is ComponentType.MCP_SERVER:
                    names.extend(n for n in (server.id, server.name) if n)
        if not names:
            return None
        rows = self.g.store.server_pins_for(names)
        approved = next((row for row in rows if row.approved), None)
        called = tool.get("name")
        pinned = approved.pin.get("tools") if approved is not None else None
        if approved is not None and (
            not isinstance(called, str) or not isinstance(pinned, Mapping) or called in pinned
        ):
            return None  # approved, and the tool is in the pinned set (the pins judge it)
        from agbom.invisible import escape  # only on the way to a denial

        shown = escape(names[0][:200])
        if approved is not None:
            status = f"has no tool {escape(str(called)[:200])} in its approved tool set"
        else:
            status = "had its approval revoked" if rows else "was never approved"
        hint = f"agbom servers approve {shown} --tools-from SNAPSHOT"
        location = getattr(self.g.store, "location", None)
        if isinstance(location, str) and location:
            hint += f" --db {command_store(location)}"
        public = self.g.config.public_url
        page = (
            f" or approve it at {public}/ui/servers"
            if public
            else (" or approve it in the review page's server queue")
        )
        return Decision.deny(
            f"MCP server {shown} {status} (serve --require-server-approval): run '{hint}'{page}",
            "server_not_approved",
            references=[PolicyReference(policy_id="agbom", rule_id="server-approval")],
        )

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
        """Each credential-shaped span replaced, the rest of its field kept (a MODIFY); a
        DENY when the payload cannot be rewritten safely (see :mod:`agbom.guardian.redaction`)."""
        found = redaction.plan(payload)
        if found is None:
            return decision
        if found.refusal is not None:
            return replace(
                decision,
                disposition=Disposition.DENY,
                reasoning=f"credentials in this step cannot be redacted: {found.refusal}",
                reason_codes=(*decision.reason_codes, "secret_unredactable"),
                policy_references=(
                    *decision.policy_references,
                    PolicyReference(policy_id="agbom", rule_id="secret-redaction"),
                ),
            )
        fields = len(found.redactions)
        return replace(
            decision,
            disposition=Disposition.MODIFY,
            reasoning=f"{found.spans} credential-shaped value(s) redacted in {fields} field(s); "
            "the rest of each field is kept",
            reason_codes=(*decision.reason_codes, "secret_redacted"),
            modifications={"redactions": [dict(r) for r in found.redactions]},
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
