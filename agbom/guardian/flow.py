"""Information flow in the Guardian (issue 33): each session's provenance lineage, the
ACS-Provenance all-or-nothing check, and the rule pack's ``flow`` rules at tool calls.

Per step, in the decision path (``Policies.evaluate``):

1. read the step's Provenance objects (:func:`agbom.protocol.provenance.step_provenance`),
   each in the form its chain entry records (source ids cut and redacted), so that a lineage
   rebuilt from the chain is the one held in memory; in a session held to acs-provenance (the
   ClientHello claimed it as a ``deterministic`` producer: on the session's record), a
   data-bearing field without one refuses the request (``-32602 provenance_missing``: the
   spec's all-or-nothing rule, applied here because the strict ``*.acs-provenance.json``
   schemas are not in the shared ACS material);
2. a session met mid-way (a restart, another replica, one dropped from memory) first folds
   the objects its chain entries recorded, before any new object joins or a call is judged:
   an id keeps the facts it was first delivered with (issue 39);
3. at ``steps/toolCallRequest`` and a wrapped MCP ``tools/call`` (whose arguments' objects
   are read from ``params._meta["acs/provenance"]``), evaluate the flow rules against the
   lineage *before* this step's own objects join it, so an argument cannot vouch for itself;
   within :data:`FLOW_WORK_BUDGET` (past it: deny, ``flow_budget_exceeded``); the decision
   cites the lineage ids it relied on;
4. record every one of the step's objects in its chain entry; they join the lineage once the
   entry is committed (:meth:`FlowGuard.commit`).

The lineages are held in memory, bounded per session (:data:`LINEAGE_MAX_BYTES`) and in
total (:data:`FLOW_MAX_BYTES`, least recently used sessions dropped, rebuilt from the chain
when next needed).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from agbom.guardian.decision import Decision, DecisionCollector, PolicyReference
from agbom.guardian.policy_base import _reference
from agbom.guardian.redaction import redact_text
from agbom.protocol import AcsError, Disposition
from agbom.protocol import errors as codes
from agbom.protocol.provenance import (
    MAX_DERIVED_FROM,
    MAX_SOURCE_ID_CHARS,
    ProvenanceNode,
    ProvenanceProblem,
    StepProvenance,
    data_bearing_fields,
    step_provenance,
    wrapped_tool_call,
)
from agbom.rules import Action, Finding
from agbom.rules.flow import FlowCall, FlowRule, evaluate_call, flow_rules, source_filters
from agbom.rules.lineage import DEFAULT_TRUST, Lineage, Trust, TrustPolicy
from agbom.store import StoreError

if TYPE_CHECKING:
    from agbom.guardian.context import PolicyHost
    from agbom.guardian.session import SessionState
    from agbom.inventory import Component
    from agbom.rules import RuleSet

LINEAGE_MAX_BYTES = 16 * 1024 * 1024
"""Bound on one session's lineage (estimated bytes; about 50,000 Provenance objects)."""
FLOW_MAX_BYTES = 256 * 1024 * 1024
"""Bound on all sessions' lineages together; past it the least recently used are dropped."""
_SESSION_OVERHEAD = 1024  # a session's flow entry before it holds any node
_SINK_MEMO = 4096
WITHHELD = "[withheld by agbom: untrusted lineage]"
"""What a ``modify`` flow rule puts in place of the argument's value."""
FLOW_WORK_BUDGET = 1_000_000
"""Most lineage steps the flow rules may take to judge one call (one step: a dict lookup).
Per argument with provenance, once for its trust and once more for each rule with a ``source``
filter: its parents, and a path of at most 12 hops, each of which may look over one node's
parents. The figure is worked out from the request before the lineage is looked at, whatever
the lineage holds; a call over it is denied (``flow_budget_exceeded``) without being judged.
20 arguments of 256 parents each come to 66,820 steps per pass (docs/performance.md has
what a pass costs)."""
MAX_CITED = 256
"""Most lineage ids one decision cites (on the wire and in its chain entry)."""
MAX_CITED_FACTS = 32
"""Cited objects whose facts (origin, source id, step, field) the chain entry records."""

_CALL_METHODS = frozenset({"steps/toolCallRequest"})
# Steps whose chain entry carries their own fields (Policies.entry_extras): none of them
# bears data, and none gets the profile marker.
_OWN_ENTRY = ("steps/skill", "agbom/")


