"""The rule set: indexes component rules and evaluates all rules over a component graph,
in full or incrementally (split from engine.py)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

from agbom.inventory import ROOT_ID, Component, ComponentGraph, ComponentType
from agbom.rules.interface import (
    EvalContext,
    Explanation,
    Finding,
    RuleError,
)
from agbom.rules.kinds import GraphShapeRule, LeastPrivilegeRule, MatchRule, ReachRule, Rule
from agbom.rules.lineage import TrustOverride
from agbom.rules.matchers import (
    Subject,
    parse_endpoint,
    purl_index_key,
)
from agbom.rules.templates import _component_vars
from agbom.rules.view import _Graph, _host_keys, _purl_keys
from agbom.rules.walks import (
    _PREFILL_AT,
    _always,
    _depths_within,
    _height,
    _prefill_unions,
    _union_below,
)

_LOOKUP_CACHE_SIZE = 65536


# -- the rule set -----------------------------------------------------------------------------


class RuleSet:
    """Compiled rules from one or more packs, indexed for evaluation."""

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        sources: Sequence[str] = (),
        trust_overrides: Sequence[TrustOverride] = (),
    ) -> None:
        if not rules:
            raise RuleError("no rules loaded (an empty rule set would allow everything)")
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.sources = tuple(sources)
        # The packs' changes to the channel-to-trust mapping, for flow rules (rules/flow.py).
        self.trust_overrides = tuple(trust_overrides)
        self.by_id: dict[str, Rule] = {r.id: r for r in self.rules}
        active = [r for r in self.rules if r.enabled]
        self._match_rules = [r for r in active if isinstance(r, MatchRule)]
        self._reach_rules = [r for r in active if isinstance(r, ReachRule)]
        self._shape_rules = [r for r in active if isinstance(r, GraphShapeRule)]
        self._lp_rules = [r for r in active if isinstance(r, LeastPrivilegeRule)]
        self._order = {id(r): i for i, r in enumerate(self._match_rules)}
        # Index: (type, exact name) -> rules; type -> rules without a name hint; rules for any.
        self._by_type_name: dict[tuple[str, str], list[MatchRule]] = {}
        self._by_type: dict[str, list[MatchRule]] = {}
        self._any_type: list[MatchRule] = []
        self._by_name_any_type: dict[str, list[MatchRule]] = {}
        self._by_purl: dict[str, list[MatchRule]] = {}
        self._by_host: dict[str, list[MatchRule]] = {}
        for rule in self._match_rules:
            types, names = rule.type_hint, rule.name_hint
            purl_keys = _purl_keys(rule.predicate) if types is None and names is None else None
            host_keys = _host_keys(rule.predicate) if names is None else None
            if host_keys:
                for key in host_keys:
                    self._by_host.setdefault(key, []).append(rule)
            elif purl_keys:
                for key in purl_keys:
                    self._by_purl.setdefault(key, []).append(rule)
            elif types is None and names is None:
                self._any_type.append(rule)
            elif types is None:
                for name in names or ():
                    self._by_name_any_type.setdefault(name, []).append(rule)
            elif names is None:
                for t in types:
                    self._by_type.setdefault(t, []).append(rule)
            else:
                for t in types:
                    for name in names:
                        self._by_type_name.setdefault((t, name), []).append(rule)

        self._name_types = frozenset(t for t, _ in self._by_type_name)
        # Endpoint and purl strings -> the indexed rules they select. The rules never change,
        # so these stay valid across evaluations; bounded because the strings come from input.
        self._host_cache: dict[str, tuple[MatchRule, ...]] = {}
        self._purl_cache: dict[str, tuple[MatchRule, ...]] = {}
        order = self._order
        self._type_plus_any: dict[str, list[MatchRule]] = {
            t: sorted([*self._by_type.get(t, ()), *self._any_type], key=lambda r: order[id(r)])
            for t in [*(c.value for c in ComponentType), "agent"]
        }

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Any:
        return iter(self.rules)

    @property
    def rule_ids(self) -> list[str]:
        return [r.id for r in self.rules]

    # -- component rules -----------------------------------------------------------------------

    def _match_candidates(self, subject: Subject) -> list[MatchRule]:
        """The rules that could match ``subject``: by type, exact name, host and purl."""
        kind, data = subject.type, subject.data
        base = self._type_plus_any.get(kind, self._any_type)
        extra: list[MatchRule] = []
        if kind in self._name_types or self._by_name_any_type:
            name = subject.name.casefold()
            if kind in self._name_types:
                extra += self._by_type_name.get((kind, name), ())
            if self._by_name_any_type:
                extra += self._by_name_any_type.get(name, ())
        if self._by_host:
            raw = data.get("endpoint")
            if isinstance(raw, str) and raw:
                extra += self._host_rules(raw)
        if self._by_purl and "purl" in data:
            raw = data.get("purl")
            if isinstance(raw, str):
                extra += self._purl_rules(raw)
        if not extra:
            return base
        order = self._order
        return sorted(dict.fromkeys([*base, *extra]), key=lambda r: order[id(r)])

    def _host_rules(self, endpoint: str) -> tuple[MatchRule, ...]:
        """Rules indexed under the endpoint's host or one of its parent domains (cached)."""
        found = self._host_cache.get(endpoint)
        if found is None:
            parsed = parse_endpoint(endpoint)
            hits: list[MatchRule] = []
            if parsed is not None:
                labels = parsed.host.split(".")
                for i in range(len(labels)):
                    hits += self._by_host.get(".".join(labels[i:]), ())
            found = tuple(hits)
            if len(self._host_cache) < _LOOKUP_CACHE_SIZE:
                self._host_cache[endpoint] = found
        return found

    def _purl_rules(self, purl: str) -> tuple[MatchRule, ...]:
        """Rules indexed under the purl's type/namespace/name (cached)."""
        found = self._purl_cache.get(purl)
        if found is None:
            key = purl_index_key(purl)
            found = tuple(self._by_purl.get(key, ())) if key is not None else ()
            if len(self._purl_cache) < _LOOKUP_CACHE_SIZE:
                self._purl_cache[purl] = found
        return found

    def _check_components(
        self, graph: _Graph, nodes: Iterable[str], context: EvalContext
    ) -> list[Finding]:
        findings: list[Finding] = []
        node_data, subject_of, candidates_of = graph.nodes, graph.subject, self._match_candidates
        for node in nodes:
            if node == ROOT_ID or node_data[node].get("component") is None:
                continue
            subject = subject_of(node)
            for rule in candidates_of(subject):
                # The predicate alone first: most candidates do not match, and check() would
                # only repeat the call for the few that do.
                if rule.predicate(subject):
                    found = rule.check(graph, subject, context)
                    if found is not None:
                        findings.append(found)
        return findings

    def evaluate_component(
        self,
        component: Component,
        graph: ComponentGraph | None = None,
        *,
        context: EvalContext | None = None,
    ) -> list[Finding]:
        """Findings for one component at hook time (the tool of a call, a registering skill).

        Component rules always run; with ``graph`` (the agent's graph, the component in it or
        not) the path and least-privilege rules run for this component as a source too.
        """
        context = context or EvalContext()
        subject = Subject.of(component)
        view = _Graph(graph) if graph is not None else None
        findings: list[Finding] = []
        for rule in self._match_candidates(subject):
            if not rule.predicate(subject) or rule.excepted(subject, context) is not None:
                continue
            if view is not None and component.id in view.nodes:
                found = rule.check(view, subject, context)
            else:
                found = _standalone(rule, subject)
            if found is not None:
                findings.append(found)
        if view is not None and component.id in view.nodes:
            only = {component.id}
            for reach in self._reach_rules:
                findings.extend(reach.evaluate(view, context, only))
            memo: dict[str, frozenset[str]] = {}
            for lp in self._lp_rules:
                findings.extend(lp.evaluate(view, context, only, memo))
        return sorted(findings, key=Finding.sort_key)

    # -- whole graph ---------------------------------------------------------------------------

    def evaluate(
        self, graph: ComponentGraph, *, context: EvalContext | None = None
    ) -> list[Finding]:
        """Every finding for ``graph``, most severe first, in a deterministic order."""
        context = context or EvalContext()
        view = _Graph(graph)
        findings = self._check_components(view, view.nodes, context)
        for reach in self._reach_rules:
            findings.extend(reach.evaluate(view, context))
        memo: dict[str, frozenset[str]] = {}
        if self._lp_rules:
            _prefill_unions(view, memo, view.tool_caps(), None)
        for lp in self._lp_rules:
            findings.extend(lp.evaluate(view, context, None, memo))
        for shape in self._shape_rules:
            findings.extend(shape.evaluate(view, context))
        return sorted(findings, key=Finding.sort_key)

    def evaluate_incremental(
        self,
        graph: ComponentGraph,
        changed_ids: Iterable[str],
        previous: Sequence[Finding],
        *,
        context: EvalContext | None = None,
        moved: Iterable[str] | None = None,
    ) -> list[Finding]:
        """Findings for ``graph`` after a change to ``changed_ids`` (added, changed or removed).

        ``previous`` are the findings of the graph before the change, as :meth:`evaluate` or
        an earlier incremental call returned them (sorted), with the same rules and context.
        Component rules run again for the changed ids only; path and least-privilege rules
        for the changed ids and their ancestors (the only nodes whose reach can have changed);
        earlier findings that touch none of these, and whose path is still in the graph, are
        kept as they are.
        Whole-graph shape rules (cycle, max_length) run again when anything changed.

        A kept finding's path (the shortest from the agent to its component) can move only
        where edges moved. ``moved`` names the nodes every added or removed edge ends at
        (:attr:`~agbom.inventory.graph.GraphUndo.nodes` of the change): then a finding is
        re-checked when its path runs through a changed node, a moved one or one below a
        moved one. Without it, through a changed node or any ancestor of one, which is every
        path from the agent once anything changed, so every finding's source is re-checked.
        """
        context = context or EvalContext()
        view = _Graph(graph)
        changed = {c for c in changed_ids if c != ROOT_ID}
        if not changed:
            return sorted(previous, key=Finding.sort_key)
        present = {c for c in changed if c in view.nodes}
        affected = present | view.ancestors(present)
        dirty = affected | changed
        if moved is None:
            on_path = dirty
        else:
            shifted = {m for m in moved if m in view.nodes}
            on_path = changed | shifted | view.descendants(shifted)
        shape_ids = {r.id for r in self._shape_rules}
        kept: list[Finding] = []
        redo: set[str] = set(affected)
        for f in previous:
            rule = self.by_id.get(f.rule_id)
            if rule is None or not rule.enabled or rule.id in shape_ids:
                continue
            touched = dirty.intersection(f.components) or on_path.intersection(f.path)
            # Told where edges moved, a path that broke runs through a changed or moved node,
            # and a removed component is a changed one: ``touched`` already says so.
            if touched or (
                moved is None
                and (not view.path_valid(f.path) or any(c not in view.nodes for c in f.components))
            ):
                # Re-check the finding's first component (its source): its path may move.
                if f.components and f.components[0] in view.nodes:
                    redo.add(f.components[0])
                continue
            kept.append(f)
        # Drop the kept findings of the nodes we re-check, for rules we re-run on them.
        kept = [f for f in kept if not (f.components and f.components[0] in redo)]
        fresh = self._check_components(view, sorted(redo), context)
        for reach in self._reach_rules:
            fresh.extend(reach.evaluate(view, context, redo))
        memo: dict[str, frozenset[str]] = {}
        if self._lp_rules and len(redo) >= _PREFILL_AT:
            _prefill_unions(view, memo, view.tool_caps(), None)
        for lp in self._lp_rules:
            fresh.extend(lp.evaluate(view, context, redo, memo))
        quiet = self._quiet_shape_rules(view, previous, present, affected)
        for shape in self._shape_rules:
            if shape.id not in quiet:
                fresh.extend(shape.evaluate(view, context))
        # ``kept`` is in the order of ``previous``, which is sorted (it is what evaluate or an
        # earlier call returned): insert the few fresh findings instead of sorting them all.
        # A fresh finding equal to a kept one is not added twice: equal findings have equal
        # keys, so it can only sit in the run of its key.
        merged = list(kept)
        for finding in sorted(set(fresh), key=Finding.sort_key):
            key = finding.sort_key()
            at = bisect.bisect_left(merged, key, key=Finding.sort_key)
            end = bisect.bisect_right(merged, key, lo=at, key=Finding.sort_key)
            if finding not in merged[at:end]:
                merged.insert(end, finding)
        return merged

    def _quiet_shape_rules(
        self,
        view: _Graph,
        previous: Sequence[Finding],
        present: set[str],
        affected: set[str],
    ) -> set[str]:
        """Ids of the shape rules that provably have no finding after this change.

        Only from facts ``previous`` establishes: a cycle rule without exceptions that had no
        finding means the graph was acyclic. Edges change only at the changed components (and
        the root's, which nothing points back to), so a new cycle runs through a changed node,
        among its ancestors: a DFS over ``affected`` (changed and ancestors) settles it. On an
        acyclic graph that was, a path longer than before must use an edge out of a changed
        node ``c``; its length is at most ``depth(c) + 1 + height(child)``, with the depth
        from ``affected`` and the height from the changed nodes' descendants. Any doubt (the
        rule had findings or exceptions, a cycle, a long enough path) re-runs the rule over
        the whole graph.
        """
        if not self._shape_rules or view.pred.get(ROOT_ID):
            return set()
        had = {f.rule_id for f in previous}
        was_acyclic = any(
            r.check == "cycle" and not r.exceptions and r.id not in had for r in self._shape_rules
        )
        if not was_acyclic:
            return set()
        depth = _depths_within(view, affected)
        if depth is None:
            return set()  # a cycle through a changed node
        quiet = {r.id for r in self._shape_rules if r.check == "cycle"}
        depth_rules = [
            r
            for r in self._shape_rules
            if r.check == "max_length" and not r.exceptions and r.id not in had and r.max_length
        ]
        if depth_rules:
            heights: dict[str, int] = {}
            longest = 0
            for node in present:
                here = depth.get(node, 0)
                longest = max(longest, here)
                for child in view.succ[node]:
                    longest = max(longest, here + 1 + _height(view, child, heights))
            quiet.update(r.id for r in depth_rules if longest <= r.max_length)
        return quiet

    # -- explain -------------------------------------------------------------------------------

    def explain(
        self,
        graph: ComponentGraph,
        rule_id: str | None = None,
        component_id: str | None = None,
        *,
        context: EvalContext | None = None,
    ) -> list[Explanation]:
        """Which rules matched (and which did not) and why, for ``agbom explain``."""
        context = context or EvalContext()
        if rule_id is not None and rule_id not in self.by_id:
            raise RuleError(f"no rule with id {rule_id!r} (known: {', '.join(self.rule_ids)})")
        if component_id is not None and component_id not in graph:
            raise RuleError(f"no component with id {component_id!r} in the AgBOM")
        view = _Graph(graph)
        findings = self.evaluate(graph, context=context)
        rules = [self.by_id[rule_id]] if rule_id is not None else list(self.rules)
        out: list[Explanation] = []
        for rule in rules:
            mine = [f for f in findings if f.rule_id == rule.id]
            if component_id is not None:
                mine = [f for f in mine if component_id in f.components or component_id in f.path]
                reasons = _explain_rule_for(rule, view, component_id, context)
            else:
                reasons = [rule.describe()]
                if not rule.enabled:
                    reasons.append("rule is disabled")
            for exception in rule.exceptions:
                state = "active" if exception.active(context) else "expired"
                reasons.append(f"{exception.describe()} ({state})")
            out.append(
                Explanation(
                    rule_id=rule.id,
                    pack=rule.pack,
                    kind=rule.kind,
                    component=component_id,
                    matched=bool(mine),
                    reasons=tuple(reasons),
                    findings=tuple(mine),
                )
            )
        return out


