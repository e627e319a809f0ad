"""The typer application: one small module per command group, registered here."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

import typer

from agbom import __version__
from agbom.cli.help import HELP_OPTION_NAMES, install
from agbom.display import visible
from agbom.errors import AgbomError

try:  # typer >= 0.2x vendors its own click: its usage errors are not click.ClickException
    from typer._click import exceptions as _typer_click
except ImportError:  # pragma: no cover - older typer uses click itself
    import click as _typer_click  # type: ignore[no-redef]


def _click_classes(name: str, *also: type[Any]) -> tuple[type[Any], ...]:
    """``also``, typer's click's exception class ``name``, and click's when click is loaded.

    click itself (about 10 ms of imports) is loaded only by what uses it (sqlite-utils): an
    exception of its kind cannot have been raised when it is not in ``sys.modules``. Used in
    ``except`` clauses, which are evaluated only when an exception reaches them.
    """
    classes = list(also)
    for module in (_typer_click, getattr(sys.modules.get("click"), "exceptions", None)):
        found = getattr(module, name, None) if module is not None else None
        if isinstance(found, type) and issubclass(found, BaseException) and found not in classes:
            classes.append(found)
    return tuple(classes)


app = typer.Typer(
    name="agbom",
    help="Know and control what your AI agents are made of.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": HELP_OPTION_NAMES},  # inherited by every command
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agbom {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """agbom: AgBOM inventory, ACS Guardian, skill approvals, rules and CycloneDX export."""


def _register() -> None:
    from agbom.cli import (
        guardian_cmds,
        hook_cmds,
        inventory_cmds,
        reviewer_cmds,
        rules_cmds,
        scan_cmds,
        skills_cmds,
        store_cmds,
    )

    for module in (inventory_cmds, scan_cmds, rules_cmds, skills_cmds, guardian_cmds, hook_cmds):
        module.register(app)
    store_cmds.register(app)
    reviewer_cmds.register(app)
    install(app)


_register()


def fail(message: str, code: int = 1) -> None:
    """Print one ``agbom: error:`` line to stderr and exit with ``code``."""
    typer.echo(f"agbom: error: {message}", err=True)
    raise typer.Exit(code)


def run(args: list[str]) -> int:
    """Run the app on ``args``; map every failure to one line on stderr and an exit code."""
    verbose = os.environ.get("AGBOM_DEBUG") == "1"
    try:
        result = app(args=args, prog_name="agbom", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except _click_classes("Abort", typer.Abort):
        typer.echo("agbom: aborted", err=True)
        return 130
    except _click_classes("ClickException") as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            # A bare 'agbom' or 'agbom skills': the whole help, as click shows it (stderr, 2).
            typer.echo(exc.ctx.get_help(), err=True)
            return 2
        # Usage errors: keep click's wording, on one line, exit 2.
        message = visible(exc.format_message().replace("\n", " "))
        hint = ""
        if isinstance(exc, _click_classes("UsageError")) and getattr(exc, "ctx", None) is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        typer.echo(f"agbom: error: {message}{hint}", err=True)
        return int(exc.exit_code)
    except AgbomError as exc:
        if verbose:
            traceback.print_exc()
        typer.echo(f"agbom: error: {visible(exc.diagnostics())}", err=True)
        return getattr(exc, "exit_code", 1)
    except KeyboardInterrupt:
        typer.echo("agbom: interrupted", err=True)
        return 130
    except OSError as exc:
        if verbose:
            traceback.print_exc()
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        typer.echo(visible(f"agbom: error:{where} {exc.strerror or exc}"), err=True)
        return 1
    except Exception as exc:  # noqa: BLE001 - the one place that must never show a traceback
        if verbose:
            traceback.print_exc()
        typer.echo(
            f"agbom: internal error: {type(exc).__name__}: {visible(exc)} "
            "(set AGBOM_DEBUG=1 for a traceback and please report it)",
            err=True,
        )
        return 70


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(sys.argv[1:]))