@dataclass
class _SessionFlow:
    lineage: Lineage
    recorded: bool = False  # an entry of this process carries the ``acs_provenance`` marker
    complete: bool = True  # False: entries this process did not decide may hold objects
    expected: int = 0  # the seq the session will have at its next step, if none is missed
    folded: int = 0  # the entries up to this seq were read from the store
    legacy_profile: bool | None = None  # a session stored before the profile was on record


@dataclass
class _Staged:
    """A step's objects, to join its session's lineage once its entry is committed."""

    session_id: str
    state: _SessionFlow
    nodes: tuple[ProvenanceNode, ...]
    ends: bool


class FlowPolicies(Protocol):
    """What the flow guard uses of the policies that own it
    (:class:`agbom.guardian.policies.Policies` is one), so that it does not import them."""

    @property
    def g(self) -> PolicyHost: ...

    def _find_tool(
        self, session: SessionState, name: str, tool_id: str = ""
    ) -> Component | None: ...

    def _findings_decision(
        self, findings: Iterable[Finding], *, what: str, extra_codes: tuple[str, ...] = ()
    ) -> Decision: ...

    def _redact(self, method: str, payload: dict[str, Any], decision: Decision) -> Decision: ...


class FlowGuard:
    """The flow state of every session this Guardian holds, and the flow rules' verdicts."""

    def __init__(self, policies: FlowPolicies) -> None:
        self.policies = policies
        self._sessions: OrderedDict[str, _SessionFlow] = OrderedDict()
        self._bytes = 0
        self._rules_of: RuleSet | None = None
        self._rules: list[FlowRule] = []
        # (tool name, capabilities) -> the flow rules whose sinks such a call is
        self._sinks: dict[tuple[str, tuple[str, ...]], tuple[FlowRule, ...]] = {}
        self._policy = TrustPolicy()
        self._staged: _Staged | None = None
        # The flow rules' source filters, which every lineage keeps answers for
        self._filters: dict[int, Callable[[ProvenanceNode], bool]] = {}

    # -- steps -----------------------------------------------------------------------------

    def decide(
        self,
        method: str,
        payload: Mapping[str, Any],
        params: Mapping[str, Any],
        session: SessionState,
        decision: Decision,
    ) -> tuple[Decision, dict[str, Any]]:
        """``decision`` as the flow rules amend it, and fields for the step's chain entry.
        Nothing changes until :meth:`commit`.

        Raises :class:`AcsError` for a step the lineage cannot take."""
        self._staged = None
        self._refresh_rules()
        step_id = str(params.get("request_id") or "")
        held = self._sessions.get(session.session_id)
        # The call the flow rules judge: a toolCallRequest, or a wrapped MCP tools/call seen
        # as the toolCallRequest it amounts to (same sinks, lineage and answer).
        call = payload if method in _CALL_METHODS else wrapped_tool_call(method, payload)
        if held is None and not self._rules and not _carries_provenance(method, payload, call):
            return decision, {}  # nothing to track: no flow state for this session
        state = held or self._new_session(session)
        if session.seq != state.expected:
            # Entries this process did not decide (a restart, another replica) may hold
            # Provenance objects: folded in before any of this step's join or a call is judged.
            state.complete = False
        strict = self._strict(session, state)
        found = self._read(method, payload, step_id, strict)
        if strict and found.missing:
            raise AcsError(
                codes.INVALID_PARAMS,
                "provenance_missing",
                "this session declared provenance_producer deterministic (acs-provenance): "
                f"every data-bearing field needs a Provenance object; missing on "
                f"{', '.join(found.missing[:8])}",
                data={"fields": list(found.missing[:64])},
            )
        nodes = found.nodes
        if nodes and not state.complete:
            # (A call's arguments are among them when they carry any: one that carries none
            # is not judged on the lineage.)
            self._catch_up(session, state)
        extra: dict[str, Any] = {}
        absent: list[str] = []
        if strict and call is not None and call is not payload:
            # A wrapped MCP tools/call: no schema gives its arguments a place for provenance,
            # so it is not refused as provenance_missing; an argument without one (no _meta,
            # a misspelt key, not an object) is named on the record, and a deny rule whose
            # sink it is cannot pass it unjudged (below).
            absent = [name for name, item in call["arguments"].items() if "provenance" not in item]
        if call is not None and self._rules:
            decision, extra = self._check_call(
                method, call, payload, step_id, session, state, decision, found, absent
            )
        if absent and "provenance_absent" not in decision.reason_codes:
            decision = replace(decision, reason_codes=(*decision.reason_codes, "provenance_absent"))
        if strict and not state.recorded and not method.startswith(_OWN_ENTRY):
            extra["acs_provenance"] = True  # the chain's own word, beside the session's record
        if method == "steps/postCompact" and any(n.origin != "agent_generated" for n in nodes):
            # The spec makes a compaction summary agent_generated, derived from what it
            # compacted: one that claims another origin would launder its lineage into trust.
            nodes = tuple(replace(n, origin="agent_generated") for n in nodes)
            decision = replace(
                decision, reason_codes=(*decision.reason_codes, "compaction_origin_corrected")
            )
        if nodes:
            # Every object goes on the step's entry, so the lineage is rebuilt from the chain
            # exactly as it is held here, with the trust agbom derived for it beside the one
            # the client claimed.
            extra["provenance"] = [
                _fact(node, edges=MAX_DERIVED_FROM, judged=judged)
                for node, judged in zip(nodes, _judged(state.lineage, nodes), strict=True)
            ]
        self._staged = _Staged(session.session_id, state, nodes, ends=method == "steps/sessionEnd")
        return decision, extra

    def commit(self, session: SessionState, entry: Mapping[str, Any] | None) -> None:
        """The step :meth:`decide` judged last is committed (``entry``: its chain entry's
        extra fields): its objects join the session's lineage."""
        staged, self._staged = self._staged, None
        if staged is None or staged.session_id != session.session_id:
            return
        state = staged.state
        if self._sessions.get(session.session_id) is not state:
            return  # dropped meanwhile: rebuilt from the chain when next needed
        state.expected = session.seq
        if entry is not None and entry.get("acs_provenance") is True:
            state.recorded = True
        if staged.ends:
            self.forget(session.session_id)
        elif staged.nodes:
            self._add(session.session_id, state, staged.nodes)

    def _add(self, session_id: str, state: _SessionFlow, nodes: Iterable[ProvenanceNode]) -> None:
        before = state.lineage.bytes
        state.lineage.add_all(nodes)
        self._bytes += state.lineage.bytes - before
        self._trim(session_id)

    def _new_session(self, session: SessionState) -> _SessionFlow:
        state = self._session(session.session_id)
        if session.seq:
            # Seen here for the first time mid-session: its earlier entries are on the
            # record only.
            state.complete = False
        return state

    def _strict(self, session: SessionState, state: _SessionFlow) -> bool:
        """Whether the session is held to acs-provenance: its record says; for a session
        stored before the record did, an entry's ``acs_provenance`` marker (read once)."""
        if session.provenance_profile is not None:
            return session.provenance_profile
        if state.legacy_profile is None:
            try:
                entries = self.policies.g.store.chain_entries(session.session_id)
            except StoreError:
                return True  # not readable now: held to it, asked again next time
            state.legacy_profile = any(e.get("acs_provenance") is True for e in entries)
        return state.legacy_profile

    def _read(
        self, method: str, payload: Mapping[str, Any], step_id: str, strict: bool
    ) -> StepProvenance:
        """The step's Provenance objects, strictly when the session is acs-provenance, each
        as its chain entry records it."""
        try:
            found = step_provenance(method, payload, step_id=step_id, strict=strict)
        except ProvenanceProblem as exc:
            raise AcsError(codes.INVALID_PARAMS, "provenance_invalid", str(exc)) from None
        if not any(n.source_id for n in found.nodes):
            return found  # nothing a record would redact or cut
        return replace(found, nodes=tuple(_as_recorded(n) for n in found.nodes))

    def _catch_up(self, session: SessionState, state: _SessionFlow) -> None:
        """Fold the Provenance objects recorded in the entries this process did not decide."""
        try:
            entries = self.policies.g.store.chain_entries(session.session_id, after=state.folded)
        except StoreError as exc:
            # Not readable now: no new object may join (it could take an id the chain has
            # with other facts) and no call is judged on part of the lineage.
            raise AcsError(
                codes.INTERNAL_ERROR,
                "store_unavailable",
                f"the session's provenance could not be read back from the store: {exc}",
            ) from None
        nodes = []
        for entry in entries:
            for fact in entry.get("provenance") or ():
                node = _node_of(fact, entry)
                if node is not None:
                    nodes.append(node)
        if nodes:
            self._add(session.session_id, state, nodes)  # its own are known ids: kept once
        state.folded = session.seq
        state.complete = True

    def lineage(self, session_id: str) -> Lineage | None:
        """The lineage held for a session (None when there is none)."""
        state = self._sessions.get(session_id)
        return state.lineage if state is not None else None

    def forget(self, session_id: str) -> None:
        """Drop a session's flow state (it ended, or the Guardian dropped it from memory:
        a later step rebuilds the lineage from the chain when a decision needs it)."""
        state = self._sessions.pop(session_id, None)
        if state is not None:
            self._bytes -= state.lineage.bytes + _SESSION_OVERHEAD

    def forget_all(self) -> None:
        """Drop every session's flow state (the Guardian dropped all sessions from memory)."""
        self._sessions.clear()
        self._bytes = 0

    # -- internals -------------------------------------------------------------------------

    def _check_call(
        self,
        method: str,
        payload: Mapping[str, Any],
        sent: Mapping[str, Any],
        step_id: str,
        session: SessionState,
        state: _SessionFlow,
        decision: Decision,
        found: StepProvenance,
        absent: Sequence[str] = (),
    ) -> tuple[Decision, dict[str, Any]]:
        """``payload``: the call as a toolCallRequest payload; ``sent``: the step's own;
        ``absent``: arguments of a wrapped call that carry no provenance in an acs-provenance
        session (a ``deny`` flow rule whose sink the call is refuses them)."""
        tool = payload.get("tool")
        tool = tool if isinstance(tool, Mapping) else {}
        name = str(tool.get("name") or tool.get("id") or "")
        component = self.policies._find_tool(session, name, str(tool.get("id") or ""))  # noqa: SLF001
        caps: list[str] = []
        if component is not None:
            raw = component.data.get("capability")
            caps = [raw] if isinstance(raw, str) else [c for c in raw or () if isinstance(c, str)]
        call = FlowCall.of(
            payload, step_id=step_id, method=method, tool_capabilities=caps, found=found
        )
        key = (call.tool, call.capabilities)
        sinks = self._sinks.get(key)
        if sinks is None:
            sinks = tuple(rule for rule in self._rules if rule.is_sink(call))
            if len(self._sinks) >= _SINK_MEMO:
                self._sinks.clear()  # tool names come from input: bounded
            self._sinks[key] = sinks
        if not sinks:
            return decision, {}
        strict = [rule for rule in sinks if rule.action is Action.DENY]
        if absent and strict:
            return _unjudged(decision, name, absent, strict), {}
        cost = _work(call, sinks)
        if cost > FLOW_WORK_BUDGET:
            return _over_budget(decision, name, cost), {
                "lineage": {"cited": [], "nodes": [], "work": cost}
            }
        result = evaluate_call(sinks, call, state.lineage, sinks=True)
        cited = result.cited[:MAX_CITED]
        # The facts of what was cited go on the record too: the lineage itself is not stored,
        # and `agbom explain --session` shows them from the entry.
        # (The call's own objects are on the entry already, under "provenance".)
        facts = []
        for pid in cited[:MAX_CITED_FACTS]:
            node = state.lineage.nodes.get(pid)
            if node is not None:
                facts.append(_fact(node, judged=_judged(state.lineage, (node,))[0]))
        extra: dict[str, Any] = {"lineage": {"cited": list(cited), "nodes": facts}}
        if result.overrides:
            extra["lineage"]["trust_overrides"] = list(result.overrides)
        if result.findings:
            others = [f for f in result.findings if f.action is not Action.MODIFY]
            denied = _denial(decision, others, cited)
            if denied is not None:
                return denied, extra
            withheld = [f for f in result.findings if f.action is Action.MODIFY]
            verdict = self.policies._findings_decision(others, what=f"tool {name}")  # noqa: SLF001
            if withheld and verdict.disposition not in (Disposition.DENY, Disposition.ASK):
                verdict = self._withhold(method, sent, withheld, verdict)
            decision = combine(decision, verdict)
        return replace(decision, cited_provenance_ids=cited), extra

    def _withhold(
        self,
        method: str,
        payload: Mapping[str, Any],
        findings: Sequence[Finding],
        verdict: Decision,
    ) -> Decision:
        """MODIFY: each argument a ``modify`` flow rule found is replaced by :data:`WITHHELD`
        (``modifications.redactions``), with the step's credential redactions merged in; a
        step whose credentials cannot be redacted is denied as without flow rules. In a wrapped
        MCP ``tools/call`` the argument is the value itself (``/params/arguments/NAME``), and
        there are no credential redactions to merge (the Guardian makes none in MCP messages)."""
        mcp = method not in _CALL_METHODS
        head, tail = ("/params/arguments/", "") if mcp else ("/arguments/", "/value")
        paths = sorted(
            {
                head + _pointer(f.path[0].removeprefix("arguments.")) + tail
                for f in findings
                if f.path
            }
        )
        redactions = [{"path": path, "replacement": WITHHELD} for path in paths]
        secrets = Decision.allow()
        if not mcp:
            secrets = self.policies._redact(method, dict(payload), secrets)  # noqa: SLF001
        if secrets.disposition is Disposition.DENY:
            return combine(secrets, verdict)
        if secrets.modifications:
            redactions += [
                r
                for r in secrets.modifications.get("redactions") or ()
                if not any(str(r.get("path", "")).startswith(p) for p in paths)
            ]
        ids = list(dict.fromkeys(f.rule_id for f in findings))
        return Decision(
            disposition=Disposition.MODIFY,
            reasoning="; ".join(f"{f.rule_id}: {f.message}" for f in findings)
            + f" (argument value withheld: {', '.join(paths)})",
            reason_codes=("flow_withheld", *ids, *secrets.reason_codes, *verdict.reason_codes),
            policy_references=(
                *(_reference(f) for f in findings),
                *verdict.policy_references,
            ),
            findings=(*(f.to_json() for f in findings), *verdict.findings),
            modifications={"redactions": redactions},
        )

    def _refresh_rules(self) -> None:
        rules = self.policies.g.rules
        if rules is self._rules_of:
            return
        self._rules_of = rules
        self._rules = flow_rules(rules)
        self._sinks.clear()
        policy = TrustPolicy(getattr(rules, "trust_overrides", ()))
        changed = policy.overrides or self._policy.overrides
        self._policy = policy
        self._filters = source_filters(self._rules)
        for state in self._sessions.values():
            if changed:
                # Overrides (maybe) changed: every held lineage is recomputed under them.
                state.lineage = state.lineage.with_policy(policy)
            else:
                state.lineage.policy = policy
            state.lineage.watch_only(self._filters)

    def _session(self, session_id: str) -> _SessionFlow:
        state = self._sessions.get(session_id)
        if state is None:
            state = _SessionFlow(Lineage(self._policy, max_bytes=LINEAGE_MAX_BYTES))
            state.lineage.watch_only(self._filters)
            self._sessions[session_id] = state
            self._bytes += _SESSION_OVERHEAD
            self._trim(session_id)
        else:
            self._sessions.move_to_end(session_id)
        return state

    def _trim(self, keep: str) -> None:
        while self._bytes > FLOW_MAX_BYTES and len(self._sessions) > 1:
            oldest = next(iter(self._sessions))
            if oldest == keep:
                self._sessions.move_to_end(keep)
                continue
            self.forget(oldest)


