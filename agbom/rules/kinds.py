"""The rule kinds: ``match``, ``path`` reach, graph shape and ``least_privilege``
(split from engine.py)."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agbom.rules.interface import (
    Action,
    EvalContext,
    Finding,
    Severity,
)
from agbom.rules.matchers import (
    AllOf,
    CapabilityIs,
    Subject,
    allowed_tool_capabilities,
    capabilities_of,
    covered_by_any,
    unpinned_reason,
)
from agbom.rules.templates import RuleException, _component_vars, render
from agbom.rules.view import _Graph, _types_of
from agbom.rules.walks import (
    _PREFILL_AT,
    _always,
    _chain,
    _covers_some,
    _dfs,
    _longest_path,
    _prefill_unions,
    _union_below,
    _witnesses,
)

# -- rules ------------------------------------------------------------------------------------


@dataclass(eq=False)
class Rule:
    """What every rule has; subclasses add the kind-specific compiled parts."""

    id: str
    kind: str
    severity: Severity
    action: Action
    message: str
    description: str
    pack: str
    source: str
    exceptions: tuple[RuleException, ...] = ()
    enabled: bool = True
    remediation: str = ""
    # "local": depends on one component; "subtree": on a node and what it reaches;
    # "global": on the whole graph (re-checked on any change).
    scope: str = "local"

    def finding(
        self,
        components: Sequence[str],
        path: Sequence[str],
        values: Mapping[str, Any],
        because: str,
    ) -> Finding:
        values = {**self._own_values, "path": " -> ".join(path), **values}
        explanation = f"{self._summary} {because}".strip() if self.description else because
        return Finding(
            rule_id=self.id,
            severity=self.severity,
            action=self.action,
            message=render(self.message, values),
            components=tuple(components),
            path=tuple(path),
            explanation=explanation,
            pack=self.pack,
            remediation=render(self.remediation, values),
        )

    # Read on every finding (the Guardian's flow rules find on tool calls): worked out once.
    @functools.cached_property
    def _own_values(self) -> dict[str, Any]:
        return {
            "rule.id": self.id,
            "rule.severity": self.severity.value,
            "rule.action": self.action.value,
        }

    @functools.cached_property
    def _summary(self) -> str:
        return self.description.strip()

    def excepted(self, subject: Subject, context: EvalContext) -> RuleException | None:
        for exception in self.exceptions:
            if exception.active(context) and exception.applies(subject):
                return exception
        return None

    def describe(self) -> str:
        return self.description or self.message


def _sentences(first: str, second: str) -> str:
    """The rule's own description, then what it checks, as two sentences."""
    first = first.strip()
    if first and first[-1] not in ".!?":
        first += "."
    return f"{first} {second}".strip()


@dataclass(eq=False)
class MatchRule(Rule):
    """``ban`` and ``hygiene``: a predicate on one component."""

    predicate: AllOf = field(default_factory=lambda: AllOf(()))
    type_hint: frozenset[str] | None = None
    name_hint: frozenset[str] | None = None

    def check(self, graph: _Graph, subject: Subject, context: EvalContext) -> Finding | None:
        if not self.predicate(subject) or self.excepted(subject, context) is not None:
            return None
        reasons = [d for ok, d in self.predicate.explain(subject) if ok]
        reason = "; ".join(reasons)
        if any(getattr(p, "key", "") == "pinned" for p in self.predicate.parts):
            why = unpinned_reason(subject)
            if why:
                reasons.append(why)
                reason = why
        because = f"Matched {subject.type} {subject.id!r}: " + "; ".join(reasons) + "."
        values = _component_vars(subject)
        values["reason"] = reason
        return self.finding((subject.id,), graph.root_path(subject.id), values, because)

    def describe(self) -> str:
        return _sentences(super().describe(), f"It matches when {self.predicate.describe()}.")


