"""MCP server configs a skill ships (``.mcp.json``, ``mcp.json``, ``.cursor/mcp.json``,
``claude_desktop_config.json``, ... or any JSON file holding ``mcpServers``/``servers``),
read by scan's own MCP readers (:mod:`agbom.scan.clients`) and judged as scan judges a
client's config: a credential in plaintext (AGB-SEC-001's check), a remote server over plain
HTTP off the machine (AGB-HYG-002's), a package without an exact version (AGB-HYG-001's);
and each server's command line read by the shell analysis like any other command.

The findings are the skill's content findings, placed on the server's entry: a marketplace
reviewing the skill sees them on the skill that ships the config.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agbom.analysis import indicators

_NAMES = re.compile(
    r"(?:^|/)(?:\.?mcp(?:[_-]?(?:servers?|config))?\.jsonc?|claude_desktop_config\.json"
    r"|mcp_config\.json|\.cursor/mcp\.json|\.vscode/mcp\.json|\.gemini/settings\.json"
    r"|opencode\.jsonc?|\.codex/config\.toml|\.kiro/settings/mcp\.json)$",
    re.IGNORECASE,
)
_LOOKS = re.compile(rb'"(?:mcpServers|mcp_servers|servers|context_servers)"\s*:\s*\{')


def is_mcp_config(path: str, head: bytes) -> bool:
    """A skill file that configures MCP servers: by name, or a JSON file whose text holds a
    ``mcpServers`` (or ``servers``) object."""
    if _NAMES.search(path):
        return True
    return path.lower().endswith((".json", ".jsonc")) and _LOOKS.search(head[:65536]) is not None


def mcp_findings(
    folder: Path, path: str, data: bytes, vendor_installer: Callable[[str], bool]
) -> Iterator[tuple[str, Any, str]]:
    """(check, span, detail) for each problem of the servers of one config file; ``span``
    is scan's :class:`~agbom.scan.interface.Span` in that file."""
    from agbom.scan.content_shell import shell_findings
    from agbom.scan.interface import ReadContext

    full = folder / path
    reader = _client_reader(full)
    ctx = ReadContext(path=full, display=path, roots=(folder,))
    try:
        result = reader.read(data, ctx)
    except Exception:  # noqa: BLE001 - a reader's failure on a skill's file is not the scan's
        return
    for component in result.components:
        fields = component.get("_fields") or {}
        at = component.get("_at")
        name = component.get("name", "?")
        for secret in component.get("plaintext_secrets") or []:
            field = secret.get("field", "")
            span = fields.get(f"secret:{field}", at)
            yield (
                "mcp-plaintext-secret",
                span,
                f"server {name}: {field} holds {secret.get('kind', 'a credential')}",
            )
        endpoint = component.get("endpoint")
        if isinstance(endpoint, str) and endpoint.lower().startswith(("http://", "ws://")):
            host = indicators.host_of(endpoint) or ""
            if not indicators.is_loopback(host):
                yield (
                    "mcp-insecure-endpoint",
                    at,
                    f"server {name} is reached over plain HTTP at {host}",
                )
        if component.get("purl") and component.get("pinned") is False:
            span = fields.get("package", at)
            yield (
                "mcp-unpinned-server",
                span,
                f"server {name} runs {component.get('purl')} without an exact version",
            )
        command = component.get("command")
        if isinstance(command, str) and command.strip():
            span = fields.get("command", at)
            for check, _start, _end in shell_findings(command, "mcp-server.sh", vendor_installer):
                yield check, span, f"server {name}'s command: {command[:100]}"


@functools.cache
def _client_matcher() -> Any:
    from agbom.scan.clients import READERS as CLIENT_READERS
    from agbom.scan.reader_match import ReaderMatcher

    return ReaderMatcher(CLIENT_READERS)


def _client_reader(path: Path) -> Any:
    """The MCP client reader of ``path`` (as scan binds it by name), else the generic
    ``mcpServers`` reader: a skill ships configs of any client's shape."""
    from agbom.scan.clients import READERS as CLIENT_READERS

    parts = path.parts
    reader = _client_matcher().match(parts[-1], parts[:-1]) if parts else None
    if reader is None or not hasattr(reader, "sections"):
        reader = next(r for r in CLIENT_READERS if r.name == "mcp-json")
    return reader
