"""``agbom hook RUNTIME``: a command hook handler for Oscova, Meerkat, Claude Code, Cursor, Codex
CLI, Gemini CLI, GitHub Copilot CLI, Windsurf and opencode (``agbom hook install|uninstall|doctor``
are in :mod:`agbom.cli.hook_setup`).

Standalone mode decides in process (:func:`agbom.adapters.standalone.run` opens the store and
rules). Neither mode usually reaches this module: :func:`agbom.cli.main` hands thin mode
(``--server URL``) to :mod:`agbom.adapters.thin` and a well-formed standalone command line to
:mod:`agbom.adapters.standalone` before typer is imported; this typer command is what answers
``--help`` and usage errors (and CliRunner calls).

Whatever goes wrong (unreadable store, bad rules, malformed event), the runtime gets an answer
in its own format, per ``--fail-open`` / ``--fail-closed``; the reason goes to stderr.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agbom.cli.common import choice, no_default_rules_option, rules_option, with_default_rules
from agbom.cli.guardian_options import (
    egress_allow_option,
    egress_option,
    known_tool_option,
    pack_option,
)


def register(app: typer.Typer) -> None:
    """Add ``hook`` to ``app``."""
    app.command(
        "hook",
        help=(
            "Answer one hook event of an agent host (claude-code, cursor, codex, gemini-cli, "
            "copilot, windsurf, opencode, oscova, meerkat); install, uninstall and check the "
            "hosts' hook configurations (hook install|uninstall|doctor). The event comes on "
            "stdin, the host's answer goes to stdout and the exit code. With --server URL the "
            "event is forwarded to a running 'agbom serve' (thin mode, fast start); without, it "
            "is decided in process with --db and --rules. 'agbom hook install HOST', 'agbom "
            "hook uninstall HOST' and 'agbom hook doctor' have their own --help."
        ),
    )(hook_cmd)


def hook_cmd(
    runtime: str = typer.Argument(
        ...,
        metavar="RUNTIME",
        help="The runtime or host whose hook event it is: oscova, meerkat, claude-code, cursor, "
        "codex, gemini-cli, copilot, windsurf, opencode.",
    ),
    db: str | None = typer.Option(
        None,
        "--db",
        envvar="AGBOM_DB",
        help="The store: a SQLite file (created when missing) or a postgresql:// URL. Default: "
        "$XDG_DATA_HOME/agbom/agbom.db (~/.local/share/agbom/agbom.db), never the folder the "
        "runtime runs the hook in.",
    ),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    packs: list[str] = pack_option(),
    egress_allow: list[str] = egress_allow_option(),
    known_tools: list[str] = known_tool_option(),
    egress: str | None = egress_option(),
    fail_open: bool = typer.Option(
        False,
        "--fail-open/--fail-closed",
        help="On malformed input or an internal failure: let the action proceed, or deny it.",
    ),
    mode: str | None = typer.Option(
        None,
        "--mode",
        metavar="[enforce|observe]",
        help="enforce (the default) denies what the rules deny; observe records and reports, "
        "but does not deny skill loads. The same option as for 'agbom serve' and 'agbom replay'.",
    ),
    observe: bool = typer.Option(
        False, "--observe", hidden=True, help="The older spelling of --mode observe."
    ),
    agent_id: str | None = typer.Option(
        None, "--agent-id", envvar="AGBOM_AGENT_ID", help="Agent id when the event has none."
    ),
    hook_id: str | None = typer.Option(
        None, "--hook-id", help="Meerkat: the hook entry id to put in a Deny."
    ),
    server: str | None = typer.Option(
        None,
        "--server",
        metavar="URL",
        help="Forward to a running 'agbom serve' at URL (thin mode).",
    ),
    timeout: float = typer.Option(
        3.0,
        "--timeout",
        help="Thin mode: seconds for the whole exchange, the read of the skill a Claude Code "
        "Skill call loads included.",
    ),
    token_file: Path | None = typer.Option(
        None,
        "--token-file",
        metavar="FILE",
        envvar="AGBOM_HOOK_TOKEN_FILE",
        help="Thin mode: the bearer token of 'agbom serve --hook-token-file', in a file only "
        "its owner can read.",
    ),
) -> None:
    """Decide one hook event in process and answer it in the runtime's format."""
    from agbom.adapters import ADAPTERS

    if mode is not None:
        mode = choice(mode, ("enforce", "observe"), "--mode")
        if observe and mode != "observe":
            typer.echo(
                "agbom: error: --observe is --mode observe; not with --mode enforce", err=True
            )
            raise typer.Exit(2)
        observe = mode == "observe"
    if runtime not in ADAPTERS:
        typer.echo(
            f"agbom: error: unknown runtime {runtime!r} (known: {', '.join(ADAPTERS)})", err=True
        )
        raise typer.Exit(2)
    with_default = with_default_rules(rules, no_default_rules)
    if server is not None and (packs or egress_allow or known_tools or egress):
        typer.echo(
            "agbom: error: the pack options are the server's (thin mode: --server); give them "
            "to 'agbom serve'",
            err=True,
        )
        raise typer.Exit(2)
    from agbom.guardian.pack_selection import PackChoiceError, pack_settings

    try:
        settings = pack_settings(packs, egress_allow, known_tools, egress)
    except PackChoiceError as exc:
        raise typer.BadParameter(str(exc), param_hint="--pack") from None
    if server is not None:
        # Reached only when called without the fast path (e.g. through CliRunner).
        from agbom.adapters.thin import main as thin_main

        args = [runtime, "--server", server, "--timeout", str(timeout)]
        args.append("--fail-open" if fail_open else "--fail-closed")
        if agent_id:
            args += ["--agent-id", agent_id]
        if hook_id:
            args += ["--hook-id", hook_id]
        if token_file is not None:
            args += ["--token-file", str(token_file)]
        raise typer.Exit(thin_main(args))
    from agbom.adapters.standalone import run

    code = run(
        runtime,
        db=db,
        rules=rules,
        with_default_rules=with_default,
        fail_open=fail_open,
        observe=observe,
        agent_id=agent_id,
        hook_id=hook_id,
        packs=settings,
    )
    raise typer.Exit(code)
