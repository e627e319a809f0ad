"""``agbom serve``: the Guardian over HTTP (a front process and its decision process) or stdio."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import typer

from agbom.cli import serve_settings as checked_options
from agbom.cli.common import (
    choice,
    db_option,
    no_default_rules_option,
    rules_option,
    with_default_rules,
)
from agbom.cli.guardian_options import (
    check_key_options,
    client_capabilities,
    egress_allow_option,
    egress_option,
    guardian_config,
    key_id_option,
    keys_file_option,
    known_tool_option,
    pack_announcement,
    pack_option,
    secret_encoding_option,
)
from agbom.cli.signing_options import (
    retired_key_option,
    sign_responses_option,
    signing_key_option,
    signing_settings,
)
from agbom.display import visible
from agbom.errors import InputError

MIN_MEMORY_MIB, MAX_MEMORY_MIB = 128, 1024 * 1024


def memory_bounds(max_memory_mib: int) -> dict[str, int]:
    """GuardianConfig's two memory bounds for ``--max-memory-mib``: the process's resident
    size, and two thirds of it for the sessions' estimated bytes (the rest is the interpreter,
    the store's caches and a snapshot being prepared; docs/reliability.md, "Bounds")."""
    bound = max_memory_mib * 1024 * 1024
    return {"max_memory_bytes": bound, "max_session_bytes": bound * 2 // 3}


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
        help="Deployment key material; session keys are derived from it (HKDF-SHA256). "
        "Yours, mode 0600.",
    ),
    key_id: str | None = key_id_option(),
    keys_file: Path | None = keys_file_option(),
    secret_encoding: str = secret_encoding_option(),
    require_signatures: bool = typer.Option(
        False, "--require-signatures", help="Refuse unsigned requests with -32004."
    ),
    require_session_start: bool = typer.Option(
        False,
        "--require-session-start",
        help="Refuse steps of a session that sent no steps/sessionStart (-32003 no_session); "
        "by default the first step after the handshake opens the session (spec §8).",
    ),
    require_server_approval: bool = typer.Option(
        False,
        "--require-server-approval",
        help="Deny every tool call through an MCP server that no approval stands for (agbom "
        "servers approve); by default such a server is left to the rules and any --lock.",
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
        None,
        "--api-token-file",
        help="Bearer token protecting the /v1 read API (a file of yours, mode 0600).",
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
    packs: list[str] = pack_option(),
    egress_allow: list[str] = egress_allow_option(),
    known_tools: list[str] = known_tool_option(),
    egress: str | None = egress_option(),
    max_body_bytes: int = typer.Option(
        1024 * 1024, "--max-body-bytes", help="Largest request body accepted."
    ),
    max_memory_mib: int = typer.Option(
        768,
        "--max-memory-mib",
        help="Resident memory the deciding process stays within (MiB): past it, the least "
        "recently used sessions are dropped from memory (restored from the store when next "
        "used).",
    ),
    fail_open_hooks: bool = typer.Option(
        False, "--hooks-fail-open", help="Runtime hook endpoints allow on malformed input."
    ),
    hook_token_file: Path | None = typer.Option(
        None,
        "--hook-token-file",
        metavar="FILE",
        help="Bearer token the /hooks endpoints require (thin hooks: --token-file; Claude "
        "Code HTTP hooks: an Authorization header). Use it on a host other users share.",
    ),
    read_project_skills: list[Path] = typer.Option(
        [],
        "--read-project-skills",
        metavar="DIR",
        help="Read the skill a Claude Code hook event names from <cwd>/.claude/skills/NAME on "
        "this server's disk when the event carries no report of it (HTTP hooks) and its cwd "
        "is inside DIR. Off by default: the server reads no path a client names. Repeatable.",
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
    signing_keys: list[Path] = signing_key_option(),
    sign_responses: str = sign_responses_option(),
    retired_keys: list[Path] = retired_key_option(),
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
    skill_signers: Path | None = typer.Option(
        None,
        "--skill-signers",
        metavar="FILE",
        help="Verify the OMS signature (skill.oms.sig) or Sigstore bundle "
        "(skill.sigstore.json, with --sigstore-trust-root) a skill registration carries against "
        "the signers in FILE: a failing one is denied, a load whose signature no longer "
        "verifies is denied, and skills of the signers FILE lists under auto_approve are "
        "approved on registration (docs/skills.md). Read again when it changes.",
    ),
    sigstore_trust_root: Path | None = typer.Option(
        None,
        "--sigstore-trust-root",
        metavar="FILE",
        help="A Sigstore trusted_root.json: verify the Sigstore bundle (skill.sigstore.json, "
        "over agbom's digest) a skill registration carries offline against it and the "
        "sigstore signers of --skill-signers. Without it a carried bundle is unchecked.",
    ),
    vex: list[Path] | None = typer.Option(
        None,
        "--vex",
        metavar="FILE",
        help="With --osv: VEX statements (OpenVEX or CycloneDX VEX); a not_affected statement "
        "with a justification keeps its match from denying (docs/vex.md). Repeatable; "
        "reloaded on SIGHUP.",
    ),
    public_url: str | None = typer.Option(
        None,
        "--public-url",
        metavar="URL",
        help="The address reviewers reach this server at (https://agbom.example.com): skill "
        "denials then link to the pair's review page, URL/ui/skill?id=...&digest=....",
    ),
    ready_file: Path | None = typer.Option(
        None,
        "--ready-file",
        metavar="FILE",
        help="Once the server answers (its decision process up, the port accepting), write its "
        "URL to FILE (http://HOST:PORT, the real port with --port 0), in one step; a stale "
        "FILE is removed at start and FILE is removed at exit. For scripts: wait until it "
        "exists.",
    ),
) -> None:
    """Serve the ACS Guardian: POST /acs (JSON-RPC 2.0), /hooks/RUNTIME, /v1 read API, /healthz."""
    from agbom.transports.interface import Limits

    mode = choice(mode, ("enforce", "observe"), "--mode")
    with_default = with_default_rules(rules, no_default_rules)
    check_key_options(secret_file, keys_file)
    if require_signatures and secret_file is None and keys_file is None:
        raise typer.BadParameter(
            "needs --secret-file or --keys-file", param_hint="--require-signatures"
        )
    if secret_file is not None:
        from agbom.protocol.signatures import key_file_notice

        notice = key_file_notice(secret_file, secret_encoding)
        if notice is not None:
            typer.echo(f"agbom: note: {visible(notice)}", err=True)
    clients = client_capabilities(client_config, no_modify, no_ask, ask_fallback)
    if decision_timeout <= 0:
        raise typer.BadParameter("must be positive", param_hint="--decision-timeout")
    if not MIN_MEMORY_MIB <= max_memory_mib <= MAX_MEMORY_MIB:
        raise typer.BadParameter(
            f"must be {MIN_MEMORY_MIB} to {MAX_MEMORY_MIB} (an idle server uses about 60 MiB)",
            param_hint="--max-memory-mib",
        )
    if skew_window_ms <= 0 or max_load_path_depth <= 0 or max_body_bytes <= 0:
        raise typer.BadParameter(
            "--skew-window-ms, --max-load-path-depth and --max-body-bytes must be positive"
        )
    telemetry = checked_options.telemetry_options(
        decision_log, decision_log_max_bytes, decision_log_keep, otlp_endpoint
    )
    if ready_file is not None:
        if stdio:
            raise typer.BadParameter("is for HTTP; not with --stdio", param_hint="--ready-file")
        checked_options.clear_ready_file(ready_file)
    skill_roots = checked_options.project_skill_roots(read_project_skills, stdio, hook_token_file)
    policy = None
    if not stdio:  # (usage errors first, before the store is opened)
        policy = checked_options.front_policy(
            host,
            allowed_hosts,
            allowed_origins,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            read_api_protected=api_token_file is not None or public_read_api,
        )
    config = guardian_config(
        # Absolute: a decision process (re)started later reads the same files.
        osv_path=None if osv is None else str(osv.absolute()),
        lock_path=None if lock is None else str(lock.absolute()),
        vex_paths=checked_options.vex_paths(vex, osv),
        skill_signers_path=checked_options.skill_signers(skill_signers),
        sigstore_trust_root_path=checked_options.sigstore_trust_root(
            sigstore_trust_root, skill_signers
        ),
        public_url=checked_options.public_url(public_url),
        require_signatures=require_signatures,
        strict_inventory=strict_inventory,
        max_body_bytes=max_body_bytes,
        **memory_bounds(max_memory_mib),
        skew_window_ms=skew_window_ms,
        max_load_path_depth=max_load_path_depth,
        deny_overbroad_capabilities=not allow_overbroad,
        require_session_start=require_session_start,
        require_server_approval=require_server_approval,
        **checked_options.runtime_pack_settings(packs, egress_allow, known_tools, egress),
        secret_encoding=choice(secret_encoding, ("raw", "hex", "base64"), "--secret-encoding"),
        **clients.settings(),
        **telemetry,
    )
    limits = Limits(max_body_bytes=max_body_bytes)
    signing, published = signing_settings(signing_keys, sign_responses, retired_keys)
    if signing:
        config = dataclasses.replace(config, **signing)
    keys: dict[str, Any] = {"secret_file": secret_file, "key_id": key_id, "keys_file": keys_file}
    early = None
    if osv is not None and not stdio and not single_process:
        # The decision process loads the export itself, which takes seconds (11.5 s for
        # 100,000 advisories): started now, it loads while this process checks the export,
        # the store and the keys, instead of after (docs/performance.md, "Start-up").
        early = _decision_process(
            db, rules, mode, config, limits, with_default, keys, decision_timeout
        )
        early.process.launch()
    from agbom.guardian import build_guardian

    try:
        # A bad export, lock or VEX file: exit 2, before the store opens.
        signals = checked_options.signals(osv, lock, config.vex_paths)
        review = checked_options.review_config(
            reviewers_file, reviewer_header, rules, with_default, allowed_origins, ui_secret_file
        )
        advisory_files = None
        if osv is not None:
            from agbom.advisories.fleet import AdvisoryFiles

            # the fleet's advisories (page and /v1) read one copy, loaded on first use
            vex_files = tuple(Path(p) for p in config.vex_paths)
            advisory_files = AdvisoryFiles(osv.absolute(), vex_files)
        if review is not None and osv is not None:
            review.osv_path = osv.absolute()  # the page's findings name known vulnerabilities
            review.vex_paths = tuple(Path(p) for p in config.vex_paths)
            review.advisory_files = advisory_files
        if review is not None and config.skill_signers_path is not None:
            review.skill_signers_path = Path(config.skill_signers_path)
            if config.sigstore_trust_root_path is not None:
                review.sigstore_trust_root_path = Path(config.sigstore_trust_root_path)
        loaded = [signals]  # this process's copy; dropped when a decision process loads its own

        def factory(transport: str = "http", *, observed: bool = True) -> Any:
            from dataclasses import replace

            # The check below opens no telemetry: the Guardian that decides does.
            unobserved = replace(config, decision_log=None, otlp_endpoint=None)
            return build_guardian(
                db,
                rules,
                mode=mode,
                config=config if observed else unobserved,
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
        checked = factory(observed=False)
        packs_said = pack_announcement(checked)  # said once the port is bound
        checked.store.close()
        from agbom.transports.bundle import BundleSource
        from agbom.transports.front_policy import is_loopback_host
        from agbom.transports.http import (
            InProcessDecisions,
            ProcessDecisions,
            read_token_file,
            serve_http,
        )

        token = read_token_file(api_token_file) if api_token_file is not None else None
        hook_token = read_token_file(hook_token_file) if hook_token_file is not None else None
        if hook_token is None and not is_loopback_host(host):
            typer.echo(
                f"agbom: note: the hook endpoints on {visible(host)} take events from anyone who "
                "reaches them; --hook-token-file makes them require a token",
                err=True,
            )
        project_skills = None
        if skill_roots:
            from agbom.adapters.project_skills import ProjectSkills

            project_skills = ProjectSkills(skill_roots)
            typer.echo(
                "agbom: hook events' skills are read from this server's disk under "
                + ", ".join(visible(str(r)) for r in skill_roots),
                err=True,
            )
        decisions: InProcessDecisions | ProcessDecisions
        if single_process:
            decisions = InProcessDecisions(factory, limits)
            if signals is not None:
                signals.install_sighup()
        else:
            decisions = early or _decision_process(
                db, rules, mode, config, limits, with_default, keys, decision_timeout
            )
            if signals is not None:
                # The decision process loads the export itself (config.osv_path) and reloads it on
                # the SIGHUP this process passes on to it.
                loaded[0] = signals = None
                _forward_sighup(decisions)

        bound: list[str] = []

        def announce(bound_host: str, bound_port: int) -> None:
            from agbom.store import redact_location

            shown = f"[{bound_host}]" if ":" in bound_host else bound_host
            where = redact_location(db)
            bound.append(f"http://{shown}:{bound_port}")
            url = f"http://{shown}:{bound_port}/acs"
            typer.echo(f"agbom: serving ACS on {url} (store {where})", err=True)
            for line in packs_said:
                typer.echo(line, err=True)
            if review is not None:
                page = f"http://{shown}:{bound_port}/ui/"
                typer.echo(f"agbom: review page on {page}", err=True)

        def ready() -> None:
            if ready_file is None:
                return
            try:
                checked_options.write_ready_file(ready_file, bound[-1])
            except OSError as exc:  # the folder went away since the start: say so, keep serving
                typer.echo(
                    f"agbom: error: cannot write --ready-file {visible(str(ready_file))}: "
                    f"{exc.strerror or exc}",
                    err=True,
                )

        serve_http(
            decisions,
            published_keys=published,
            host=host,
            port=port,
            limits=limits,
            api_token=token,
            fail_open_hooks=fail_open_hooks,
            policy=policy,
            announce=announce,
            review=review,
            # The OPA bundle carries the bans of the packs this server decides with.
            bundle_source=BundleSource(rules=rules, with_default=with_default),
            on_ready=ready,
            on_stop=None if ready_file is None else lambda: ready_file.unlink(missing_ok=True),
            hook_token=hook_token,
            project_skills=project_skills,
            advisories=None if advisory_files is None else advisory_files.current,
        )
    finally:
        if early is not None:
            early.process.abandon()  # a no-op once the server has taken it over
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)


def _decision_process(
    db: str,
    rules: Path | None,
    mode: str,
    config: Any,
    limits: Any,
    with_default: bool,
    keys: dict[str, Any],
    decision_timeout: float,
) -> Any:
    """The decision process ``agbom serve`` runs, not started yet."""
    from agbom.transports.decision_wire import WorkerSpec
    from agbom.transports.http import ProcessDecisions

    spec = WorkerSpec.of(
        db, rules, mode=mode, config=config, limits=limits, with_default_rules=with_default, **keys
    )
    return ProcessDecisions(spec, limits, deadline_s=decision_timeout)


def _forward_sighup(decisions: Any) -> None:
    """SIGHUP to ``agbom serve`` reaches the decision process, which reloads."""
    import signal

    signal.signal(signal.SIGHUP, lambda _n, _f: decisions.process.send_signal(signal.SIGHUP))


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command("serve")(serve)
