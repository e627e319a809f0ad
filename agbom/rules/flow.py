"""Rule kind ``flow``: information-flow rules over a session's provenance lineage.

A flow rule names sinks (tool capabilities, tool names, argument names) that must not
receive an argument whose lineage is not trusted (:mod:`agbom.rules.lineage`), optionally
only when an untrusted ancestor comes from given origins or source ids. It is evaluated
for one tool call at a time (:func:`evaluate_call`), against the lineage the Guardian keeps
for the session; ``agbom rules test`` cases give the steps and the call inline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agbom.protocol.provenance import (
    ProvenanceNode,
    ProvenanceProblem,
    StepProvenance,
    step_provenance,
)
from agbom.rules.interface import EvalContext, Finding, RuleError
from agbom.rules.kinds import Rule, _sentences
from agbom.rules.lineage import Lineage, Trust, TrustOverride, TrustPolicy, Verdict
from agbom.rules.matchers import TextMatcher, covered_by_any

FLOW_TEMPLATE_VARS = frozenset(
    {"argument", "tool.name", "lineage", "origin", "source_id", "trust", "capabilities"}
)
"""Placeholders a flow rule's message may use (besides ``rule.*``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowCall:
    """One tool call as the flow rules see it."""

    tool: str
    capabilities: tuple[str, ...] = ()  # the call's own ``capability`` and its tool's
    arguments: Mapping[str, ProvenanceNode | None] = field(default_factory=dict)
    step_id: str = ""

    @classmethod
    def of(
        cls,
        payload: Mapping[str, Any],
        *,
        step_id: str = "",
        method: str = "steps/toolCallRequest",
        tool_capabilities: Iterable[str] = (),
        found: StepProvenance | None = None,
    ) -> FlowCall:
        """From a (schema-valid) toolCallRequest payload (and its provenance, when already
        read); raises ProvenanceProblem."""
        tool = payload.get("tool")
        name = str(tool.get("name", "")) if isinstance(tool, Mapping) else ""
        caps = payload.get("capability")
        own = [caps] if isinstance(caps, str) else [c for c in caps or () if isinstance(c, str)]
        if found is None:
            found = step_provenance(method, payload, step_id=step_id)
        by_id = {n.provenance_id: n for n in found.nodes}
        arguments: dict[str, ProvenanceNode | None] = {}
        raw_args = payload.get("arguments")
        for arg in raw_args if isinstance(raw_args, Mapping) else ():
            pid = found.by_field.get(f"arguments.{arg}")
            arguments[str(arg)] = by_id[pid] if pid is not None else None
        capabilities = (c.strip().lower() for c in [*own, *tool_capabilities])
        return cls(
            tool=name,
            capabilities=tuple(dict.fromkeys(capabilities)),
            arguments=arguments,
            step_id=step_id,
        )