def _work(call: FlowCall, sinks: Sequence[FlowRule]) -> int:
    """The most lineage steps judging ``call`` under ``sinks`` can take (see
    :data:`FLOW_WORK_BUDGET`): per argument, its parents and a path for its trust, and again
    for each filtered rule, plus a path for each finding."""
    passes = 1 + sum(1 for rule in sinks if rule.filtered)
    return sum(
        (len(node.derived_from) + 1 + _PATH_STEPS) * passes
        for node in call.arguments.values()
        if node is not None
    )


_PATH_STEPS = 12 * (MAX_DERIVED_FROM + 1)  # 12 hops, each may look over one node's parents


def _over_budget(decision: Decision, tool: str, cost: int) -> Decision:
    """A call too big to judge within the budget: denied, fail closed."""
    return combine(
        decision,
        Decision.deny(
            f"the provenance of the call to {tool!r} would take {cost} lineage steps to judge, "
            f"over the budget of {FLOW_WORK_BUDGET}: not judged, denied (send fewer arguments "
            "or derived_from edges)",
            "flow_budget_exceeded",
            references=[PolicyReference(policy_id="agbom", rule_id="flow-work-budget")],
        ),
    )


def _unjudged(
    decision: Decision, tool: str, absent: Sequence[str], rules: Sequence[FlowRule]
) -> Decision:
    """A wrapped call whose arguments carry no provenance in an acs-provenance session, into
    the sink of a deny rule: it cannot be judged, so it is denied (fail closed)."""
    names = ", ".join(absent[:8])
    return combine(
        decision,
        Decision.deny(
            f"argument(s) {names} of {tool!r} carry no provenance (params._meta"
            f'["acs/provenance"]) in this acs-provenance session: {rules[0].id} cannot judge '
            "them, so the call is denied",
            "provenance_absent",
            *(rule.id for rule in rules),
            references=[PolicyReference(policy_id=rules[0].pack or "agbom", rule_id=rules[0].id)],
        ),
    )


