"""Compiled rules and the rule set that evaluates them over a component graph.

Evaluation is built for the Guardian's hot path:

* component rules (``ban``, ``hygiene``) are indexed by component type, exact name, endpoint
  host and purl, so a component only meets the rules that could match it;
* one DFS over the graph serves the cycle check, the longest path and a topological order;
* on an acyclic graph, ``path`` reach and ``least_privilege`` rules get the capabilities
  reachable below every node from one bottom-up pass over that order (under a cycle, a
  memoized DFS per source), and build a witness path only for the sources with a finding;
* :meth:`RuleSet.evaluate_incremental` re-evaluates the changed components, their ancestors
  and the sources of earlier findings they touch, and re-runs the whole-graph cycle and
  depth rules only when the previous findings cannot show them quiet.

The adjacency is read from networkx's ``_succ``/``_pred``/``_node`` dicts directly, and only
read: the public views cost a wrapper object per call, which matters on 10,000 nodes.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from agbom.inventory import ROOT_ID, Component, ComponentGraph, ComponentType
from agbom.rules.interface import (
    Action,
    EvalContext,
    Explanation,
    Finding,
    RuleError,
    Severity,
)
from agbom.rules.matchers import (
    AllOf,
    CapabilityIs,
    EndpointIs,
    MatchSpecError,
    Predicate,
    PurlIs,
    Subject,
    TextMatcher,
    allowed_tool_capabilities,
    capabilities_of,
    compile_match,
    covered_by_any,
    index_hints,
    parse_endpoint,
    purl_index_key,
    unpinned_reason,
)

_LOOKUP_CACHE_SIZE = 65536
# From this many sources on, an incremental run fills reach and least-privilege unions for the
# whole graph in one pass (as a full run does) instead of searching below each source.
_PREFILL_AT = 256
# ``ComponentType.value`` is an enum property lookup; a dict is cheaper on 10,000 nodes.
_TYPE_VALUES: dict[ComponentType, str] = {t: t.value for t in ComponentType}
_PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z_]+)?)\}")
TEMPLATE_VARS = frozenset(
    {
        "rule.id",
        "rule.severity",
        "rule.action",
        "component.id",
        "component.name",
        "component.type",
        "component.version",
        "component.endpoint",
        "component.provider",
        "component.purl",
        "target.id",
        "target.name",
        "target.type",
        "capabilities",
        "path",
        "length",
        "max_length",
        "reason",
    }
)


# -- shared per-evaluation state --------------------------------------------------------------


class _Graph:
    """Fast read access to a ComponentGraph for one evaluation (adjacency dicts, subjects)."""

    def __init__(self, graph: ComponentGraph) -> None:
        self.cg = graph
        self.g = graph.graph
        self.succ: Mapping[str, Mapping[str, Any]] = self.g._succ
        self.pred: Mapping[str, Mapping[str, Any]] = self.g._pred
        self.nodes: Mapping[str, Mapping[str, Any]] = self.g._node
        self._subjects: dict[str, Subject] = {}
        self._by_type: dict[str, list[str]] | None = None
        self._root_paths: dict[str, tuple[str, ...]] = {}
        self._caps: dict[str, tuple[str, ...]] = {}
        self.memos: dict[int, dict[str, frozenset[str]]] = {}
        self.longest: list[str] | None = None
        self.postorder: list[str] | None = None
        self.inner: list[str] = []  # post-order nodes other than the root that have successors
        self._declared: dict[str, tuple[list[str], frozenset[str]]] = {}
        self._uncovered: dict[tuple[frozenset[str], frozenset[str]], list[str]] = {}
        self._children: dict[str, list[str]] = {}
        self.back_edges: set[tuple[str, str]] = set()

    def caps(self, node: str) -> tuple[str, ...]:
        """Capabilities a tool node exposes (empty for other nodes), cached."""
        found = self._caps.get(node)
        if found is None:
            data = self.nodes[node]
            component = data.get("component")
            found = (
                capabilities_of(component.data)
                if component is not None and data.get("type") == "tool"
                else ()
            )
            self._caps[node] = found
        return found

    def declared(self, node: str) -> tuple[list[str], frozenset[str]]:
        """A node's ``declared_capabilities``, stripped and lower-cased, as a list and a set.

        Cached: both least-privilege checks read them for every skill."""
        found = self._declared.get(node)
        if found is None:
            raw = self.subject(node).data.get("declared_capabilities")
            names = [c.strip().lower() for c in raw or () if isinstance(c, str) and c.strip()]
            found = (names, frozenset(names))  # already what normalize_caps would give
            self._declared[node] = found
        return found

    def uncovered(self, declared: frozenset[str], exposed: frozenset[str]) -> list[str]:
        """The ``exposed`` capabilities no ``declared`` one covers, sorted.

        Cached per pair: skills repeat a few declared sets, and the unions below them are
        shared frozensets, so thousands of skills reduce to a few distinct questions."""
        key = (declared, exposed)
        found = self._uncovered.get(key)
        if found is None:
            found = sorted(c for c in exposed if not covered_by_any(declared, c))
            self._uncovered[key] = found
        return list(found)

    def tool_caps(self) -> dict[str, frozenset[str]]:
        """:meth:`caps` of every tool that exposes something, as sets."""
        out: dict[str, frozenset[str]] = {}
        for node in self.by_type().get("tool", ()):
            caps = self.caps(node)
            if caps:
                out[node] = frozenset(caps)
        return out

    def subject(self, node: str) -> Subject:
        found = self._subjects.get(node)
        if found is None:
            data = self.nodes[node]
            component = data.get("component")
            if component is not None:
                kind = component.type
                found = Subject(component.id, _TYPE_VALUES.get(kind) or kind.value, component.data)
            elif node == ROOT_ID:
                found = Subject.root(self.cg.agent)
            else:
                found = Subject(node, str(data.get("type", "")), {})
            self._subjects[node] = found
        return found

    def children(self, node: str) -> list[str]:
        """``node``'s successors in sorted order (cached: witness searches revisit nodes)."""
        found = self._children.get(node)
        if found is None:
            found = sorted(self.succ[node])
            self._children[node] = found
        return found

    def type_key(self, node: str) -> str:
        """The key :meth:`by_type` files ``node`` under."""
        return str(self.nodes[node].get("type")) if node != ROOT_ID else "agent"

    def by_type(self) -> dict[str, list[str]]:
        if self._by_type is None:
            index: dict[str, list[str]] = {}
            for node, data in self.nodes.items():
                kind = data.get("type")
                index.setdefault(str(kind) if node != ROOT_ID else "agent", []).append(node)
            # Unsorted: every caller that iterates in order sorts what it picked.
            self._by_type = index
        return self._by_type

    def candidates(self, predicate: Predicate) -> list[str]:
        """Nodes that could match ``predicate`` (narrowed by a top-level ``type``)."""
        types = _types_of(predicate)
        index = self.by_type()
        if types is None:
            return sorted(self.nodes)
        return sorted(n for t in types for n in index.get(t, ()))

    def root_path(self, node: str) -> tuple[str, ...]:
        """A shortest path from the agent to ``node``, found by walking up predecessors.

        Costs only the ancestors of ``node``; ties break on the smallest id so the result is
        deterministic. ``(node,)`` when the node hangs off no path from the root (a cycle).
        """
        cached = self._root_paths.get(node)
        if cached is not None:
            return cached
        if node == ROOT_ID:
            return (ROOT_ID,)
        parent: dict[str, str] = {node: ""}
        queue = deque([node])
        found = False
        while queue and not found:
            current = queue.popleft()
            for p in sorted(self.pred.get(current, ())):
                if p in parent:
                    continue
                parent[p] = current
                if p == ROOT_ID:
                    found = True
                    break
                queue.append(p)
        if not found:
            result: tuple[str, ...] = (node,)
        else:
            chain = [ROOT_ID]
            while chain[-1] != node:
                chain.append(parent[chain[-1]])
            result = tuple(chain)
        self._root_paths[node] = result
        return result

    def ancestors(self, nodes: Iterable[str]) -> set[str]:
        seen: set[str] = set()
        queue = deque(n for n in nodes if n in self.nodes)
        while queue:
            current = queue.popleft()
            for p in self.pred.get(current, ()):
                if p not in seen:
                    seen.add(p)
                    queue.append(p)
        return seen

    def path_valid(self, path: Sequence[str]) -> bool:
        if any(n not in self.nodes for n in path):
            return False
        return all(b in self.succ[a] for a, b in zip(path, path[1:], strict=False))


