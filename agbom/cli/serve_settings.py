"""``agbom serve``'s option values checked and turned into settings: one function per option
family, each raising a usage error (exit 2) with one line for a bad value, before the store is
opened or the port bound. Apart from serve_cmds.py, which declares the options and runs the
server, so that each half reads on its own."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import typer

from agbom.display import visible
from agbom.errors import InputError


def clear_ready_file(path: Path) -> None:
    """Remove a ``--ready-file`` left by an earlier run, so that a script waiting for it waits
    for this server; a usage error where FILE cannot be written."""
    if path.is_dir() or not path.parent.is_dir():
        raise typer.BadParameter(
            f"{path}: not a file in an existing folder", param_hint="--ready-file"
        )
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise typer.BadParameter(
            f"{path}: cannot remove the old one: {exc.strerror or exc}", param_hint="--ready-file"
        ) from None


def write_ready_file(path: Path, url: str) -> None:
    """Write ``url`` to ``path`` at once: to a file beside it, renamed over it, so that a
    reader never sees it empty or half-written."""
    import os
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(url + "\n")
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def project_skill_roots(
    folders: list[Path], stdio: bool, hook_token_file: Path | None
) -> tuple[Path, ...]:
    """``--read-project-skills`` checked: existing folders, absolute; usage errors otherwise
    (and with --stdio, which has no hook endpoints)."""
    if stdio and (folders or hook_token_file is not None):
        hint = "--read-project-skills" if folders else "--hook-token-file"
        raise typer.BadParameter("applies to the HTTP hook endpoints, not --stdio", param_hint=hint)
    roots = []
    for folder in folders:
        if not folder.is_dir():
            raise typer.BadParameter(
                f"not a folder: {visible(str(folder))}", param_hint="--read-project-skills"
            )
        roots.append(folder.absolute())
    return tuple(roots)


def runtime_pack_settings(
    packs: list[str], egress_allow: list[str], known_tools: list[str], egress: str | None
) -> dict[str, Any]:
    """The GuardianConfig fields of --pack, --egress-allow, --known-tool and --egress
    (agbom/guardian/pack_selection.py); a usage error for a bad combination."""
    from agbom.guardian.pack_selection import PackChoiceError, pack_settings

    try:
        return pack_settings(packs, egress_allow, known_tools, egress)
    except PackChoiceError as exc:
        raise typer.BadParameter(str(exc), param_hint="--pack") from None


def public_url(value: str | None) -> str | None:
    """``--public-url`` checked: an http(s) URL of at most 512 characters, no query."""
    if value is None:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.query
        or parts.fragment
        or len(value) > 512
        or any(ord(c) < 33 or ord(c) == 127 for c in value.strip())
    ):
        raise typer.BadParameter(
            "must be an http(s) URL without query or fragment, at most 512 characters",
            param_hint="--public-url",
        )
    return value.strip().rstrip("/")


def skill_signers(path: Path | None) -> str | None:
    """``--skill-signers`` as an absolute path, checked now (a bad file exits 2)."""
    if path is None:
        return None
    from agbom.scan.skill_signatures import EXTRA, SignersError, available, load_signers

    try:
        load_signers(path)
    except SignersError as exc:
        typer.echo(f"agbom: error: --skill-signers {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(2) from None
    if not available():
        typer.echo(f"agbom: error: --skill-signers needs the model-signing library: pip "
                   f"install '{EXTRA}'", err=True)  # fmt: skip
        raise typer.Exit(2)
    return str(path.absolute())


def sigstore_trust_root(path: Path | None, signers: Path | None) -> str | None:
    """``--sigstore-trust-root`` as an absolute path, loaded now (a bad file exits 2)."""
    if path is None:
        return None
    if signers is None:
        typer.echo("agbom: error: --sigstore-trust-root needs --skill-signers", err=True)
        raise typer.Exit(2)
    from agbom.scan.skill_sigstore import TrustRootError, check_trust_root, sigstore_available

    if not sigstore_available():
        typer.echo("agbom: error: --sigstore-trust-root needs the sigstore library: pip "
                   "install 'agbom[signatures]'", err=True)  # fmt: skip
        raise typer.Exit(2)
    try:
        check_trust_root(path)
    except TrustRootError as exc:
        typer.echo(f"agbom: error: --sigstore-trust-root {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(2) from None
    return str(path.absolute())


def vex_paths(vex: list[Path] | None, osv: Path | None) -> tuple[str, ...]:
    """``--vex`` files as absolute paths (a decision process started later reads them)."""
    if not vex:
        return ()
    if osv is None:
        raise typer.BadParameter("--vex states what --osv matched: give --osv too",
                                 param_hint="--vex")  # fmt: skip
    return tuple(str(path.absolute()) for path in vex)


def signals(osv: Path | None, lock: Path | None, vex: tuple[str, ...] = ()) -> Any:
    """The loaded ``--osv`` export, ``--vex`` statements and ``--lock`` file, or exit 2
    with one line."""
    if osv is None and lock is None:
        return None
    from agbom.guardian.signals import GuardianSignals

    try:
        return GuardianSignals(osv, lock, vex=[Path(p) for p in vex])
    except InputError as exc:
        typer.echo(f"agbom: error: {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(2) from None


def review_config(
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


def telemetry_options(
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


def front_policy(
    host: str,
    allowed_hosts: list[str],
    allowed_origins: list[str],
    *,
    header_timeout: float,
    body_timeout: float,
    max_connections: int,
    read_api_protected: bool,
) -> Any:
    """The HTTP front's policy for ``serve``'s options (usage errors for bad ones)."""
    from agbom.transports.front_policy import FrontPolicy, is_loopback_host

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
    # A function of the bound port: with --port 0 only the bound socket knows it, and the Host
    # check must accept the port clients were told.
    return functools.partial(
        FrontPolicy.for_address,
        host,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        header_timeout_s=header_timeout,
        body_timeout_s=body_timeout,
        max_connections=max_connections,
    )
