"""``agbom sign``, ``agbom verify`` and the evidence parts of ``agbom audit`` (``audit seal``,
``audit export --bundle``, ``audit verify --bundle``). docs/evidence.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import db_option, output_option, read_json, write_output
from agbom.display import visible
from agbom.errors import InputError

_SIGN_FORMATS = ("jsf", "dsse")


def signing_key_option() -> Any:
    return typer.Option(
        ...,
        "--signing-key",
        "--key",
        metavar="PREFIX.key",
        help="Private key file from 'agbom keys generate' (must be mode 0600).",
    )


def public_key_option() -> Any:
    return typer.Option(
        ...,
        "--public-key",
        "--jwks",
        metavar="FILE",
        help="Trusted public key: a PREFIX.pub PEM file or a JWKS document; repeat for several "
        "(a rotation).",
    )


def _pretty(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def sign_cmd(
    bom_file: Path = typer.Argument(..., metavar="BOM.cdx.json", help="CycloneDX JSON BOM."),
    key_file: Path = signing_key_option(),
    fmt: str = typer.Option(
        "jsf",
        "--format",
        "-f",
        metavar="[jsf|dsse]",
        help="jsf: the BOM with an enveloped JSF signature (CycloneDX 1.6 'signature'); dsse: "
        "a DSSE envelope of an in-toto Statement whose predicate is the BOM.",
    ),
    output: Path | None = output_option(),
) -> None:
    """Sign a CycloneDX JSON BOM (JSF or DSSE/in-toto) with an ML-DSA-65 or Ed25519 key."""
    from agbom.evidence import SigningKey, dsse_sign, jsf_sign

    if fmt not in _SIGN_FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not jsf or dsse", param_hint="--format")
    bom = read_json(bom_file)
    if not isinstance(bom, dict) or bom.get("bomFormat") != "CycloneDX":
        raise InputError(f"{bom_file}: not a CycloneDX JSON BOM (export one with agbom export)")
    key = SigningKey.from_file(key_file)
    signed = jsf_sign(bom, key) if fmt == "jsf" else dsse_sign(bom, key, name=bom_file.name)
    write_output(_pretty(signed), output)
    typer.echo(f"agbom: signed with {key.algorithm} key {key.key_id}", err=True)


def verify_cmd(
    file: Path = typer.Argument(
        ...,
        metavar="FILE",
        help="A JSF-signed BOM, DSSE envelope, evidence bundle, chain head or signed envelope.",
    ),
    public_keys: list[Path] = public_key_option(),
) -> None:
    """Verify a signed document offline with trusted public keys; exit 1 when it fails."""
    from agbom.evidence import KeySet, verify_document

    keys = KeySet.from_files(public_keys)
    kind, checked = verify_document(read_json(file), keys)
    for line in checked:
        typer.echo(f"ok      {visible(line)}")
    typer.echo(f"agbom: {visible(str(file))}: {kind} verified", err=True)


def audit_seal(
    session_id: str = typer.Argument(..., help="Session whose chain head to sign."),
    key_file: Path = signing_key_option(),
    db: str = db_option(),
    output: Path | None = output_option(),
) -> None:
    """Sign a session's chain head (after recomputing the chain), store it with the chain
    for 'audit verify', and print the statement."""
    from agbom.evidence import SigningKey, seal_chain
    from agbom.store import open_store, redact_location

    key = SigningKey.from_file(key_file)
    with open_store(db, create=False) as store:
        entries = [
            {k: v for k, v in e.items() if k != "seq"} for e in store.chain_entries(session_id)
        ]
        if not entries:
            raise InputError(f"no audit chain for session {session_id} in {redact_location(db)}")
        statement = seal_chain(session_id, entries, key)
        said = _store_seal(store, session_id, entries, statement)
    write_output(_pretty(statement), output)
    typer.echo(f"agbom: {said}", err=True)


def _store_seal(
    store: Any, session_id: str, entries: list[dict[str, Any]], statement: dict[str, Any]
) -> str:
    """Keep ``statement`` as the session's signed head, as the Guardian keeps the one it
    signs at sessionEnd: a head already stored for this chain stands; a checkpoint of an
    open session that went on since is replaced by the later head (compare and set). A
    stored head the chain no longer passes through is ``chain_mismatch``: the chain was
    changed after that seal, and storing a new one would hide it. Returns what was done."""
    from agbom.evidence import EvidenceInvalid, stored_head_is_earlier

    for _attempt in range(3):
        stored = store.signed_head(session_id)
        if stored is None:
            store.save_signed_head(session_id, statement)
            if store.signed_head(session_id) == statement:
                return f"stored the signed head of {len(entries)} entries"
            continue  # another seal was stored meanwhile: look again
        if not stored_head_is_earlier(entries, stored):
            signer = (stored.get("signature") or {}).get("key_id")
            return (
                f"the session's head was already sealed (key {visible(str(signer))}, "
                f"{visible(str(stored.get('sealed_at')))}); that seal stands, this one is "
                "printed only"
            )
        if store.replace_signed_head(session_id, statement, stored):
            return (
                f"stored the signed head of {len(entries)} entries, in place of the "
                f"checkpoint of {stored.get('entry_count')} sealed before the session went on"
            )
    raise EvidenceInvalid(
        "head_contended", "other seals of this session were stored meanwhile; try again"
    )


def export_bundle(
    session_id: str, db: str, bundle: Path, key_file: Path | None, head_key_file: Path | None
) -> None:
    """``audit export SESSION --bundle OUT --signing-key K [--head-key G]``."""
    from agbom.evidence import KeyFileError, SigningKey, build_bundle
    from agbom.store import open_store, redact_location

    if key_file is None:
        raise typer.BadParameter("a bundle is signed: give --signing-key", param_hint="--bundle")
    key = SigningKey.from_file(key_file)
    head_key = SigningKey.from_file(head_key_file) if head_key_file is not None else None
    if head_key is not None and head_key.key_id == key.key_id:
        raise typer.BadParameter(
            "is the bundle's --signing-key: a key has one role (the Guardian signs heads, an "
            "exporter signs bundles)",
            param_hint="--head-key",
        )
    with open_store(db, create=False) as store:
        if not store.chain_entries(session_id):
            raise InputError(f"no audit chain for session {session_id} in {redact_location(db)}")
        try:
            document = build_bundle(store, session_id, key, head_key=head_key)
        except KeyFileError as exc:  # pragma: no cover - refused above already
            raise typer.BadParameter(str(exc), param_hint="--head-key") from None
    write_output(_pretty(document), bundle)
    typer.echo(f"agbom: wrote {bundle} (signed with {key.algorithm} key {key.key_id})", err=True)


def verify_bundle_file(
    bundle: Path,
    guardian_keys: list[Path],
    exporter_keys: list[Path],
    *,
    open_session: bool = False,
) -> None:
    """``audit verify --bundle FILE --guardian-key G --exporter-key E``: offline, no store,
    no secret; each key in its role."""
    from agbom.evidence import BundleKeys, KeyFileError, KeySet, verify_bundle

    if not guardian_keys or not exporter_keys:
        raise typer.BadParameter(
            "give the Guardian's public key (--guardian-key, for the chain head) and the "
            "exporter's (--exporter-key, for the bundle)",
            param_hint="--bundle",
        )
    try:
        keys = BundleKeys(KeySet.from_files(guardian_keys), KeySet.from_files(exporter_keys))
    except KeyFileError as exc:
        raise typer.BadParameter(str(exc), param_hint="--guardian-key/--exporter-key") from None
    for line in verify_bundle(read_json(bundle), keys, open_session=open_session):
        typer.echo(f"ok      {visible(line)}")
    typer.echo(f"agbom: {visible(str(bundle))}: evidence bundle verified", err=True)


def verify_signed_chains(db: str, session_id: str | None, public_keys: list[Path]) -> int:
    """``audit verify [SESSION] --public-key K``: each chain against the head stored with it
    (signed by the Guardian at sessionEnd, or by ``audit seal``), with no secret. Returns
    how many failed. A session with no signed head (still open, or ended without a signing
    key) is listed as such and not counted as verified, nor is one whose entries go on past
    a checkpoint (``PARTIAL``); naming either is a failure."""
    from agbom.evidence import EvidenceInvalid, KeySet, verify_sealed_prefix
    from agbom.store import open_store, redact_location

    keys = KeySet.from_files(public_keys)
    failed = verified = 0
    with open_store(db, create=False) as store:
        sessions = [session_id] if session_id else store.chain_session_ids()
        for sid in sessions:
            entries = [{k: v for k, v in e.items() if k != "seq"} for e in store.chain_entries(sid)]
            if not entries:
                raise InputError(f"no audit chain for session {sid} in {redact_location(db)}")
            head = store.signed_head(sid)
            if head is None:
                typer.echo(f"UNSIGNED {visible(sid)}  {len(entries)} entries  no signed head")
                failed += sid == session_id
                continue
            try:
                key, unsealed = verify_sealed_prefix(entries, head, keys)
            except EvidenceInvalid as exc:
                failed += 1
                typer.echo(f"BROKEN  {visible(sid)}  {visible(exc.diagnostics())}")
                continue
            if unsealed:
                typer.echo(
                    f"PARTIAL {visible(sid)}  {head['entry_count']} of {len(entries)} entries "
                    f"sealed (signed {key.algorithm} {key.key_id}); the {unsealed} after them "
                    "are not: seal the session again (agbom audit seal)"
                )
                failed += sid == session_id
                continue
            verified += 1
            typer.echo(
                f"ok      {visible(sid)}  {len(entries)} entries  head {head['chain_hash']}  "
                f"signed {key.algorithm} {key.key_id}"
            )
    typer.echo(
        f"agbom: {verified} of {len(sessions)} chain(s) verified against signed heads", err=True
    )
    return failed


def add_audit_commands(audit_app: typer.Typer) -> None:
    """The evidence subcommands of ``agbom audit``."""
    audit_app.command("seal")(audit_seal)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("sign")(sign_cmd)
    app.command("verify")(verify_cmd)
