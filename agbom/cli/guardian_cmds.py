"""``serve``, ``replay``, ``audit ...`` and ``inventory ...``: the Guardian's commands."""

from __future__ import annotations

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
    with_default_rules,
    write_output,
)
from agbom.cli.guardian_options import (
    check_key_options,
    client_capabilities,
    key_id_option,
    keys_file_option,
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


def _guardian_config(**overrides: Any) -> Any:
    from agbom.guardian import GuardianConfig

    return GuardianConfig(**{k: v for k, v in overrides.items() if v is not None})


def serve(
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="Address to bind."),
    port: int = typer.Option(
        8787,
        "--port",
        min=0,
        max=65535,
        metavar="PORT",
        help="TCP port (0: a free one, printed at start).",
    ),
    db: str = db_option(),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    secret_file: Path | None = typer.Option(
        None,
        "--secret-file",
        metavar="FILE",
        help="Deployment key material; session keys are derived from it (HKDF-SHA256).",
    ),
    key_id: str | None = key_id_option(),
    keys_file: Path | None = keys_file_option(),
    require_signatures: bool = typer.Option(
        False, "--require-signatures", help="Refuse unsigned requests with -32004."
    ),
    require_session_start: bool = typer.Option(
        False,
        "--require-session-start",
        help="Refuse steps of a session that sent no steps/sessionStart (-32003 no_session); "
        "by default the first step after the handshake opens the session (spec §8).",
    ),
    client_config: Path | None = typer.Option(
        None,
        "--client-config",
        help="YAML file naming, by agent_id glob, clients that cannot apply MODIFY or answer "
        "ASK (see docs/protocol.md, Clients).",
    ),
    no_modify: list[str] = typer.Option(
        [],
        "--no-modify",
        metavar="AGENT_GLOB",
        help="AGENT_GLOB of clients that cannot apply MODIFY: it becomes DENY "
        "modify_unsupported (ALLOW at postCompact). Repeatable.",
    ),
    no_ask: list[str] = typer.Option(
        [],
        "--no-ask",
        metavar="AGENT_GLOB",
        help="AGENT_GLOB of clients that cannot answer ASK: it becomes DEFER (deny on timeout) "
        "or DENY approver_unavailable. Repeatable.",
    ),
    ask_fallback: str | None = typer.Option(
        None,
        "--ask-fallback",
        metavar="[defer|deny]",
        help="What ASK becomes for those clients: defer (default) or deny.",
    ),
    api_token_file: Path | None = typer.Option(
        None, "--api-token-file", help="Bearer token protecting the /v1 read API."
    ),
    stdio: bool = typer.Option(
        False,
        "--stdio",
        help="Serve JSON-RPC on stdin/stdout (Content-Length framing) instead of HTTP.",
    ),
    mode: str = typer.Option(
        "enforce",
        "--mode",
        metavar="[enforce|observe]",
        help="enforce, or observe (record unknown skills and allow them).",
    ),
    strict_inventory: bool = typer.Option(
        False, "--strict", help="Deny tool calls for tools missing from the session's AgBOM."
    ),
    max_body_bytes: int = typer.Option(
        1024 * 1024, "--max-body-bytes", help="Largest request body accepted."
    ),
    fail_open_hooks: bool = typer.Option(
        False, "--hooks-fail-open", help="Runtime hook endpoints allow on malformed input."
    ),
    skew_window_ms: int = typer.Option(
        300_000, "--skew-window-ms", help="Accepted clock skew of request timestamps."
    ),
    max_load_path_depth: int = typer.Option(
        8, "--max-load-path-depth", help="Deepest skillLoad load_path accepted."
    ),
    allow_overbroad: bool = typer.Option(
        False,
        "--allow-overbroad-capabilities",
        help="Do not deny skills that declare capabilities none of their tools expose.",
    ),
    decision_timeout: float = typer.Option(
        90.0,
        "--decision-timeout",
        help="Seconds a request may wait for the decision process before it is answered "
        "with an error and the process, taken to be stuck, is restarted.",
    ),
    single_process: bool = typer.Option(
        False,
        "--single-process",
        help="Decide in the HTTP process instead of a decision process of its own "
        "(one core; for debugging and constrained hosts).",
    ),
    allowed_hosts: list[str] = typer.Option(
        [],
        "--allowed-host",
        help="Another Host header value to answer (NAME or NAME:PORT; repeatable; '*' for any). "
        "By default only the bound address and localhost, 127.0.0.1, [::1] with the port.",
    ),
    allowed_origins: list[str] = typer.Option(
        [],
        "--allowed-origin",
        help="A browser origin (scheme://host[:port]) allowed to call (repeatable). Requests "
        "carrying any other Origin header are refused.",
    ),
    public_read_api: bool = typer.Option(
        False,
        "--public-read-api",
        help="Serve the /v1 read API without --api-token-file on a non-loopback --host.",
    ),
    header_timeout: float = typer.Option(
        10.0, "--header-timeout", help="Seconds a connection may take to send request headers."
    ),
    body_timeout: float = typer.Option(
        30.0, "--body-timeout", help="Seconds a request may take to send its body."
    ),
    max_connections: int = typer.Option(
        1024,
        "--max-connections",
        help="Open connections at most (lowered to fit the file descriptor limit).",
    ),
    decision_log: Path | None = typer.Option(
        None,
        "--decision-log",
        metavar="FILE",
        help="Append one JSON line per committed decision to FILE (secrets redacted; written "
        "off the decision path: lines a full disk refuses are dropped and counted).",
    ),
    decision_log_max_bytes: int = typer.Option(
        100 * 1024 * 1024,
        "--decision-log-max-bytes",
        metavar="BYTES",
        help="Rotate the decision log past this size (FILE becomes FILE.1, ...).",
    ),
    decision_log_keep: int = typer.Option(
        5,
        "--decision-log-keep",
        metavar="N",
        help="Rotated decision logs kept (FILE.1 ... FILE.N); 0 keeps none.",
    ),
    otlp_endpoint: str | None = typer.Option(
        None,
        "--otlp-endpoint",
        metavar="URL",
        help="Export decisions as OpenTelemetry spans over OTLP/HTTP to URL (e.g. "
        "http://127.0.0.1:4318; needs the otel extra). The ServerHello then accepts acs-trace.",
    ),
    reviewers_file: Path | None = typer.Option(
        None,
        "--reviewers-file",
        metavar="FILE",
        help="Serve the reviewers' page under /ui/ to the reviewers in FILE "
        "('agbom reviewers add'; see docs/reviewing.md).",
    ),
    reviewer_header: str | None = typer.Option(
        None,
        "--reviewer-header",
        metavar="NAME",
        help="With --reviewers-file: trust this request header (set by your reverse proxy) to "
        "name the reviewer. Only when every request comes through that proxy.",
    ),
    ui_secret_file: Path | None = typer.Option(
        None,
        "--ui-secret-file",
        metavar="FILE",
        help="With --reviewers-file: sign the page's sessions with the secret in FILE (mode "
        "0600, 'agbom reviewers secret FILE'). Without it a per-process secret is used: a "
        "restart signs reviewers out, and replicas need the same FILE to share sign-ins.",
    ),
    osv: Path | None = typer.Option(
        None,
        "--osv",
        metavar="PATH",
        help="Deny agbom/snapshot and agbom/changed by the OSV advisories (all.zip or a folder "
        "of OSV JSON, read offline) that affect their packages (AGB-VULN-*). Reloaded on SIGHUP.",
    ),
    lock: Path | None = typer.Option(
        None,
        "--lock",
        metavar="FILE",
        help="Check MCP servers' tool sets in AgBOMs and wrapped tools/list results against "
        "this lock file ('agbom lock'; AGB-LOCK-001). Reloaded on SIGHUP.",
    ),
) -> None:
    """Serve the ACS Guardian: POST /acs (JSON-RPC 2.0), /hooks/RUNTIME, /v1 read API, /healthz."""
    from agbom.guardian import build_guardian
    from agbom.transports.interface import Limits

    mode = choice(mode, ("enforce", "observe"), "--mode")
    with_default = with_default_rules(rules, no_default_rules)
    check_key_options(secret_file, keys_file)
    if require_signatures and secret_file is None and keys_file is None:
        raise typer.BadParameter(
            "needs --secret-file or --keys-file", param_hint="--require-signatures"
        )
    clients = client_capabilities(client_config, no_modify, no_ask, ask_fallback)
    if decision_timeout <= 0:
        raise typer.BadParameter("must be positive", param_hint="--decision-timeout")
    if skew_window_ms <= 0 or max_load_path_depth <= 0 or max_body_bytes <= 0:
        raise typer.BadParameter(
            "--skew-window-ms, --max-load-path-depth and --max-body-bytes must be positive"
        )
    telemetry = _telemetry_options(
        decision_log, decision_log_max_bytes, decision_log_keep, otlp_endpoint
    )
    policy = None
    if not stdio:  # (usage errors first, before the store is opened)
        policy = _front_policy(
            host,
            port,
            allowed_hosts,
            allowed_origins,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            read_api_protected=api_token_file is not None or public_read_api,
        )
    signals = _signals(osv, lock)  # a bad export or lock file: exit 2, before the store opens
    config = _guardian_config(
        # Absolute: a decision process (re)started later reads the same files.
        osv_path=None if osv is None else str(osv.absolute()),
        lock_path=None if lock is None else str(lock.absolute()),
        require_signatures=require_signatures,
        strict_inventory=strict_inventory,
        max_body_bytes=max_body_bytes,
        skew_window_ms=skew_window_ms,
        max_load_path_depth=max_load_path_depth,
        deny_overbroad_capabilities=not allow_overbroad,
        require_session_start=require_session_start,
        **clients.settings(),
        **telemetry,
    )
    limits = Limits(max_body_bytes=max_body_bytes)
    review = _review_config(
        reviewers_file, reviewer_header, rules, with_default, allowed_origins, ui_secret_file
    )
    keys: dict[str, Any] = {"secret_file": secret_file, "key_id": key_id, "keys_file": keys_file}
    loaded = [signals]  # this process's copy; dropped when a decision process loads its own

    def factory(transport: str = "http", *, observed: bool = True) -> Any:
        from dataclasses import replace

        return build_guardian(
            db,
            rules,
            mode=mode,
            # The check below opens no telemetry: the Guardian that decides does.
            config=config if observed else replace(config, decision_log=None, otlp_endpoint=None),
            transport=transport,
            with_default_rules=with_default,
            signals=loaded[0],
            **keys,
        )

    if stdio:
        from agbom.transports.stdio import serve_stdio

        guardian = factory("stdio")
        if signals is not None:
            signals.install_sighup()
        try:
            _, problem = serve_stdio(guardian, sys.stdin.buffer, sys.stdout.buffer, limits)
        finally:
            guardian.store.close()
        if problem is not None:
            raise InputError(f"stdin: {problem}")
        return
    # Fail fast on a bad store, key file or rule pack before binding.
    factory(observed=False).store.close()
    from agbom.transports.http import (
        InProcessDecisions,
        ProcessDecisions,
        read_token_file,
        serve_http,
    )
    from agbom.transports.worker import WorkerSpec

    token = read_token_file(api_token_file) if api_token_file is not None else None
    decisions: InProcessDecisions | ProcessDecisions
    if single_process:
        decisions = InProcessDecisions(factory, limits)
        if signals is not None:
            signals.install_sighup()
    else:
        spec = WorkerSpec.of(
            db,
            rules,
            mode=mode,
            config=config,
            limits=limits,
            with_default_rules=with_default,
            **keys,
        )
        decisions = ProcessDecisions(spec, limits, deadline_s=decision_timeout)
        if signals is not None:
            # The decision process loads the export itself (config.osv_path) and reloads it on
            # the SIGHUP this process passes on to it.
            loaded[0] = signals = None
            _forward_sighup(decisions)

    def announce(bound_host: str, bound_port: int) -> None:
        from agbom.store import redact_location

        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        where = redact_location(db)
        url = f"http://{shown}:{bound_port}/acs"
        typer.echo(f"agbom: serving ACS on {url} (store {where})", err=True)

    serve_http(
        decisions,
        host=host,
        port=port,
        limits=limits,
        api_token=token,
        fail_open_hooks=fail_open_hooks,
        policy=policy,
        announce=announce,
        review=review,
    )