def _purl_keys(predicate: Predicate) -> frozenset[str] | None:
    """Index keys of a top-level ``purl`` predicate (a rule that needs a purl to match)."""
    if isinstance(predicate, AllOf):
        for part in predicate.parts:
            if isinstance(part, PurlIs) and part.index_keys:
                return part.index_keys
    return None


def _host_keys(predicate: Predicate) -> frozenset[str] | None:
    """Hosts and host suffixes of a top-level ``endpoint`` predicate, for indexing.

    A rule indexed here is looked up by the component's host and each of its parent domains
    (a superset filter; the predicate still decides)."""
    if isinstance(predicate, AllOf):
        for part in predicate.parts:
            if isinstance(part, EndpointIs) and (part.hosts or part.suffixes):
                return frozenset((*(part.hosts or ()), *(part.suffixes or ())))
    return None


def _types_of(predicate: Predicate) -> frozenset[str] | None:
    if isinstance(predicate, AllOf):
        for part in predicate.parts:
            types = getattr(part, "types", None)
            if part.key == "type" and types is not None:
                return frozenset(types)
    return None


# -- exceptions and templates -----------------------------------------------------------------


@dataclass(frozen=True)
class RuleException:
    """An allowed exception to a rule, with a reason and an optional expiry (inclusive)."""

    reason: str
    expires: date | None
    components: TextMatcher | None
    match: Predicate | None

    def applies(self, subject: Subject) -> bool:
        if self.components is not None and not self.components(subject.id):
            return False
        return self.match is None or self.match(subject)

    def active(self, context: EvalContext) -> bool:
        return self.expires is None or context.now.date() <= self.expires

    def describe(self) -> str:
        until = f" until {self.expires.isoformat()}" if self.expires else ""
        return f"exception{until}: {self.reason}"


