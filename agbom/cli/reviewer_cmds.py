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


__all__ = ["DEFAULT_FILE", "register", "reviewers_app"]
