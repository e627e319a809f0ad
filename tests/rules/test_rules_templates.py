"""Message templates: ``{name}`` placeholders filled from the finding's values, everything
else (other braces, unknown names) left as the rules say; a template is compiled once, so
the rendered text must be what a plain substitution over the template gives."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agbom.rules.lineage import Trust
from agbom.rules.templates import render

NAMES = ["argument", "tool.name", "lineage", "rule.id", "missing"]
VALUES = {"argument": "command", "tool.name": "Bash", "lineage": "a ← {b}", "rule.id": 7}


def substituted(template: str, values: dict[str, object]) -> str:
    # What the placeholders mean, spelled as directly as possible.
    def one(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return "" if value is None else str(value)

    return re.sub(r"\{([a-z_]+(?:\.[a-z_]+)?)\}", one, template)


pieces = st.lists(
    st.one_of(
        st.sampled_from([f"{{{n}}}" for n in NAMES]),
        st.sampled_from(["{", "}", "{{", "}}", "{0}", "{A}", "{tool.}", " ", "←"]),
        st.text(max_size=6),
    ),
    max_size=12,
)


@given(pieces)
def test_render_fills_known_placeholders_and_keeps_everything_else(parts: list[str]) -> None:
    template = "".join(parts)
    assert render(template, VALUES) == substituted(template, VALUES)
    assert render(template, VALUES) == render(template, VALUES)  # compiled once, same text


def test_values_are_rendered_as_text() -> None:
    # An IntEnum formats as its number; a finding says its name.
    assert render("{trust} lineage", {"trust": Trust.UNTRUSTED}) == "untrusted lineage"
    assert render("{rule.id}: {missing}.", {"rule.id": 0}) == "0: ."
    assert render("no placeholder {here", {}) == "no placeholder {here"