def render(template: str, values: Mapping[str, Any]) -> str:
    """Fill ``{component.name}``-style placeholders; only known names are ever substituted."""

    def sub(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return "" if value is None else str(value)

    return _PLACEHOLDER.sub(sub, template)


def _component_vars(subject: Subject, prefix: str = "component") -> dict[str, Any]:
    data = subject.data
    values = {
        f"{prefix}.id": subject.id,
        f"{prefix}.name": subject.name,
        f"{prefix}.type": subject.type,
    }
    if prefix == "component":
        values.update(
            {
                "component.version": subject.version or "unknown",
                "component.endpoint": data.get("endpoint") or "",
                "component.provider": data.get("provider") or "",
                "component.purl": data.get("purl") or "",
            }
        )
    return values


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
        values = {
            "rule.id": self.id,
            "rule.severity": self.severity.value,
            "rule.action": self.action.value,
            "path": " -> ".join(path),
            **values,
        }
        explanation = (
            f"{self.description.strip()} {because}".strip() if self.description else because
        )
        return Finding(
            rule_id=self.id,
            severity=self.severity,
            action=self.action,
            message=render(self.message, values),
            components=tuple(components),
            path=tuple(path),
            explanation=explanation,
            pack=self.pack,
        )

    def excepted(self, subject: Subject, context: EvalContext) -> RuleException | None:
        for exception in self.exceptions:
            if exception.active(context) and exception.applies(subject):
                return exception
        return None

    def describe(self) -> str:
        return self.description or self.message


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
        return f"{super().describe()} [match: {self.predicate.describe()}]"


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
        via = f" via only ({self.via.describe()})" if self.via is not None else ""
        return (
            f"{super().describe()} [{self.mode} paths from ({self.from_.describe()}) "
            f"to ({self.to.describe()}){via}]"
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


def _dfs(graph: _Graph) -> list[str]:
    """One DFS over the whole graph: its post-order (children before parents) and back edges.

    Starts at the root, then at any node the root does not reach; the result is cached on
    ``graph``. Without back edges the graph is acyclic and the post-order is a reverse
    topological order, which :func:`_prefill_unions` and :func:`_longest_path` walk.
    """
    if graph.postorder is not None:
        return graph.postorder
    succ = graph.succ
    order: list[str] = []
    state: dict[str, int] = {}  # 1 on stack, 2 done
    back: set[tuple[str, str]] = set()
    inner: list[str] = []
    # The root reaches every node in a ComponentGraph (``_reach_all``), so the other starts are
    # only a safety net; their order changes nothing below (their nodes are not reachable from
    # the root, so the longest path ignores them), hence no sorting.
    for start in (ROOT_ID, *graph.nodes):
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(succ[start]))]
        while stack:
            node, children = stack[-1]
            advanced = False
            for child in children:
                mark = state.get(child)
                if mark is None:
                    grandchildren = succ[child]
                    if not grandchildren:
                        # A leaf (most tools): finish it in place, same order as a push/pop.
                        state[child] = 2
                        order.append(child)
                        continue
                    state[child] = 1
                    stack.append((child, iter(grandchildren)))
                    advanced = True
                    break
                if mark == 1:
                    back.add((node, child))
            if not advanced:
                state[node] = 2
                order.append(node)
                if node != ROOT_ID and succ[node]:
                    inner.append(node)
                stack.pop()
    graph.back_edges = back
    graph.inner = inner
    graph.postorder = order
    return order


