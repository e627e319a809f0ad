"""``agbom servers ...``: approve MCP servers with the pin of their tool set.

An approval records the server's whole tool set (each tool's name, description and
inputSchema, in canonical form) and its pin (agbom/scan/lock.py). A running ``agbom serve``
reads the approvals at each decision: an AgBOM or a wrapped ``tools/list`` whose tool set for
the server is not the approved one is judged by AGB-LOCK-001, as with ``serve --lock``.
Every command opens the store named by ``--db``, does one thing and closes it.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import checked_identifier, db_option, store_note, write_output
from agbom.cli.decisions import by_option, decision_actor, decision_reason
from agbom.display import table, to_terminal, visible
from agbom.errors import InputError
from agbom.store import ServerPin, Store, format_timestamp, open_store

servers_app = typer.Typer(
    name="servers",
    help="Approve and revoke MCP servers, pinned by their tool set.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Add the ``servers`` group to ``app``."""
    app.add_typer(servers_app, name="servers")


class OutputFormat(StrEnum):
    """How list-like commands print."""

    TABLE = "table"
    JSON = "json"


def _format_option() -> Any:
    return typer.Option(OutputFormat.TABLE, "--format", help="table for people, json for scripts.")


def _actor(by: str | None) -> str:
    return decision_actor(by)


def _json(data: Any) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def _pin_json(pin: ServerPin) -> dict[str, Any]:
    return {
        "server": pin.server,
        "status": pin.status,
        "pin": {k: pin.pin.get(k) for k in ("algorithm", "value", "count")},
        "tools": sorted(str(name) for name in (pin.pin.get("tools") or {})),
        "purl": pin.purl,
        "version": pin.version,
        "decided_by": pin.decided_by,
        "decided_at": format_timestamp(pin.decided_at),
        "reason": pin.reason,
    }


# -- where the tool set comes from ------------------------------------------------------------


