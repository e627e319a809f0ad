"""``--sign KEY`` on ``agbom export`` and ``agbom scan``: a signed CycloneDX BOM in one step,
as ``agbom sign`` would make it from their output (docs/evidence.md, "Signed BOMs")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import typer

from agbom.cli.common import choice

if TYPE_CHECKING:
    from agbom.evidence import SigningKey

SIGN_FORMATS = ("jsf", "dsse")


def sign_option() -> Any:
    return typer.Option(
        None,
        "--sign",
        metavar="KEY",
        help="Sign the CycloneDX JSON with this private key from 'agbom keys generate' "
        "(ML-DSA-65 or Ed25519, mode 0600); check it with 'agbom verify FILE --public-key'.",
    )


def sign_format_option() -> Any:
    return typer.Option(
        "jsf",
        "--sign-format",
        metavar="[jsf|dsse]",
        help="With --sign: jsf, the BOM with CycloneDX 1.6's enveloped JSF signature "
        "(default), or dsse, a DSSE envelope of an in-toto Statement whose predicate is the BOM.",
    )


def bom_signer(key_file: Path | None, fmt: str, sign_format: str) -> SigningKey | None:
    """The key ``--sign`` names, read before any export work (a bad or world-readable key
    file is one error line); only CycloneDX JSON is signed."""
    sign_format = choice(sign_format, SIGN_FORMATS, "--sign-format")
    if key_file is None:
        return None
    if fmt.partition("@")[0] != "cyclonedx-json":
        raise typer.BadParameter(
            f"only cyclonedx-json output is signed, not {fmt}", param_hint="--sign"
        )
    from agbom.evidence import SigningKey

    return SigningKey.from_file(key_file)


def signed_bom(data: str | bytes, key: SigningKey, sign_format: str, *, name: str) -> bytes:
    """The exported BOM signed: JSF inside it, or a DSSE envelope around it."""
    from agbom.evidence import dsse_sign, jsf_sign

    bom = orjson.loads(data)
    signed = (
        jsf_sign(bom, key)
        if choice(sign_format, SIGN_FORMATS, "--sign-format") == "jsf"
        else dsse_sign(bom, key, name=name)
    )
    typer.echo(f"agbom: signed with {key.algorithm} key {key.key_id}", err=True)
    return orjson.dumps(signed, option=orjson.OPT_INDENT_2) + b"\n"