def _longest_path(graph: _Graph) -> list[str]:
    """Longest path from the root, ignoring the back edges a DFS finds (cycles)."""
    if graph.longest is not None:
        return graph.longest
    order = _dfs(graph)
    succ = graph.succ
    back = graph.back_edges
    best: dict[str, int] = {ROOT_ID: 0}
    parent: dict[str, str] = {}
    for node in reversed(order):  # a topological order of the graph without back edges
        here = best.get(node)
        if here is None:
            continue
        here += 1
        for child in succ[node]:
            if back and (node, child) in back:
                continue
            if best.get(child, -1) < here:
                best[child] = here
                parent[child] = node
    deepest = max(best.values())
    end = min(n for n, d in best.items() if d == deepest)  # ties: the smallest id
    chain = [end]
    while chain[-1] in parent:
        chain.append(parent[chain[-1]])
    graph.longest = list(reversed(chain))
    return graph.longest


def _depths_within(graph: _Graph, nodes: set[str]) -> dict[str, int] | None:
    """Longest distance from the root to each of ``nodes``, over edges among ``nodes`` only.

    ``nodes`` must be closed under predecessors (the changed nodes and their ancestors), so
    these are the distances in the whole graph. ``None`` if the edges among them close a
    cycle.
    """
    succ = graph.succ
    order: list[str] = []
    state: dict[str, int] = {}
    for start in sorted(nodes):
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(succ[start]))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child not in nodes:
                    continue
                mark = state.get(child)
                if mark == 1:
                    return None
                if mark is None:
                    state[child] = 1
                    stack.append((child, iter(succ[child])))
                    break
            else:
                state[node] = 2
                order.append(node)
                stack.pop()
    depth: dict[str, int] = {ROOT_ID: 0}
    for node in reversed(order):
        here = depth.get(node)
        if here is None:
            continue
        for child in succ[node]:
            if child in nodes and depth.get(child, -1) < here + 1:
                depth[child] = here + 1
    return depth


def _height(graph: _Graph, start: str, heights: dict[str, int]) -> int:
    """Edges on the longest path down from ``start`` (memoized; the graph is acyclic)."""
    succ = graph.succ
    if start in heights:
        return heights[start]
    stack = [(start, iter(succ[start]))]
    best = {start: 0}
    while stack:
        node, children = stack[-1]
        for child in children:
            known = heights.get(child)
            if known is None:
                best[child] = 0
                stack.append((child, iter(succ[child])))
                break
            best[node] = max(best[node], known + 1)
        else:
            heights[node] = best.pop(node)
            stack.pop()
            if stack:
                parent = stack[-1][0]
                best[parent] = max(best[parent], heights[node] + 1)
    return heights[start]