@dataclass(eq=False)
class ReachRule(Rule):
    """``path`` with ``check: reach``: forbid (or require) paths from ``from`` to ``to``."""

    from_: AllOf = field(default_factory=lambda: AllOf(()))
    to: AllOf = field(default_factory=lambda: AllOf(()))
    via: AllOf | None = None
    mode: str = "forbid"
    max_depth: int | None = None
    unless: str | None = None

    def _allowed(self, graph: _Graph, node: str) -> bool:
        return self.via is None or self.via(graph.subject(node))

    def _target_caps(self, subject: Subject) -> list[str]:
        for part in self.to.parts:
            if isinstance(part, CapabilityIs):
                return part.matching(subject.data)
        return list(capabilities_of(subject.data))

    def reached(
        self, graph: _Graph, source: str, within: Mapping[str, int] | None
    ) -> tuple[list[str], dict[str, str]]:
        """Targets ``source`` reaches (BFS, pruned to ``within`` when given), and parents."""
        parent: dict[str, str] = {source: ""}
        depth = {source: 0}
        queue = deque([source])
        targets: list[str] = []
        while queue:
            current = queue.popleft()
            if current != source and not self._allowed(graph, current):
                continue
            if self.max_depth is not None and depth[current] >= self.max_depth:
                continue
            for s in sorted(graph.succ.get(current, ())):
                if s in parent or (within is not None and s not in within):
                    continue
                parent[s] = current
                depth[s] = depth[current] + 1
                if self.to(graph.subject(s)):
                    targets.append(s)
                queue.append(s)
        return sorted(targets), parent

    def _is_target(self, graph: _Graph, node: str) -> bool:
        cache = graph.memos.setdefault(-id(self), {})
        hit = cache.get(node)
        if hit is None:
            hit = frozenset(("1",)) if self.to(graph.subject(node)) else frozenset()
            cache[node] = hit
        return bool(hit)

    def _leaf(self, graph: _Graph) -> Callable[[str], frozenset[str] | tuple[str, ...]]:
        """The capability keys a node contributes as a target (``(none)`` if it has none)."""

        def leaf(node: str) -> frozenset[str] | tuple[str, ...]:
            if not self._is_target(graph, node):
                return ()
            caps = self._target_caps(graph.subject(node))
            return tuple(caps) if caps else ("(none)",)

        return leaf

    def _leaves(self, graph: _Graph) -> dict[str, frozenset[str]]:
        """``leaf`` of every target node at once (what :func:`_prefill_unions` needs)."""
        types = _types_of(self.to)
        if types is None:
            candidates: Iterable[str] = graph.nodes
        else:
            index = graph.by_type()
            candidates = [n for t in types for n in index.get(t, ())]
        cache = graph.memos.setdefault(-id(self), {})
        yes: frozenset[str] = frozenset(("1",))
        no: frozenset[str] = frozenset()
        out: dict[str, frozenset[str]] = {}
        for node in candidates:
            subject = graph.subject(node)
            if self.to(subject):
                cache[node] = yes
                out[node] = frozenset(self._target_caps(subject) or ("(none)",))
            else:
                cache[node] = no
        return out

    def _expand(self, graph: _Graph) -> Callable[[str], bool]:
        if self.via is None:
            return _always
        via = self.via
        return lambda node: via(graph.subject(node))

    def check_source(
        self,
        graph: _Graph,
        source: str,
        context: EvalContext,
        within: Mapping[str, int] | None,
    ) -> Finding | None:
        subject = graph.subject(source)
        if self.exceptions and self.excepted(subject, context) is not None:
            return None
        leaf, expand = self._leaf(graph), self._expand(graph)
        if self.max_depth is None:
            memo = graph.memos.setdefault(id(self), {})
            below = memo.get(source)
            if below is None:
                below = _union_below(graph, source, memo, leaf, expand)
            reach_caps: frozenset[str] | set[str] = below
        else:
            targets, _ = self.reached(graph, source, within)
            reach_caps = {c for t in targets for c in leaf(t)}
        if self.mode == "require":
            if reach_caps:
                return None
            because = f"{subject.type} {source!r} reaches no component where {self.to.describe()}."
            return self.finding(
                (source,), graph.root_path(source), _component_vars(subject), because
            )
        if not reach_caps:
            return None
        granted: Iterable[str] | None = None
        if self.unless == "approved_capabilities":
            lookup = context.approved_capabilities
            granted = (lookup(source) if lookup is not None else None) or ()
        elif self.unless == "declared_capabilities":
            declared = subject.data.get("declared_capabilities") or ()
            granted = [c for c in declared if isinstance(c, str)]
        if granted is None:
            missing = sorted(reach_caps)
        else:
            missing = sorted(
                c for c in reach_caps if c == "(none)" or not covered_by_any(granted, c)
            )
        if not missing:
            return None
        if self.max_depth is None:
            violating, parent = _witnesses(graph, source, missing, leaf, expand, memo)
        else:
            targets, parent = self.reached(graph, source, within)
            violating = [t for t in targets if set(leaf(t)) & set(missing)]
        first = violating[0]
        tail = _chain(parent, source, first)
        path = (*graph.root_path(source)[:-1], *tail)
        target_subject = graph.subject(first)
        values = _component_vars(subject)
        values.update(_component_vars(target_subject, "target"))
        shown = [c for c in missing if c != "(none)"]
        values["capabilities"] = ", ".join(shown) or ", ".join(self._target_caps(target_subject))
        because = (
            f"{subject.type} {source!r} reaches components where {self.to.describe()}, "
            f"e.g. via {' -> '.join(tail)}."
        )
        if self.unless == "approved_capabilities":
            because += f" Capabilities not covered by its approval: {values['capabilities']}."
        elif self.unless == "declared_capabilities":
            because += f" Capabilities it does not declare: {values['capabilities']}."
        return self.finding((source, *sorted(violating)), path, values, because)

    def evaluate(
        self, graph: _Graph, context: EvalContext, only: set[str] | None = None
    ) -> list[Finding]:
        findings: list[Finding] = []
        candidates = graph.candidates(self.from_) if only is None else sorted(only)
        sources = [n for n in candidates if n in graph.nodes and self.from_(graph.subject(n))]
        if self.max_depth is None and len(sources) >= (1 if only is None else _PREFILL_AT):
            # The whole graph is asked for: one bottom-up pass beats a search per source.
            expand = None if self.via is None else self._expand(graph)
            _prefill_unions(
                graph, graph.memos.setdefault(id(self), {}), self._leaves(graph), expand
            )
        for source in sources:
            found = self.check_source(graph, source, context, None)
            if found is not None:
                findings.append(found)
        return findings

    def describe(self) -> str:
        via = f", through only components where {self.via.describe()}" if self.via else ""
        verb = "requires" if self.mode == "require" else "forbids"
        return _sentences(
            super().describe(),
            f"It {verb} a path from a component where {self.from_.describe()} to one where "
            f"{self.to.describe()}{via}.",
        )