def _signals(osv: Path | None, lock: Path | None) -> Any:
    """The loaded ``--osv`` export and ``--lock`` file, or exit 2 with one line."""
    if osv is None and lock is None:
        return None
    from agbom.guardian.signals import GuardianSignals

    try:
        return GuardianSignals(osv, lock)
    except InputError as exc:
        typer.echo(f"agbom: error: {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(2) from None


def _forward_sighup(decisions: Any) -> None:
    """SIGHUP to ``agbom serve`` reaches the decision process, which reloads."""
    import signal

    signal.signal(signal.SIGHUP, lambda _n, _f: decisions.process.send_signal(signal.SIGHUP))


def _review_config(
    reviewers_file: Path | None,
    header: str | None,
    rules: Path | None,
    with_default: bool,
    allowed_origins: list[str],
    secret_file: Path | None = None,
) -> Any:
    """The review page's settings (agbom/review), or None when it is off."""
    if reviewers_file is None:
        if header is not None or secret_file is not None:
            hint = "--reviewer-header" if header is not None else "--ui-secret-file"
            raise typer.BadParameter("needs --reviewers-file", param_hint=hint)
        return None
    from agbom.review.app import ReviewConfig
    from agbom.review.reviewers import load
    from agbom.review.secret import load_secrets

    load(reviewers_file)  # one line now for a missing or broken file, not at the first sign-in
    if secret_file is not None:
        load_secrets(secret_file)  # the same for the secret file
    else:
        typer.echo(
            "agbom: review page: sessions are signed with a secret of this process only "
            "(a restart signs reviewers out; replicas need --ui-secret-file)",
            err=True,
        )
    try:
        return ReviewConfig(
            reviewers_file.absolute(),
            identity_header=header,
            secret_file=None if secret_file is None else secret_file.absolute(),
            rules_dir=rules,
            with_default_rules=with_default,
            allowed_origins=frozenset(o.strip().lower().rstrip("/") for o in allowed_origins),
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--reviewer-header") from None


def _telemetry_options(
    decision_log: Path | None, max_bytes: int, keep: int, otlp_endpoint: str | None
) -> dict[str, Any]:
    """The GuardianConfig settings of ``--decision-log*`` and ``--otlp-endpoint``, checked
    (a usage error for a bad value, one line for a log that cannot be opened)."""
    if max_bytes < 4096:
        raise typer.BadParameter("must be at least 4096", param_hint="--decision-log-max-bytes")
    if keep < 0:
        raise typer.BadParameter("must be 0 or more", param_hint="--decision-log-keep")
    settings: dict[str, Any] = {"decision_log_max_bytes": max_bytes, "decision_log_keep": keep}
    if decision_log is not None:
        from agbom.telemetry.decision_log import check_log_path

        problem = check_log_path(decision_log)
        if problem is not None:  # a usage error, like every bad option value (exit 2)
            raise typer.BadParameter(problem, param_hint="--decision-log")
        settings["decision_log"] = str(decision_log.absolute())
    if otlp_endpoint is not None:
        from agbom.telemetry.otlp import otel_available, traces_url

        try:
            traces_url(otlp_endpoint)
        except InputError as exc:
            raise typer.BadParameter(str(exc).split(": ", 1)[-1], param_hint="--otlp-endpoint")
        if not otel_available():
            raise InputError("--otlp-endpoint needs OpenTelemetry: pip install 'agbom[otel]'")
        settings["otlp_endpoint"] = otlp_endpoint
    return settings


def _front_policy(
    host: str,
    port: int,
    allowed_hosts: list[str],
    allowed_origins: list[str],
    *,
    header_timeout: float,
    body_timeout: float,
    max_connections: int,
    read_api_protected: bool,
) -> Any:
    """The HTTP front's policy for ``serve``'s options (usage errors for bad ones)."""
    from agbom.transports.http import FrontPolicy, is_loopback_host

    if not is_loopback_host(host) and not read_api_protected:
        raise typer.BadParameter(
            f"{host} is reachable from other machines, and the /v1 read API would answer "
            "them without a token: give --api-token-file, or --public-read-api to allow it",
            param_hint="--host",
        )
    if header_timeout <= 0 or body_timeout <= 0:
        raise typer.BadParameter("--header-timeout and --body-timeout must be positive")
    if max_connections <= 0:
        raise typer.BadParameter("must be positive", param_hint="--max-connections")
    for entry in allowed_hosts:
        if not entry.isascii() or not entry.strip() or any(c in entry for c in " /\t,@"):
            raise typer.BadParameter(f"not a host name: {entry!r}", param_hint="--allowed-host")
    for origin in allowed_origins:
        scheme, sep, rest = origin.partition("://")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest.rstrip("/"):
            raise typer.BadParameter(
                f"not an origin (scheme://host[:port]): {origin!r}", param_hint="--allowed-origin"
            )
    return FrontPolicy.for_address(
        host,
        port,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        header_timeout_s=header_timeout,
        body_timeout_s=body_timeout,
        max_connections=max_connections,
    )


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
    config = _guardian_config(
        strict_inventory=strict_inventory,
        skew_window_ms=10**15 if ignore_skew else None,
    )
    check_key_options(secret_file, keys_file)
    requests = _recorded_requests(file, read_bytes(file))
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
) -> None:
    """Print a session's audit chain: its entries (JSON), or its OCSF events (JSON lines)."""
    from agbom.store import open_store, redact_location

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
) -> None:
    """Recompute every chain; report the first broken link; exit 1 when any chain is broken.

    An ended session is also checked against the head it was sealed with, so entries cut from
    its end are found; for an open session pass the last chain_hash a client received.
    """
    from agbom.protocol import verify_chain
    from agbom.store import open_store, redact_location

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
    return "-" if value is None else str(value)  # the table escapes agent-controlled ids


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[_cell(row, c) for c in columns] for row in rows]
    return table([c.upper() for c in columns], cells, tty=to_terminal())


def _emit(rows: list[dict[str, Any]], columns: list[str], fmt: str) -> None:
    if fmt == "json":
        write_output(orjson.dumps(rows, option=orjson.OPT_INDENT_2, default=str), None)
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

    with open_store(db, create=False) as store:
        rows = store.list_agents()
    _emit(rows, ["agent_id", "sessions", "first_seen", "last_seen"], fmt)


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
    fmt: str = _list_format_option(),
) -> None:
    """Which agents use which models, MCP servers, tools and skills, and since when."""
    from agbom.inventory import ComponentType
    from agbom.store import open_store

    fmt = _list_format(fmt)
    if type_ is not None:
        type_ = choice(type_, [t.value for t in ComponentType], "--type")

    with open_store(db, create=False) as store:
        rows = store.list_components(type_, name)
    columns = (
        list(rows[0].keys())
        if rows
        else ["component_id", "type", "name", "version", "agents", "first_seen", "last_seen"]
    )
    _emit(rows, columns, fmt)


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
            else store.latest_agbom_for_agent(agent or "")
        )
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
    app.command("serve")(serve)
    app.command("replay")(replay)
    app.add_typer(audit_app, name="audit")
    app.add_typer(inventory_app, name="inventory")