def _as_recorded(node: ProvenanceNode) -> ProvenanceNode:
    """``node`` as its chain entry records it (:func:`_fact`), for the lineage held in memory
    to be the one rebuilt from the chain."""
    if not node.source_id:
        return node
    source = redact_text(node.source_id[:MAX_SOURCE_ID_CHARS])[0]
    return node if source == node.source_id else replace(node, source_id=source)


Judged = tuple[Trust, dict[str, str] | None]
"""The trust agbom derived for an object, and the override record when that is not the
§7.2 default of its origin (:func:`_judged`)."""


def _judged(lineage: Lineage, nodes: Sequence[ProvenanceNode]) -> list[Judged]:
    """The trust agbom derives for each of a step's objects as the step arrives (from the
    session's lineage and the step's earlier objects; a parent not delivered counts as
    ``unknown``), and, where that is not §7.2's default for its origin, why: §7.2 lets a
    deployment override the table and says the override SHOULD be recorded in audit
    metadata. agbom takes the minimum over the whole ancestry for every origin (the table
    does so for ``agent_generated`` only), so a ``user_input`` object derived from a tool's
    output is ``untrusted`` where the table says ``trusted``: reason ``lineage``, via the
    parent. Other reasons: ``policy`` (a rule pack's trust override), ``claimed`` (the
    client's own ``trust`` lowered it; it can never raise it), ``ancestor_missing`` and
    ``redeclared`` (the id was delivered before with other facts; the weaker stands)."""
    earlier: dict[str, Trust] = {}
    judged: list[Judged] = []
    for node in nodes:
        default = DEFAULT_TRUST.get(node.origin)
        trust, override = lineage.policy.base(node)
        why: dict[str, str] = {}
        if override is not None:
            why = {"reason": "policy", "override": override.id}
        elif default is not None and trust < default:
            why = {"reason": "claimed"}
        for parent in node.derived_from:
            known = parent in earlier or parent in lineage
            value = earlier[parent] if parent in earlier else lineage.trust(parent)
            if value < trust:
                trust = value
                why = {"reason": "lineage" if known else "ancestor_missing", "via": parent}
        pid = node.provenance_id
        if lineage.nodes.get(pid, node) != node and lineage.trust(pid) < trust:
            trust, why = lineage.trust(pid), {"reason": "redeclared", "via": pid}
        earlier[pid] = min(trust, earlier.get(pid, trust))
        record = None
        if default is not None and trust != default:
            record = {"default": str(default), **(why or {"reason": "policy"})}
        judged.append((trust, record))
    return judged