def _from_file(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    from agbom.scan.lock import read_snapshot

    snapshot = read_snapshot(path)  # LockError (InputError): one line naming the file
    return list(snapshot.tools), snapshot.server


def _from_session(
    store: Store, server: str, session_id: str
) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """The tool set the session's current AgBOM (the Guardian's last accepted one) lists for
    ``server``, with the server's purl and version."""
    from agbom.inventory import AgBOM, ComponentType, InvalidAgBOM
    from agbom.scan.lock import server_tools

    stored = store.agbom_version(session_id)
    if stored is None:
        raise InputError(f"--from-session {session_id}: the store holds no AgBOM of that session")
    try:
        agbom = AgBOM.from_document(stored["document"], source=f"session {session_id}")
    except InvalidAgBOM as exc:
        raise InputError(f"--from-session {session_id}: its stored AgBOM is invalid ({exc})")
    wanted = server.casefold()
    servers = agbom.of_type(ComponentType.MCP_SERVER)
    matched = [s for s in servers if s.id.casefold() == wanted] or [
        s for s in servers if s.name.casefold() == wanted
    ]
    if len(matched) != 1:
        what = "no MCP server" if not matched else f"{len(matched)} MCP servers"
        raise InputError(f"--from-session {session_id}: {what} named {server!r} in its AgBOM")
    tools = server_tools(agbom, matched[0])
    if tools is None:
        raise InputError(
            f"--from-session {session_id}: the AgBOM lists no tools for {server!r}; "
            "give a tools/list snapshot with --tools-from"
        )
    version = matched[0].data.get("version")
    purl = matched[0].data.get("purl")
    return (
        tools,
        purl if isinstance(purl, str) else None,
        version if isinstance(version, str) else None,
    )


# -- commands --------------------------------------------------------------------------------


@servers_app.command("approve")
def approve_cmd(
    server: str = typer.Argument(..., help="The MCP server's component id or name."),
    tools_from: Path | None = typer.Option(
        None,
        "--tools-from",
        help="An offline tools/list snapshot of the server (JSON).",
        dir_okay=False,
        metavar="FILE",
    ),
    from_session: str | None = typer.Option(
        None,
        "--from-session",
        help="Pin the tool set this session's current AgBOM lists.",
        metavar="SESSION",
    ),
    reason: str | None = typer.Option(
        None, "--reason", help="Why (required; kept in the history).", show_default=False
    ),
    purl: str | None = typer.Option(None, "--purl", help="The server's package (recorded)."),
    version: str | None = typer.Option(None, "--version", help="The package version."),
    db: str = db_option(),
    by: str | None = by_option(),
) -> None:
    """Approve a server with its tool set pinned; a later approval replaces the pin."""
    from agbom.scan.lock import tool_set_pin

    if (tools_from is None) == (from_session is None):
        raise typer.BadParameter(
            "give exactly one of --tools-from FILE and --from-session SESSION",
            param_hint="'--tools-from'",
        )
    checked_identifier(server, "SERVER")
    reason, actor = decision_reason(reason), _actor(by)  # usage errors before the store
    note = store_note(db)
    with open_store(db) as store:
        if tools_from is not None:
            tools, named = _from_file(tools_from)
            # A snapshot that names its server (not just by its file name) must name this one.
            said = named is not None and tools_from.name.split(".", 1)[0] != named
            if said and named is not None and named.casefold() != server.casefold():
                raise InputError(
                    f"--tools-from {tools_from}: the snapshot is of server {named!r}, "
                    f"not {server!r}"
                )
        else:
            assert from_session is not None
            tools, found_purl, found_version = _from_session(store, server, from_session)
            purl, version = purl or found_purl, version or found_version
        pin = tool_set_pin(tools)
        pin["definitions"] = sorted(tools, key=lambda t: str(t["name"]))
        before = store.server_pin(server)
        stored = store.approve_server(
            server, pin=pin, actor=actor, reason=reason, purl=purl, version=version
        )
    was = before.status if before is not None else "unknown"
    changed = "" if before is None or before.value == stored.value else " (new tool set)"
    typer.echo(
        visible(
            f"{stored.server}: {was} -> approved, {stored.pin.get('count')} tools, "
            f"pin sha256:{stored.value[:16]}{changed}"
        ),
        err=True,
    )
    typer.echo(note, err=True)


@servers_app.command("revoke")
def revoke_cmd(
    server: str = typer.Argument(..., help="The MCP server's component id or name."),
    reason: str | None = typer.Option(
        None, "--reason", help="Why (required; kept in the history).", show_default=False
    ),
    db: str = db_option(),
    by: str | None = by_option(),
) -> None:
    """Withdraw a server's approval: its tool set is no longer pinned."""
    reason, actor = decision_reason(reason), _actor(by)
    with open_store(db, create=False) as store:
        stored = store.revoke_server(server, actor=actor, reason=reason)
    typer.echo(visible(f"{stored.server}: approved -> revoked"), err=True)


@servers_app.command("list")
def list_cmd(db: str = db_option(), fmt: OutputFormat = _format_option()) -> None:
    """Every approved or revoked server and its pin."""
    with open_store(db, create=False) as store:
        pins = store.list_server_pins()
    if fmt is OutputFormat.JSON:
        write_output(_json([_pin_json(p) for p in pins]), None)
    elif pins:
        rows = [
            [
                p.server,
                p.status,
                f"sha256:{p.value[:16]}",
                str(p.pin.get("count")),
                p.decided_by,
                format_timestamp(p.decided_at) or "-",
                p.reason or "",
            ]
            for p in pins
        ]
        headers = ["SERVER", "STATUS", "PIN", "TOOLS", "DECIDED_BY", "AT", "REASON"]
        write_output(table(headers, rows, tty=to_terminal()) + "\n", None)
    else:
        typer.echo("no servers are approved", err=True)


@servers_app.command("history")
def history_cmd(
    server: str | None = typer.Argument(None, help="Only this server."),
    db: str = db_option(),
    fmt: OutputFormat = _format_option(),
) -> None:
    """Every approval and revocation, oldest first."""
    with open_store(db, create=False) as store:
        history = store.server_history(server)
    if fmt is OutputFormat.JSON:
        write_output(_json(history), None)
    elif history:
        rows = [
            [
                h["at"],
                h["server"],
                f"{h['from_status'] or '-'} -> {h['to_status']}",
                f"sha256:{str(h['pin'].get('value'))[:16]}",
                h["actor"],
                h["reason"] or "",
            ]
            for h in history
        ]
        headers = ["AT", "SERVER", "CHANGE", "PIN", "ACTOR", "REASON"]
        write_output(table(headers, rows, tty=to_terminal()) + "\n", None)
    else:
        typer.echo("no server approvals yet", err=True)
