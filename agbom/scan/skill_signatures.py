"""Signed skills: OpenSSF Model Signing (OMS) signatures beside a skill (``skill.oms.sig``),
verified offline against the signers an operator trusts, and tied to agbom's folder digest.

An OMS signature is a Sigstore bundle whose DSSE envelope carries an in-toto statement; its
predicate lists each signed file (``resources[]``: path and SHA-256). It is verified with the
``model-signing`` library (``pip install agbom[signatures]``, imported only here and only when
a skill has a signature and ``--skill-signers`` names who is trusted): by a public key, or by
a certificate chaining to a trusted root (the signer is then the leaf certificate's e-mail or
URI subject alternative name, else its common name).

What a valid signature covers is compared with what agbom's digest covers
(:mod:`agbom.inventory.skill_digest`): every file of the folder but the signature file itself
must be listed with the same SHA-256. A signature that leaves a file out (a file added after
signing, or one the signer's ``ignore_paths`` skipped, such as ``.gitignore``) is ``partial``,
never ``signed``; one that lists a file whose bytes differ does not verify (``invalid``).
Executable bits and link targets are never in an OMS signature; the record says so.

The record on the skill component (``skill_signature``) and its status
(``skill_signature_status``: ``signed``, ``partial``, ``invalid``, ``unknown_signer``,
``unsigned``, ``unchecked``) are what the default pack's AGB-SIG-005 to 008 match.
"""

from __future__ import annotations

import base64
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agbom.errors import InputError
from agbom.inventory.skill_digest import SkillFile

SIGNATURE_FILE = "skill.oms.sig"
RECORD_FIELD = "skill_signature"
STATUS_FIELD = "skill_signature_status"
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
MAX_SIGNERS = 1000
EXTRA = "agbom[signatures]"
NOT_COVERED_BY_OMS = ("executable bits", "symbolic link targets")
STATUS_ORDER = {"invalid": 0, "unknown_signer": 1, "unsigned": 2, "partial": 3, "unchecked": 4,
                "signed": 5}  # fmt: skip
"""Weakest first: with several signatures or places, the weakest outcome is the record."""


class SignersError(InputError):
    """A signers file cannot be used."""


@dataclass(frozen=True, slots=True)
class Signer:
    """One trusted signer: a name (the identity approvals and trust policies use) and how its
    signatures verify: a public key, or the root certificates its certificate chains to."""

    name: str
    public_key: Path | None = None
    certificate_chain: tuple[Path, ...] = ()
    # A Sigstore signer (skill.sigstore.json): the identity its Fulcio certificate names and
    # the OIDC issuer that vouched for it, checked against --sigstore-trust-root.
    sigstore_identity: str | None = None
    sigstore_issuer: str | None = None


@dataclass(frozen=True, slots=True)
class Signers:
    """The signers file (``--skill-signers FILE``): who is trusted, and the policy."""

    signers: tuple[Signer, ...]
    require_signature: bool = False  # an unsigned skill is then a finding (AGB-SIG-008)
    auto_approve: tuple[str, ...] = field(default=())  # signers whose skills the Guardian approves
    source: str = ""
    sigstore_trust_root: Path | None = None  # scan --sigstore-trust-root (a trusted_root.json)


def _paths(value: Any, base: Path, where: str) -> tuple[Path, ...]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise SignersError(f"{where}: must be a path or a list of paths")
        path = Path(item)
        out.append(path if path.is_absolute() else base / path)
    return tuple(out)


