"""``agbom bundle build``: the approval records as an OPA bundle file, for GitOps.

The same bytes ``agbom serve`` answers ``GET /v1/bundles/agbom.tar.gz`` with, for the same
store and rule packs (docs/opa.md). Exit codes: 0 written, 2 usage error or an unreadable
store or rule pack.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import typer

from agbom.cli.common import db_option, no_default_rules_option, rules_option, with_default_rules
from agbom.errors import InputError

bundle_app = typer.Typer(
    name="bundle",
    help="Build the OPA bundle of the approval records (skills, server pins, bans).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Add the ``bundle`` group to ``app``."""
    app.add_typer(bundle_app, name="bundle")


@bundle_app.command("build")
def build_cmd(
    output: Path = typer.Option(
        ..., "-o", "--output", metavar="FILE", help="Write the bundle (a .tar.gz) to FILE."
    ),
    db: str = db_option(),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
) -> None:
    """Write the OPA bundle of the store's decided skills, server pins and ban rules."""
    from agbom.export.opa_bundle import build_store_bundle
    from agbom.store import open_store

    with_default = with_default_rules(rules, no_default_rules)
    if str(output) == "-" or output.is_dir():
        raise typer.BadParameter("must name a file (the bundle is binary)", param_hint="-o")
    with open_store(db, create=False) as store:
        bundle = build_store_bundle(store, rules=rules, with_default=with_default)
    _write_atomically(bundle.body, output)
    typer.echo(
        f"agbom: wrote {output} (revision {bundle.revision}, {len(bundle.body):,} bytes)",
        err=True,
    )


def _write_atomically(body: bytes, output: Path) -> None:
    """The file appears only when complete, holding exactly ``body`` (write_output adds a
    final newline to text, which would break the gzip stream)."""
    target = output.resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600: a bundle is not a secret file
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from exc