def _standalone(rule: MatchRule, subject: Subject) -> Finding:
    reasons = [d for ok, d in rule.predicate.explain(subject) if ok]
    values = _component_vars(subject)
    values["reason"] = "; ".join(reasons)
    because = f"Matched {subject.type} {subject.id!r}: " + "; ".join(reasons) + "."
    return rule.finding((subject.id,), (subject.id,), values, because)


def _explain_rule_for(rule: Rule, view: _Graph, node: str, context: EvalContext) -> list[str]:
    subject = view.subject(node)
    mark = {True: "yes", False: "no"}
    if isinstance(rule, MatchRule):
        lines = [f"{d}: {mark[ok]}" for ok, d in rule.predicate.explain(subject)]
        exc = rule.excepted(subject, context)
        if exc is not None:
            lines.append(f"excepted: {exc.describe()}")
        return lines
    if isinstance(rule, ReachRule):
        lines = [
            f"is a source ({rule.from_.describe()}): {mark[rule.from_(subject)]}",
            f"is a target ({rule.to.describe()}): {mark[rule.to(subject)]}",
        ]
        if rule.from_(subject):
            targets, _ = rule.reached(view, node, None)
            lines.append(f"targets reached: {', '.join(targets) or 'none'}")
        return lines
    if isinstance(rule, LeastPrivilegeRule):
        if subject.type not in rule.applies_to:
            return [f"applies to {', '.join(sorted(rule.applies_to))}, not {subject.type}"]
        caps = sorted(_union_below(view, node, {}, view.caps, _always))
        declared = subject.data.get("declared_capabilities")
        return [
            f"declared: {', '.join(declared) if isinstance(declared, list) else 'nothing'}",
            f"exposed by the tools it reaches: {', '.join(caps) or 'nothing'}",
        ]
    return [rule.describe()]
