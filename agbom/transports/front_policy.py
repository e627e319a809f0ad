"""What the HTTP front accepts before a handler sees a request, and its connection limits.

:class:`FrontPolicy` is read by the app's front check (:mod:`agbom.transports.http`) and by
the connection guard below the app (:mod:`agbom.transports.connections`); it lives here,
below both, so that neither imports the other.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]"})


def is_loopback_host(host: str) -> bool:
    """Whether binding ``host`` serves only this machine (``localhost``, 127.0.0.0/8, ::1)."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name may resolve to anything


def _host_name(host: str) -> str:
    name = host.strip().lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


@dataclass(frozen=True, slots=True)
class FrontPolicy:
    """What the HTTP front accepts before a handler sees a request, and its connection limits.

    ``allowed_hosts`` holds the exact ``Host`` values accepted (lower case); None accepts any
    (``--allowed-host '*'``). ``allowed_origins`` holds the browser origins allowed to call;
    a request with any other ``Origin`` is refused. Checking a request costs one pass over its
    headers and set lookups: nothing that grows with the lists.
    """

    allowed_hosts: frozenset[bytes] | None
    allowed_origins: frozenset[bytes] = frozenset()
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 1024
    max_header_bytes: int = 64 * 1024

    @classmethod
    def for_address(
        cls,
        host: str,
        port: int,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        **limits: Any,
    ) -> FrontPolicy:
        """The policy for a server bound to ``host:port``.

        Accepted ``Host`` values: the bound address and the loopback names, each with the
        port (and bare when the port is 80), plus each ``allowed_hosts`` entry: ``NAME``
        (with this port, or bare) or ``NAME:PORT``; ``*`` turns the check off.
        """
        extra = [h.strip().lower() for h in allowed_hosts]
        if "*" in extra:
            hosts: frozenset[bytes] | None = None
        else:
            values: set[str] = set()
            names = [_host_name(host)] if host.strip().lower() not in _WILDCARD_HOSTS else []
            for name in [*names, *LOOPBACK_NAMES]:
                values.add(f"{name}:{port}")
                if port == 80:
                    values.add(name)
            for entry in extra:
                name, sep, entry_port = entry.rpartition(":")
                if sep and entry_port.isdigit() and not name.endswith(":"):
                    values.add(f"{_host_name(name)}:{entry_port}")
                else:
                    values.update({f"{_host_name(entry)}:{port}", _host_name(entry)})
            hosts = frozenset(v.encode() for v in values)
        origins = frozenset(o.strip().lower().rstrip("/").encode() for o in allowed_origins)
        return cls(allowed_hosts=hosts, allowed_origins=origins, **limits)

    def refusal(
        self, scope: dict[str, Any], *, needs_json: bool, check_origin: bool = True
    ) -> tuple[int, str, str] | None:
        """``(status, reason, message)`` when the request must be refused, else None.

        ``check_origin`` is False for the review page (``/ui/``): its own pages post to it
        with their Origin, and it refuses cross-site requests itself (agbom/review/auth.py).
        """
        host = origin = content_type = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value
            elif name == b"origin":
                origin = value
            elif name == b"content-type":
                content_type = value
        if self.allowed_hosts is not None and (
            host is None or host.lower() not in self.allowed_hosts
        ):
            return 421, "misdirected_host", "this server does not answer for that Host"
        if (
            check_origin
            and origin is not None
            and origin.lower().rstrip(b"/") not in self.allowed_origins
        ):
            return 403, "origin_refused", "requests from browser pages are refused"
        if needs_json and (
            content_type is None
            or content_type.split(b";", 1)[0].strip().lower() != b"application/json"
        ):
            return 415, "unsupported_media_type", "the body must be application/json"
        return None
