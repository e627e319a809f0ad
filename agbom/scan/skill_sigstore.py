"""Sigstore bundles over a skill's digest (``skill.sigstore.json`` beside ``SKILL.md``),
verified offline with the ``sigstore`` library against a trust root file the operator gives
(``scan --sigstore-trust-root FILE``, a Sigstore ``trusted_root.json``).

What is signed: the text ``sha256:HEX``, agbom's ``agbom-skill-digest/2`` digest of the folder
less the bundle itself (a signature cannot sign its own file); ``sigstore sign`` of a file
holding that text, or the library's ``Signer.sign_artifact`` of those bytes, makes one. The
digest covers every file's path, bytes and executable bit and each link's target, so a bundle
that verifies over the folder's digest is ``signed`` with nothing left out; one that verifies
but over another digest (a file changed, added or removed since) is ``invalid``. Who signed is
the Fulcio certificate's identity and OIDC issuer, matched against the signers file's
``sigstore: {identity, issuer}`` entries (both must match); the library checks the chain to
the trust root's certificate authorities, the embedded SCT against its CT logs, the
transparency log entry's inclusion proof, signed checkpoint and signed entry timestamp against
its Rekor keys, and that the entry's time lies within the certificate's validity.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson

from agbom.errors import InputError
from agbom.inventory.skill_digest import SkillFile, digest_of_files

BUNDLE_FILE = "skill.sigstore.json"
MAX_BUNDLE_BYTES = 1024 * 1024
MAX_TRUST_ROOT_BYTES = 4 * 1024 * 1024


class TrustRootError(InputError):
    """A Sigstore trust root file cannot be used."""


class SigstoreSigner(Protocol):
    """A signer of the signers file (agbom.scan.skill_signatures.Signer), as read here."""

    @property
    def name(self) -> str: ...

    @property
    def sigstore_identity(self) -> str | None: ...

    @property
    def sigstore_issuer(self) -> str | None: ...


def sigstore_available() -> bool:
    """Whether the ``sigstore`` library can be imported (agbom[signatures])."""
    try:
        import sigstore.verify  # noqa: F401
    except ImportError:
        return False
    return True


def check_trust_root(path: Path) -> None:
    """Load the trust root at ``path`` once, so a bad one fails before scanning."""
    _verifier(str(path))


@functools.lru_cache(maxsize=4)
def _verifier(path: str) -> Any:
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

    try:
        if os.path.getsize(path) > MAX_TRUST_ROOT_BYTES:
            raise TrustRootError(f"{path}: larger than {MAX_TRUST_ROOT_BYTES // 1024} KiB")
        return Verifier(trusted_root=TrustedRoot.from_file(path))
    except OSError as exc:
        raise TrustRootError(f"{path}: {exc.strerror or 'cannot be read'}") from None
    except TrustRootError:
        raise
    except Exception as exc:  # noqa: BLE001 - pydantic and the library raise many kinds
        first = (str(exc).splitlines() or [""])[0][:200]
        raise TrustRootError(f"{path}: not a Sigstore trusted root ({first})") from None


def signed_payload(files: Sequence[SkillFile]) -> bytes:
    """What a bundle over the folder signs: ``sha256:HEX`` of the folder less the bundle."""
    return f"sha256:{digest_of_files(f for f in files if f.path != BUNDLE_FILE)}".encode()


def _record(**fields: Any) -> dict[str, Any]:
    return {"format": "sigstore", "file": BUNDLE_FILE, **fields}


def sigstore_status(
    folder: Path,
    files: Sequence[SkillFile],
    signers: Sequence[SigstoreSigner] | None,
    trust_root: Path | None,
) -> dict[str, Any]:
    """The ``skill_signature`` record of the ``skill.sigstore.json`` in ``folder``, checked
    against the ``signers`` of the signers file (``None``: none given) and ``trust_root``."""
    if signers is None:
        return _record(status="unchecked", reason="no --skill-signers: nobody to verify it against")
    if trust_root is None:
        return _record(status="unchecked", reason="no --sigstore-trust-root to verify it against")
    if not sigstore_available():
        missing = "the sigstore library is not installed (agbom[signatures])"
        return _record(status="unchecked", reason=missing)
    try:
        with open(folder / BUNDLE_FILE, "rb") as handle:
            data = handle.read(MAX_BUNDLE_BYTES + 1)
    except OSError as exc:
        return _record(status="invalid", reason=f"cannot be read ({exc.strerror or exc})")
    if len(data) > MAX_BUNDLE_BYTES:
        return _record(status="invalid", reason=f"larger than {MAX_BUNDLE_BYTES // 1024} KiB")
    return verify_bundle(data, signed_payload(files), signers, trust_root)


def verify_bundle(
    data: bytes, payload: bytes, signers: Sequence[SigstoreSigner], trust_root: Path
) -> dict[str, Any]:
    """Verify the bundle ``data`` offline; ``payload`` is what it must sign to be ``signed``.

    The signing certificate is matched against each trusted Sigstore signer's identity and
    issuer; the signer it names must then verify the whole bundle over the digest the bundle
    says it signs (chain, SCT, log entry, signature), or it is ``invalid``. Only then is that
    digest compared with ``payload``: a trusted signer's bundle over another digest is
    ``invalid`` (the folder changed); a certificate naming nobody trusted is
    ``unknown_signer`` whatever it signs."""
    from cryptography import x509
    from sigstore.errors import Error as SigstoreError
    from sigstore.hashes import Hashed
    from sigstore.models import Bundle
    from sigstore.verify.policy import Identity
    from sigstore_models.common.v1 import HashAlgorithm

    verifier = _verifier(str(trust_root))
    said = _signed_digest(data)
    if said is None:
        return _record(status="invalid",
                       reason="not a Sigstore bundle of a message signature over a SHA-256 "
                       "digest")  # fmt: skip
    try:
        bundle = Bundle.from_json(data)
    except Exception as exc:  # noqa: BLE001 - the library raises many kinds
        return _record(status="invalid", reason=f"not a Sigstore bundle ({_first(exc)})")
    certificate = bundle.signing_certificate
    for signer in signers:
        if signer.sigstore_identity is None:
            continue
        policy = Identity(identity=signer.sigstore_identity, issuer=signer.sigstore_issuer)
        try:
            policy.verify(certificate)  # the certificate names this signer: theirs to verify
        except (SigstoreError, ValueError, x509.ExtensionNotFound):
            continue
        hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=said)
        try:
            verifier.verify_artifact(hashed, bundle, policy)
        except (SigstoreError, ValueError) as exc:
            return _record(status="invalid", signer=signer.name, method="sigstore",
                           reason=_first(exc))  # fmt: skip
        if hashlib.sha256(payload).digest() != said:
            return _record(status="invalid", signer=signer.name, method="sigstore",
                           reason="it signs another digest than the folder's: a file was "
                           "changed, added or removed since it was signed")  # fmt: skip
        return _record(status="signed", signer=signer.name, method="sigstore",
                       signed=payload.decode(), covers="the whole agbom digest of the folder "
                       f"but {BUNDLE_FILE}")  # fmt: skip
    return _record(status="unknown_signer", method="sigstore",
                   reason="its certificate names no trusted Sigstore signer")  # fmt: skip


def _signed_digest(data: bytes) -> bytes | None:
    """The SHA-256 digest a bundle's message signature says it signs (read, not verified)."""
    try:
        doc = orjson.loads(data)
        digest = doc["messageSignature"]["messageDigest"]
        if digest.get("algorithm") != "SHA2_256":
            return None
        raw = base64.b64decode(digest["digest"], validate=True)
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
        return None
    return raw if len(raw) == 32 else None


def _first(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:200]


__all__ = [
    "BUNDLE_FILE",
    "SigstoreSigner",
    "TrustRootError",
    "check_trust_root",
    "sigstore_available",
    "sigstore_status",
    "signed_payload",
    "verify_bundle",
]
