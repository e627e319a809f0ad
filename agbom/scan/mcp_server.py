"""One MCP server entry of any client config -> one ``mcp_server`` wire component.

Shared by every client reader. The entry is checked field by field; a wrong type makes the
entry an error (the other entries of the file are kept). Env and header *values* are never
copied; arguments and URLs go through :mod:`agbom.scan.redact`. Where a credential is written
in plaintext (not an env reference or a placeholder), the field is listed in the component's
``plaintext_secrets`` (:mod:`agbom.scan.plaintext`), never its value.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Mapping
from typing import Any

from agbom.scan import plaintext
from agbom.scan.interface import Finding
from agbom.scan.launchers import Package, resolve_launch
from agbom.scan.redact import redact_args, redact_url

_TRANSPORTS = {
    "stdio": "stdio",
    "local": "stdio",
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "streamablehttp": "streamable-http",
    "streamable_http": "streamable-http",
    "remote": "streamable-http",
    "sse": "sse",
    "ws": "websocket",
    "websocket": "websocket",
}

UNPINNED_RULE = "scan.unpinned-package"


class EntryError(Exception):
    """Internal: this server entry is unusable; ``problems`` says which fields and why.

    Every problem the entry has is listed (``args`` given as a string *and* ``env`` given as
    an array), so one run shows the user everything to fix."""

    def __init__(self, *problems: str | tuple[str | None, str]) -> None:
        listed = tuple(p if isinstance(p, tuple) else (None, p) for p in problems)
        super().__init__("; ".join(message for _, message in listed))
        # (the entry's field the problem is in, or None for the entry; the message)
        self.problems: tuple[tuple[str | None, str], ...] = listed


Problems = list[tuple[str | None, str]]


def _string_list(value: Any, field: str, problems: Problems) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(
            (field, f"{field!r} must be an array of strings, not {type(value).__name__}")
        )
        return []
    out: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            problems.append(
                (field, f"{field}[{index}] must be a string, not {type(item).__name__}")
            )
            continue
        out.append(str(item))
    return out


def _key_names(value: Any, field: str, problems: Problems) -> list[str]:
    """Names of an env/header map (values are dropped here, unread)."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        return sorted(str(k) for k in value)
    if isinstance(value, list) and all(
        isinstance(item, Mapping) and "name" in item for item in value
    ):  # server.json style [{"name": ...}]
        return sorted(str(item["name"]) for item in value)
    problems.append((field, f"{field!r} must be an object, not {type(value).__name__}"))
    return []


_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def _program_name(command: str) -> str:
    """The program a (redacted) command runs, for a readable id: its file name, first word."""
    first = command.strip().split(maxsplit=1)[0] if " " in command.strip() else command
    base = first.replace("\\", "/").rsplit("/", 1)[-1]
    return _ID_UNSAFE.sub("_", base)[:64].strip("_") or "command"


def _local_id(safe_command: str, safe_args: list[str]) -> str:
    """An id from the *redacted* command line only: neither the name nor the hash may carry
    a secret (a hash of a short password can be searched)."""
    text = "\0".join([safe_command, *safe_args])
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"mcp:cmd/{_program_name(safe_command)}-{digest}"


