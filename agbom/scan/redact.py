"""Keep secrets on the machine: redact token-like arguments and URL credentials.

Env and header *values* are never read into a component at all (only their names are kept);
this module handles the places where a secret hides inside something that is kept: command
arguments and endpoint URLs. A redacted value is replaced by ``<redacted>`` and its location is
listed in the component's ``redacted`` field, so the report says a secret is present.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"

# A flag or variable name that announces a secret value.
_SECRET_NAME = re.compile(
    r"(?i)(token|secret|passw(or)?d|passwd|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key"
    r"|credential|auth|bearer|cookie|session|signature|client[-_]?secret|^key$|[-_]key$)"
)
# Values that are secrets whatever flag precedes them (well-known token shapes).
_SECRET_VALUE = re.compile(
    r"^(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}"
    r"|sk-[A-Za-z0-9_\-]{16,}|sk_(live|test)_[A-Za-z0-9]{16,}|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}|npm_[A-Za-z0-9]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})$"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)\s+\S+")
# Docker/podman flags whose next value is KEY=VALUE environment.
_ENV_FLAGS = frozenset({"-e", "--env"})


def is_secret_name(name: str) -> bool:
    """Whether a flag, variable or header name suggests its value is a secret."""
    return bool(_SECRET_NAME.search(name.lstrip("-")))


def looks_like_secret(value: str) -> bool:
    """Whether a bare value has the shape of a well-known token."""
    return bool(_SECRET_VALUE.match(value))


def redact_url(url: str) -> tuple[str, bool]:
    """Drop userinfo passwords and every query value; return ``(url, changed)``.

    All query values go, not only ones with secret-sounding names: API keys travel under
    arbitrary names (``?k=``, ``?code=``) and a report gains nothing from the value.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED, True
    changed = False
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
        changed = True
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED) for k, _ in pairs], safe="<>")
        changed = True
    if parts.fragment:
        changed = True
    if not changed:
        return url, False
    return urlunsplit((parts.scheme, netloc, parts.path, query, "")), True


def _redact_one(arg: str) -> str | None:
    """The redacted form of a single argument, or ``None`` when it is harmless."""
    if "://" in arg:
        new, changed = redact_url(arg)
        return new if changed else None
    if arg.startswith("-") and "=" in arg:
        flag, value = arg.split("=", 1)
        if value and (is_secret_name(flag) or looks_like_secret(value)):
            return f"{flag}={REDACTED}"
        return None
    if "=" in arg and not arg.startswith("-"):
        name, value = arg.split("=", 1)
        if value and (is_secret_name(name) or looks_like_secret(value)):
            return f"{name}={REDACTED}"
    if looks_like_secret(arg):
        return REDACTED
    if _BEARER.search(arg):
        return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", arg)
    return None


def redact_args(args: list[str]) -> tuple[list[str], list[int]]:
    """Redact secrets in an argument vector; return the new vector and the redacted indexes.

    Rules: the value after a secret-named flag (``--token X``), ``--flag=VALUE`` and
    ``NAME=VALUE`` with a secret name, the value of ``-e/--env NAME=VALUE`` (an env value is
    never kept), token-shaped values, ``Bearer X`` text, and URL credentials and query values.
    """
    out: list[str] = []
    redacted: list[int] = []
    previous = ""
    for index, arg in enumerate(args):
        new: str | None
        if previous in _ENV_FLAGS and "=" in arg:
            name = arg.split("=", 1)[0]
            new = f"{name}={REDACTED}"
        elif previous.startswith("-") and "=" not in previous and is_secret_name(previous):
            new = REDACTED if not arg.startswith("-") else _redact_one(arg)
        else:
            new = _redact_one(arg)
        if new is not None and new != arg:
            out.append(new)
            redacted.append(index)
        else:
            out.append(arg)
        previous = arg
    return out, redacted