def load_signers(path: Path) -> Signers:
    """Read a signers file (YAML or JSON); a bad one is a :class:`SignersError` naming it."""
    import yaml

    try:
        with open(path, "rb") as handle:
            data = handle.read(1024 * 1024 + 1)
    except OSError as exc:
        raise SignersError(f"{path}: {exc.strerror or 'cannot be read'}") from None
    if len(data) > 1024 * 1024:
        raise SignersError(f"{path}: larger than 1 MiB")
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise SignersError(f"{path}: not valid YAML or JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, Mapping) or not isinstance(doc.get("signers"), list):
        raise SignersError(f"{path}: needs a 'signers' list")
    unknown = set(doc) - {"signers", "require_signature", "auto_approve"}
    if unknown:
        raise SignersError(f"{path}: unknown key {sorted(unknown)[0]!r}")
    if len(doc["signers"]) > MAX_SIGNERS:
        raise SignersError(f"{path}: more than {MAX_SIGNERS} signers")
    base = path.parent
    signers = []
    for i, raw in enumerate(doc["signers"]):
        where = f"{path}: signers[{i}]"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"]:
            raise SignersError(f"{where}: needs a 'name'")
        key = raw.get("public_key")
        chain = raw.get("certificate_chain")
        sigstore = raw.get("sigstore")
        if [key, chain, sigstore].count(None) != 2:
            raise SignersError(
                f"{where}: give exactly one of public_key, certificate_chain, sigstore"
            )
        if sigstore is not None:
            signers.append(_sigstore_signer(raw["name"], sigstore, where))
            continue
        for one in _paths(key if key is not None else chain, base, where):
            if not one.is_file():
                raise SignersError(f"{where}: {one} is not a file")
        signers.append(
            Signer(
                name=raw["name"],
                public_key=_paths(key, base, where)[0] if key is not None else None,
                certificate_chain=_paths(chain, base, where) if chain is not None else (),
            )
        )
    auto = doc.get("auto_approve") or []
    if not isinstance(auto, list) or not all(isinstance(a, str) for a in auto):
        raise SignersError(f"{path}: 'auto_approve' must list signer names")
    names = {s.name for s in signers}
    missing = [a for a in auto if a not in names]
    if missing:
        raise SignersError(f"{path}: auto_approve names {missing[0]!r}, which no signer is")
    require = doc.get("require_signature", False)
    if not isinstance(require, bool):
        raise SignersError(f"{path}: 'require_signature' must be true or false")
    return Signers(tuple(signers), require, tuple(auto), str(path))


def _sigstore_signer(name: str, raw: Any, where: str) -> Signer:
    """``sigstore: {identity, issuer}``: both required, so a certificate another issuer
    vouched for under the same name is not this signer."""
    if not isinstance(raw, Mapping) or set(raw) != {"identity", "issuer"}:
        raise SignersError(f"{where}: sigstore needs exactly 'identity' and 'issuer'")
    identity, issuer = raw["identity"], raw["issuer"]
    if not all(isinstance(v, str) and v and len(v) <= 1024 for v in (identity, issuer)):
        raise SignersError(f"{where}: sigstore identity and issuer must be non-empty strings")
    return Signer(name=name, sigstore_identity=identity, sigstore_issuer=issuer)


def available() -> bool:
    """Whether the ``model-signing`` library can be imported (agbom[signatures])."""
    try:
        import model_signing  # noqa: F401
    except ImportError:
        return False
    return True


# -- one signature ------------------------------------------------------------------------------


def _statement(bundle: Mapping[str, Any]) -> Mapping[str, Any] | None:
    envelope = bundle.get("dsseEnvelope")
    if not isinstance(envelope, Mapping) or not isinstance(envelope.get("payload"), str):
        return None
    try:
        statement = orjson.loads(base64.b64decode(envelope["payload"], validate=True))
    except (ValueError, orjson.JSONDecodeError):
        return None
    return statement if isinstance(statement, Mapping) else None


def signed_files(bundle: Mapping[str, Any]) -> dict[str, str]:
    """The files an OMS statement lists: path -> lowercase SHA-256 (read, not verified)."""
    statement = _statement(bundle) or {}
    predicate = statement.get("predicate")
    resources = predicate.get("resources") if isinstance(predicate, Mapping) else None
    out: dict[str, str] = {}
    for resource in resources if isinstance(resources, list) else ():
        if not isinstance(resource, Mapping):
            continue
        name, digest = resource.get("name"), resource.get("digest")
        if isinstance(name, str) and isinstance(digest, str):
            if resource.get("algorithm", "sha256") == "sha256":
                out[name] = digest.lower()
    return out


def leaf_identity(bundle: Mapping[str, Any]) -> str | None:
    """The signer a certificate-signed bundle names: the leaf certificate's e-mail or URI
    subject alternative name, else its subject common name."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    material = bundle.get("verificationMaterial")
    chain = material.get("x509CertificateChain") if isinstance(material, Mapping) else None
    certificates = chain.get("certificates") if isinstance(chain, Mapping) else None
    if not isinstance(certificates, list) or not certificates:
        return None
    first = certificates[0]
    raw = first.get("rawBytes") if isinstance(first, Mapping) else None
    try:
        leaf = x509.load_der_x509_certificate(base64.b64decode(str(raw)))
    except ValueError:
        return None
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        found = names.get_values_for_type(x509.RFC822Name) or names.get_values_for_type(
            x509.UniformResourceIdentifier
        )
        if found:
            return str(found[0])
    except x509.ExtensionNotFound:
        pass
    common = leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(common[0].value) if common else None


def _signed_manifest(signer: Signer, text: str) -> dict[str, str]:
    """The files (path -> SHA-256) a bundle signs, once ``signer`` has verified its DSSE
    signature (model-signing's verifiers; raises when it does not verify). The bundle is
    handed over as a file, the form the library reads."""
    import tempfile

    from model_signing._signing import sign_certificate, sign_ec_key, sign_sigstore_pb

    verifier: Any
    if signer.public_key is not None:
        verifier = sign_ec_key.Verifier(signer.public_key)
    else:
        verifier = sign_certificate.Verifier(list(signer.certificate_chain))
    with tempfile.TemporaryDirectory(prefix="agbom-oms-") as scratch:
        path = Path(scratch) / SIGNATURE_FILE
        path.write_text(text, encoding="utf-8")
        manifest = verifier.verify(sign_sigstore_pb.Signature.read(path))
    return {
        str(rd.identifier): str(rd.digest.digest_hex).lower()
        for rd in manifest.resource_descriptors()
    }


def _method(bundle: Mapping[str, Any]) -> str:
    material = bundle.get("verificationMaterial")
    if isinstance(material, Mapping) and "x509CertificateChain" in material:
        return "certificate"
    return "key"


def verify_text(text: str, digest_files: Mapping[str, str], signers: Signers) -> dict[str, Any]:
    """The ``skill_signature`` record of a skill whose ``skill.oms.sig`` holds ``text`` and
    whose agbom digest lists ``digest_files`` (path -> SHA-256): the signature is verified by
    a trusted signer, then the files it signs are compared with the digest's. The folder
    itself is not read, so the Guardian can judge what a registration carried."""
    record: dict[str, Any] = {"format": "oms", "file": SIGNATURE_FILE}
    try:
        bundle = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return {**record, "status": "invalid", "reason": f"not a Sigstore bundle ({exc})"}
    if len(text) > MAX_SIGNATURE_BYTES or not isinstance(bundle, Mapping):
        return {**record, "status": "invalid", "reason": "not a Sigstore bundle"}
    method = _method(bundle)
    record["method"] = method
    identity = leaf_identity(bundle) if method == "certificate" else None
    hint = _hint(bundle)
    candidates = [
        s
        for s in signers.signers
        if s.sigstore_identity is None
        and (s.public_key is not None) == (method == "key")
        and (identity is None or s.name == identity)
        and (hint is None or s.public_key is None or _key_hint(s.public_key) == hint)
    ]
    if not candidates:
        said = f" (its certificate names {identity})" if identity else ""
        return {**record, "status": "unknown_signer", "reason": f"no trusted {method} signer{said}"}
    failures = []
    for signer in candidates:
        try:
            signed = _signed_manifest(signer, text)
        except Exception as exc:  # noqa: BLE001 - the library raises many kinds; each is a "no"
            failures.append(f"{signer.name}: {(str(exc).splitlines() or [''])[0][:200]}")
            continue
        return {**record, **_coverage(signed, digest_files), "signer": signer.name}
    if method == "key" and hint is None:  # no key named: a key of nobody we trust, maybe
        return {**record, "status": "unknown_signer", "reason": "no trusted key verifies it"}
    # The trusted signer it names does not verify it: the statement was altered.
    reason = "; ".join(failures)[:500]
    return {**record, "status": "invalid", "signer": candidates[0].name, "reason": reason}


def verify_signature(
    folder: Path, digest_files: Mapping[str, str], signers: Signers
) -> dict[str, Any]:
    """:func:`verify_text` of the ``skill.oms.sig`` in ``folder`` (bounded read)."""
    try:
        with open(folder / SIGNATURE_FILE, "rb") as handle:
            data = handle.read(MAX_SIGNATURE_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = f"cannot be read ({exc})"
        return {"format": "oms", "file": SIGNATURE_FILE, "status": "invalid", "reason": reason}
    return verify_text(text, digest_files, signers)


def _hint(bundle: Mapping[str, Any]) -> str | None:
    material = bundle.get("verificationMaterial")
    key = material.get("publicKey") if isinstance(material, Mapping) else None
    hint = key.get("hint") if isinstance(key, Mapping) else None
    return hint.lower() if isinstance(hint, str) and hint else None


@functools.lru_cache(maxsize=256)
def _key_hint(path: Path) -> str | None:
    """The key id model-signing writes for a public key: SHA-256 of its PEM form."""
    import hashlib

    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError):
        return None
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(pem).hexdigest()


def _coverage(signed: Mapping[str, str], digest_files: Mapping[str, str]) -> dict[str, Any]:
    """How much of the digest a verified signature covers: a signed file the folder lacks or
    holds other bytes of makes it ``invalid``; a file of the folder it does not sign makes it
    ``partial``."""
    expected = {p: h for p, h in digest_files.items() if p != SIGNATURE_FILE}
    changed = sorted(p for p, h in signed.items() if expected.get(p) != h)
    if changed:
        reason = f"{len(changed)} signed file(s) are not what was signed: " + ", ".join(changed[:5])
        return {"status": "invalid", "files_changed": changed[:100], "reason": reason}
    covered = sorted(p for p, h in expected.items() if signed.get(p) == h)
    left_out = sorted(set(expected) - set(covered))
    out: dict[str, Any] = {
        "files_covered": len(covered),
        "files_in_digest": len(expected),
        "not_covered": NOT_COVERED_BY_OMS,
    }
    if left_out:
        out["status"] = "partial"
        out["files_not_covered"] = left_out[:100]
        out["reason"] = (f"the signature leaves {len(left_out)} of the folder's files out: "
                         + ", ".join(left_out[:5]))  # fmt: skip
    else:
        out["status"] = "signed"
    return out


@functools.lru_cache(maxsize=8)
def _cached_signers(path: str, mtime_ns: int, size: int) -> Signers:
    del mtime_ns, size
    return load_signers(Path(path))


def signers_at(path: str) -> Signers:
    """The signers file at ``path`` (read again when it changes)."""
    info = os.stat(path)
    return _cached_signers(path, info.st_mtime_ns, info.st_size)


def status_for_folder(
    folder: Path, files: Sequence[SkillFile], signers: Signers | None
) -> dict[str, Any] | None:
    """The ``skill_signature`` record of a scanned skill whose digest lists ``files``, or
    ``None`` (no signature and no policy requiring one). With both an OMS signature and a
    Sigstore bundle, the weaker outcome is the record."""
    from agbom.scan.skill_sigstore import BUNDLE_FILE, sigstore_status

    outcomes = []
    if os.path.isfile(folder / SIGNATURE_FILE):
        outcomes.append(_oms_status(folder, {f.path: f.sha256 for f in files}, signers))
    if os.path.isfile(folder / BUNDLE_FILE):
        trust_root = signers.sigstore_trust_root if signers is not None else None
        listed = signers.signers if signers is not None else None
        outcomes.append(sigstore_status(folder, files, listed, trust_root))
    if outcomes:
        return min(outcomes, key=lambda o: STATUS_ORDER.get(str(o.get("status")), 0))
    if signers is not None and signers.require_signature:
        return {"status": "unsigned", "reason": f"{signers.source} requires a signature"}
    return None


def _oms_status(
    folder: Path, digest_files: Mapping[str, str], signers: Signers | None
) -> dict[str, Any]:
    if signers is None:
        return {"format": "oms", "file": SIGNATURE_FILE, "status": "unchecked",
                "reason": "no --skill-signers: nobody to verify it against"}  # fmt: skip
    if not available():
        return {"format": "oms", "file": SIGNATURE_FILE, "status": "unchecked",
                "reason": f"the model-signing library is not installed ({EXTRA})"}  # fmt: skip
    return verify_signature(folder, digest_files, signers)


def verify_scanned_skills(result: Any, signers: Signers) -> None:
    """Set ``skill_signature`` on every skill of a scan ``result`` (its folder is where the
    scan found its ``SKILL.md``); with several places, the weakest outcome wins."""
    from agbom.inventory import AgBOM
    from agbom.inventory.skill_digest import SkillDigestError, digest_skill_folder

    document = result.agbom.to_document()
    changed = False
    for component in document["components"]:
        if component.get("type") != "skill":
            continue
        outcomes = []
        for place in result.locations.get(component["id"], ()):
            folder = Path(place.file).parent
            try:
                digest = digest_skill_folder(folder)
            except SkillDigestError:
                continue  # the scan already reported the folder
            outcome = status_for_folder(folder, digest.files, signers)
            if outcome is not None:
                outcomes.append(outcome)
        if outcomes:
            worst = min(outcomes, key=lambda o: STATUS_ORDER.get(str(o.get("status")), 0))
            component[RECORD_FIELD] = worst
            component[STATUS_FIELD] = worst["status"]
            changed = True
    if changed:
        result.agbom = AgBOM.from_document(document, source="AgBOM with skill signatures")


__all__ = [
    "EXTRA",
    "RECORD_FIELD",
    "SIGNATURE_FILE",
    "STATUS_FIELD",
    "Signer",
    "Signers",
    "SignersError",
    "available",
    "leaf_identity",
    "load_signers",
    "signed_files",
    "signers_at",
    "status_for_folder",
    "verify_scanned_skills",
    "verify_signature",
    "verify_text",
]
