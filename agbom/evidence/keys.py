"""Asymmetric signing keys: generate, write, read, and publish them.

* A private key is a PKCS#8 PEM file of mode 0600 (``PREFIX.key``); reading one that its
  group or others may read or write is refused, as for the other secret files of agbom.
  ML-DSA-65 keys are written in the 32-byte seed form of FIPS 204 (what ``cryptography``
  emits), Ed25519 keys as RFC 8410 PKCS#8.
* A public key is a SubjectPublicKeyInfo PEM file (``PREFIX.pub``), or a JWK: ``OKP``/
  ``Ed25519`` (RFC 8037) and ``AKP``/``ML-DSA-65`` (the IETF COSE/JOSE ML-DSA draft's shape).
* A key id is ``sha256:`` and the first 32 hex digits of SHA-256 over the SPKI DER: the same
  public key always gets the same id, wherever it is loaded, so verifiers need no registry.

The private half is never part of ``repr``/``str`` and no function here logs or returns it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, mldsa

from agbom._private_files import read_private_file as _read_private
from agbom.evidence.interface import (
    ALGORITHMS,
    ED25519,
    ML_DSA_65,
    EvidenceInvalid,
    KeyFileError,
)

MAX_KEY_FILE_BYTES = 64 * 1024
MAX_KEYS = 64
"""Most public keys one key set holds (a rotation needs two or three)."""
_KEY_ID_HEX = 32

_PrivateKey = mldsa.MLDSA65PrivateKey | ed25519.Ed25519PrivateKey
_PublicKey = mldsa.MLDSA65PublicKey | ed25519.Ed25519PublicKey

SIGNATURE_LENGTH = {ML_DSA_65: 3309, ED25519: 64}
PUBLIC_KEY_LENGTH = {ML_DSA_65: 1952, ED25519: 32}


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _algorithm_of(key: _PrivateKey | _PublicKey) -> str:
    if isinstance(key, mldsa.MLDSA65PrivateKey | mldsa.MLDSA65PublicKey):
        return ML_DSA_65
    return ED25519


@dataclass(frozen=True, slots=True, kw_only=True)
class PublicKey:
    """A verification key, with its algorithm and key id."""

    algorithm: str
    key_id: str
    raw: bytes = field(repr=False)
    _key: _PublicKey = field(repr=False, compare=False)

    @classmethod
    def _of(cls, key: _PublicKey) -> PublicKey:
        der = key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        key_id = "sha256:" + hashlib.sha256(der).hexdigest()[:_KEY_ID_HEX]
        return cls(
            algorithm=_algorithm_of(key), key_id=key_id, raw=key.public_bytes_raw(), _key=key
        )

    @classmethod
    def from_pem(cls, data: bytes, *, where: str = "public key") -> PublicKey:
        """A public key from SubjectPublicKeyInfo PEM; :class:`KeyFileError` otherwise."""
        try:
            key = serialization.load_pem_public_key(data)
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise KeyFileError(
                f"{where} is not a SubjectPublicKeyInfo PEM public key"
                " (write one with: agbom keys generate)"
            ) from exc
        if not isinstance(key, mldsa.MLDSA65PublicKey | ed25519.Ed25519PublicKey):
            raise KeyFileError(
                f"{where} holds a {type(key).__name__}; only {', '.join(ALGORITHMS)} are used"
            )
        return cls._of(key)

    @classmethod
    def from_raw(cls, algorithm: str, raw: bytes) -> PublicKey:
        try:
            if algorithm == ML_DSA_65:
                return cls._of(mldsa.MLDSA65PublicKey.from_public_bytes(raw))
            if algorithm == ED25519:
                return cls._of(ed25519.Ed25519PublicKey.from_public_bytes(raw))
        except ValueError as exc:
            raise KeyFileError(f"not a {algorithm} public key: {len(raw)} bytes") from exc
        raise KeyFileError(f"unknown key algorithm {algorithm[:40]!r}")

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any]) -> PublicKey:
        """A public key from a JWK of :meth:`to_jwk`'s shape. A ``kid`` that is not this key's
        id is refused, so a key set cannot pass one key off under another's name."""
        kty, crv, alg = jwk.get("kty"), jwk.get("crv"), jwk.get("alg")
        if kty == "OKP" and crv == "Ed25519" and isinstance(jwk.get("x"), str):
            algorithm, text = ED25519, jwk["x"]
        elif kty == "AKP" and alg == ML_DSA_65 and isinstance(jwk.get("pub"), str):
            algorithm, text = ML_DSA_65, jwk["pub"]
        else:
            raise KeyFileError("JWK is neither OKP/Ed25519 nor AKP/ML-DSA-65")
        try:
            raw = _b64url_decode(text)
        except (binascii.Error, ValueError) as exc:
            raise KeyFileError("JWK key is not base64url") from exc
        key = cls.from_raw(algorithm, raw)
        if "kid" in jwk and jwk["kid"] != key.key_id:
            raise KeyFileError(f"JWK kid {str(jwk['kid'])[:80]!r} is not its key's id")
        return key

    def to_pem(self) -> bytes:
        return self._key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def to_jwk(self) -> dict[str, str]:
        if self.algorithm == ED25519:
            return {"kty": "OKP", "crv": "Ed25519", "alg": "Ed25519", "kid": self.key_id,
                    "x": _b64url(self.raw)}  # fmt: skip
        return {"kty": "AKP", "alg": ML_DSA_65, "kid": self.key_id, "pub": _b64url(self.raw)}

    def verify(self, signature: bytes, data: bytes) -> None:
        """Return when ``signature`` is this key's over ``data``; raise
        :class:`EvidenceInvalid` otherwise (there is no boolean to forget)."""
        if len(signature) != SIGNATURE_LENGTH[self.algorithm]:
            raise EvidenceInvalid(
                "signature_malformed",
                f"{self.algorithm} signature is {len(signature)} bytes, "
                f"not {SIGNATURE_LENGTH[self.algorithm]}",
            )
        try:
            self._key.verify(signature, data)
        except InvalidSignature:
            raise EvidenceInvalid(
                "signature_mismatch", f"{self.algorithm} signature does not verify"
            ) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class SigningKey:
    """A private signing key. Its material is not shown by ``repr`` and never leaves it
    except through :func:`write_key_pair`."""

    algorithm: str
    public: PublicKey
    _key: _PrivateKey = field(repr=False, compare=False)

    @property
    def key_id(self) -> str:
        return self.public.key_id

    @classmethod
    def generate(cls, algorithm: str) -> SigningKey:
        key: _PrivateKey
        if algorithm == ML_DSA_65:
            key = mldsa.MLDSA65PrivateKey.generate()
        elif algorithm == ED25519:
            key = ed25519.Ed25519PrivateKey.generate()
        else:
            raise KeyFileError(
                f"unknown algorithm {algorithm[:40]!r}; choose one of {', '.join(ALGORITHMS)}"
            )
        return cls._of(key)

    @classmethod
    def _of(cls, key: _PrivateKey) -> SigningKey:
        return cls(algorithm=_algorithm_of(key), public=PublicKey._of(key.public_key()), _key=key)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> SigningKey:
        """Read a PKCS#8 PEM private key; refuse a file others may read (chmod 600 it)."""
        file = Path(path)
        data = read_private_file(file)
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except TypeError as exc:  # an encrypted key
            raise KeyFileError(f"private key {file} is encrypted; agbom reads unencrypted "
                               "PKCS#8 (kept safe by its file mode)") from exc  # fmt: skip
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise KeyFileError(
                f"private key {file} is not a PKCS#8 PEM key (write one with: agbom keys generate)"
            ) from exc
        if not isinstance(key, mldsa.MLDSA65PrivateKey | ed25519.Ed25519PrivateKey):
            raise KeyFileError(
                f"private key {file} is a {type(key).__name__}; only {', '.join(ALGORITHMS)} "
                "are used"
            )
        return cls._of(key)

    def sign(self, data: bytes) -> bytes:
        """The signature over ``data`` (ML-DSA: hedged, empty context; Ed25519: pure)."""
        return self._key.sign(data)

    def _pkcs8_pem(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def read_private_file(file: Path) -> bytes:
    """The bytes of a private key file: a regular file (not a link), of at most 64 KiB,
    that neither group nor others may read or write."""
    return _read_private(file, "private key", MAX_KEY_FILE_BYTES, KeyFileError)


def read_public_file(file: Path) -> bytes:
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise KeyFileError(f"cannot read public key {file}: {exc.strerror or exc}") from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise KeyFileError(f"public key {file} is over {MAX_KEY_FILE_BYTES} bytes")
    return data


def key_pair_paths(prefix: Path) -> tuple[Path, Path]:
    return Path(f"{prefix}.key"), Path(f"{prefix}.pub")


def write_key_pair(key: SigningKey, prefix: Path) -> tuple[Path, Path]:
    """Write ``PREFIX.key`` (mode 0600) and ``PREFIX.pub``; refuse when either exists.

    Both files are created with ``O_EXCL`` (a file that appears in between is not
    overwritten either, nor is a symbolic link followed). If the public key cannot be
    written, the private key just written is removed, so no half pair is left.
    """
    private, public = key_pair_paths(prefix)
    for path in (private, public):
        if os.path.lexists(path):
            raise KeyFileError(f"{path} exists; agbom keys generate never overwrites a key")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    _write_new(private, key._pkcs8_pem(), flags, 0o600)
    try:
        _write_new(public, key.public.to_pem(), flags, 0o644)
    except BaseException:
        private.unlink(missing_ok=True)
        raise
    return private, public


def _write_new(path: Path, data: bytes, flags: int, mode: int) -> None:
    try:
        fd = os.open(path, flags, mode)
    except FileExistsError:
        raise KeyFileError(f"{path} exists; agbom keys generate never overwrites a key") from None
    except OSError as exc:
        raise KeyFileError(f"cannot create {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, mode)  # the umask may have taken bits off; never added any
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise KeyFileError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)


class KeySet:
    """Public keys by key id: what a verifier trusts. Several ids side by side are a
    rotation (old keys keep verifying what they signed)."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[PublicKey]) -> None:
        self._keys: dict[str, PublicKey] = {}
        for key in keys:
            if len(self._keys) >= MAX_KEYS:
                raise KeyFileError(f"more than {MAX_KEYS} public keys given")
            self._keys[key.key_id] = key
        if not self._keys:
            raise KeyFileError("no public key given to verify with")

    @classmethod
    def from_files(cls, files: Iterable[Path]) -> KeySet:
        """Each file a SubjectPublicKeyInfo PEM or a JWKS document (``{"keys": [...]}``)."""
        keys: list[PublicKey] = []
        for file in files:
            data = read_public_file(file)
            if data.lstrip().startswith(b"{"):
                keys.extend(jwks_keys(data, where=str(file)))
            else:
                keys.append(PublicKey.from_pem(data, where=f"public key {file}"))
        return cls(keys)

    def get(self, key_id: object) -> PublicKey:
        key = self._keys.get(key_id) if isinstance(key_id, str) else None
        if key is None:
            raise EvidenceInvalid(
                "signature_key_unknown",
                f"signed with key {str(key_id)[:80]!r}, which is not among the public keys "
                f"given ({', '.join(self._keys)})",
            )
        return key

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def __iter__(self) -> Iterator[PublicKey]:
        return iter(self._keys.values())


def jwks(keys: Iterable[PublicKey]) -> dict[str, list[dict[str, str]]]:
    """A JWKS-like document of ``keys`` (what ``agbom keys export`` prints)."""
    return {"keys": [key.to_jwk() for key in keys]}


def jwks_keys(data: bytes, *, where: str) -> list[PublicKey]:
    import json

    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise KeyFileError(f"{where} is neither a PEM public key nor JSON") from exc
    listed = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(listed, list) or not all(isinstance(k, dict) for k in listed):
        raise KeyFileError(f'{where} is JSON but not a JWKS document ({{"keys": [...]}})')
    return [PublicKey.from_jwk(jwk) for jwk in listed]
