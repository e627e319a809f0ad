"""RFC 8785 (JCS) canonical JSON: the single byte form that ACS hashes and signs.

:func:`canonical_bytes` is the one canonicalization function of agbom. The audit chain
(:mod:`agbom.protocol.chain`) and the HMAC signatures (:mod:`agbom.protocol.signatures`)
both call it, so the two can never disagree about the bytes of a value.

The serializer lives in :mod:`agbom._canonical` (shared with the AgBOM hash). The reference
serializer is the ``rfc8785`` library. It is pure Python and costs tens of
microseconds per envelope, so values that provably serialize identically go through orjson
instead. For JSON made only of ``str``, ``bool``, ``None``, ``list``, ``dict`` with ASCII keys
and integers within ±(2**53 - 1), the two agree byte for byte:

* JCS sorts keys by UTF-16 code units; for ASCII keys that is the byte order orjson uses;
* JCS escapes exactly ``"``, ``\\``, and U+0000..U+001F (short forms for ``\\b \\t \\n \\f \\r``,
  lowercase ``\\u00xx`` otherwise) and writes everything else as raw UTF-8; so does orjson;
* integers in the safe range print as plain decimals in both.

Floats (JCS uses ECMAScript number formatting, so ``1.0`` is ``1``), non-ASCII keys (UTF-16
order differs from code-point order above U+FFFF), tuples and any other type take the
``rfc8785`` path. ``tests/protocol`` checks the equivalence with hypothesis.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agbom._canonical import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
from agbom._canonical import NotCanonicalizable, jcs_bytes
from agbom._canonical import fast_path_applies as _fast_path_applies  # noqa: F401 - tests
from agbom.protocol.errors import INVALID_REQUEST, AcsError

__all__ = [
    "MAX_SAFE_INTEGER",
    "CanonicalizationFailed",
    "canonical_bytes",
    "canonical_sha256",
    "sha256_hex",
]


class CanonicalizationFailed(AcsError):
    """The value has no RFC 8785 form (NaN, infinity, an integer beyond 2**53 - 1, a lone
    surrogate, a non-string key, a non-JSON type, or nesting too deep to serialize).

    On the wire this is ``-32600`` with reason ``not_canonicalizable``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_REQUEST, "not_canonicalizable", message)


def canonical_bytes(obj: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of ``obj``.

    Raises :class:`CanonicalizationFailed` when ``obj`` has no canonical form.
    """
    try:
        return jcs_bytes(obj)
    except NotCanonicalizable as exc:
        raise CanonicalizationFailed(str(exc)) from exc


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Lowercase hex SHA-256 of the canonical bytes of ``obj``."""
    return hashlib.sha256(canonical_bytes(obj)).hexdigest()
