"""``agbom hook install|uninstall|doctor``: agbom's hooks in each host's own configuration.

``agbom hook`` itself answers one event (agbom/cli/hook_cmds.py); :func:`agbom.cli.main`
routes these three words here before any hook fast path, as their own small application.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import typer

from agbom.cli.common import choice

setup = typer.Typer(
    name="hook",
    help="Install, remove and check agbom's hooks in agent hosts' configurations.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

_HOSTS = "claude-code, cursor, codex, gemini-cli, copilot, windsurf, opencode"


def _places(project: Path | None, root: Path | None) -> object:
    from agbom.hostconfig.specs import Places

    return Places(
        home=Path.home(),
        project=(project or Path.cwd()).resolve(),
        root=(root or Path("/")).resolve(),
        environ=dict(os.environ),
    )


def default_agbom() -> list[str]:
    """The agbom program a hook should run: this one, by absolute path; the hook launcher
    installed beside it (``agbom-hook``, about a third less time per event) where there is
    one."""
    from agbom.hostconfig.install import HOOK_LAUNCHER

    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    program = None
    if argv0 is not None and argv0.name in ("agbom", HOOK_LAUNCHER) and argv0.is_file():
        program = argv0.resolve()
    elif found := shutil.which("agbom"):
        program = Path(found).resolve()
    if program is None:
        return [sys.executable, "-m", "agbom"]
    launcher = program.with_name(HOOK_LAUNCHER)
    if os.name == "posix" and os.access(launcher, os.X_OK) and launcher.is_file():
        return [str(launcher)]
    return [str(program)]


@setup.command("install")
def install_cmd(
    host: str = typer.Argument(..., metavar="HOST", help=f"One of: {_HOSTS}."),
    scope: str | None = typer.Option(
        None,
        "--scope",
        metavar="[user|project|managed]",
        help="Whose configuration: the user's (default; managed for codex, whose user hooks "
        "run only once trusted), the project's, or the machine's managed one (as root).",
    ),
    server: str | None = typer.Option(
        None,
        "--server",
        metavar="URL",
        help="The 'agbom serve' the hook forwards to (thin mode); without it the hook decides "
        "in process on the default store.",
    ),
    transport: str = typer.Option(
        "command",
        "--transport",
        metavar="[command|http]",
        help="copilot only: an HTTP hook POSTing to SERVER/hooks/copilot instead of a command "
        "(Copilot needs https:// for preToolUse and fails open when it cannot reach it).",
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", help="The hook's --timeout in thin mode (seconds)."
    ),
    token_file: str | None = typer.Option(
        None, "--token-file", metavar="FILE", help="The hook's --token-file in thin mode."
    ),
    fail_open: bool = typer.Option(
        False, "--fail-open", help="Let actions through when agbom fails (not recommended)."
    ),
    agbom: str | None = typer.Option(
        None,
        "--agbom",
        metavar="PATH",
        help="The agbom program the hook runs (default: this one, or the agbom-hook beside it).",
    ),
    project: Path | None = typer.Option(
        None, "--project", metavar="DIR", help="The project folder for --scope project."
    ),
    root: Path | None = typer.Option(
        None,
        "--root",
        metavar="DIR",
        help="Write managed files under DIR instead of / (to build a machine image).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change; write nothing."),
) -> None:
    """Write agbom's hook into HOST's configuration: every event agbom gates there, failing
    closed wherever the host allows. Idempotent; other hooks and settings are kept; the file
    as it was is kept beside it (FILE.agbom-backup-TIMESTAMP)."""
    from agbom.hostconfig import install, specs

    spec = specs.host(host)
    scope = choice(scope or spec.default_scope, specs.SCOPES, "--scope")
    transport = choice(transport, ("command", "http"), "--transport")
    places = _places(project, root)
    http_url = None
    if transport == "http":
        if host != "copilot":
            _fail("--transport http is for copilot only (other hosts run the command hook)")
        if not server:
            _fail("--transport http needs --server URL")
        http_url = f"{(server or '').rstrip('/')}/hooks/{host}"
    program = [agbom] if agbom else default_agbom()
    command = install.hook_command(
        host,
        agbom=program,
        server=server,
        timeout=timeout,
        token_file=token_file,
        fail_open=fail_open,
    )
    change = install.plan_install(spec, scope, places, command, http_url=http_url)  # type: ignore[arg-type]
    _report(change, dry_run, verb="install")
    if change.changed or dry_run:
        gates = [e for e in spec.events if e.name in change.events]
        for event in gates:
            typer.echo(f"  {event.name}: {event.gates}")
    if not (change.changed or dry_run):
        return
    note = spec.scope_notes.get(scope)
    if note:
        typer.echo(f"note: {note}", err=True)
    if http_url and not http_url.startswith("https://"):
        typer.echo(
            "note: Copilot sends preToolUse only to https:// hooks (http://127.* with "
            "COPILOT_HOOK_ALLOW_LOCALHOST=1); an HTTP hook fails open when agbom is down",
            err=True,
        )
    for line in spec.fails_open:
        typer.echo(f"note: {spec.title} itself fails open here: {line}", err=True)


@setup.command("uninstall")
def uninstall_cmd(
    host: str = typer.Argument(..., metavar="HOST", help=f"One of: {_HOSTS}."),
    scope: str | None = typer.Option(
        None, "--scope", metavar="[user|project|managed]", help="As given to install."
    ),
    project: Path | None = typer.Option(None, "--project", metavar="DIR"),
    root: Path | None = typer.Option(None, "--root", metavar="DIR"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change; write nothing."),
) -> None:
    """Remove agbom's entries from HOST's configuration, and nothing else (a file that held
    only them goes too); the file as it was is kept beside it."""
    from agbom.hostconfig import install, specs

    spec = specs.host(host)
    scope = choice(scope or spec.default_scope, specs.SCOPES, "--scope")
    change = install.plan_uninstall(spec, scope, _places(project, root))  # type: ignore[arg-type]
    _report(change, dry_run, verb="uninstall")


@setup.command("doctor")
def doctor_cmd(
    output_format: str = typer.Option(
        "table", "--format", metavar="[table|json]", help="table (for people) or json."
    ),
    project: Path | None = typer.Option(None, "--project", metavar="DIR"),
    root: Path | None = typer.Option(None, "--root", metavar="DIR"),
    versions: bool = typer.Option(
        True, "--versions/--no-versions", help="Ask each host's program for its version."
    ),
) -> None:
    """For each agent host found on this machine: what agbom installed where, which events
    are gated, which paths stay open for that host's version, and where the host itself
    fails open."""
    from agbom.hostconfig import doctor

    output_format = choice(output_format, ("table", "json"), "--format")
    reports = doctor.diagnose(_places(project, root), versions=versions)  # type: ignore[arg-type]
    if output_format == "json":
        typer.echo(json.dumps([r.to_json() for r in reports], indent=2))
    else:
        typer.echo(doctor.render(reports), nl=False)


def _report(change: object, dry_run: bool, *, verb: str) -> None:
    from agbom.hostconfig.install import Change, apply

    assert isinstance(change, Change)
    where = f"{change.host} ({change.scope}): {change.path}"
    if not change.changed:
        state = "already installed" if verb == "install" else "nothing of agbom's there"
        typer.echo(f"agbom: {where}: {state}, nothing changed")
        return
    if dry_run:
        typer.echo(change.diff(), nl=False)
        typer.echo(f"agbom: {where}: would {verb} (dry run, nothing written)", err=True)
        return
    backup = apply(change)
    done = "removed" if change.after is None else "written"
    kept = f"; the old file is kept as {backup}" if backup else ""
    typer.echo(f"agbom: {where}: {done}{kept}")


def _fail(message: str) -> None:
    typer.echo(f"agbom: error: {message}", err=True)
    raise typer.Exit(2)


def run(args: list[str]) -> int:
    """Run ``agbom hook install|uninstall|doctor`` (``args`` after ``hook``)."""
    from agbom.cli.app import run_app
    from agbom.cli.help import install

    install(setup)
    return run_app(setup, args, prog_name="agbom hook")
