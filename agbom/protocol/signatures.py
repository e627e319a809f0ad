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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agbom._private_files import read_private_file
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

    def __init__(self, reason: str, message: str, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(SIGNATURE_INVALID, reason, message, data)


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


def _check_algorithm(sig: Mapping[str, Any]) -> None:
    """Refuse a signature whose algorithm this side does not verify on requests, before its
    key is looked up: an ML-DSA-65 request names a key id no HMAC key ring holds, and the
    client must be told the algorithm is the problem (with what is verified), not the key."""
    algorithm = sig.get("algorithm")
    if not isinstance(algorithm, str):
        raise SignatureInvalid("signature_malformed", "signature.algorithm is not a string")
    if algorithm not in SUPPORTED_SIGNATURE_ALGORITHMS:
        raise SignatureInvalid(
            "signature_algorithm_unsupported",
            f"signature algorithm {algorithm[:40]!r} is not verified on requests (verified: "
            f"{', '.join(SUPPORTED_SIGNATURE_ALGORITHMS)}, as the ServerHello's "
            "signature_algorithms_supported says)",
            {"signature_algorithms_supported": list(SUPPORTED_SIGNATURE_ALGORITHMS)},
        )


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
    _check_algorithm(sig)
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


SECRET_ENCODINGS = ("raw", "hex", "base64")
"""How a key file's bytes become key material (``agbom serve --secret-encoding``)."""
DEFAULT_SECRET_ENCODING = "raw"
"""The file's bytes exactly as they are, trailing newline included: how the reference
conformance check reads its key file (``readFileSync``), so one file gives both the same key.
``openssl rand -hex 32 > key`` is then 65 bytes of key material, not 32. A file that ends in
whitespace also verifies under its bytes without it (:data:`TRAILING_WHITESPACE`)."""

_WHITESPACE = b" \t\r\n"
TRAILING_WHITESPACE = b"\r\n\t "
"""What the public Python ACS adapters strip from the end of their key file
(``adapters/_common/acs_common.py``, ``load_hmac_secret``: ``rstrip(b"\\r\\n\\t ")``),
where the TypeScript conformance harness and the reference Guardians use the raw bytes. A
raw-read key file that ends in these is held both ways (:class:`KeyRing`)."""


def parse_key_material(raw: bytes, encoding: str = DEFAULT_SECRET_ENCODING) -> bytes:
    """Decode a key file's content into key material, as ``encoding`` says.

    * ``raw``: the bytes as they are, nothing trimmed (the reference tools' reading).
    * ``hex``: the text, surrounding whitespace trimmed, as hex digits (``openssl rand -hex``).
    * ``base64``: the text, surrounding whitespace trimmed, as standard base64 with padding.

    Nothing is guessed: a hex-looking file read ``raw`` stays its ASCII bytes.
    """
    if encoding == "raw":
        return raw
    body = raw.strip(_WHITESPACE)
    if encoding == "hex":
        try:
            text = body.decode("ascii")
        except UnicodeDecodeError:
            text = ""
        if not _HEX.fullmatch(text):
            raise KeyMaterialError("key material is not hex")
        return bytes.fromhex(text)
    if encoding == "base64":
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise KeyMaterialError("key material is not base64 (--secret-encoding base64)") from exc
    raise KeyMaterialError(
        f"unknown secret encoding {encoding[:20]!r}: use one of {', '.join(SECRET_ENCODINGS)}"
    )


def describe_material(material: bytes, encoding: str, source: str = "file's") -> str:
    """What a signature-mismatch answer says of a key (never the key itself): how it was read
    and how many bytes that gave, so an operator can see a newline or a decoding differ."""
    if encoding == "raw":
        tail = ", a trailing newline included" if material.endswith(b"\n") else ""
        return f"read as the {source} raw bytes ({len(material)}{tail})"
    return f"decoded from {encoding} ({len(material)} bytes)"


def trimmed_material(material: bytes) -> bytes | None:
    """``material`` without trailing whitespace, as the Python ACS adapters read a key file,
    when that differs and is still long enough to be a key; else ``None``."""
    trimmed = material.rstrip(TRAILING_WHITESPACE)
    if trimmed == material or len(trimmed) < MIN_KEY_MATERIAL:
        return None
    return trimmed


MAX_KEYS = 64
"""Most keys a keys file may list (a rotation needs two or three)."""
_KEY_ID = re.compile(r"[A-Za-z0-9._:@/+-]{1,128}")


def _check_key_id(key_id: object) -> str:
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        raise KeyMaterialError(
            f"key_id {str(key_id)[:40]!r} must be 1-128 characters of letters, digits and ._:@/+-"
        )
    return key_id


_HEX_TEXT = re.compile(rb"[0-9A-Fa-f]{32,}[ \t\r\n]*")


def key_file_notice(file: Path, encoding: str) -> str | None:
    """A one-line notice when a key file read ``raw`` holds hex text: it is used as those
    ASCII bytes, newline included, as the reference tools read it, which a client that
    hex-decodes the file would not match. Never quotes the key. ``None`` otherwise (or when
    the file cannot be read: reading it for real reports that)."""
    if encoding != "raw":
        return None
    try:
        raw = _read_secret(file)
    except KeyMaterialError:
        return None
    if _HEX_TEXT.fullmatch(raw) is None:
        return None
    trimmed = trimmed_material(raw)
    both = (
        f" or as the {len(trimmed)} before its trailing whitespace (the Python ACS adapters)"
        if trimmed is not None
        else ""
    )
    return (
        f"key file {file} holds hex text; it is used as its {len(raw)} raw bytes (the "
        f"reference tools){both}, not decoded (pass --secret-encoding hex if your clients "
        "decode it)"
    )


def _read_secret(file: Path) -> bytes:
    # The rule of every file holding a secret: no link, a regular file, yours, 0600, bounded.
    raw = read_private_file(file, "key file", MAX_KEY_FILE_BYTES, KeyMaterialError)
    if not raw.strip():
        raise KeyMaterialError(f"key file {file} is empty")
    return raw


def _checked_material(material: bytes, where: str) -> bytes:
    if len(material) < MIN_KEY_MATERIAL:
        raise KeyMaterialError(
            f"{where} holds {len(material)} bytes of key material; "
            f"at least {MIN_KEY_MATERIAL} are needed (for example: openssl rand -hex 32 > FILE)"
        )
    return material


class KeyRing:
    """Deployment key material, by key id, and the session keys derived from it.

    A ring holds one key or several (a rotation: the old key and the new one side by side).
    A request signed with any listed key verifies; the answer is signed with the key the
    request used. ``key_id`` is the primary key, used where no request names one.

    A key read raw from a file that ends in whitespace (``openssl rand -hex 32 > key``) is
    held two ways, because ACS clients read such a file two ways: its bytes as they are (the
    TypeScript conformance harness, the reference Guardians) and without the trailing
    whitespace (the Python ACS adapters). A request verifies under either; the session is
    then answered, and its errors signed, under the reading its client used (remembered per
    session and key, in memory). Both readings are the same secret, so neither weakens the
    other, and a request that verifies under neither is refused as before.

    The secrets are never shown by ``repr`` or ``str``. Session keys are cached; the cache is
    cleared when it reaches ``max_cached`` entries so memory stays bounded.
    """

    __slots__ = ("_ikm", "_trimmed", "_cache", "_max_cached", "_read_as", "_reading", "key_id")

    def __init__(
        self,
        material: bytes | Mapping[str, bytes],
        key_id: str = DEFAULT_KEY_ID,
        *,
        max_cached: int = 4096,
    ):
        keys = {key_id: material} if isinstance(material, bytes | bytearray) else dict(material)
        if not keys:
            raise KeyMaterialError("a key ring needs at least one key")
        if len(keys) > MAX_KEYS:
            raise KeyMaterialError(f"{len(keys)} keys listed; the limit is {MAX_KEYS}")
        if not key_id:
            raise KeyMaterialError("key_id must not be empty")
        self._ikm: dict[str, bytes] = {}
        for kid, ikm in keys.items():
            _check_key_id(kid)
            if len(ikm) < MIN_KEY_MATERIAL:
                raise KeyMaterialError(
                    f"key material is {len(ikm)} bytes; at least {MIN_KEY_MATERIAL} are needed"
                )
            self._ikm[kid] = bytes(ikm)
        if key_id not in self._ikm:
            key_id = next(iter(self._ikm)) if isinstance(material, Mapping) else key_id
        self.key_id = key_id
        self._cache: dict[tuple[str, str, bool], bytes] = {}
        self._max_cached = max_cached
        # How each key read from a file was decoded, for the signature-mismatch message.
        self._read_as: dict[str, str] = {}
        # Keys read raw from a file ending in whitespace: the material without it.
        self._trimmed: dict[str, bytes] = {}
        # (key id, session id) whose client signs under the trimmed reading.
        self._reading: set[tuple[str, str]] = set()

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        key_id: str = DEFAULT_KEY_ID,
        *,
        encoding: str = DEFAULT_SECRET_ENCODING,
    ) -> KeyRing:
        """Read one key's material from a secret file, decoded as ``encoding`` says
        (:func:`parse_key_material`; by default the raw bytes, as the reference tools do)."""
        file = Path(path)
        raw = _read_secret(file)  # its messages name the file already
        try:
            material = parse_key_material(raw, encoding)
        except KeyMaterialError as exc:
            raise KeyMaterialError(
                f"key file {file}: {exc} (--secret-encoding {encoding})"
            ) from exc
        material = _checked_material(material, f"key file {file}")
        ring = cls(material, _check_key_id(key_id))
        ring._read_as[ring.key_id] = describe_material(material, encoding)
        trimmed = trimmed_material(material) if encoding == "raw" else None
        if trimmed is not None:
            ring._trimmed[ring.key_id] = trimmed
        return ring

    @classmethod
    def from_keys_file(
        cls,
        path: str | os.PathLike[str],
        primary: str | None = None,
        *,
        encoding: str = DEFAULT_SECRET_ENCODING,
    ) -> KeyRing:
        """Read several keys from a JSON object ``{"key_id": "material", ...}``.

        A material starting ``hex:`` or ``base64:`` says its own encoding; any other is the
        string's UTF-8 bytes decoded as ``encoding`` (``raw``: those bytes as they are).
        ``primary`` (default: the first listed) is the key used where no request names one.
        """
        import json

        file = Path(path)
        raw = _read_secret(file)
        try:
            listed = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            raise KeyMaterialError(
                f"keys file {file} is not JSON: write an object of key_id to material"
            ) from exc
        if not isinstance(listed, dict) or not listed:
            raise KeyMaterialError(f"keys file {file} must be a non-empty JSON object")
        keys: dict[str, bytes] = {}
        read_as: dict[str, str] = {}
        for kid, text in listed.items():
            _check_key_id(kid)
            if not isinstance(text, str):
                raise KeyMaterialError(f"keys file {file}: key {kid!r} is not a string")
            prefix, colon, rest = text.partition(":")
            own, body = (
                (prefix, rest) if colon and prefix in ("hex", "base64") else (encoding, text)
            )
            try:
                material = parse_key_material(body.encode("utf-8"), own)
            except KeyMaterialError as exc:
                how = (
                    f"its {own}: prefix"
                    if own != encoding or body != text
                    else (f"--secret-encoding {encoding}")
                )
                raise KeyMaterialError(f"keys file {file}, key {kid!r}: {exc} ({how})") from exc
            keys[kid] = _checked_material(material, f"keys file {file}, key {kid!r},")
            read_as[kid] = describe_material(material, own, "string's")
        if primary is not None and primary not in keys:
            raise KeyMaterialError(f"keys file {file} lists no key {primary!r}")
        ring = cls(keys, primary or next(iter(keys)))
        ring._read_as.update(read_as)
        return ring

    @property
    def key_ids(self) -> tuple[str, ...]:
        """Every key id this ring verifies."""
        return tuple(self._ikm)

    def session_key(
        self, session_id: str, key_id: str | None = None, *, trimmed: bool | None = None
    ) -> bytes:
        """The HKDF-derived HMAC key for ``session_id`` under ``key_id`` (default: primary),
        from the reading of the key the session's client uses (``trimmed``: without the key
        file's trailing whitespace; by default, as the session's requests verified)."""
        kid = key_id or self.key_id
        if trimmed is None:
            trimmed = (kid, session_id) in self._reading
        key = self._cache.get((kid, session_id, trimmed))
        if key is None:
            ikm = self._trimmed.get(kid) if trimmed else self._ikm.get(kid)
            if ikm is None:
                raise SignatureInvalid("signature_key_unknown", "signature names an unknown key_id")
            if len(self._cache) >= self._max_cached:
                self._cache.clear()
            key = derive_session_key(ikm, session_id)
            self._cache[(kid, session_id, trimmed)] = key
        return key

    def sign(
        self, envelope: Mapping[str, Any], session_id: str, key_id: str | None = None
    ) -> dict[str, Any]:
        """``envelope`` signed for ``session_id`` with ``key_id`` (default: primary)."""
        kid = key_id or self.key_id
        return sign_envelope(envelope, self.session_key(session_id, kid), kid)

    def verify(self, envelope: Mapping[str, Any], session_id: str) -> str:
        """Verify ``envelope`` for ``session_id`` with the key its signature names; return that
        key id. A key id this ring does not hold is ``signature_key_unknown``."""
        sig = signature_of(envelope)
        if sig is None:
            raise SignatureInvalid("signature_missing", "the envelope carries no signature")
        _check_algorithm(sig)
        kid = sig.get("key_id")
        if not isinstance(kid, str) or kid not in self._ikm:
            raise SignatureInvalid("signature_key_unknown", "signature names an unknown key_id")
        last = (kid, session_id) in self._reading
        readings = (last, not last) if kid in self._trimmed else (False,)
        for trimmed in readings:
            try:
                verify_envelope(envelope, self.session_key(session_id, kid, trimmed=trimmed))
            except SignatureInvalid as exc:
                if exc.reason != "signature_mismatch":
                    raise
                failure = exc
                continue
            self._remember_reading(kid, session_id, trimmed)
            return kid
        read_as = self._read_as.get(kid)
        if read_as is None:
            raise failure
        # The usual cause is not an attacker but a key file the two sides read apart (a
        # trailing newline, hex decoded on one side only): say how this side read it.
        if kid in self._trimmed:
            read_as += (
                f", nor without its trailing whitespace ({len(self._trimmed[kid])} bytes, "
                "as the Python ACS adapters read it)"
            )
        raise SignatureInvalid(
            "signature_mismatch",
            f"signature does not match the envelope under key {kid!r}, {read_as}; the likely "
            "cause is a key file the client reads another way (decoded from hex or base64?): "
            f"agbom's --secret-encoding ({'|'.join(SECRET_ENCODINGS)}) must match it",
        ) from failure

    def _remember_reading(self, kid: str, session_id: str, trimmed: bool) -> None:
        if not trimmed:
            self._reading.discard((kid, session_id))
            return
        if len(self._reading) >= self._max_cached:
            self._reading.clear()  # bounded: a forgotten session verifies both ways again
        self._reading.add((kid, session_id))

    def __repr__(self) -> str:
        return f"KeyRing(key_ids={list(self._ikm)!r}, material=<redacted>)"