def _prefill_unions(
    graph: _Graph,
    memo: dict[str, frozenset[str]],
    leaf: Mapping[str, frozenset[str]],
    expand: Callable[[str], bool] | None,
) -> None:
    """Fill ``memo`` with :func:`_union_below` for every inner node, in one bottom-up pass.

    Only on an acyclic graph (no DFS back edges), where the per-source DFS of
    :func:`_union_below` memoizes exactly these values for every node it visits; so the
    findings, witnesses included, are the same, at the cost of one pass over the edges
    instead of a search per source. Under a cycle the lazy DFS stays in charge. ``leaf`` maps
    the nodes that contribute something to what they contribute (absent: nothing);
    ``expand`` is ``None`` when every node is walked through.
    """
    _dfs(graph)
    if graph.back_edges:
        return
    succ = graph.succ
    leaf_of, below_of = leaf.get, memo.get
    empty: frozenset[str] = frozenset()
    # Children before parents; leaves have nothing below them, and the root (often the parent
    # of thousands) is left to the lazy DFS, which only needs it if the root is a source.
    for node in graph.inner:
        children = succ[node]
        parts: list[frozenset[str]] = []
        for child in children:
            contributes = leaf_of(child)
            if contributes:
                parts.append(contributes)
            if expand is None or expand(child):
                below = below_of(child)
                if below:
                    parts.append(below)
        if not parts:
            memo[node] = empty
        elif len(parts) == 1:
            memo[node] = parts[0]  # shared, not copied: frozensets are never changed
        else:
            memo[node] = empty.union(*parts)


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


def _covers_some(declared: str, exposed: frozenset[str]) -> bool:
    """``any(covers(declared, c) for c in exposed)`` for names the callers already stripped
    and lower-cased (it runs for every declared capability of every skill)."""
    if declared in ("*", ".*"):
        return bool(exposed)
    if declared.endswith(".*"):
        declared = declared[:-2]
    if declared in exposed:
        return True
    prefix = declared + "."
    return any(c.startswith(prefix) for c in exposed)


def _always(_node: str) -> bool:
    return True


def _union_below(
    graph: _Graph,
    start: str,
    memo: dict[str, frozenset[str]],
    leaf: Callable[[str], frozenset[str] | tuple[str, ...]],
    expand: Callable[[str], bool],
) -> frozenset[str]:
    """``U(n) = union over successors s of leaf(s), plus U(s) when expand(s)``, memoized.

    An iterative DFS (no recursion limit on long composition chains). A node whose subtree
    closes a cycle is not memoized from the DFS; it is computed exactly by a BFS instead.
    """
    hit = memo.get(start)
    if hit is not None:
        return hit
    succ = graph.succ
    incomplete: set[str] = set()
    on_stack = {start}
    acc: dict[str, set[str]] = {start: set()}
    stack = [(start, iter(succ[start]))]
    while stack:
        node, children = stack[-1]
        advanced = False
        for child in children:
            acc[node].update(leaf(child))
            if not expand(child):
                continue
            done = memo.get(child)
            if done is not None:
                acc[node].update(done)
            elif child in on_stack or child in incomplete:
                incomplete.add(node)
            else:
                on_stack.add(child)
                acc[child] = set()
                stack.append((child, iter(succ[child])))
                advanced = True
                break
        if advanced:
            continue
        stack.pop()
        on_stack.discard(node)
        result = acc.pop(node)
        if node not in incomplete:
            memo[node] = frozenset(result)
        if stack:
            parent = stack[-1][0]
            acc[parent].update(result)
            if node in incomplete:
                incomplete.add(parent)
    if start in memo:
        return memo[start]
    # A cycle below ``start``: a plain BFS is exact (and then safe to memoize).
    seen = {start}
    total: set[str] = set()
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for child in succ[current]:
            total.update(leaf(child))
            if expand(child) and child not in seen:
                seen.add(child)
                queue.append(child)
    memo[start] = frozenset(total)
    return memo[start]