def _fact(node: ProvenanceNode, *, edges: int = 16, judged: Judged | None = None) -> dict[str, Any]:
    fact: dict[str, Any] = {"id": node.provenance_id, "origin": node.origin}
    if node.source_id:
        # A source id is often a URL: a token in it must not reach the audit record.
        fact["source_id"] = redact_text(node.source_id[:MAX_SOURCE_ID_CHARS])[0]
    if node.derived_from:
        fact["derived_from"] = list(node.derived_from[:edges])
    if node.trust_hint:
        # What the client said (§7.1: a hint); entries before issue 42 named it "trust".
        fact["claimed_trust"] = node.trust_hint
    if judged is not None:
        fact["derived_trust"] = str(judged[0])
        if judged[1] is not None:
            fact["trust_override"] = judged[1]
    if node.step_id:
        fact["step_id"] = node.step_id
    if node.field:
        fact["field"] = node.field
    return fact


def _carries_provenance(
    method: str, payload: Mapping[str, Any], call: Mapping[str, Any] | None
) -> bool:
    if call is not None and call is not payload:  # a wrapped tools/call
        return any("provenance" in item for item in call["arguments"].values())
    return any(
        isinstance(holder, Mapping) and isinstance(holder.get("provenance"), Mapping)
        for _, holder in data_bearing_fields(method, payload)
    )