@dataclass(eq=False)
class GraphShapeRule(Rule):
    """``path`` with ``check: max_length`` or ``check: cycle``: whole-graph shape checks."""

    check: str = "cycle"
    max_length: int = 0

    def evaluate(self, graph: _Graph, context: EvalContext) -> list[Finding]:
        if self.check == "cycle":
            findings = []
            _dfs(graph)  # records back edges: none means no cycle
            if not graph.back_edges:
                return []
            for cycle in graph.cg.cycles(limit=100):
                first = min(cycle)
                start = cycle.index(first)
                ordered = (*cycle[start:], *cycle[:start], first)
                subject = graph.subject(first)
                if self.excepted(subject, context) is not None:
                    continue
                because = f"The graph has a cycle: {' -> '.join(ordered)}."
                values = _component_vars(subject)
                values["length"] = len(cycle)
                findings.append(self.finding(tuple(sorted(cycle)), ordered, values, because))
            return findings
        longest = _longest_path(graph)
        if len(longest) - 1 <= self.max_length:
            return []
        last = graph.subject(longest[-1])
        if self.excepted(last, context) is not None:
            return []
        values = _component_vars(last)
        values.update({"length": len(longest) - 1, "max_length": self.max_length})
        because = (
            f"The longest path from the agent has {len(longest) - 1} edges "
            f"(limit {self.max_length}): {' -> '.join(longest)}."
        )
        return [self.finding((longest[-1],), tuple(longest), values, because)]


@dataclass(eq=False)
class LeastPrivilegeRule(Rule):
    """Declared capabilities against the union of what the reachable tools expose."""

    check: str = "undeclared"
    applies_to: frozenset[str] = frozenset({"skill", "agent_capability"})
    allow_wildcards: bool = True

    def evaluate(
        self,
        graph: _Graph,
        context: EvalContext,
        only: set[str] | None = None,
        memo: dict[str, frozenset[str]] | None = None,
    ) -> list[Finding]:
        memo = graph.memos.setdefault(0, {}) if memo is None else memo
        if only is None:
            index = graph.by_type()
            nodes = sorted(n for t in self.applies_to for n in index.get(t, ()))
        else:  # a few nodes: filter them rather than index the whole graph
            nodes = sorted(
                n for n in only if n in graph.nodes and graph.type_key(n) in self.applies_to
            )
        findings = []
        for node in nodes:
            found = self.check_node(graph, node, context, memo)
            if found is not None:
                findings.append(found)
        return findings

    def check_node(
        self, graph: _Graph, node: str, context: EvalContext, memo: dict[str, frozenset[str]]
    ) -> Finding | None:
        subject = graph.subject(node)
        raw = subject.data.get("declared_capabilities")
        if raw is None and subject.type != "skill":
            return None  # an agent capability that declares nothing is not checked
        declared, declared_set = graph.declared(node)
        if self.excepted(subject, context) is not None:
            return None
        exposed = _union_below(graph, node, memo, graph.caps, _always)
        if self.check == "undeclared":
            missing = graph.uncovered(declared_set, exposed)
            if not missing:
                return None
            values = _component_vars(subject)
            culprits, parent = _witnesses(graph, node, missing, graph.caps, _always, memo)
            values["capabilities"] = ", ".join(missing)
            because = (
                f"{subject.type} {node!r} declares [{', '.join(declared)}] but the tools it "
                f"reaches expose {', '.join(missing)} (e.g. {', '.join(culprits)})."
            )
            tail = _chain(parent, node, culprits[0])
            path = (*graph.root_path(node)[:-1], *tail)
            return self.finding((node, *sorted(culprits)), path, values, because)
        named = allowed_tool_capabilities(subject.data)  # granted by its own allowed-tools
        wide = self.allow_wildcards
        broad = [
            cap
            for cap in declared
            if cap not in named and not (_covers_some(cap, exposed) and (wide or cap in exposed))
        ]
        if not broad:
            return None
        values = _component_vars(subject)
        values["capabilities"] = ", ".join(broad)
        because = (
            f"{subject.type} {node!r} declares {', '.join(broad)} beyond what its tools expose "
            f"([{', '.join(sorted(exposed))}])."
        )
        return self.finding((node,), graph.root_path(node), values, because)
