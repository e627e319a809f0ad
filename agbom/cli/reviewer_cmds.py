"""``agbom reviewers ...``: who may use the review page of ``agbom serve --reviewers-file``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from agbom.display import visible

DEFAULT_FILE = "agbom-reviewers.json"

reviewers_app = typer.Typer(
    name="reviewers",
    help="Add, list and remove the reviewers of the review page (tokens are stored hashed).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


class RoleChoice(StrEnum):
    VIEWER = "viewer"
    APPROVER = "approver"


def register(app: typer.Typer) -> None:
    """Add the ``reviewers`` group to ``app``."""
    app.add_typer(reviewers_app, name="reviewers")


def _file_option() -> Any:
    return typer.Option(
        DEFAULT_FILE,
        "--file",
        envvar="AGBOM_REVIEWERS",
        metavar="FILE",
        help="The reviewers file (what 'agbom serve --reviewers-file' reads).",
        show_default=True,
    )


@reviewers_app.command("add")
def add_cmd(
    name: str = typer.Argument(..., metavar="NAME", help="Who (the approval history names them)."),
    role: RoleChoice = typer.Option(..., "--role", help="viewer reads; approver also decides."),
    file: Path = _file_option(),
    no_token: bool = typer.Option(
        False,
        "--no-token",
        help="No token: this reviewer signs in only through the trusted proxy header "
        "(serve --reviewer-header).",
    ),
) -> None:
    """Add a reviewer (or replace one of the same name); prints their token once."""
    from agbom.review.reviewers import ReviewersError, Role, add, check_name

    try:
        check_name(name)
    except ReviewersError as exc:
        raise typer.BadParameter(str(exc), param_hint="NAME") from None
    token = add(file, name, Role(role.value), with_token=not no_token)
    typer.echo(f"reviewer {name} ({role.value}) is in {file}", err=True)
    if token is not None:
        typer.echo("their token (shown once; give it to them privately):", err=True)
        typer.echo(token)


@reviewers_app.command("list")
def list_cmd(file: Path = _file_option()) -> None:
    """The reviewers in the file, with their role and how they sign in (never a token)."""
    from agbom.review.reviewers import load

    for reviewer in load(file):
        how = "token" if reviewer.token_sha256 else "proxy header only"
        typer.echo(visible(f"{reviewer.name}  {reviewer.role}  {how}"))


@reviewers_app.command("remove")
def remove_cmd(
    name: str = typer.Argument(..., metavar="NAME", help="The reviewer to remove."),
    file: Path = _file_option(),
) -> None:
    """Remove a reviewer: a running server ends their sessions at their next request."""
    from agbom.review.reviewers import ReviewersError, remove

    if not remove(file, name):
        raise ReviewersError(f"no reviewer {visible(name)} in {file}")
    typer.echo(visible(f"reviewer {name} removed from {file}"), err=True)


@reviewers_app.command("secret")
def secret_cmd(
    file: Path = typer.Argument(
        ..., metavar="FILE", help="The secret file (what 'agbom serve --ui-secret-file' reads)."
    ),
    rotate: bool = typer.Option(
        False,
        "--rotate",
        help="FILE exists: put a new secret first and keep its current one as the previous "
        "(still accepted). Without it an existing FILE is left alone.",
    ),
    drop_previous: bool = typer.Option(
        False,
        "--drop-previous",
        help="Keep only FILE's current secret: sessions signed with the previous one end.",
    ),
) -> None:
    """Write the secret that signs the review page's sessions (32 random bytes, mode 0600).

    Give every replica the same file: a sign-in on one is good on all, and a restart keeps
    it. Never printed.
    """
    from agbom.review.secret import drop_previous_secret, write_secret

    if rotate and drop_previous:
        raise typer.BadParameter("--rotate or --drop-previous, not both")
    if drop_previous:
        drop_previous_secret(file)
        typer.echo(f"{file} now holds its current secret only", err=True)
        return
    write_secret(file, keep_previous=rotate)
    if rotate:
        typer.echo(f"{file}: a new secret signs; the previous one is still accepted", err=True)
    else:
        typer.echo(f"{file}: a new secret (mode 0600)", err=True)


__all__ = ["DEFAULT_FILE", "register", "reviewers_app"]
