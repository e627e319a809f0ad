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

The code lives in: :mod:`agbom.rules.view` (the graph as the rules read it),
:mod:`agbom.rules.templates` (exceptions, messages), :mod:`agbom.rules.walks` (DFS, depths,
capability unions, witnesses), :mod:`agbom.rules.kinds` (the rule kinds),
:mod:`agbom.rules.ruleset` (:class:`RuleSet`); this module compiles and loads packs and
re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from agbom.rules.flow import FLOW_TEMPLATE_VARS, compile_flow, compile_trust
from agbom.rules.interface import (
    Action,
    RuleError,
    Severity,
)
from agbom.rules.kinds import GraphShapeRule, LeastPrivilegeRule, MatchRule, ReachRule, Rule
from agbom.rules.lineage import TrustOverride
from agbom.rules.matchers import (
    AllOf,
    MatchSpecError,
    TextMatcher,
    compile_match,
    index_hints,
)
from agbom.rules.ruleset import RuleSet
from agbom.rules.templates import _PLACEHOLDER, TEMPLATE_VARS, RuleException, render

__all__ = [
    "GraphShapeRule",
    "LeastPrivilegeRule",
    "MatchRule",
    "ReachRule",
    "Rule",
    "RuleException",
    "RuleSet",
    "TEMPLATE_VARS",
    "compile_rule",
    "load_rules",
    "render",
]


# -- compiling packs --------------------------------------------------------------------------


def compile_rule(raw: Mapping[str, Any], *, pack: str, source: str) -> Rule:
    """Build one rule from its schema-valid mapping; raise a located RuleError otherwise."""
    rule_id = str(raw["id"])

    def fail(message: str, key: str | None = None) -> RuleError:
        return RuleError(message, file=source, rule_id=rule_id, key_path=key)

    known = TEMPLATE_VARS | FLOW_TEMPLATE_VARS if raw["kind"] == "flow" else TEMPLATE_VARS
    for key in ("message", "remediation"):
        for name in _PLACEHOLDER.findall(raw.get(key) or ""):
            if name not in known:
                raise fail(
                    f"unknown placeholder {{{name}}} (known: {', '.join(sorted(known))})",
                    key,
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
        "remediation": raw.get("remediation", ""),
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
    if kind == "flow":
        return compile_flow(raw, common)
    raise fail(f"unknown rule kind {kind!r}", "kind")  # pragma: no cover - schema enum


def load_rules(
    path: Path | None = None, *, with_default: bool = False, shipped: tuple[str, ...] = ()
) -> RuleSet:
    """Load and compile rule packs; ``None`` is the packaged default pack, a folder means
    every ``*.yaml``/``*.yml`` pack in it (rule tests excluded); ``with_default`` adds the
    packaged default pack to ``path``'s; ``shipped`` names more shipped packs to load
    (``flow-strict``: ``serve --pack flow-strict``). Fails closed: no packs, or a pack
    without rules, is an error."""
    from agbom.rules.loader import (
        RULES_KIND,
        default_pack_path,
        iter_pack_sources,
        read_yaml,
        shipped_pack,
        validate_pack,
    )

    rules: list[Rule] = []
    trust: list[TrustOverride] = []
    seen: dict[str, str] = {}
    sources: list[str] = []
    default = str(default_pack_path())
    extra = tuple(shipped_pack(name, RULES_KIND) for name in dict.fromkeys(shipped))
    for file in iter_pack_sources(path, with_default=with_default, extra=extra):
        data, node = read_yaml(file)
        validate_pack(data, node, file)
        pack = data.get("pack") or file.stem
        trust.extend(compile_trust(data.get("trust"), pack=pack, source=str(file)))
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
    return RuleSet(rules, sources=sources, trust_overrides=trust)
