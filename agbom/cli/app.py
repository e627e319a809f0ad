"""The typer application: a table of the top-level commands, each built from its module on use."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup

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


# Every top-level command: its name (in the order help lists them), the module under agbom.cli
# whose ``register(app)`` adds it, and its one-line summary (the first sentence of its help).
# ``agbom --help`` prints the summaries from here, so it imports and builds no command; a
# command's module is imported, and that one command built, only when it is invoked (or
# completed). tests/test_cli_startup.py checks every row against the command its module
# registers. A new command or group: one row here, and ``register(app)`` in its module.
COMMANDS: dict[str, tuple[str, str]] = {
    "export": (
        "inventory_cmds",
        "Export an AgBOM as schema-valid, reproducible CycloneDX JSON or XML, or SPDX 3.0.1.",
    ),
    "graph": (
        "inventory_cmds",
        "Print the component graph (agent -> components -> what they use).",
    ),
    "diff": (
        "inventory_cmds",
        "Show what changed between two AgBOMs, flagging version/digest changes of skills, "
        "tools and MCP servers under the same id (artifact_changes).",
    ),
    "scan": (
        "scan_cmds",
        "Scan MCP client configs, Agent Skills, A2A cards, server.json and AgBOMs into one "
        "inventory, with findings and CycloneDX output.",
    ),
    "lock": (
        "lock_cmds",
        "Write a lock file of MCP server packages (purl, version), tool-set pins and skill "
        "digests, for `agbom check --locked` and `agbom diff` in CI.",
    ),
    "check": (
        "rules_cmds",
        "Evaluate rules against an AgBOM (for CI); exit 1 with --fail-on when findings reach "
        "it, or with --locked on any drift.",
    ),
    "explain": (
        "rules_cmds",
        "Show which rules matched an AgBOM (or one component, or one recorded decision) and why.",
    ),
    "serve": (
        "serve_cmds",
        "Serve the ACS Guardian: POST /acs (JSON-RPC 2.0), /hooks/RUNTIME, /v1 read API, /healthz.",
    ),
    "replay": (
        "guardian_cmds",
        "Feed recorded requests through the Guardian in process, in order.",
    ),
    "hook": (
        "hook_cmds",
        "Answer one hook event of an agent host (claude-code, cursor, codex, gemini-cli, "
        "copilot, windsurf, opencode, oscova, meerkat); install, uninstall and check the hosts' "
        "hook configurations (hook install|uninstall|doctor).",
    ),
    "rules": (
        "rules_cmds",
        "Validate rule packs, run their unit tests, and show the shipped ones.",
    ),
    "skills": (
        "skills_cmds",
        "Approve, deny, revoke and query skills, pinned by (skill_id, digest).",
    ),
    "servers": ("server_cmds", "Approve and revoke MCP servers, pinned by their tool set."),
    "audit": ("guardian_cmds", "Inspect and verify the audit hash chains in the store."),
    "inventory": (
        "guardian_cmds",
        "Fleet inventory: agents, sessions and components seen by the Guardian.",
    ),
    "keys": (
        "keys_cmds",
        "Generate signing keys (ML-DSA-65, Ed25519) and export their public halves.",
    ),
    "sign": (
        "evidence_cmds",
        "Sign a CycloneDX JSON BOM (JSF or DSSE/in-toto) with an ML-DSA-65 or Ed25519 key.",
    ),
    "verify": (
        "evidence_cmds",
        "Verify a signed document offline with trusted public keys; exit 1 when it fails.",
    ),
    "store": ("store_cmds", "Maintain the store: copy a SQLite store into PostgreSQL."),
    "bundle": (
        "bundle_cmds",
        "Build the OPA bundle of the approval records (skills, server pins, bans).",
    ),
    "reviewers": (
        "reviewer_cmds",
        "Add, list and remove the reviewers of the review page (tokens are stored hashed).",
    ),
}

# How ``agbom --help`` groups the commands, in the order a new user needs them (scan first).
# A command of COMMANDS named in no panel is listed under "Other commands", so a new row
# never goes missing from the help.
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Inventory and CI", ("scan", "lock", "check", "explain", "diff", "export", "graph", "rules")),
    ("Guardian", ("serve", "replay", "hook", "audit", "inventory")),
    ("Approvals", ("skills", "servers", "reviewers", "bundle")),
    ("Signed evidence", ("keys", "sign", "verify")),
    ("Store", ("store",)),
)


def help_panels() -> list[tuple[str, list[str]]]:
    """``(title, command names)`` in help order: the panels, then any other command."""
    panels = [(title, [n for n in names if n in COMMANDS]) for title, names in PANELS]
    placed = {name for _, names in panels for name in names}
    others = [name for name in COMMANDS if name not in placed]
    if others:
        panels.append(("Other commands", others))
    return [(title, names) for title, names in panels if names]


def ordered_commands() -> list[str]:
    """Every command name in the order help lists them (and shell completion offers them)."""
    return [name for _, names in help_panels() for name in names]


# What typer passes to every command it builds; the same for the root and for a lazy command.
_BUILD_SETTINGS: dict[str, Any] = {"rich_markup_mode": None, "pretty_exceptions_enable": False}


def build_command(name: str) -> Any | None:
    """The click command (or group) ``name`` of the table, built as typer builds it in a
    whole application; None for a name that is not in the table."""
    row = COMMANDS.get(name)
    if row is None:
        return None
    module = importlib.import_module(f"agbom.cli.{row[0]}")
    holder = typer.Typer(add_completion=False, **_BUILD_SETTINGS)
    module.register(holder)
    install(holder)
    # Only this one is built: typer builds a holder of just its entry as it would the whole app.
    one = typer.Typer(add_completion=False, **_BUILD_SETTINGS)
    one.registered_commands = [
        info
        for info in holder.registered_commands
        if (info.name or typer.main.get_command_name(getattr(info.callback, "__name__", "")))
        == name
    ]
    one.registered_groups = [group for group in holder.registered_groups if group.name == name]
    return typer.main.get_group(one).commands.get(name)


class _LazyCommands(MutableMapping[str, Any]):
    """The root's commands: every name of the table, each built the first time it is read.

    Iterating lists the names and builds nothing (typer's suggestions for a mistyped name
    read the keys); reading one builds that command only.
    """

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            command = build_command(name)
            if command is None:
                raise KeyError(name)
            self._built[name] = command
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the commands of agbom are fixed")

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(1 for name in self._built if name not in COMMANDS)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._built


class LazyGroup(TyperGroup):
    """The root group: its commands come from :data:`COMMANDS`, built when one is invoked."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands()

    def list_commands(self, ctx: Any) -> list[str]:
        built = [name for name in self.commands if name not in COMMANDS]
        return ordered_commands() + built

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands in panels (:data:`PANELS`), each with its whole summary wrapped to
        the terminal: click's own list cuts a summary to one line ending in ``...``, which
        hid what half the commands do."""
        panels = help_panels()
        width = max(len(name) for _, names in panels for name in names)
        for title, names in panels:
            with formatter.section(title):  # one summary column across the panels
                formatter.write_dl([(name.ljust(width), COMMANDS[name][1]) for name in names])


app = typer.Typer(
    name="agbom",
    cls=LazyGroup,
    help="Know and control what your AI agents are made of.",
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": HELP_OPTION_NAMES},  # inherited by every command
    **_BUILD_SETTINGS,
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


def fail(message: str, code: int = 1) -> None:
    """Print one ``agbom: error:`` line to stderr and exit with ``code``."""
    typer.echo(f"agbom: error: {message}", err=True)
    raise typer.Exit(code)


def run(args: list[str]) -> int:
    """Run the app on ``args``; map every failure to one line on stderr and an exit code."""
    return run_app(app, args, prog_name="agbom")


def run_app(application: typer.Typer, args: list[str], *, prog_name: str) -> int:
    """Run ``application`` on ``args`` with :func:`run`'s failure mapping (also used by
    ``agbom hook install|uninstall|doctor``, a small application of its own)."""
    verbose = os.environ.get("AGBOM_DEBUG") == "1"
    try:
        result = application(args=args, prog_name=prog_name, standalone_mode=False)
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
