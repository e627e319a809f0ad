"""Keeping secrets out of exported documents.

An SBOM travels far (tickets, dashboards, vendors), so exporters never publish a value that
may be a credential: environment and header maps are reduced to their key names, values of
secret-looking keys become ``<redacted>``, and command lines and argument vectors go through
the scanner's redaction pass (``--token X``, ``--api-key=X``, ``GITHUB_TOKEN=X``,
``Bearer X``, URL credentials, token-shaped values; see :mod:`agbom.scan.redact`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "<redacted>"

SECRET_KEY = re.compile(
    r"(?i)(token|secret|passw(or)?d|passphrase|api[-_]?key|apikey|credential|cookie|"
    r"private[-_]?key|session[-_]?key|access[-_]?key|bearer|authorization|(^|[-_.])auth$)"
)
# Maps whose values are never exported, only their keys.
KEYS_ONLY_FIELDS = frozenset({"env", "environment", "headers", "secrets", "http_headers"})


def redact_args(args: list[str]) -> list[str]:
    """The argument vector with every secret hidden: the scanner's one redaction pass
    (:mod:`agbom.scan.redact`), so a document exported here hides what a scan hides."""
    from agbom.scan.redact import redact_args as redact_argv  # the scan layer loads on use

    return redact_argv(args)[0]


def redact_command(command: str) -> str:
    """A command line with its secrets hidden (split shell-style, redacted word by word)."""
    return redact_args([command])[0]


def redact_value(key: str, value: Any, *, depth: int = 0) -> Any:
    """A copy of ``value`` (stored under ``key``) that is safe to publish."""
    if depth > 32:
        return REDACTED  # bound recursion on hostile nesting
    if key in KEYS_ONLY_FIELDS and isinstance(value, Mapping):
        return sorted(str(k) for k in value)
    if SECRET_KEY.search(key) and value not in (None, "", [], {}):
        return REDACTED
    if isinstance(value, Mapping):
        return {str(k): redact_value(str(k), v, depth=depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if key in ("args", "argv", "command") and all(isinstance(v, str) for v in value):
            return redact_args(value)
        return [redact_value(key, v, depth=depth + 1) for v in value]
    if isinstance(value, str) and key in ("command", "cmd", "args"):
        return redact_command(value)
    return value
