"""``agbom keys ...``: asymmetric signing keys for evidence (docs/evidence.md)."""

from __future__ import annotations

from pathlib import Path

import orjson
import typer

from agbom.cli.common import output_option, write_output

keys_app = typer.Typer(
    help="Generate signing keys (ML-DSA-65, Ed25519) and export their public halves.",
    no_args_is_help=True,
)


@keys_app.command("generate")
def keys_generate(
    algorithm: str = typer.Option(
        ...,
        "--algorithm",
        "-a",
        metavar="ML-DSA-65|Ed25519",
        help="ML-DSA-65 (FIPS 204, the ACS-Crypto profile's required algorithm) or Ed25519.",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        metavar="PREFIX",
        help="Writes PREFIX.key (PKCS#8 PEM, mode 0600) and PREFIX.pub (SubjectPublicKeyInfo "
        "PEM). Refuses when either exists.",
    ),
) -> None:
    """Write a new key pair; print its key id. Never overwrites a file."""
    from agbom.evidence import ALGORITHMS, SigningKey, write_key_pair

    if algorithm not in ALGORITHMS:
        raise typer.BadParameter(
            f"{algorithm[:40]!r} is not one of {', '.join(ALGORITHMS)}", param_hint="--algorithm"
        )
    key = SigningKey.generate(algorithm)
    private, public = write_key_pair(key, out)
    typer.echo(f"agbom: wrote {private} (private, mode 0600) and {public}", err=True)
    typer.echo(key.key_id)


@keys_app.command("export")
def keys_export(
    files: list[Path] = typer.Argument(
        ...,
        metavar="KEY...",
        help="Public key files (PREFIX.pub), or private key files (only their public half is "
        "read out).",
    ),
    output: Path | None = output_option(),
) -> None:
    """Print the public keys as a JWKS document (what verifiers and --public-key accept)."""
    from agbom.evidence import KeySet, SigningKey, jwks
    from agbom.evidence.keys import read_public_file

    publics = []
    for file in files:
        head = read_public_file(file)[:64]
        if b"PRIVATE KEY" in head:
            publics.append(SigningKey.from_file(file).public)
        else:
            publics.extend(KeySet.from_files([file]))
    write_output(orjson.dumps(jwks(publics), option=orjson.OPT_INDENT_2), output)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(keys_app, name="keys")
