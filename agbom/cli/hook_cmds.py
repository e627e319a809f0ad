"""``agbom hook RUNTIME``: a command hook handler for Oscova, Meerkat and Claude Code.

Standalone mode (this module) opens the store and rules and decides in process. Thin mode
(``--server URL``) never reaches typer: :func:`agbom.cli.main` hands it to
:mod:`agbom.adapters.thin` before anything heavy is imported.

Whatever goes wrong (unreadable store, bad rules, malformed event), the runtime gets an answer
in its own format, per ``--fail-open`` / ``--fail-closed``; the reason goes to stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from agbom.adapters.headers import MAX_EVENT_BYTES
from agbom.cli.common import no_default_rules_option, rules_option, with_default_rules
from agbom.display import visible

if TYPE_CHECKING:
    from agbom.adapters.interface import HookReply

# One byte more than the limit is read, so that an oversized event is seen as such (and denied).
MAX_STDIN_BYTES = MAX_EVENT_BYTES


def register(app: typer.Typer) -> None:
    """Add ``hook`` to ``app``."""
    app.command(
        "hook",
        help=(
            "Answer one hook event of an agent runtime (oscova, meerkat, claude-code): the event "
            "on stdin, the runtime's answer on stdout and exit code. With --server URL the event "
            "is forwarded to a running 'agbom serve' (thin mode, fast start); without, it is "
            "decided in process with --db and --rules."
        ),
    )(hook_cmd)


def hook_cmd(
    runtime: str = typer.Argument(
        ..., metavar="[oscova|meerkat|claude-code]", help="The runtime whose hook event it is."
    ),
    db: str | None = typer.Option(
        None,
        "--db",
        envvar="AGBOM_DB",
        help="SQLite store file (created when missing). Default: "
        "$XDG_DATA_HOME/agbom/agbom.db (~/.local/share/agbom/agbom.db), never the folder the "
        "runtime runs the hook in.",
    ),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    fail_open: bool = typer.Option(
        False,
        "--fail-open/--fail-closed",
        help="On malformed input or an internal failure: let the action proceed, or deny it.",
    ),
    observe: bool = typer.Option(
        False, "--observe", help="Record and report, but do not deny skill loads (observe mode)."
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
    timeout: float = typer.Option(3.0, "--timeout", help="Thin mode: seconds to wait."),
) -> None:
    """Decide one hook event in process and answer it in the runtime's format."""
    from agbom.adapters import ADAPTERS, get_adapter

    if runtime not in ADAPTERS:
        typer.echo(
            f"agbom: error: unknown runtime {runtime!r} (known: {', '.join(ADAPTERS)})", err=True
        )
        raise typer.Exit(2)
    with_default = with_default_rules(rules, no_default_rules)
    if server is not None:
        # Reached only when called without the fast path (e.g. through CliRunner).
        from agbom.adapters.thin import main as thin_main

        args = [runtime, "--server", server, "--timeout", str(timeout)]
        args.append("--fail-open" if fail_open else "--fail-closed")
        if agent_id:
            args += ["--agent-id", agent_id]
        if hook_id:
            args += ["--hook-id", hook_id]
        raise typer.Exit(thin_main(args))
    adapter = get_adapter(runtime)
    raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    env = dict(os.environ)
    if agent_id:
        env["AGBOM_AGENT_ID"] = agent_id
    if hook_id:
        env["AGBOM_HOOK_ID"] = hook_id
    guardian: Any = None
    if len(raw) > MAX_STDIN_BYTES:
        # Denied before the store is even opened, in both failure modes (as in thin mode).
        from agbom.adapters.headers import TOO_LARGE_CODE, too_large_reason

        too_large = adapter.malformed(
            too_large_reason(), fail_open=False, code=TOO_LARGE_CODE, hook_id=hook_id or "agbom"
        )
        _answer(too_large)
    try:
        from agbom.guardian import build_guardian

        store = db if db is not None else default_hook_store()
        guardian = build_guardian(
            store,
            rules,
            mode="observe" if observe else "enforce",
            with_default_rules=with_default,
        )
    except Exception as exc:  # noqa: BLE001 - the runtime must get an answer in its format
        from agbom.adapters import replies
        from agbom.errors import AgbomError

        why = exc.diagnostics() if isinstance(exc, AgbomError) else f"{type(exc).__name__}: {exc}"
        reply = adapter.malformed(
            f"cannot start the Guardian: {why}",
            fail_open=fail_open,
            event=replies.event_name(runtime, raw[:MAX_STDIN_BYTES]),
            code="agbom_error",
        )
    else:
        try:
            reply = adapter.handle(raw, guardian, env=env, fail_open=fail_open)
        finally:
            close = getattr(getattr(guardian, "store", None), "close", None)
            if callable(close):
                close()
    _answer(reply)


def default_hook_store() -> Path:
    """Where a standalone hook keeps its store without --db: the user's data folder.

    A runtime runs hooks in the project folder; a store there would land in the repository.
    """
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if Path(base).is_absolute() else Path.home() / ".local" / "share"
    folder = root / "agbom"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder / "agbom.db"


def _answer(reply: HookReply) -> NoReturn:
    """Write ``reply`` the way the runtime reads it, and exit with its code."""
    if reply.stderr:
        # Reasons quote what the agent sent (tool names, skill ids): no raw control bytes.
        typer.echo(visible(reply.stderr.rstrip("\n")), err=True)
    if reply.body:
        out = sys.stdout.buffer
        out.write(reply.body if reply.body.endswith(b"\n") else reply.body + b"\n")
        out.flush()
    raise typer.Exit(reply.exit_code)
