"""``replay``, ``audit ...`` and ``inventory ...``: the Guardian's commands besides ``serve``
(cli/serve_cmds.py)."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import (
    choice,
    db_option,
    exporter_for,
    no_default_rules_option,
    output_format,
    output_option,
    read_bytes,
    rules_option,
    store_note,
    with_default_rules,
    write_output,
)
from agbom.cli.guardian_options import (
    check_key_options,
    guardian_config,
    key_id_option,
    keys_file_option,
    secret_encoding_option,
)
from agbom.display import table, to_terminal, visible
from agbom.errors import AgbomError, InputError

audit_app = typer.Typer(
    help="Inspect and verify the audit hash chains in the store.", no_args_is_help=True
)
inventory_app = typer.Typer(
    help="Fleet inventory: agents, sessions and components seen by the Guardian.",
    no_args_is_help=True,
)


class ChainBroken(AgbomError):
    exit_code = 1


def _hashed_form(entry: dict[str, Any]) -> dict[str, Any]:
    """A stored entry as it was hashed, plus its hashes (the store's row number dropped)."""
    return {k: v for k, v in entry.items() if k != "seq"}


def replay(
    file: Path = typer.Argument(
        ...,
        metavar="FILE.jsonl",
        help="JSON-RPC requests, one per line (.jsonl); - for stdin.",
    ),
    db: str = db_option(),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    secret_file: Path | None = typer.Option(
        None,
        "--secret-file",
        metavar="FILE",
        help="Key material to verify the recording's signatures (as 'serve --secret-file').",
    ),
    key_id: str | None = key_id_option(),
    keys_file: Path | None = keys_file_option(),
    secret_encoding: str = secret_encoding_option(),
    mode: str = typer.Option(
        "enforce",
        "--mode",
        metavar="[enforce|observe]",
        help="enforce, or observe (record unknown skills and allow them).",
    ),
    strict_inventory: bool = typer.Option(
        False, "--strict", help="Deny tool calls for tools missing from the session's AgBOM."
    ),
    fail_on_deny: bool = typer.Option(
        False, "--fail-on-deny", help="Exit 1 when any response is a deny or an error."
    ),
    ignore_skew: bool = typer.Option(
        True,
        "--ignore-skew/--check-skew",
        help="Recorded sessions are old: by default timestamps are not checked against the clock.",
    ),
    output_format: str | None = typer.Option(
        None,
        "--format",
        metavar="[table|jsonl]",
        help="table (step, method, decision, reason codes) or jsonl (the raw responses); "
        "default: table on a terminal, jsonl otherwise.",
    ),
) -> None:
    """Feed recorded requests through the Guardian in process, in order.

    The whole file is checked first: a line that is not a JSON-RPC request, or a session the
    store already holds, stops the replay before anything is written.
    """
    from agbom.guardian import build_guardian
    from agbom.transports.interface import Limits, handle_body

    mode = choice(mode, ("enforce", "observe"), "--mode")
    fmt = choice(
        output_format or ("table" if sys.stdout.isatty() else "jsonl"),
        ("table", "jsonl"),
        "--format",
    )
    with_default = with_default_rules(rules, no_default_rules)
    config = guardian_config(
        strict_inventory=strict_inventory,
        skew_window_ms=10**15 if ignore_skew else None,
        secret_encoding=choice(secret_encoding, ("raw", "hex", "base64"), "--secret-encoding"),
    )
    check_key_options(secret_file, keys_file)
    requests = _recorded_requests(file, read_bytes(file))
    note = store_note(db)
    guardian = build_guardian(
        db,
        rules,
        mode=mode,
        secret_file=secret_file,
        key_id=key_id,
        keys_file=keys_file,
        config=config,
        with_default_rules=with_default,
    )
    try:
        _refuse_known_sessions(guardian.store, requests, db)
        limits = Limits()
        denied = 0
        rows: list[tuple[str, str, str, str]] = []
        out = sys.stdout.buffer
        for number, line, message in requests:
            response = handle_body(guardian, line, limits)
            parsed = orjson.loads(response)
            items = parsed if isinstance(parsed, list) else [parsed]
            sent = message if isinstance(message, list) else [message]
            for request, item in zip(sent, items, strict=False):
                decision, codes = _outcome(item)
                if decision in ("deny", "error"):
                    denied += 1
                method = request.get("method") if isinstance(request, dict) else None
                rows.append((str(number), str(method or "?"), decision, codes))
            if fmt == "jsonl":
                out.write(response + b"\n")
        out.flush()
    finally:
        guardian.store.close()
    typer.echo(note, err=True)
    if fmt == "table":
        _print_replay_table(rows)
    if fail_on_deny and denied:
        typer.echo(f"agbom: {denied} request(s) denied or refused", err=True)
        raise typer.Exit(1)


def _recorded_requests(file: Path, data: bytes) -> list[tuple[int, bytes, Any]]:
    """Every non-blank line of a recording, parsed; one located error for the first bad one."""
    requests: list[tuple[int, bytes, Any]] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            what = "binary data" if b"\x00" in line else f"not JSON ({exc})"
            raise InputError(
                f"{file}:{number}: {what}; a recording holds one JSON-RPC request per line"
            ) from exc
        items = message if isinstance(message, list) else [message]
        if not items or not all(isinstance(i, dict) and "method" in i for i in items):
            raise InputError(f"{file}:{number}: not a JSON-RPC request (no method)")
        requests.append((number, line, message))
    if not requests:
        raise InputError(f"{file}: no requests to replay (the file is empty)")
    return requests


def _refuse_known_sessions(store: Any, requests: list[tuple[int, bytes, Any]], db: str) -> None:
    seen: set[str] = set()
    for number, _, message in requests:
        for item in message if isinstance(message, list) else [message]:
            metadata = (
                (item.get("params") or {}).get("metadata") if isinstance(item, dict) else None
            )
            sid = metadata.get("session_id") if isinstance(metadata, dict) else None
            if not isinstance(sid, str) or sid in seen:
                continue
            seen.add(sid)
            stored = store.get_session(sid)
            if stored is not None:
                state = "already ended" if stored.get("status") == "closed" else "already open"
                raise InputError(
                    f"session {visible(sid)} (line {number}) is {state} in {store.location}; "
                    "replay into a new store (--db NEW.db)"
                )


def _outcome(item: Any) -> tuple[str, str]:
    """A response's decision (or ``error``) and its reason codes, for the table."""
    if not isinstance(item, dict):
        return "error", ""
    if "error" in item:
        error = item["error"] or {}
        reason = (error.get("data") or {}).get("reason") or error.get("message") or ""
        return "error", f"{error.get('code')} {reason}".strip()
    result = item.get("result") or {}
    if "decision" not in result:
        return "allow", "handshake" if "negotiated_version" in result else ""
    return str(result["decision"]), ", ".join(str(c) for c in result.get("reason_codes") or [])


def _print_replay_table(rows: list[tuple[str, str, str, str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("line", "method", "decision", "reason codes"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(visible(cell) for cell in row))
    Console(highlight=False).print(table)


@audit_app.command("export")
def audit_export(
    session_id: str = typer.Argument(..., help="Session whose chain to print."),
    db: str = db_option(),
    output: Path | None = output_option(),
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        metavar="[json|ocsf]",
        help="json (default): the entries as a JSON array (each as hashed, plus its hashes); "
        "ocsf: OCSF 1.9 events, one JSON object per line (the ACS-Trace mapping; see "
        "docs/telemetry.md).",
    ),
    allow_findings: bool = typer.Option(
        False,
        "--allow-findings",
        help="With --format ocsf: record allows as Detection Findings too (by default only "
        "deny, modify, ask and defer are).",
    ),
    bundle: Path | None = typer.Option(
        None,
        "--bundle",
        metavar="OUT",
        help="Write a signed evidence bundle instead (chain, signed head, AgBOM versions, "
        "approvals; needs --signing-key). docs/evidence.md.",
    ),
    signing_key: Path | None = typer.Option(
        None,
        "--signing-key",
        metavar="PREFIX.key",
        help="With --bundle: the exporter's key, which signs the bundle.",
    ),
    head_key: Path | None = typer.Option(
        None,
        "--head-key",
        metavar="PREFIX.key",
        help="With --bundle, for a session the Guardian has not sealed: the Guardian's key, "
        "to sign the chain head as it stands (not the exporter's key).",
    ),
) -> None:
    """Print a session's audit chain: its entries (JSON), or its OCSF events (JSON lines)."""
    from agbom.store import open_store, redact_location

    if bundle is not None:
        from agbom.cli.evidence_cmds import export_bundle

        if fmt is not None or output is not None or allow_findings:
            raise typer.BadParameter("--bundle takes no --format or -o", param_hint="--bundle")
        export_bundle(session_id, db, bundle, signing_key, head_key)
        return
    if signing_key is not None or head_key is not None:
        raise typer.BadParameter("needs --bundle", param_hint="--signing-key/--head-key")
    given = None if fmt is None else choice(fmt, ("json", "ocsf"), "--format")
    fmt = output_format(given, output, default="json", formats=("json", "ocsf"))
    if allow_findings and fmt != "ocsf":
        raise typer.BadParameter("needs --format ocsf", param_hint="--allow-findings")
    with open_store(db, create=False) as store:
        entries = store.chain_entries(session_id)
        session = store.get_session(session_id) if entries else None
    if not entries:
        raise InputError(f"no audit chain for session {session_id} in {redact_location(db)}")
    entries = [_hashed_form(e) for e in entries]
    if fmt == "ocsf":
        from agbom.telemetry.ocsf import chain_events

        known = session or {"session_id": session_id}
        events = chain_events(known, entries, allow_findings=allow_findings)
        write_output(b"".join(orjson.dumps(event) + b"\n" for event in events), output)
        return
    write_output(orjson.dumps(entries, option=orjson.OPT_INDENT_2), output)


@audit_app.command("verify")
def audit_verify(
    session_id: str | None = typer.Argument(None, help="One session; default: every chain."),
    db: str = db_option(),
    expected_head: str | None = typer.Option(
        None,
        "--expected-head",
        help="The chain_hash the client last received (with SESSION_ID): catches entries cut "
        "from the end of an open session's chain.",
    ),
    bundle: Path | None = typer.Option(
        None,
        "--bundle",
        metavar="FILE",
        help="Verify an evidence bundle offline instead (with --guardian-key and "
        "--exporter-key; no store, no secret). docs/evidence.md.",
    ),
    guardian_keys: list[Path] | None = typer.Option(
        None,
        "--guardian-key",
        metavar="FILE",
        help="With --bundle: a public key (PEM or JWKS) of the Guardian, which signs chain "
        "heads; repeat for a rotation.",
    ),
    exporter_keys: list[Path] | None = typer.Option(
        None,
        "--exporter-key",
        metavar="FILE",
        help="With --bundle: a public key (PEM or JWKS) of whoever exported the bundle; "
        "repeat for several.",
    ),
    open_session: bool = typer.Option(
        False,
        "--open",
        help="With --bundle: accept a checkpoint of a session that has not ended (its head "
        "attests the chain up to its last entry only).",
    ),
    public_keys: list[Path] | None = typer.Option(
        None,
        "--public-key",
        "--jwks",
        metavar="FILE",
        help="A trusted public key (PEM) or JWKS; repeat for several. With --bundle: check the "
        "bundle; else: check each chain against the head the Guardian signed at sessionEnd.",
    ),
) -> None:
    """Recompute every chain; report the first broken link; exit 1 when any chain is broken.

    An ended session is also checked against the head it was sealed with, so entries cut from
    its end are found; for an open session pass the last chain_hash a client received.
    """
    from agbom.protocol import verify_chain
    from agbom.store import open_store, redact_location

    if bundle is not None:
        from agbom.cli.evidence_cmds import verify_bundle_file

        if session_id is not None or expected_head is not None:
            raise typer.BadParameter(
                "takes no SESSION_ID or --expected-head", param_hint="--bundle"
            )
        if public_keys:
            raise typer.BadParameter(
                "a bundle is checked with keys by role: --guardian-key (the chain head) and "
                "--exporter-key (the bundle)",
                param_hint="--public-key",
            )
        verify_bundle_file(
            bundle, guardian_keys or [], exporter_keys or [], open_session=open_session
        )
        return
    if guardian_keys or exporter_keys or open_session:
        raise typer.BadParameter("needs --bundle", param_hint="--guardian-key/--exporter-key")
    if public_keys:
        # Against the heads the Guardian signed at sessionEnd (docs/evidence.md).
        from agbom.cli.evidence_cmds import verify_signed_chains

        if expected_head is not None:
            raise typer.BadParameter("takes no --expected-head", param_hint="--public-key")
        if verify_signed_chains(db, session_id, public_keys):
            raise ChainBroken("a chain does not verify against its signed head")
        return
    if expected_head is not None and session_id is None:
        raise typer.BadParameter("needs a SESSION_ID", param_hint="--expected-head")
    with open_store(db, create=False) as store:
        sessions = [session_id] if session_id else store.chain_session_ids()
        if session_id and not store.chain_entries(session_id):
            raise InputError(f"no audit chain for session {session_id} in {redact_location(db)}")
        broken = 0
        for sid in sessions:
            entries = [_hashed_form(e) for e in store.chain_entries(sid)]
            stored = store.get_session(sid) or {}
            head = expected_head if sid == session_id and expected_head else None
            failure = verify_chain(entries, expected_head=head or stored.get("sealed_head"))
            if failure is None:
                tip = entries[-1]["entry_hash"] if entries else "-"
                sealed = "  sealed" if stored.get("sealed_head") else ""
                typer.echo(f"ok      {visible(sid)}  {len(entries)} entries  head {tip}{sealed}")
            else:
                broken += 1
                typer.echo(
                    f"BROKEN  {visible(sid)}  at entry index {failure.index}"
                    f" (entry_id {visible(failure.entry_id)}): {visible(failure.reason)}"
                )
    if broken:
        raise ChainBroken(f"{broken} of {len(sessions)} chain(s) broken")
    typer.echo(f"agbom: {len(sessions)} chain(s) verified", err=True)


def _cell(row: dict[str, Any], column: str) -> str:
    value = row.get(column)
    if isinstance(value, list | tuple):  # agents: coding-agent,ci-bot (not a Python list)
        return ",".join(str(v) for v in value) or "-"
    return "-" if value is None else str(value)  # the table escapes agent-controlled ids


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[_cell(row, c) for c in columns] for row in rows]
    return table([c.upper() for c in columns], cells, tty=to_terminal())


def _emit(rows: list[dict[str, Any]], columns: list[str], fmt: str) -> None:
    if fmt == "json":
        write_output(orjson.dumps(rows, option=orjson.OPT_INDENT_2, default=str), None)
    elif fmt == "csv":
        from agbom.cli.fleet_listing import csv_text

        write_output(csv_text(rows, columns), None)
    else:
        write_output(_table(rows, columns), None)


def _list_format_option() -> Any:
    return typer.Option("table", "--format", metavar="[table|json]", help="table or json.")


def _list_format(fmt: str) -> str:
    """Checked before the store is opened: a bad value is a usage error either way."""
    return choice(fmt, ("table", "json"), "--format")


@inventory_app.command("agents")
def inventory_agents(db: str = db_option(), fmt: str = _list_format_option()) -> None:
    """Agents seen by the Guardian, with session counts and when first and last seen."""
    from agbom.store import open_store

    fmt = _list_format(fmt)

    from agbom.store._inventory_logic import agbom_status

    with open_store(db, create=False) as store:
        rows = store.list_agents()
        for row in rows:
            status = agbom_status(
                store.latest_agbom_for_agent(row["agent_id"], include_refused=True)
            )
            row.update(status)
            row["findings"] = ",".join(sorted({f["rule_id"] for f in status["findings"]})) or None
    _emit(
        rows,
        ["agent_id", "sessions", "first_seen", "last_seen", "status", "agbom_version", "findings"],
        fmt,
    )


@inventory_app.command("sessions")
def inventory_sessions(
    db: str = db_option(),
    agent: str | None = typer.Option(None, "--agent", help="Only this agent's sessions."),
    fmt: str = _list_format_option(),
) -> None:
    """Sessions with their agent, parent and status."""
    from agbom.store import open_store

    fmt = _list_format(fmt)

    with open_store(db, create=False) as store:
        rows = store.list_sessions(agent)
    _emit(
        rows,
        ["session_id", "agent_id", "parent_session_id", "status", "started_at", "ended_at"],
        fmt,
    )


@inventory_app.command("components")
def inventory_components(
    db: str = db_option(),
    type_: str | None = typer.Option(
        None, "--type", metavar="TYPE", help="Only this type: model, mcp_server, tool, skill, ..."
    ),
    name: str | None = typer.Option(None, "--name", help="Only components of this name."),
    fleet: bool = typer.Option(
        False,
        "--fleet",
        help="The distinct skills, MCP servers, models and A2A peers of every agent's latest "
        "accepted AgBOM, with how many agents use each and its approval status.",
    ),
    status: str | None = typer.Option(
        None,
        "--status",
        metavar="STATUS",
        help="With --fleet: approved, expired, pending, denied, revoked, unreviewed (skills) "
        "or unapproved (MCP servers).",
    ),
    search: str | None = typer.Option(
        None, "--search", metavar="TEXT", help="With --fleet: a substring of the name, ref or purl."
    ),
    host: str | None = typer.Option(
        None,
        "--host",
        metavar="PLATFORM",
        help="With --fleet: only the agents of this host platform (claude-code, cursor, codex, "
        "...: what agent ids name before their first '/').",
    ),
    severity: str | None = typer.Option(
        None,
        "--severity",
        metavar="SEVERITY",
        help="With --fleet: only components with a rule finding at least this severe (info, "
        "low, medium, high, critical), as the Guardian found them in the latest AgBOMs.",
    ),
    fmt: str = typer.Option(
        "table", "--format", metavar="[table|json|csv]", help="table, json or csv."
    ),
) -> None:
    """Which agents use which models, MCP servers, tools and skills, and since when."""
    from agbom.inventory import ComponentType
    from agbom.store import open_store

    fmt = choice(fmt, ("table", "json", "csv"), "--format")
    if fleet:
        _fleet_components(db, type_, name, status, search, fmt, host, severity)
        return
    for given, flag in (
        (status, "--status"), (search, "--search"), (host, "--host"), (severity, "--severity"),
    ):  # fmt: skip
        if given is not None:
            raise typer.BadParameter("needs --fleet", param_hint=flag)
    if type_ is not None:
        type_ = choice(type_, [t.value for t in ComponentType], "--type")

    from agbom.store._inventory_logic import refused_component_entries

    with open_store(db, create=False) as store:
        rows = store.list_components(type_, name)
        for row in rows:
            row["status"], row["findings"] = "accepted", None
        # An agent whose latest AgBOM was refused: what it tried to run is listed too, marked
        # refused with the rule ids that refused it (never counted as in use).
        for agent_row in store.list_agents():
            record = store.latest_agbom_for_agent(agent_row["agent_id"], include_refused=True)
            if record is None or record["accepted"]:
                continue
            rows.extend(
                r
                for r in refused_component_entries(record)
                if (type_ is None or r["type"] == type_)
                and (name is None or fnmatch.fnmatchcase(r["name"], name))
            )
    columns = (
        list(rows[0].keys())
        if rows
        else [
            "component_id", "type", "name", "version", "agents", "first_seen", "last_seen",
            "status", "findings",
        ]
    )  # fmt: skip
    _emit(rows, columns, fmt)


def _fleet_components(
    db: str, type_: str | None, name: str | None, status: str | None, search: str | None,
    fmt: str, host: str | None = None, severity: str | None = None,
) -> None:  # fmt: skip
    from agbom.cli.fleet_listing import COLUMNS, fleet_rows
    from agbom.store import open_store
    from agbom.store._fleet_logic import FLEET_TYPES, STATUSES, check_filter
    from agbom.store._fleet_scan import SEVERITIES

    if name is not None:
        raise typer.BadParameter("--fleet searches with --search", param_hint="--name")
    if type_ is not None:
        type_ = choice(type_, FLEET_TYPES, "--type")
    if status is not None:
        status = choice(status, STATUSES, "--status")
    if severity is not None:
        severity = choice(severity, SEVERITIES, "--severity")
    try:
        check_filter(type_, status, search)  # before the store is opened: a usage error
    except AgbomError as exc:
        raise typer.BadParameter(str(exc), param_hint="--search") from None
    try:
        check_filter(host=host)
    except AgbomError as exc:
        raise typer.BadParameter(str(exc), param_hint="--host") from None
    with open_store(db, create=False) as store:
        rows = fleet_rows(
            store, type=type_, status=status, search=search, host=host, severity=severity
        )
    if fmt != "json":  # a cell of rule ids, as the refused components' column has them
        rows = [{**r, "findings": ",".join(r["findings"]) or None} for r in rows]
    _emit(rows, COLUMNS, fmt)


@inventory_app.command("export")
def inventory_export(
    session_id: str | None = typer.Argument(None, help="Session whose AgBOM to export."),
    agent: str | None = typer.Option(
        None, "--agent", help="The latest AgBOM of this agent instead."
    ),
    version: int | None = typer.Option(
        None, "--version", help="An earlier version of the session's AgBOM."
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        metavar="[canonical|cyclonedx-json|cyclonedx-xml|spdx-json]",
        help="canonical (the AgBOM with its hash) or an 'agbom export' format. Default: what "
        "the -o name says (x.cdx.json, x.cdx.xml, x.spdx.json), else canonical.",
        show_default=False,
    ),
    spec_version: str = typer.Option(
        "1.6", "--spec-version", help="CycloneDX spec version: 1.6 or 1.7."
    ),
    db: str = db_option(),
    output: Path | None = output_option(),
) -> None:
    """Serialize a stored AgBOM with the same exporter as ``agbom export``."""
    from agbom.inventory import AgBOM
    from agbom.store import open_store

    fmt = output_format(
        fmt,
        output,
        default="canonical",
        formats=("canonical", "cyclonedx-json", "cyclonedx-xml", "spdx-json"),
        json_formats=("canonical", "agbom-json", "cyclonedx-json", "spdx-json"),
        plain_json="canonical",
    )
    # usage errors before the store is opened
    exporter = (
        None if fmt == "canonical" else exporter_for(fmt, None if "@" in fmt else spec_version)
    )
    if session_id is None and agent is None:
        raise typer.BadParameter("missing a SESSION_ID or --agent AGENT_ID: which AgBOM to export")
    if session_id is not None and agent is not None:
        raise typer.BadParameter("give a SESSION_ID or --agent, not both")
    with open_store(db, create=False) as store:
        record = (
            store.agbom_version(session_id, version)
            if session_id
            else store.latest_agbom_for_agent(agent or "", include_refused=True)
        )
        if record is None and session_id and version is None:
            # No accepted version: the session's last one received, refused, for review.
            from agbom.store._inventory_logic import last_agbom_version

            record = last_agbom_version(store, session_id)
    if record is not None and not record["accepted"]:
        typer.echo(
            visible(f"agbom: version {record['version']} of session {record['session_id']} was "
                    "refused by the Guardian: exported for review, never in use"),
            err=True,
        )  # fmt: skip
    if record is None:
        what = f"session {session_id}" if session_id else f"agent {agent}"
        raise InputError(f"no stored AgBOM for {what}")
    agbom = AgBOM.from_document(record["document"], source="stored AgBOM")
    if exporter is None:
        write_output(
            orjson.dumps(agbom.to_document(with_hash=True), option=orjson.OPT_INDENT_2), output
        )
        return
    write_output(exporter.export(agbom), output)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("replay")(replay)
    from agbom.cli.evidence_cmds import add_audit_commands

    add_audit_commands(audit_app)
    app.add_typer(audit_app, name="audit")
    app.add_typer(inventory_app, name="inventory")
