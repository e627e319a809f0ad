"""The span editor behind ``agbom hook install``: an edit changes one member or element, an
undo gives back the exact text, whatever the layout, comments and trailing commas around it.
Property tests run derandomized (a fixed seed), as everywhere in the suite."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.hostconfig import jsonc_edit
from agbom.hostconfig.interface import HostConfigError

scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
gaps = st.sampled_from(["", " ", "\n  ", "\n    ", " /* c */ ", " // line\n  ", "\n\t"])


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, Any]:
    """A JSONC text (comments and blanks drawn into the gaps, trailing commas or not) with
    an object ``hooks`` holding an array ``list``, and its value."""
    trailing = draw(st.booleans())

    def render(value: Any) -> str:
        g = draw(gaps)
        comma = "," if trailing else ""
        if isinstance(value, dict) and value:
            members = [f"{draw(gaps)}{json.dumps(k)}: {render(v)}" for k, v in value.items()]
            return "{" + ",".join(members) + (comma if trailing else "") + g + "}"
        if isinstance(value, list) and value:
            items = [f"{draw(gaps)}{render(v)}" for v in value]
            return "[" + ",".join(items) + comma + g + "]"
        return json.dumps(value)

    extra = draw(st.dictionaries(st.text(min_size=1, max_size=5), values, max_size=3))
    extra.pop("hooks", None)
    items = draw(st.lists(values, max_size=3))
    value = {**extra, "hooks": {"list": items}}
    return draw(gaps) + render(value) + draw(gaps) + "\n", value


@settings(max_examples=300, deadline=None, derandomize=True)
@given(documents(), values, st.text(min_size=1, max_size=6))
def test_add_then_remove_gives_back_the_text(doc: tuple[str, Any], new: Any, key: str) -> None:
    text, value = doc
    assert jsonc_edit.load(text) == value
    appended = jsonc_edit.append(text, ("hooks", "list"), new)
    assert jsonc_edit.load(appended)["hooks"]["list"] == [*value["hooks"]["list"], new]
    index = len(value["hooks"]["list"])
    assert jsonc_edit.remove(appended, ("hooks", "list", index)) == text
    if key not in value["hooks"]:
        added = jsonc_edit.add_member(text, ("hooks",), key, new)
        assert jsonc_edit.load(added)["hooks"] == {**value["hooks"], key: new}
        assert jsonc_edit.remove(added, ("hooks", key)) == text


@settings(max_examples=200, deadline=None, derandomize=True)
@given(documents())
def test_removing_any_element_removes_only_it(doc: tuple[str, Any]) -> None:
    text, value = doc
    items = value["hooks"]["list"]
    for i in range(len(items)):
        out = jsonc_edit.load(jsonc_edit.remove(text, ("hooks", "list", i)))
        assert out["hooks"]["list"] == items[:i] + items[i + 1 :]
        assert {k: v for k, v in out.items() if k != "hooks"} == {
            k: v for k, v in value.items() if k != "hooks"
        }


@pytest.mark.parametrize(
    "text",
    ["{", '{"a": }', '{"a" 1}', "[1 2]", "{} {}", '{"a": "x\ny"}', "/* open", '{"a": tru}'],
)
def test_bad_text_is_one_located_error(text: str) -> None:
    with pytest.raises(HostConfigError, match=r"not valid JSON: .* at line \d+, column \d+"):
        jsonc_edit.parse(text)


def test_depth_is_bounded() -> None:
    deep = "[" * 100 + "]" * 100
    with pytest.raises(HostConfigError, match="deeper than 64"):
        jsonc_edit.parse(deep)
