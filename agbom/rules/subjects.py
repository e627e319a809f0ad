"""What rule predicates look at, and the small normalizers they share.

:class:`Subject` (a component, the agent root or a placeholder node) and the pure helpers over
its data: capability coverage, endpoints and hosts, purls and their index keys, and whether a
version is pinned. They do no I/O and import nothing else from ``agbom.rules``, so the
guardian and the advisory index use them without loading the predicates
(:mod:`agbom.rules.matchers`).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from packageurl import PackageURL

from agbom.inventory import ROOT_ID, Component

_GLOB_CHARS = frozenset("*?[")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "grpc": 443}
_UNPINNED_VERSIONS = frozenset({"", "latest", "*", "x", "next", "any", "main", "master", "head"})
_RANGE_CHARS = re.compile(r"[\^~<>*|]|\s-\s|\.x\b")


class MatchSpecError(ValueError):
    """A match specification is malformed; ``key`` names the offending key."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(message)


# -- subjects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subject:
    """What a predicate looks at: a component, the agent root, or a placeholder node."""

    id: str
    type: str
    data: Mapping[str, Any]

    @classmethod
    def of(cls, component: Component) -> Subject:
        return cls(component.id, component.type.value, component.data)

    @classmethod
    def root(cls, agent: Mapping[str, Any] | None = None) -> Subject:
        return cls(ROOT_ID, "agent", agent or {})

    @property
    def name(self) -> str:
        value = self.data.get("name")
        return value if isinstance(value, str) and value else self.id

    @property
    def version(self) -> str | None:
        value = self.data.get("version")
        if isinstance(value, str) and value:
            return value
        purl = parse_purl(self.data.get("purl"))
        return purl.version if purl is not None and purl.version else None


# -- small normalizers ------------------------------------------------------------------------


def is_glob(value: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in value)


def capabilities_of(data: Mapping[str, Any]) -> tuple[str, ...]:
    """A tool's ``capability`` (string or list) as a tuple of lower-case names."""
    value = data.get("capability")
    if isinstance(value, str):
        return (value.strip().lower(),) if value.strip() else ()
    if isinstance(value, list):
        return tuple(v.strip().lower() for v in value if isinstance(v, str) and v.strip())
    return ()


def allowed_tool_capabilities(data: Mapping[str, Any]) -> frozenset[str]:
    """The capabilities a skill's own ``allowed_tools`` grant (``Bash(...)`` ->
    ``process.execute``, as the scan recorded them), lower-case.

    A capability declared because the skill names the tool that grants it is backed by that
    tool, so the over-broad check does not count it as more than the skill needs."""
    tools = data.get("allowed_tools")
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(
        t["capability"].strip().lower()
        for t in tools
        if isinstance(t, Mapping) and isinstance(t.get("capability"), str)
    )


def covers(declared: str, capability: str) -> bool:
    """Whether a declared capability grants ``capability``.

    ``*`` covers everything; ``fs`` and ``fs.*`` cover ``fs`` and every ``fs.<anything>``;
    any other name covers itself and its own sub-names (``net.http`` covers ``net.http.get``).
    Comparison is case-insensitive.
    """
    declared = declared.strip().lower()
    capability = capability.strip().lower()
    if declared in ("*", ".*"):
        return True
    if declared.endswith(".*"):
        declared = declared[:-2]
    return capability == declared or capability.startswith(declared + ".")


def covered_by_any(declared: Iterable[str], capability: str) -> bool:
    """Whether any declared capability covers ``capability`` (same rule as :func:`covers`)."""
    names = declared if isinstance(declared, (set, frozenset)) else normalize_caps(declared)
    capability = capability.strip().lower()
    if capability in names or "*" in names or ".*" in names or capability + ".*" in names:
        return True
    parts = capability.split(".")
    for i in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in names or prefix + ".*" in names:
            return True
    return False


def normalize_caps(declared: Iterable[str]) -> frozenset[str]:
    """Lower-cased, stripped capability names, ready for :func:`covered_by_any`."""
    # Wire data: the annotation is what callers promise, not what an AgBOM may hold.
    return frozenset(
        d.strip().lower()
        for d in declared
        if isinstance(d, str) and d.strip()  # type: ignore[redundant-expr]
    )


def normalize_host(host: str) -> str:
    """Lower-case, strip one trailing dot, IDNA-encode non-ASCII labels, drop IPv6 brackets."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.endswith("."):
        host = host[:-1]
    if host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass  # keep the lower-cased form; it will simply not equal an ASCII pattern
    return host


def is_loopback(host: str) -> bool:
    """``localhost`` (and ``*.localhost``) or a loopback IP literal."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Endpoint:
    scheme: str
    host: str
    port: int | None


@functools.lru_cache(maxsize=65536)
def parse_endpoint(url: str) -> Endpoint | None:
    """Split an endpoint URL; ``None`` when it has no host (stdio, file paths, junk)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    return Endpoint(scheme, normalize_host(parts.hostname), port or _DEFAULT_PORTS.get(scheme))


@functools.lru_cache(maxsize=65536)
def parse_purl(value: Any) -> PackageURL | None:
    if not isinstance(value, str) or not value.startswith("pkg:"):
        return None
    try:
        return PackageURL.from_string(value)
    except ValueError:
        return None


def _norm_purl_name(ptype: str, name: str) -> str:
    # PyPI names compare after PEP 503 normalization; npm and most others are lower-case.
    if ptype == "pypi":
        return re.sub(r"[-_.]+", "-", name).lower()
    if ptype in ("npm", "github", "golang", "nuget", "composer"):
        return name.lower()
    return name


def _norm_purl_namespace(ptype: str, namespace: str | None) -> str:
    namespace = unquote(namespace or "")
    if ptype in ("npm", "github", "golang", "composer"):
        return namespace.lower()
    return namespace


def purl_index_key(value: Any) -> str | None:
    """A cheap ``type/namespace/name`` key for indexing; a superset filter, not a match."""
    if not isinstance(value, str) or not value.startswith("pkg:"):
        return None
    head = value[4:].lstrip("/").split("#", 1)[0].split("?", 1)[0]
    slash = head.rfind("/")
    at = head.find("@", slash + 1)
    if at != -1:
        head = head[:at]
    return re.sub(r"[-_.]+", "-", unquote(head).lower())


def unpinned_reason(subject: Subject) -> str | None:
    """Why a component's version is not pinned, or ``None`` when it is pinned."""
    purl = parse_purl(subject.data.get("purl"))
    version = subject.data.get("version")
    candidates: list[str] = []
    if isinstance(version, str):
        candidates.append(version)
    if purl is not None and purl.version:
        candidates.append(purl.version)
    package = subject.data.get("package")
    requested = package.get("requested") if isinstance(package, Mapping) else None
    if isinstance(requested, str) and requested:
        # asked for a moving tag or a range (an image's :latest, npm's @latest, ^1.2)
        if requested.strip().lower() in _UNPINNED_VERSIONS:
            return f"version {requested!r} is a moving tag"
        return f"version {requested!r} is not an exact version"
    if not candidates:
        return "no version is given"
    for candidate in candidates:
        text = candidate.strip().lstrip("v=").lower()
        if text in _UNPINNED_VERSIONS:
            return f"version {candidate!r} is a moving tag"
        if _RANGE_CHARS.search(candidate):
            return f"version {candidate!r} is a range"
    return None