def _witnesses(
    graph: _Graph,
    source: str,
    wanted: Iterable[str],
    caps_of: Callable[[str], Iterable[str]],
    expand: Callable[[str], bool],
    memo: Mapping[str, frozenset[str]] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """For each wanted capability, a node below ``source`` exposing it, with BFS parents.

    With the ``memo`` of :func:`_union_below` the search descends straight into a child
    whose subtree is known to hold the capability (depth x degree steps); without it, or
    below a cycle the memo does not cover, it falls back to a BFS with early exit.
    """
    missing = set(wanted)
    parent: dict[str, str] = {source: ""}
    found: list[str] = []
    if memo is not None:
        for cap in sorted(missing):
            if cap not in missing:
                continue  # an earlier witness already exposes it
            current, steps = source, 0
            while steps < len(graph.nodes):
                steps += 1
                nxt = None
                for child in graph.children(current):
                    if cap in caps_of(child):
                        if child not in parent:
                            parent[child] = current
                        found.append(child)
                        missing -= set(caps_of(child))
                        nxt = ""
                        break
                    below = memo.get(child)
                    if nxt is None and below is not None and cap in below and expand(child):
                        nxt = child
                if nxt is None or nxt == "":
                    break
                if nxt in parent and nxt != source:
                    break  # would loop; let the BFS below handle it
                parent[nxt] = current
                current = nxt
        if not missing:
            return sorted(set(found)), parent
    queue = deque([source])
    seen = {source}
    bfs_parent: dict[str, str] = {source: ""}
    while queue and missing:
        current = queue.popleft()
        for child in graph.children(current):
            if child in seen:
                continue
            seen.add(child)
            bfs_parent[child] = current
            hits = missing.intersection(caps_of(child))
            if hits:
                found.append(child)
                missing -= hits
                if not missing:
                    break
            if expand(child):
                below = memo.get(child) if memo is not None else None
                if below is not None and missing.isdisjoint(below):
                    # Nothing still missing lies below: skipping the subtree changes no
                    # witness and no parent on a witness's chain (those nodes all have a
                    # missing capability below them), it only saves the walk.
                    continue
                queue.append(child)
    for node in found:  # use BFS parents for witnesses the BFS found
        if node not in parent:
            walk = node
            while walk != source and walk not in parent:
                parent[walk] = bfs_parent[walk]
                walk = bfs_parent[walk]
    return sorted(set(found)), parent


def _chain(parent: Mapping[str, str], source: str, target: str) -> list[str]:
    chain = [target]
    while chain[-1] != source:
        chain.append(parent[chain[-1]])
    return list(reversed(chain))


# -- the rule set -----------------------------------------------------------------------------


class RuleSet:
    """Compiled rules from one or more packs, indexed for evaluation."""

    def __init__(self, rules: Sequence[Rule], *, sources: Sequence[str] = ()) -> None:
        if not rules:
            raise RuleError("no rules loaded (an empty rule set would allow everything)")
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.sources = tuple(sources)
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
    ) -> list[Finding]:
        """Findings for ``graph`` after a change to ``changed_ids`` (added, changed or removed).

        ``previous`` are the findings of the graph before the change (from :meth:`evaluate` or
        an earlier incremental call, with the same rules and context). Component rules run
        again for the changed ids only; path and least-privilege rules for the changed ids and
        their ancestors (the only nodes whose reach can have changed); earlier findings that
        touch none of these, and whose path is still in the graph, are kept as they are.
        Whole-graph shape rules (cycle, max_length) run again when anything changed.
        """
        context = context or EvalContext()
        view = _Graph(graph)
        changed = {c for c in changed_ids if c != ROOT_ID}
        if not changed:
            return sorted(previous, key=Finding.sort_key)
        present = {c for c in changed if c in view.nodes}
        affected = present | view.ancestors(present)
        dirty = affected | changed
        shape_ids = {r.id for r in self._shape_rules}
        kept: list[Finding] = []
        redo: set[str] = set(affected)
        for f in previous:
            rule = self.by_id.get(f.rule_id)
            if rule is None or not rule.enabled or rule.id in shape_ids:
                continue
            touched = dirty.intersection(f.components) or dirty.intersection(f.path)
            if (
                touched
                or not view.path_valid(f.path)
                or any(c not in view.nodes for c in f.components)
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
        return sorted({*kept, *fresh}, key=Finding.sort_key)

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


# -- compiling packs --------------------------------------------------------------------------


def compile_rule(raw: Mapping[str, Any], *, pack: str, source: str) -> Rule:
    """Build one rule from its schema-valid mapping; raise a located RuleError otherwise."""
    rule_id = str(raw["id"])

    def fail(message: str, key: str | None = None) -> RuleError:
        return RuleError(message, file=source, rule_id=rule_id, key_path=key)

    for name in _PLACEHOLDER.findall(raw["message"]):
        if name not in TEMPLATE_VARS:
            raise fail(
                f"unknown placeholder {{{name}}} (known: {', '.join(sorted(TEMPLATE_VARS))})",
                "message",
            )
    exceptions = []
    for i, spec in enumerate(raw.get("exceptions") or ()):
        where = f"exceptions[{i}]"
        expires = None
        if "expires" in spec:
            try:
                expires = date.fromisoformat(spec["expires"])
            except ValueError:
                raise fail(f"invalid date {spec['expires']!r}", f"{where}.expires") from None
        if "components" not in spec and "match" not in spec:
            raise fail("an exception needs components or match", where)
        try:
            when = compile_match(spec["match"], f"{where}.match") if "match" in spec else None
        except MatchSpecError as exc:
            raise fail(str(exc), exc.key) from None
        comps = spec.get("components")
        exceptions.append(
            RuleException(
                reason=spec["reason"],
                expires=expires,
                components=TextMatcher(comps if isinstance(comps, list) else [comps])
                if comps
                else None,
                match=when,
            )
        )
    common: dict[str, Any] = {
        "id": rule_id,
        "kind": raw["kind"],
        "severity": Severity.parse(raw["severity"]),
        "action": Action(raw["action"]),
        "message": raw["message"],
        "description": raw.get("description", ""),
        "pack": pack,
        "source": source,
        "exceptions": tuple(exceptions),
        "enabled": raw.get("enabled", True),
    }

    def match(key: str) -> AllOf:
        try:
            return compile_match(raw[key], key)
        except MatchSpecError as exc:
            raise fail(str(exc), exc.key) from None

    kind = raw["kind"]
    if kind in ("ban", "hygiene"):
        types, names = index_hints(raw["match"])
        return MatchRule(
            **common, predicate=match("match"), type_hint=types, name_hint=names, scope="local"
        )
    if kind == "path":
        check = raw["check"]
        if check == "reach":
            return ReachRule(
                **common,
                scope="subtree",
                from_=match("from"),
                to=match("to"),
                via=match("via") if "via" in raw else None,
                mode=raw.get("mode", "forbid"),
                max_depth=raw.get("max_depth"),
                unless=raw.get("unless"),
            )
        return GraphShapeRule(
            **common, scope="global", check=check, max_length=int(raw.get("max_length", 0))
        )
    if kind == "least_privilege":
        return LeastPrivilegeRule(
            **common,
            scope="subtree",
            check=raw["check"],
            applies_to=frozenset(raw.get("applies_to", ("skill", "agent_capability"))),
            allow_wildcards=raw.get("allow_wildcards", True),
        )
    raise fail(f"unknown rule kind {kind!r}", "kind")  # pragma: no cover - schema enum


def load_rules(path: Path | None = None, *, with_default: bool = False) -> RuleSet:
    """Load and compile rule packs; ``None`` is the packaged default pack, a folder means
    every ``*.yaml``/``*.yml`` pack in it (rule tests excluded); ``with_default`` adds the
    packaged default pack to ``path``'s. Fails closed: no packs, or a pack without rules, is
    an error."""
    from agbom.rules.loader import default_pack_path, iter_pack_sources, read_yaml, validate_pack

    rules: list[Rule] = []
    seen: dict[str, str] = {}
    sources: list[str] = []
    default = str(default_pack_path())
    for file in iter_pack_sources(path, with_default=with_default):
        data, node = read_yaml(file)
        validate_pack(data, node, file)
        pack = data.get("pack") or file.stem
        for index, raw in enumerate(data["rules"]):
            rule = compile_rule(raw, pack=pack, source=str(file))
            if rule.id in seen:
                # A copy of the default pack next to it is the usual cause.
                hint = " (the default pack is loaded too: --no-default-rules leaves it out)"
                raise RuleError(
                    f"duplicate rule id (first defined in {seen[rule.id]})"
                    + (hint if seen[rule.id] == default else ""),
                    file=str(file),
                    rule_id=rule.id,
                    key_path=f"rules[{index}].id",
                )
            seen[rule.id] = str(file)
            rules.append(rule)
        sources.append(str(file))
    if not sources:
        raise RuleError("no rule packs (*.yaml, *.yml) found", file=str(path))
    return RuleSet(rules, sources=sources)