def _node_of(fact: Any, entry: Mapping[str, Any]) -> ProvenanceNode | None:
    """A recorded fact back as a node (what :func:`_fact` wrote; anything else is skipped)."""
    if not isinstance(fact, Mapping):
        return None
    pid, origin = fact.get("id"), fact.get("origin")
    if not isinstance(pid, str) or not isinstance(origin, str):
        return None
    parents = fact.get("derived_from") or ()
    if not isinstance(parents, list | tuple):
        parents = ()
    elif not all(type(p) is str for p in parents):
        parents = [p for p in parents if isinstance(p, str)]
    source = fact.get("source_id")
    hint = fact.get("claimed_trust", fact.get("trust"))  # "trust": entries before issue 42
    return ProvenanceNode(
        provenance_id=pid,
        origin=origin,
        source_id=source if isinstance(source, str) else None,
        derived_from=tuple(parents),
        trust_hint=hint if isinstance(hint, str) else None,
        step_id=str(fact.get("step_id") or entry.get("step_id") or ""),
        method=str(entry.get("step_type") or ""),
        field=str(fact.get("field") or ""),
    )


def _denial(base: Decision, findings: Sequence[Finding], cited: tuple[str, ...]) -> Decision | None:
    """What ``combine(base, _findings_decision(findings))`` gives, with ``cited``, built in one
    step for the common case: an allowed call that a flow rule denies (None otherwise). The
    denials' reasons and references first, then the warnings (an ask beside a denial is
    dropped, as there), then the policy's own codes, references and findings."""
    if base.disposition is not Disposition.ALLOW:
        return None
    reasons: list[str] = []
    codes: list[str] = []
    warn_codes: list[str] = []
    references: list[PolicyReference] = []
    denials: list[Mapping[str, Any]] = []
    warnings: list[Mapping[str, Any]] = []
    for finding in findings:
        if finding.action is Action.DENY:
            reasons.append(f"{finding.rule_id}: {finding.message}")
            codes += ("rule_violation", finding.rule_id)
            references.append(_reference(finding))
            denials.append(finding.to_json())
        elif finding.action is not Action.ASK:
            warnings.append(finding.to_json())
            warn_codes.append(f"warn:{finding.rule_id}")
    if not denials:
        return None
    return Decision(
        disposition=Disposition.DENY,
        reasoning="; ".join(reasons),
        reason_codes=(*codes, *warn_codes, *base.reason_codes),
        policy_references=(*references, *base.policy_references),
        findings=(*denials, *warnings, *base.findings),
        cited_provenance_ids=cited,
    )