def package_component(
    *, name: str, package: Package, transport: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``mcp_server`` component for a server run from a package (launcher or registry)."""
    component: dict[str, Any] = {
        "id": f"mcp:{package.id_part}",
        "type": "mcp_server",
        "name": name,
        "version": package.version,
        "endpoint": None,
        "tools": [],
        "transport": transport,
        "purl": package.purl,
        "package": {"ecosystem": package.ecosystem, "name": package.name},
        "pinned": package.pinned,
    }
    if package.requested:
        component["package"]["requested"] = package.requested
    if extra:
        component.update(extra)
    return component


def unpinned_finding(component: Mapping[str, Any], display: str) -> Finding:
    package = component.get("package") or {}
    requested = package.get("requested")
    asked = f" (asks for {requested!r})" if requested else ""
    return Finding(
        rule_id=UNPINNED_RULE,
        severity="medium",
        component_id=str(component["id"]),
        message=(
            f"MCP server {component['name']!r} runs {package.get('ecosystem')} package "
            f"{package.get('name')!r} without a pinned version{asked}; pin an exact version"
        ),
        path=display,
    )


def server_component(
    key: str,
    entry: Any,
    *,
    display: str,
    command_as_list: bool = False,
    url_fields: tuple[tuple[str, str | None], ...] = (("url", None),),
    env_field: str = "env",
    command_field: str = "command",
) -> tuple[dict[str, Any], list[Finding]]:
    """Normalize one client entry. Raises :class:`EntryError`, listing every problem, when
    it cannot be used.

    ``command_as_list`` is opencode's ``"command": ["npx", "-y", "pkg"]``. ``url_fields``
    lists the keys holding a remote URL with the transport each implies (``None``: from
    ``type``), for example Gemini's ``httpUrl`` (streamable HTTP) and ``url`` (SSE).
    """
    if not isinstance(entry, Mapping):
        raise EntryError(f"must be an object, not {type(entry).__name__}")
    problems: Problems = []
    type_field = "type" if "type" in entry else "transport"
    raw_type = entry.get(type_field)
    if type_field == "transport" and isinstance(raw_type, Mapping):
        # {"url": ..., "transport": {"type": "streamable-http", ...}}: the type is inside
        inner = raw_type.get("type")
        raw_type = inner if isinstance(inner, str) else None
    declared: str | None = None
    if raw_type is not None and not isinstance(raw_type, str):
        problems.append(
            (type_field, f"{type_field!r} must be a string, not {type(raw_type).__name__}")
        )
    elif raw_type:
        declared = _TRANSPORTS.get(raw_type.lower())
        if declared is None:
            problems.append((type_field, f"unknown transport type {raw_type!r}"))

    disabled = entry.get("disabled") is True or entry.get("enabled") is False

    url: str | None = None
    url_field = "url"
    url_transport: str | None = None
    for field, implied in url_fields:
        value = entry.get(field)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            problems.append((field, f"{field!r} must be a non-empty string"))
            continue
        url, url_field, url_transport = value, field, implied
        break

    command_value = entry.get(command_field)
    command: str | None = None
    args: list[str] = []
    if command_value is not None:
        if command_as_list:
            argv = _string_list(command_value, command_field, problems)
            if isinstance(command_value, list) and not command_value:
                problems.append((command_field, "'command' must not be empty"))
            if argv:
                command, args = argv[0], argv[1:]
        elif not isinstance(command_value, str) or not command_value.strip():
            problems.append((command_field, f"{command_field!r} must be a non-empty string"))
        else:
            command = command_value
        args = args + _string_list(entry.get("args"), "args", problems)
    elif url is None and not problems:
        problems.append((None, "has neither 'command' nor a URL"))
    env_keys = _key_names(entry.get(env_field), env_field, problems)
    header_keys = _key_names(entry.get("headers"), "headers", problems)
    redacted = [f"{env_field}.{k}" for k in env_keys] + [f"headers.{k}" for k in header_keys]
    if problems:
        raise EntryError(*problems)

    common: dict[str, Any] = {}
    secrets = [(f"{env_field}.{k}", kind) for k, kind in plaintext.in_mapping(entry.get(env_field))]
    secrets += [(f"headers.{k}", kind) for k, kind in plaintext.in_mapping(entry.get("headers"))]
    if env_keys:
        common["env_keys"] = env_keys
    if header_keys:
        common["header_keys"] = header_keys
    if disabled:
        common["disabled"] = True
    if command is not None:
        transport = declared if declared and declared != "streamable-http" else "stdio"
        fields = [
            f"{command_field}[{i}]"
            if command_as_list
            else ("command" if i == 0 else f"args[{i - 1}]")
            for i in range(len(args) + 1)
        ]
        return _local_component(
            key, command, args, transport, redacted, common, display, (secrets, fields)
        )

    assert url is not None  # checked above: a command or a URL
    endpoint, changed = redact_url(url)
    if changed:
        redacted.append("endpoint")
        kind = plaintext.in_url(url, endpoint)
        if kind is not None:
            secrets.append((url_field, kind))
    if secrets:
        common["plaintext_secrets"] = plaintext.entries(secrets, display)
    if redacted:
        common["redacted"] = redacted
    remote_transport = url_transport or declared
    if remote_transport is None or remote_transport == "stdio":
        remote_transport = _transport_from_path(endpoint)
    component = {
        "id": f"mcp:{endpoint.split('?', 1)[0]}",
        "type": "mcp_server",
        "name": key,
        "version": None,
        "endpoint": endpoint,
        "tools": [],
        "transport": remote_transport,
        "remote": True,
        **common,
    }
    return component, []


def _transport_from_path(endpoint: str) -> str:
    path = endpoint.split("?", 1)[0].rstrip("/")
    return "sse" if path.endswith("/sse") else "streamable-http"


def _local_component(
    key: str,
    command: str,
    args: list[str],
    transport: str,
    redacted: list[str],
    common: dict[str, Any],
    display: str,
    secrets: tuple[list[tuple[str, str]], list[str]],
) -> tuple[dict[str, Any], list[Finding]]:
    """A server the client starts: from a package, a bridge to a remote URL, or a command.

    ``secrets`` holds the plaintext credentials found so far (env, headers) and the config's
    name for each word of ``[command, *args]``."""
    # The command goes through the same pass as its arguments: a whole command line in
    # "command" ("node --token=X srv.js") is redacted like one argument holding spaces.
    safe_argv, hits = redact_args([command, *args])
    safe_command, safe_args = safe_argv[0], safe_argv[1:]
    redacted.extend("command" if i == 0 else f"args[{i - 1}]" for i in hits)
    found, fields = secrets
    found = found + [
        (fields[i], kind) for i, kind in plaintext.in_args([command, *args], safe_argv, hits)
    ]
    if found:
        common["plaintext_secrets"] = plaintext.entries(found, display)
    common["command"] = shlex.join(safe_argv)
    common["args"] = safe_args
    if redacted:
        common["redacted"] = redacted
    launch = resolve_launch(safe_command, safe_args)
    package, bridge = launch.package, launch.bridge
    if bridge is not None:
        # The bridge's remote URL is where the server really is: its endpoint, and part of
        # its identity, so two bridges to different servers stay two components.
        common["endpoint"] = bridge.url
        common["bridge"] = bridge.name
        common["remote_transport"] = bridge.transport or _transport_from_path(bridge.url)
    if package is not None:
        component = package_component(name=key, package=package, transport=transport, extra=common)
        if bridge is not None:
            component["id"] = f"mcp:{package.id_part}+{bridge.url.split('?', 1)[0]}"
        findings = [] if package.pinned else [unpinned_finding(component, display)]
        return component, findings
    component = {
        "id": _local_id(safe_command, safe_args),
        "type": "mcp_server",
        "name": key,
        "version": None,
        "endpoint": None,
        "tools": [],
        "transport": transport,
        **common,
    }
    return component, []
