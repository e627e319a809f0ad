"""RFC 8785 (JCS) canonical JSON bytes, shared by the protocol layer and the inventory.

:mod:`agbom.protocol.canonical` is the public face (it turns a failure into the protocol's
``not_canonicalizable`` error); :mod:`agbom.inventory.model` hashes AgBOM components with the
same function, so an AgBOM hash and an audit-chain hash can never disagree about the bytes
of a value. This module imports nothing of agbom, so both layers can use it.

The reference serializer is the ``rfc8785`` library. It is pure Python and costs tens of
microseconds per value, so values that provably serialize identically go through orjson
instead. For JSON made only of ``str``, ``bool``, ``None``, ``list``, ``dict`` with ASCII keys
and integers within ±(2**53 - 1), the two agree byte for byte:

* JCS sorts keys by UTF-16 code units; for ASCII keys that is the byte order orjson uses;
* JCS escapes exactly ``"``, ``\\``, and U+0000..U+001F (short forms for ``\\b \\t \\n \\f \\r``,
  lowercase ``\\u00xx`` otherwise) and writes everything else as raw UTF-8; so does orjson;
* integers in the safe range print as plain decimals in both.

Floats (JCS uses ECMAScript number formatting, so ``1.0`` is ``1``), non-ASCII keys (UTF-16
order differs from code-point order above U+FFFF), tuples and any other type take the
``rfc8785`` path.
"""

from __future__ import annotations

from typing import Any

import orjson
import rfc8785

MAX_SAFE_INTEGER = 2**53 - 1
"""Largest integer magnitude JCS accepts (IEEE 754 doubles represent it exactly)."""

# OPT_STRICT_INTEGER makes orjson refuse integers outside the same ±(2**53 - 1) range, a
# second guard behind the type walk below.
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


class NotCanonicalizable(ValueError):
    """The value has no RFC 8785 form (NaN, infinity, an integer beyond 2**53 - 1, a lone
    surrogate, a non-string key, a non-JSON type, or nesting too deep to serialize)."""


def fast_path_applies(obj: Any) -> bool:
    """True when orjson with sorted keys is guaranteed to produce the JCS bytes of ``obj``.

    Iterative so that deep values cannot exhaust the interpreter stack. Exact type checks
    (not isinstance) keep out subclasses such as enums, which orjson and rfc8785 treat
    differently.
    """
    stack = [obj]
    pop = stack.pop
    push = stack.append
    extend = stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is str or kind is bool or value is None:
            continue
        if kind is int:
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                continue
            return False
        if kind is dict:
            for key, item in value.items():
                if type(key) is not str or not key.isascii():
                    return False
                push(item)
            continue
        if kind is list:
            extend(value)
            continue
        return False
    return True


def jcs_bytes(obj: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of ``obj``; :class:`NotCanonicalizable` if none."""
    if fast_path_applies(obj):
        try:
            # A copy of exactly its length: orjson's bytes keep the buffer it grew (4 KiB for
            # a 150-byte component, about 8x the text for larger values), and an AgBOM keeps
            # every component's canonical bytes for as long as a session holds it.
            return bytes(memoryview(orjson.dumps(obj, option=_ORJSON_OPTIONS)))
        except orjson.JSONEncodeError:
            # orjson refuses lone surrogates and nesting beyond 255 levels; rfc8785 decides.
            pass
    try:
        return rfc8785.dumps(obj)
    except rfc8785.CanonicalizationError as exc:
        raise NotCanonicalizable(str(exc)) from exc
    except UnicodeEncodeError as exc:
        raise NotCanonicalizable("string is not valid Unicode (lone surrogate)") from exc
    except RecursionError as exc:
        raise NotCanonicalizable("value is nested too deeply to canonicalize") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise NotCanonicalizable(f"value is not JSON: {exc}") from exc


def jcs_key_order(key: str) -> bytes:
    """Sort key of an object member name in JCS: its UTF-16 code units (big-endian bytes
    compare as code-unit sequences)."""
    return key.encode("utf-16-be", "surrogatepass")
