"""Credential detection: the one-pass pre-check over the JSON text never hides a credential."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.guardian.secrets import contains_secret, secret_pointers

SECRETS = [
    "sk-proj-" + "A1b2" * 6,
    "ghp_" + "x" * 36,
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "xoxb-" + "1234567890ab",
    "glpat-" + "z" * 20,
    "eyJ" + "a" * 10 + ".eyJ" + "b" * 10 + "." + "c" * 10,
    "-----BEGIN RSA PRIVATE KEY-----",
]

# Text around a credential that JSON escapes (newlines, quotes, backslashes, controls) or that
# sits against it without a word boundary.
AROUND = st.text(alphabet=st.sampled_from(list('\n\t"\\\x01 aZ9_-./é')), max_size=4)


def _expected(value: Any, pointer: str = "") -> set[str]:
    """Every string leaf's pointer whose text holds a credential, by brute force."""
    if isinstance(value, str):
        return {pointer} if contains_secret(value) else set()
    if isinstance(value, dict):
        found: set[str] = set()
        for key, child in value.items():
            if key == "provenance":
                continue
            token = key.replace("~", "~0").replace("/", "~1")
            found |= _expected(child, f"{pointer}/{token}")
        return found
    if isinstance(value, list):
        return set().union(*(_expected(c, f"{pointer}/{i}") for i, c in enumerate(value)))
    return set()


leaf = st.one_of(
    st.builds(lambda a, s, b: a + s + b, AROUND, st.sampled_from(SECRETS), AROUND),
    st.text(max_size=12),
    st.integers(),
    st.booleans(),
    st.none(),
)
json_values = st.recursive(
    leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.sampled_from(["a", "b/c", "provenance", "t~x", "k"]), children, max_size=4
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=300)
@given(json_values)
def test_pointers_are_exactly_the_strings_holding_a_credential(value: Any) -> None:
    assert set(secret_pointers(value)) == _expected(value)


def test_a_credential_after_an_escaped_newline_is_found() -> None:
    payload = {"arguments": {"text": {"value": "line one\n" + SECRETS[0]}}}
    assert list(secret_pointers(payload)) == ["/arguments/text/value"]


def test_values_that_are_not_plain_json_are_still_walked() -> None:
    # orjson cannot serialize a set, so the pre-check is skipped and the walk decides alone
    payload = {"tags": {"a", "b"}, "token": SECRETS[1]}
    assert list(secret_pointers(payload)) == ["/token"]
