"""Signed A2A Agent Cards: ``signatures[]`` verified offline against local public keys.

A2A v1.0 signs a card with JWS (RFC 7515) over the RFC 8785 (JCS) form of the card without
its ``signatures`` member; each entry is ``{protected, signature, header?}`` with the payload
detached. Keys come from a JWKS file or a folder of JWK/JWKS ``.json`` files (``--keys``);
a ``jku`` or ``x5u`` header is never followed: nothing is fetched.

The outcome per card is one of:

- ``valid``: a signature verifies with a known key (``key_id`` names it);
- ``invalid``: no signature verifies and one names a known key (or is malformed);
- ``unknown_key``: every signature names a key that is not in the key set;
- ``unsigned``: no ``signatures``.
"""

from __future__ import annotations

import base64
import os
import stat
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agbom.errors import InputError

if TYPE_CHECKING:
    from joserfc.jwk import KeySet

    from agbom.scan.scanner import ScanResult

# Public-key algorithms only: "none" and HMAC (a shared secret in a key file) are refused.
ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
              "EdDSA", "Ed25519")  # fmt: skip
MAX_KEY_FILE_BYTES = 1024 * 1024
MAX_KEYS = 1024
MAX_SIGNATURES = 16  # per card; more is a finding of its own (invalid)
MAX_CARD_BYTES = 4 * 1024 * 1024
SIGNATURE_FIELD = "signature"


class KeyFileError(InputError):
    """The key file or folder cannot be used."""


def load_keys(path: Path) -> KeySet:
    """Public keys from a JWKS file (``{"keys": [...]}``), a single JWK file, or a folder of
    such ``.json`` files (links not followed). Private and symmetric keys are refused: a
    key file for verification must never hold a secret."""
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    try:
        info = os.stat(path)
    except OSError as exc:
        raise KeyFileError(f"--keys {path}: {exc.strerror or 'cannot be read'}") from None
    files = _key_files(path) if stat.S_ISDIR(info.st_mode) else [path]
    keys: list[dict[str, Any]] = []
    for file in files:
        for key in _jwks(file):
            if not isinstance(key, Mapping) or not isinstance(key.get("kty"), str):
                raise KeyFileError(f"{file}: a key must be a JWK object with 'kty'")
            if key["kty"] == "oct":
                raise KeyFileError(f"{file}: symmetric ('oct') keys are refused")
            if "d" in key or "p" in key:
                raise KeyFileError(f"{file}: holds a private key; give public keys only")
            keys.append(dict(key))
            if len(keys) > MAX_KEYS:
                raise KeyFileError(f"--keys {path}: more than {MAX_KEYS} keys")
    if not keys:
        raise KeyFileError(f"--keys {path}: no keys found")
    try:
        return KeySet.import_key_set({"keys": keys})
    except (JoseError, ValueError, TypeError) as exc:
        raise KeyFileError(f"--keys {path}: not a usable key ({exc})") from None