@dataclass(eq=False)
class FlowRule(Rule):
    """``kind: flow``: no argument of lineage below ``trusted`` into a sink."""

    sink_capabilities: tuple[str, ...] = ()
    sink_tools: TextMatcher | None = None
    sink_arguments: TextMatcher | None = None
    source_origins: frozenset[str] | None = None
    source_ids: TextMatcher | None = None
    scope: str = "call"

    def is_sink(self, call: FlowCall) -> bool:
        """Whether the call's tool is one of this rule's sinks."""
        if self.sink_tools is not None and self.sink_tools(call.tool):
            return True
        return bool(self.sink_capabilities) and any(
            covered_by_any(self.sink_capabilities, c) for c in call.capabilities
        )

    def _wanted(self, node: ProvenanceNode) -> bool:
        if self.source_origins is not None and node.origin not in self.source_origins:
            return False
        return self.source_ids is None or self.source_ids(node.source_id)

    @property
    def filtered(self) -> bool:
        return self.source_origins is not None or self.source_ids is not None

    def check_call(
        self,
        call: FlowCall,
        lineage: Lineage,
        context: EvalContext,
        *,
        sink: bool = False,
        verdicts: dict[str, Verdict] | None = None,
        described: dict[tuple[str, ...], str] | None = None,
    ) -> tuple[list[Finding], list[str]]:
        """Findings for ``call``, and the provenance ids the answer relied on (``sink``: the
        caller already knows the call is one of this rule's sinks; ``verdicts`` and
        ``described``: what the call's other rules already worked out, shared)."""
        if not sink and not self.is_sink(call):
            return [], []
        findings: list[Finding] = []
        cited: list[str] = []
        for argument in sorted(call.arguments):
            node = call.arguments[argument]
            if node is None:
                continue  # no provenance: a `none` producer's session (see docs/rules.md)
            if self.sink_arguments is not None and not self.sink_arguments(argument):
                continue
            verdict = verdicts.get(argument) if verdicts is not None else None
            if verdict is None:
                verdict = lineage.verdict(node)
                if verdicts is not None:
                    verdicts[argument] = verdict  # the same for every rule of this call
            # What the answer relied on: the weakest path, and the argument's direct parents
            # (for a trusted argument, the path is the argument alone).
            cited.extend(verdict.path)
            known = lineage.nodes
            cited.extend(p for p in node.derived_from if p in known)
            if verdict.trust is Trust.TRUSTED:
                continue
            path: tuple[str, ...] | None = verdict.path
            if self.filtered:
                path = lineage.reaches(node, id(self), self._wanted)
                if path is None:
                    continue
                cited.extend(path)
            assert path is not None
            findings.append(
                self._finding(call, argument, node, path, verdict.trust, lineage, described)
            )
        return findings, cited

    def _finding(
        self,
        call: FlowCall,
        argument: str,
        node: ProvenanceNode,
        path: Sequence[str],
        trust: Trust,
        lineage: Lineage,
        memo: dict[tuple[str, ...], str] | None = None,
    ) -> Finding:
        last = lineage.nodes.get(path[-1]) if path else None
        if last is None and len(path) == 1:
            last = node
        # The same argument and path read the same for every rule that finds it: once.
        key = (argument, *path)
        described = memo.get(key) if memo is not None else None
        if described is None:
            described = " ← ".join([f"argument `{argument}`", *lineage.describe(path, node)])
            if memo is not None:
                memo[key] = described
        values: dict[str, Any] = {
            "argument": argument,
            "tool.name": call.tool,
            "lineage": described,
            "origin": last.origin if last is not None else "unknown",
            "source_id": (last.source_id or "") if last is not None else "",
            "trust": str(trust),
            "capabilities": ", ".join(call.capabilities),
        }
        because = f"Argument {argument!r} of {call.tool!r} has {trust} lineage: {described}." + (
            f" Not delivered: {path[-1]}." if last is None else ""
        )
        return self.finding((call.tool,), (f"arguments.{argument}", *path), values, because)

    def describe(self) -> str:
        sinks = []
        if self.sink_capabilities:
            sinks.append("capability " + " or ".join(self.sink_capabilities))
        if self.sink_tools is not None:
            sinks.append(f"tool {self.sink_tools}")
        where = f" arguments {self.sink_arguments}" if self.sink_arguments is not None else ""
        source = ""
        if self.filtered:
            parts = []
            if self.source_origins is not None:
                parts.append("origin " + " or ".join(sorted(self.source_origins)))
            if self.source_ids is not None:
                parts.append(f"source_id {self.source_ids}")
            source = f" from ({', '.join(parts)})"
        return _sentences(
            super().describe(),
            f"It finds data of untrusted lineage{source} reaching {' or '.join(sinks)}{where}.",
        )


def _matcher(raw: Any) -> TextMatcher | None:
    if raw is None:
        return None
    return TextMatcher(raw if isinstance(raw, list) else [raw])


