"""What every route of the review page shares, whichever part of the page it serves: the
security headers every answer carries, the one refusal type (:class:`BadInput`), the
templates' environment (autoescaped, every shown value's invisible characters escaped), the
content-hashed static files, bounded reads of a query value and of a POSTed form, and the
kit (:class:`PageKit`) through which a module of routes renders and reads the store.

It sits below :mod:`.app` (the mount: sign-in, sessions, the skills review) and
:mod:`.fleet_routes` (the server queue and the fleet's pages), so that neither imports the
other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import Response

from agbom.display import visible
from agbom.invisible import escape
from agbom.store.interface import Store, StoreError, format_timestamp, parse_timestamp

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
MAX_FORM_BYTES = 64 * 1024
DRAIN_BYTES = 1024 * 1024  # of a too-large form, read and dropped before the 413
MAX_FIELDS = 32
MAX_QUERY_VALUE = 1024


class BadInput(Exception):
    """A request the page refuses, with its HTTP status and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Static:
    """The packaged stylesheet, script and icon, under names that carry their content hash."""

    TYPES = {
        ".css": "text/css; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".svg": "image/svg+xml",
    }

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, str]] = {}
        self.urls: dict[str, str] = {}
        folder = resources.files("agbom.review") / "static"
        for name in ("review.css", "review.js", "favicon.svg"):
            data = (folder / name).read_bytes()
            stem, dot, ext = name.rpartition(".")
            hashed = f"{stem}.{hashlib.sha256(data).hexdigest()[:16]}.{ext}"
            self.files[hashed] = (data, self.TYPES["." + ext])
            self.urls[name] = f"/ui/static/{hashed}"


def environment() -> Any:
    import jinja2

    def shown(value: Any) -> Any:
        # Every value a page shows has each character that renders as nothing or as blank
        # written as an escape (agbom/invisible.py: a bidi override in a SKILL.md, a zero-width
        # space in a name, variation selectors carrying text after an emoji, a no-break space
        # would otherwise mislead the reviewer); line breaks and tabs stay, so file contents
        # keep their lines. Ids go through the ``id`` filter, which escapes line breaks too.
        if isinstance(value, str) and not hasattr(value, "__html__"):
            return escape(value, keep=" \n\t\r")
        return value

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("agbom.review", "templates"),
        autoescape=True,  # every template, every value; Markup only from svg.render
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=shown,
    )
    env.filters["id"] = lambda value: visible(value)
    env.filters["q"] = lambda value: quote(str(value), safe="")
    env.filters["ts"] = lambda value: format_timestamp(value) or ""
    env.filters["when"] = when
    return env


def when(value: Any) -> Any:
    """A time as a reader wants it (``2026-12-02 13:05:16 UTC``) in a ``<time>`` element whose
    ``datetime`` and ``title`` keep the exact ISO 8601 value; text that is no time is shown
    as it is, escaped."""
    import markupsafe

    if value is None or value == "":
        return ""
    moment: datetime | None = value if isinstance(value, datetime) else None
    if moment is None:
        try:
            moment = parse_timestamp(str(value), what="time")
        except (StoreError, ValueError, OverflowError):
            return str(value)
    exact = format_timestamp(moment) or str(value)
    # parse_timestamp gives UTC. The date and the time are each kept whole; a narrow column
    # may put them on two lines.
    day, hour = moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M:%S UTC")
    return markupsafe.Markup(
        '<time datetime="{0}" title="{0}"><span class="token">{1}</span> '
        '<span class="token">{2}</span></time>'
    ).format(exact, day, hour)


def finish(response: Response) -> Response:
    """``response`` with the security headers, and not to be cached unless it says so."""
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def query(request: Request, name: str, default: str = "") -> str:
    """One query parameter, at most :data:`MAX_QUERY_VALUE` characters."""
    value = request.query_params.get(name, default)
    if len(value) > MAX_QUERY_VALUE:
        raise BadInput(400, f"{name} is longer than {MAX_QUERY_VALUE} characters")
    return value


async def read_form(request: Request) -> dict[str, str]:
    """The fields of a POSTed form, each given once, within :data:`MAX_FORM_BYTES` and
    :data:`MAX_FIELDS`."""
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise BadInput(415, "the form must be application/x-www-form-urlencoded")
    declared = request.headers.get("content-length")
    if declared is not None and not declared.isdigit():
        raise BadInput(400, "bad Content-Length")
    chunks: list[bytes] = []
    size = 0
    if declared is None or int(declared) <= DRAIN_BYTES:
        # Read a too-large form to its end (up to DRAIN_BYTES, dropped) before answering,
        # so the client reads the 413 instead of a reset connection.
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_BYTES:
                break
            if size <= MAX_FORM_BYTES:
                chunks.append(chunk)
    if size > MAX_FORM_BYTES or (declared is not None and int(declared) > MAX_FORM_BYTES):
        raise BadInput(413, "the form is too large")
    try:
        parsed = parse_qs(
            b"".join(chunks).decode("utf-8"),
            keep_blank_values=True,
            max_num_fields=MAX_FIELDS,
            strict_parsing=False,
        )
    except (UnicodeDecodeError, ValueError):
        raise BadInput(400, "the form is not valid UTF-8 form data") from None
    out = {}
    for key, values in parsed.items():
        if len(values) != 1:
            raise BadInput(400, f"the form gives {key[:32]!r} more than once")
        out[key] = values[0]
    return out


@dataclass(frozen=True)
class PageKit:
    """What a module of routes takes from the mount: ``page(request, template, who=...,
    **values)`` renders a template as an answer; ``reader()`` is the page thread's own
    handle on the store; ``advisories()`` the loaded ``serve --osv`` export, or None.
    Its handlers run on the page thread, signed in (``guarded`` in :mod:`.app`)."""

    page: Callable[..., Response]
    reader: Callable[[], Store]
    advisories: Callable[[], Any]