def _key_files(folder: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise KeyFileError(f"--keys {folder}: {exc.strerror or 'cannot be read'}") from None
    return [
        Path(e.path)
        for e in entries
        if e.name.endswith(".json") and e.is_file(follow_symlinks=False)
    ]


def _jwks(file: Path) -> list[Any]:
    try:
        with open(file, "rb") as handle:
            data = handle.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise KeyFileError(f"{file}: {exc.strerror or 'cannot be read'}") from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise KeyFileError(f"{file}: larger than {MAX_KEY_FILE_BYTES} bytes")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise KeyFileError(f"{file}: not valid JSON ({exc.msg})") from None
    if isinstance(doc, Mapping) and isinstance(doc.get("keys"), list):
        return list(doc["keys"])
    if isinstance(doc, Mapping) and "kty" in doc:
        return [doc]
    raise KeyFileError(f'{file}: neither a JWKS ({{"keys": [...]}}) nor a JWK')


def signing_payload(card: Mapping[str, Any]) -> bytes:
    """The bytes a card signature covers: JCS of the card without ``signatures``."""
    from agbom._canonical import jcs_bytes

    return jcs_bytes({k: v for k, v in card.items() if k != "signatures"})


def _b64json(text: str) -> Any:
    padded = text + "=" * (-len(text) % 4)
    return orjson.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def verify_card(card: Mapping[str, Any], keys: KeySet) -> dict[str, Any]:
    """``{status, key_id?, detail?}`` for one card (see the module docstring)."""
    from joserfc import jws
    from joserfc.errors import JoseError

    signatures = card.get("signatures")
    if not signatures:
        return {"status": "unsigned"}
    if not isinstance(signatures, list) or len(signatures) > MAX_SIGNATURES:
        return {"status": "invalid", "detail": "signatures must be a list of at most "
                f"{MAX_SIGNATURES} entries"}  # fmt: skip
    try:
        payload = signing_payload(card)
    except ValueError:
        return {"status": "invalid", "detail": "the card has no RFC 8785 form"}
    known_failed: list[str] = []
    unknown: list[str] = []
    problems: list[str] = []
    for index, entry in enumerate(signatures):
        if not isinstance(entry, Mapping):
            problems.append(f"signatures[{index}] is not an object")
            continue
        protected, value = entry.get("protected"), entry.get("signature")
        if not isinstance(protected, str) or not isinstance(value, str):
            problems.append(f"signatures[{index}] needs string 'protected' and 'signature'")
            continue
        try:
            header = _b64json(protected)
        except (ValueError, orjson.JSONDecodeError, UnicodeError):
            problems.append(f"signatures[{index}]: protected header is not base64url JSON")
            continue
        if not isinstance(header, Mapping):
            problems.append(f"signatures[{index}]: protected header is not an object")
            continue
        extra = entry.get("header")
        unprotected: Mapping[str, Any] = extra if isinstance(extra, Mapping) else {}
        kid = header.get("kid", unprotected.get("kid"))
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            problems.append(f"signatures[{index}]: algorithm {alg!r} is not accepted")
            continue
        candidates = _candidates(keys, kid)
        if not candidates:
            unknown.append(str(kid) if kid is not None else f"signatures[{index}] (no kid)")
            continue
        compact = f"{protected}..{value}"
        for key in candidates:
            try:
                with warnings.catch_warnings():
                    # joserfc warns that "EdDSA" is superseded by "Ed25519" (RFC 9864); both
                    # name the same signature, and a card signed either way is accepted.
                    warnings.simplefilter("ignore")
                    jws.deserialize_compact(
                        compact, key, algorithms=list(ALGORITHMS), payload=payload
                    )
            except (JoseError, ValueError, TypeError):
                continue
            found_kid = kid if isinstance(kid, str) else key.kid
            return {"status": "valid", "key_id": found_kid, "algorithm": alg}
        known_failed.append(str(kid) if kid is not None else f"signatures[{index}]")
    if known_failed or problems:
        detail = "; ".join(
            [f"signature by key {k!r} does not verify" for k in known_failed] + problems
        )
        return {"status": "invalid", "detail": detail[:300]}
    return {"status": "unknown_key", "detail": "no key for " + ", ".join(unknown)[:280]}


def _candidates(keys: KeySet, kid: Any) -> Sequence[Any]:
    from joserfc.errors import JoseError

    if isinstance(kid, str):
        try:
            return [keys.get_by_kid(kid)]
        except (JoseError, ValueError, KeyError):
            return []
    if kid is not None:
        return []
    return list(keys.keys)  # no kid: any key of the set may have signed


def verify_scanned_cards(result: ScanResult, keys: KeySet) -> None:
    """Set ``signature`` on every A2A peer of ``result`` from its card file(s).

    The card is read again from where the scan found it (bounded); with several card files
    for one peer, the weakest outcome wins (a bad signature anywhere is reported)."""
    from agbom.inventory import AgBOM, ComponentType
    from agbom.scan.a2a import looks_like_card

    order = {"invalid": 0, "unknown_key": 1, "unsigned": 2, "valid": 3}
    document = result.agbom.to_document()
    changed = False
    for component in document["components"]:
        if component.get("type") != ComponentType.A2A_PEER.value:
            continue
        outcomes = []
        for place in result.locations.get(component["id"], ()):
            try:
                with open(place.file, "rb") as handle:
                    data = handle.read(MAX_CARD_BYTES + 1)
                card = orjson.loads(data) if len(data) <= MAX_CARD_BYTES else None
            except (OSError, orjson.JSONDecodeError):
                card = None
            if isinstance(card, Mapping) and looks_like_card(card):
                outcomes.append(verify_card(card, keys))
        if outcomes:
            component[SIGNATURE_FIELD] = min(outcomes, key=lambda o: order[o["status"]])
            changed = True
    if changed:
        result.agbom = AgBOM.from_document(document, source="AgBOM with card signatures")
