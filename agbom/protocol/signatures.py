"""HMAC-SHA256 envelope signatures, the ACS-Core baseline (specification §10).

Parameters (the specification leaves the key derivation open; these match the Go and
Python reference Guardians and the shipped interop vectors):

* session key = HKDF-SHA256(ikm = deployment key material, salt = none, info = UTF-8
  ``session_id``, length = 32 bytes), RFC 5869;
* signing input = RFC 8785 bytes of the whole envelope with the ``signature`` member removed
  from ``params`` (requests), ``result`` (responses) or ``error`` (error responses);
* value = standard base64 (with padding) of HMAC-SHA256(session key, signing input);
* signature object = ``{"algorithm": "HMAC-SHA256", "value": ..., "key_id": ...}``.

Verification fails closed: :func:`verify_envelope` returns ``None`` or raises
:class:`SignatureInvalid`; there is no boolean to forget to check.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agbom.protocol.canonical import canonical_bytes
from agbom.protocol.errors import SIGNATURE_INVALID, AcsError
from agbom.protocol.interface import ProtocolError

HMAC_SHA256 = "HMAC-SHA256"
SUPPORTED_SIGNATURE_ALGORITHMS: tuple[str, ...] = (HMAC_SHA256,)
SESSION_KEY_LENGTH = 32
MIN_KEY_MATERIAL = 16
"""Fewest bytes of deployment key material :class:`KeyRing` accepts."""
MAX_KEY_FILE_BYTES = 64 * 1024
DEFAULT_KEY_ID = "default"

_DIGEST_SIZE = hashlib.sha256().digest_size
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")


class SignatureInvalid(AcsError):
    """An envelope's signature is missing, malformed, of an unsupported algorithm, or wrong.

    On the wire this is ``-32004``; ``reason`` is one of ``signature_missing``,
    ``signature_malformed``, ``signature_algorithm_unsupported``, ``signature_key_unknown``
    and ``signature_mismatch``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(SIGNATURE_INVALID, reason, message)


class KeyMaterialError(ProtocolError):
    """Deployment key material is missing, unreadable, or too short to be a secret."""


def _hkdf_sha256(ikm: bytes, info: bytes, length: int, salt: bytes = b"") -> bytes:
    """RFC 5869 HKDF with SHA-256. An empty salt means a block of zeros, per §2.2."""
    prk = hmac.new(salt or bytes(_DIGEST_SIZE), ikm, hashlib.sha256).digest()
    okm = b""
    block = b""
    counter = 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        okm += block
        counter += 1
    return okm[:length]


def derive_session_key(ikm: bytes, session_id: str) -> bytes:
    """The 32-byte per-session HMAC key: HKDF-SHA256, no salt, info = UTF-8 ``session_id``."""
    return _hkdf_sha256(ikm, session_id.encode("utf-8"), SESSION_KEY_LENGTH)


def _slot(envelope: Mapping[str, Any]) -> str:
    """Which member of ``envelope`` holds its signature: params, result or error."""
    if "method" in envelope:
        slot = "params"
    elif "result" in envelope:
        slot = "result"
    elif "error" in envelope:
        slot = "error"
    else:
        raise SignatureInvalid(
            "signature_malformed", "envelope is neither a request nor a response"
        )
    if not isinstance(envelope[slot], Mapping):
        raise SignatureInvalid("signature_malformed", f"envelope {slot} is not an object")
    return slot


def _without_signature(envelope: Mapping[str, Any], slot: str) -> dict[str, Any]:
    # Shallow copies only: the signature sits one level down, nothing else is touched.
    inner = {k: v for k, v in envelope[slot].items() if k != "signature"}
    return {**envelope, slot: inner}


def signing_input(envelope: Mapping[str, Any]) -> bytes:
    """The bytes an HMAC covers: the canonical envelope minus its signature member."""
    return canonical_bytes(_without_signature(envelope, _slot(envelope)))


def _mac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def sign_envelope(envelope: Mapping[str, Any], key: bytes, key_id: str) -> dict[str, Any]:
    """A new envelope carrying an HMAC-SHA256 signature in the right member.

    ``key`` is the session key (see :func:`derive_session_key`). Any existing signature is
    replaced; the input is not modified.
    """
    slot = _slot(envelope)
    unsigned = _without_signature(envelope, slot)
    value = base64.b64encode(_mac(key, canonical_bytes(unsigned))).decode("ascii")
    unsigned[slot]["signature"] = {"algorithm": HMAC_SHA256, "value": value, "key_id": key_id}
    return unsigned


