"""``agbom store ...``: moving a store between backends.

``agbom store migrate --from agbom.db --to postgresql://...`` copies a SQLite store into
PostgreSQL, verifies every copied chain, and can be run again (it then copies only what is
new). Progress and the summary go to stderr; the URL is never shown with its password.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import typer

from agbom.display import visible
from agbom.errors import AgbomError, InputError

store_app = typer.Typer(
    name="store",
    help="Maintain the store: copy a SQLite store into PostgreSQL.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


class MigrationFailed(AgbomError):
    """The copy finished but a chain in the target does not verify."""

    exit_code = 1


def register(app: typer.Typer) -> None:
    """Add the ``store`` group to ``app``."""
    app.add_typer(store_app, name="store")


class _Progress:
    """One stderr line per table, refreshed at most every second on a terminal (a pipe gets
    a line per second per long table, and the final count)."""

    def __init__(self) -> None:
        self._last = 0.0
        self._tty = sys.stderr.isatty()

    def __call__(self, table: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < 1.0:
            return
        self._last = now
        line = f"agbom: {table}: {done}/{total}"
        if self._tty:
            sys.stderr.write("\r" + line + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


@store_app.command("migrate")
def migrate(
    source: Path = typer.Option(
        ..., "--from", metavar="AGBOM.db", help="The SQLite store file to copy from."
    ),
    target: str = typer.Option(
        ...,
        "--to",
        metavar="postgresql://...",
        help="The PostgreSQL store to copy into (set up when empty).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
) -> None:
    """Copy approvals, history, chains, sessions, AgBOM versions and skill events from a
    SQLite store into PostgreSQL, then verify every chain there.

    Safe to run again: rows already copied are skipped, an approval decided on PostgreSQL
    since is kept, and diverged rows stop the copy without overwriting anything.
    """
    from agbom.store import open_store, redact_location
    from agbom.store.factory import POSTGRES_SCHEMES

    scheme = target.partition("://")[0].lower() if "://" in target else ""
    if scheme not in POSTGRES_SCHEMES:
        raise typer.BadParameter("must be a postgresql:// URL", param_hint="--to")
    if not source.is_file():
        raise InputError(f"{source}: no SQLite store there")
    from agbom.store.postgres import PostgresStore
    from agbom.store.postgres.from_sqlite import copy_sqlite_store

    with open_store(target) as opened:
        assert isinstance(opened, PostgresStore)
        report = copy_sqlite_store(source, opened, progress=None if quiet else _Progress())
        broken = _verify_chains(opened)
    shown = visible(redact_location(target))
    for table, total in report.total.items():
        kept = report.kept_target.get(table, 0)
        note = f", {kept} kept as the target has them" if kept else ""
        typer.echo(f"agbom: {table}: {report.copied[table]} copied of {total}{note}", err=True)
    if broken:
        raise MigrationFailed(
            f"{len(broken)} chain(s) in {shown} do not verify: " + "; ".join(broken[:3])
        )
    if report.copied_any:
        typer.echo(f"agbom: copied {source} into {shown}; every chain verified", err=True)
    else:
        typer.echo(
            f"agbom: nothing new to copy; {shown} already holds {source}; every chain verified",
            err=True,
        )


def _verify_chains(store: Any) -> list[str]:
    """Verify each chain of ``store`` as ``agbom audit verify`` does; describe the broken."""
    from agbom.protocol import verify_chain

    broken = []
    for session_id in store.chain_session_ids():
        entries = [
            {k: v for k, v in entry.items() if k != "seq"}
            for entry in store.chain_entries(session_id)
        ]
        stored = store.get_session(session_id) or {}
        failure = verify_chain(entries, expected_head=stored.get("sealed_head"))
        if failure is not None:
            broken.append(f"{visible(session_id)}: {failure.describe()}")
    return broken
