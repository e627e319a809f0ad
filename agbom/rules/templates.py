"""Rule exceptions and finding message templates (split from engine.py)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from agbom.rules.interface import (
    EvalContext,
)
from agbom.rules.matchers import (
    Predicate,
    Subject,
    TextMatcher,
)

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
    compiled = _compiled(template)
    if compiled is None:
        return template  # no placeholder
    form, names = compiled
    get = values.get
    return form.format(*["" if (v := get(name)) is None else str(v) for name in names])


@functools.lru_cache(maxsize=4096)
def _compiled(template: str) -> tuple[str, tuple[str, ...]] | None:
    # A template turned once into a positional format string and the names it fills: a
    # finding renders its rule's message on every hit, so the Guardian's flow rules do not
    # pay for a regex substitution on each tool call. Bounded: templates come from rule packs.
    parts = _PLACEHOLDER.split(template)
    if len(parts) == 1:
        return None
    texts, names = parts[0::2], parts[1::2]
    form = "".join(
        text.replace("{", "{{").replace("}", "}}") + (f"{{{i}}}" if i < len(names) else "")
        for i, text in enumerate(texts)
    )
    return form, tuple(names)


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