def signature_of(envelope: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The signature object an envelope carries, or ``None`` when it has none."""
    slot = _slot(envelope)
    sig = envelope[slot].get("signature")
    if sig is None:
        return None
    if not isinstance(sig, Mapping):
        raise SignatureInvalid("signature_malformed", "signature is not an object")
    return sig


def verify_envelope(envelope: Mapping[str, Any], key: bytes) -> None:
    """Return if ``envelope`` carries a valid HMAC-SHA256 signature under ``key``; raise
    :class:`SignatureInvalid` otherwise. The comparison is constant-time."""
    sig = signature_of(envelope)
    if sig is None:
        raise SignatureInvalid("signature_missing", "the envelope carries no signature")
    algorithm = sig.get("algorithm")
    if not isinstance(algorithm, str):
        raise SignatureInvalid("signature_malformed", "signature.algorithm is not a string")
    if algorithm not in SUPPORTED_SIGNATURE_ALGORITHMS:
        raise SignatureInvalid(
            "signature_algorithm_unsupported",
            f"signature algorithm {algorithm[:40]!r} is not supported "
            f"(supported: {', '.join(SUPPORTED_SIGNATURE_ALGORITHMS)})",
        )
    value = sig.get("value")
    if not isinstance(value, str):
        raise SignatureInvalid("signature_malformed", "signature.value is not a string")
    try:
        provided = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SignatureInvalid("signature_malformed", "signature.value is not base64") from exc
    if len(provided) != _DIGEST_SIZE:
        raise SignatureInvalid(
            "signature_malformed", f"signature.value decodes to {len(provided)} bytes, not 32"
        )
    expected = _mac(key, signing_input(envelope))
    if not hmac.compare_digest(expected, provided):
        raise SignatureInvalid("signature_mismatch", "signature does not match the envelope")


def parse_key_material(raw: bytes) -> bytes:
    """Decode the content of a secret file into key material.

    * Binary content (not printable UTF-8 text) is used as is.
    * Text is stripped of surrounding whitespace, then read as ``hex:<hex>``,
      ``base64:<base64>``, bare hex (an even number of hex digits, e.g. from
      ``openssl rand -hex 32``), or otherwise as the UTF-8 bytes of the text itself.

    Bare base64 is not guessed, since many passphrases are also valid base64.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    stripped = text.strip()
    if any(ch not in string.printable for ch in text if ch.isascii()):
        return raw  # control bytes other than whitespace: a binary key
    if stripped.startswith("hex:"):
        body = stripped[4:].strip()
        if not _HEX.fullmatch(body):
            raise KeyMaterialError("key file says hex: but holds no valid hex")
        return bytes.fromhex(body)
    if stripped.startswith("base64:"):
        try:
            return base64.b64decode(stripped[7:].strip(), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise KeyMaterialError("key file says base64: but holds no valid base64") from exc
    if _HEX.fullmatch(stripped):
        return bytes.fromhex(stripped)
    return stripped.encode("utf-8")


class KeyRing:
    """Deployment key material and the session keys derived from it.

    The secret is never shown by ``repr`` or ``str``. Session keys are cached; the cache is
    cleared when it reaches ``max_cached`` sessions so memory stays bounded.
    """

    __slots__ = ("_ikm", "_cache", "_max_cached", "key_id")

    def __init__(self, material: bytes, key_id: str = DEFAULT_KEY_ID, *, max_cached: int = 4096):
        if len(material) < MIN_KEY_MATERIAL:
            raise KeyMaterialError(
                f"key material is {len(material)} bytes; at least {MIN_KEY_MATERIAL} are needed"
            )
        if not key_id:
            raise KeyMaterialError("key_id must not be empty")
        self._ikm = bytes(material)
        self.key_id = key_id
        self._cache: dict[str, bytes] = {}
        self._max_cached = max_cached

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], key_id: str = DEFAULT_KEY_ID) -> KeyRing:
        """Read key material from a secret file (formats in :func:`parse_key_material`)."""
        file = Path(path)
        try:
            size = file.stat().st_size
            if size > MAX_KEY_FILE_BYTES:
                raise KeyMaterialError(f"key file {file} is {size} bytes; the limit is 64 KiB")
            raw = file.read_bytes()
        except OSError as exc:
            raise KeyMaterialError(f"cannot read key file {file}: {exc.strerror}") from exc
        if not raw.strip():
            raise KeyMaterialError(f"key file {file} is empty")
        material = parse_key_material(raw)
        if len(material) < MIN_KEY_MATERIAL:
            raise KeyMaterialError(
                f"key file {file} holds {len(material)} bytes of key material; "
                f"at least {MIN_KEY_MATERIAL} are needed (try: openssl rand -hex 32)"
            )
        return cls(material, key_id)

    def session_key(self, session_id: str) -> bytes:
        """The HKDF-derived HMAC key for ``session_id`` (cached)."""
        key = self._cache.get(session_id)
        if key is None:
            if len(self._cache) >= self._max_cached:
                self._cache.clear()
            key = derive_session_key(self._ikm, session_id)
            self._cache[session_id] = key
        return key

    def sign(self, envelope: Mapping[str, Any], session_id: str) -> dict[str, Any]:
        """``envelope`` signed with this ring's key for ``session_id``."""
        return sign_envelope(envelope, self.session_key(session_id), self.key_id)

    def verify(self, envelope: Mapping[str, Any], session_id: str) -> None:
        """Verify ``envelope`` for ``session_id``; the signature must name this ring's key_id."""
        sig = signature_of(envelope)
        if sig is not None and sig.get("key_id") != self.key_id:
            raise SignatureInvalid("signature_key_unknown", "signature names an unknown key_id")
        verify_envelope(envelope, self.session_key(session_id))

    def __repr__(self) -> str:
        return f"KeyRing(key_id={self.key_id!r}, material=<redacted>)"
