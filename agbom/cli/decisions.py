"""Who decided, and why: the two facts every approval, denial and revocation records.

The approval history is an audit trail. A reviewer reading it needs a person (or a CI job)
and a reason; ``root`` and an empty reason tell them nothing. So the CLI asks the same as the
review page does (a reason for every decision) and records a useful name:

1. ``--by NAME``;
2. else ``$AGBOM_ACTOR`` (set it in CI, e.g. to ``$GITHUB_ACTOR``);
3. else ``git config user.email`` in the working folder (who commits there is who decides);
4. else the login name, unless it names nobody (``root``, or no name at all): then the command
   refuses, with a usage error that says to pass ``--by``.

``skills import`` needs a name only for entries of its file that do not say who decided them
(``decided_by``): the reviewed file is the record of who decided the others.
"""

from __future__ import annotations

import getpass
import os
import subprocess
from typing import Any

import typer

from agbom.display import visible

ACTOR_ENV = "AGBOM_ACTOR"
MAX_ACTOR = 256  # the store's limit (agbom.store.interface.MAX_ACTOR)
MAX_REASON = 4096  # the store's limit, and the review page's
# Login names that say nothing about who decided.
_NOBODY = frozenset({"", "root", "unknown"})
_GIT_TIMEOUT_S = 5


def _usage(message: str) -> typer.Exit:
    typer.echo(f"agbom: error: {visible(message)}", err=True)
    return typer.Exit(2)


def _git_email() -> str | None:
    try:
        proc = subprocess.run(
            ["git", "config", "--get", "user.email"],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, or git hangs: not a source
        return None
    email = proc.stdout.strip() if proc.returncode == 0 else ""
    return email if 0 < len(email) <= MAX_ACTOR else None


def _login_name() -> str:
    try:
        return os.environ.get("USER") or getpass.getuser()
    except (OSError, KeyError):
        return ""


def by_option() -> Any:
    """The ``--by`` option of every approval decision command."""
    return typer.Option(
        None,
        "--by",
        help="Who decides (default: $AGBOM_ACTOR, else git config user.email, else the login "
        "name; as root without either, --by is required).",
        show_default=False,
    )


def decision_actor(by: str | None) -> str:
    """The name a decision is recorded under (see the module docstring); a usage error
    (exit 2) when nothing names a person."""
    name = known_actor(by)
    if name is not None:
        return name
    shown = _login_name().strip() or "no login name"
    raise _usage(
        f"say who decides with --by NAME (or set ${ACTOR_ENV}): the user is {shown!r} and git "
        "has no user.email here, and the approval history would name nobody"
    )


def known_actor(by: str | None) -> str | None:
    """The name :func:`decision_actor` would record, or None where nothing names a person
    (for ``skills import`` of a file whose every entry names who decided it). An empty or
    overlong ``--by``/``$AGBOM_ACTOR`` is still a usage error."""
    for source, value in (("--by", by), (f"${ACTOR_ENV}", os.environ.get(ACTOR_ENV))):
        if value is None:
            continue
        name = value.strip()
        if not name:
            raise _usage(f"{source} is empty: name who decides")
        if len(name) > MAX_ACTOR:
            raise _usage(f"{source} is longer than {MAX_ACTOR} characters")
        return name
    email = _git_email()
    if email:
        return email
    user = _login_name().strip()
    return user if user.lower() not in _NOBODY else None


def decision_reason(reason: str | None) -> str:
    """The reason a decision is recorded with: required, as on the review page."""
    if reason is None:
        raise _usage(
            '--reason is required: say why (for example --reason "reviewed in PR 123"); it is '
            "kept in the approval history and shown on the review page"
        )
    text = reason.strip()
    if not text:
        raise _usage("--reason is empty: say why you decide")
    if len(text) > MAX_REASON:
        raise _usage(f"--reason is longer than {MAX_REASON} characters")
    return text