def compile_flow(raw: Mapping[str, Any], common: Mapping[str, Any]) -> FlowRule:
    """Build a flow rule from its schema-valid mapping (``common`` as compile_rule has it)."""
    sink = raw["sink"]
    caps = sink.get("capability")
    source = raw.get("source") or {}
    origins = source.get("origin")
    return FlowRule(
        **common,
        sink_capabilities=tuple(
            c.strip().lower() for c in (caps if isinstance(caps, list) else [caps] if caps else [])
        ),
        sink_tools=_matcher(sink.get("tool")),
        sink_arguments=_matcher(sink.get("arguments")),
        source_origins=(
            frozenset(origins if isinstance(origins, list) else [origins]) if origins else None
        ),
        source_ids=_matcher(source.get("source_id")),
    )


def compile_trust(raw: Any, *, pack: str, source: str) -> list[TrustOverride]:
    """A pack's ``trust`` overrides (schema-valid), each named ``<pack>:trust[<i>]``."""
    out: list[TrustOverride] = []
    for i, spec in enumerate(raw or ()):
        if spec["origin"] == "agent_generated":
            raise RuleError(
                "agent_generated takes the trust of its lineage and cannot be overridden",
                file=source,
                key_path=f"trust[{i}].origin",
            )
        out.append(
            TrustOverride(
                id=f"{pack}:trust[{i}]",
                origin=spec["origin"],
                trust=Trust[spec["trust"].upper()],
                reason=spec["reason"],
                source_id=_matcher(spec.get("source_id")),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class FlowResult:
    """What the flow rules said of one call."""

    findings: tuple[Finding, ...]
    cited: tuple[str, ...]  # provenance ids the answer relied on, in order, once each
    overrides: tuple[str, ...]  # trust overrides that decided a cited node


def flow_rules(rules: Iterable[Rule]) -> list[FlowRule]:
    """The enabled flow rules of a rule set."""
    return [r for r in rules if isinstance(r, FlowRule) and r.enabled]


def source_filters(rules: Iterable[FlowRule]) -> dict[int, Callable[[ProvenanceNode], bool]]:
    """The ``source`` filters of ``rules`` by the key :meth:`FlowRule.check_call` asks the
    lineage with: what a lineage should keep answers for (:meth:`Lineage.watch_only`)."""
    return {id(rule): rule._wanted for rule in rules if rule.filtered}  # noqa: SLF001


def evaluate_call(
    rules: Sequence[FlowRule],
    call: FlowCall,
    lineage: Lineage,
    context: EvalContext | None = None,
    *,
    sinks: bool = False,
) -> FlowResult:
    """Every flow finding for ``call``, most severe first (``sinks``: ``rules`` are the ones
    whose sinks the call is, already selected)."""
    context = context or EvalContext()
    findings: list[Finding] = []
    cited: list[str] = []
    verdicts: dict[str, Verdict] = {}
    described: dict[tuple[str, ...], str] = {}
    for rule in rules:
        found, ids = rule.check_call(
            call, lineage, context, sink=sinks, verdicts=verdicts, described=described
        )
        findings.extend(found)
        cited.extend(ids)
    order = tuple(dict.fromkeys(cited))
    used = []
    for pid in order if lineage.policy.overrides else ():  # none: no node has one to name
        node = lineage.nodes.get(pid)
        if node is not None:
            override = lineage.policy.base(node)[1]
            if override is not None:
                used.append(override.id)
    return FlowResult(
        tuple(sorted(findings, key=Finding.sort_key)), order, tuple(dict.fromkeys(used))
    )


__all__ = [
    "FLOW_TEMPLATE_VARS",
    "FlowCall",
    "FlowResult",
    "FlowRule",
    "ProvenanceProblem",
    "TrustPolicy",
    "compile_flow",
    "compile_trust",
    "evaluate_call",
    "flow_rules",
    "source_filters",
]