def _pointer(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def combine(base: Decision, flow: Decision) -> Decision:
    """The policy's decision and the flow rules' together: the most severe stands (DENY,
    then ASK, then a flow MODIFY), every finding rides along."""
    if flow.disposition is Disposition.MODIFY:
        if base.disposition in (Disposition.DENY, Disposition.ASK, Disposition.DEFER):
            return replace(
                base,
                findings=(*base.findings, *flow.findings),
                reason_codes=(*base.reason_codes, *flow.reason_codes),
            )
        return replace(
            flow,
            findings=(*flow.findings, *base.findings),
            reason_codes=(*flow.reason_codes, *base.reason_codes),
            policy_references=(*flow.policy_references, *base.policy_references),
        )
    if flow.disposition is Disposition.ALLOW and base.disposition is not Disposition.ALLOW:
        return replace(
            base,
            findings=(*base.findings, *flow.findings),
            reason_codes=(*base.reason_codes, *flow.reason_codes),
        )
    if base.disposition not in (Disposition.ALLOW, Disposition.DENY, Disposition.ASK):
        if flow.disposition is not Disposition.DENY:
            return base  # a DEFER or MODIFY stands against an ask
        base = Decision.allow(reason_codes=base.reason_codes)
    collector = DecisionCollector()
    for part in (base, flow):
        if part.disposition is Disposition.DENY:
            collector.denials.append(part)
        elif part.disposition is Disposition.ASK:
            collector.asks.append(part)
        else:
            collector.warnings.extend(part.findings)
            collector.codes.extend(part.reason_codes)
            collector.references.extend(part.policy_references)
    return collector.merge()
