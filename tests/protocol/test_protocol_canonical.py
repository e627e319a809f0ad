"""canonical_bytes is RFC 8785: its orjson fast path must match rfc8785 byte for byte."""

from __future__ import annotations

import enum
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.protocol import MAX_SAFE_INTEGER, CanonicalizationFailed, canonical_bytes
from agbom.protocol.canonical import _fast_path_applies

SAFE_INTS = st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
ASCII_KEYS = st.text(alphabet=st.characters(max_codepoint=127), max_size=8)
ANY_TEXT = st.text(max_size=12)  # any code point except lone surrogates

fast_json = st.recursive(
    st.none() | st.booleans() | SAFE_INTS | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(ASCII_KEYS, inner, max_size=5),
    max_leaves=40,
)

any_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | ANY_TEXT,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(fast_json)
def test_fast_path_is_byte_identical_to_rfc8785(value: Any) -> None:
    assert _fast_path_applies(value)
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=400, deadline=None)
@given(any_json)
def test_canonical_bytes_equals_rfc8785_or_both_fail(value: Any) -> None:
    try:
        expected = rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        with pytest.raises(CanonicalizationFailed):
            canonical_bytes(value)
        return
    assert canonical_bytes(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {"😀": 1, "｡": 2, "a": 3},  # UTF-16 order differs from code-point order
        {"é": 1, "e": 2, "z": 3},
        [1.0, -0.0, 1e-7, 1e21, 0.1, 123456789.125],
        {"control": "\x00\x07\x1f\x7f\u2028\u2029", "quote": '"\\/'},
        (1, 2, 3),
        2**53 - 1,
        -(2**53 - 1),
    ],
)
def test_special_cases_match_rfc8785(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_key_order_follows_utf16() -> None:
    assert canonical_bytes({"｡": 1, "😀": 2}) == '{"😀":2,"｡":1}'.encode()


def test_enums_take_the_reference_path() -> None:
    class Color(enum.StrEnum):
        RED = "red"

    value = {"c": Color.RED, "n": [True, None]}
    assert not _fast_path_applies(value)
    assert canonical_bytes(value) == b'{"c":"red","n":[true,null]}'


def test_nesting_beyond_orjson_limit_still_canonicalizes() -> None:
    value: Any = "x"
    for _ in range(300):
        value = [value]
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        {"n": -float("inf")},
        2**53,
        -(2**53),
        {"big": 10**30},
        {1: "non-string key"},
        "lone \ud800 surrogate",
        {"k": object()},
        {"k": b"bytes"},
    ],
)
def test_values_without_canonical_form(value: Any) -> None:
    with pytest.raises(CanonicalizationFailed) as info:
        canonical_bytes(value)
    assert info.value.code == -32600
    assert info.value.reason == "not_canonicalizable"


def test_absurd_nesting_fails_cleanly() -> None:
    value: Any = 1
    for _ in range(50_000):
        value = [value]
    with pytest.raises(CanonicalizationFailed):
        canonical_bytes(value)
