"""Keeping secrets out of exported documents.

An SBOM travels far (tickets, dashboards, vendors), so exporters never publish a value that
may be a credential: environment and header maps are reduced to their key names, values of
secret-looking keys become ``<redacted>``, and so do the arguments of secret-looking flags in
command lines (``--token X``, ``--api-key=X``, ``GITHUB_TOKEN=X``, ``Bearer X``).
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

_FLAG_WITH_VALUE = re.compile(r"^(--?[A-Za-z0-9][\w.-]*)=(.*)$", re.S)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


def redact_args(args: list[str]) -> list[str]:
    """Redact flag arguments and ``KEY=VALUE`` words whose name looks like a secret."""
    out: list[str] = []
    hide_next = False
    for word in args:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        flag = _FLAG_WITH_VALUE.match(word)
        assignment = _ASSIGNMENT.match(word)
        if flag and SECRET_KEY.search(flag.group(1)):
            out.append(f"{flag.group(1)}={REDACTED}")
        elif assignment and SECRET_KEY.search(assignment.group(1)):
            out.append(f"{assignment.group(1)}={REDACTED}")
        elif word.startswith("-") and SECRET_KEY.search(word):
            out.append(word)
            hide_next = True
        elif word.lower() in ("bearer", "basic"):
            out.append(word)
            hide_next = True
        else:
            out.append(word)
    return out


def redact_command(command: str) -> str:
    """A command line with secret-looking arguments replaced (split on whitespace)."""
    return " ".join(redact_args(command.split()))


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
