"""The ACS v0.1.0 method table: which methods exist and what each one may answer.

Every method the Guardian accepts is described by a :class:`MethodSpec`. The table is data,
kept apart from the decision logic, so that "which dispositions may toolCallRequest return"
has exactly one answer in the code base (hooks.md, "Dispositions per hook").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

ACS_VERSION = "0.1.0"
SUPPORTED_MAJOR = 0
_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")


def version_supported(version: object) -> bool:
    """True for any ``X.Y.Z`` whose major version is :data:`SUPPORTED_MAJOR`.

    Accepts any value so that a non-string ``acs_version`` is simply unsupported.
    """
    if not isinstance(version, str):
        return False
    match = _SEMVER.fullmatch(version)
    return match is not None and int(match.group(1)) == SUPPORTED_MAJOR


class Disposition(StrEnum):
    """The five ACS decisions."""

    ALLOW = "allow"
    DENY = "deny"
    MODIFY = "modify"
    ASK = "ask"
    DEFER = "defer"


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """What the Guardian knows about one method.

    * ``allowed``: the dispositions a response to this method may carry. A handshake is
      answered with a ServerHello, not a decision, so its set is empty.
    * ``audited``: the request is written to the session's audit chain.
    * ``needs_session``: the request is only valid inside a session opened by
      ``handshake/hello`` (everything except ``handshake/hello`` and ``system/ping``).
    * ``payload_schema``: shipped schema file for ``params.payload`` (loadable with
      :func:`agbom._schema.load_schema`), or ``None`` for no payload check.
    * ``content_bearing``: the payload carries conversation or tool data (the hooks that
      ``agbom/snapshot`` must precede under ACS-Inspect).
    """

    name: str
    allowed: frozenset[Disposition]
    audited: bool = True
    needs_session: bool = True
    payload_schema: str | None = None
    content_bearing: bool = False

    def allows(self, disposition: Disposition | str) -> bool:
        """True when ``disposition`` is a legal answer to this method."""
        return disposition in self.allowed


_A = frozenset({Disposition.ALLOW})
_AD = frozenset({Disposition.ALLOW, Disposition.DENY})
_AM = frozenset({Disposition.ALLOW, Disposition.MODIFY})
_ADM = frozenset({Disposition.ALLOW, Disposition.DENY, Disposition.MODIFY})
_ALL = frozenset(Disposition)

# (camelCase hook name, dispositions, content-bearing)
_STEPS: tuple[tuple[str, frozenset[Disposition], bool], ...] = (
    ("sessionStart", _AD, False),
    ("agentTrigger", _ADM, True),
    ("turnStart", _AD, False),
    ("userMessage", _ADM, True),
    ("agentResponse", _ADM, True),
    ("knowledgeRetrieval", _ADM, True),
    ("memoryContextRetrieval", _ADM, True),
    ("memoryStore", _ADM, True),
    ("toolCallRequest", _ALL, True),
    ("toolCallResult", _ADM, True),
    ("preCompact", _AD, False),
    ("postCompact", _AM, True),
    ("subagentStart", _AD, False),
    ("subagentStop", _A, False),
    ("skillRegister", _AD, False),
    ("skillLoad", _AD, False),
    ("skillUnload", _A, False),
    ("turnEnd", _A, False),
    ("sessionEnd", _A, False),
)

STEP_NAMES: tuple[str, ...] = tuple(name for name, _, _ in _STEPS)
"""The 19 native hooks, in the order the catalog lists them."""


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _build() -> dict[str, MethodSpec]:
    table: dict[str, MethodSpec] = {}
    for name, allowed, content in _STEPS:
        method = f"steps/{name}"
        table[method] = MethodSpec(
            name=method,
            allowed=allowed,
            payload_schema=f"step-{_kebab(name)}.json",
            content_bearing=content,
        )
    table["agbom/snapshot"] = MethodSpec(
        name="agbom/snapshot", allowed=_AD, payload_schema="agbom-snapshot.json"
    )
    table["agbom/changed"] = MethodSpec(
        name="agbom/changed", allowed=_AD, payload_schema="agbom-changed.json"
    )
    table["system/ping"] = MethodSpec(
        name="system/ping",
        allowed=_A,
        audited=False,
        needs_session=False,
        payload_schema="system-ping.json",
    )
    table["handshake/hello"] = MethodSpec(
        name="handshake/hello",
        allowed=frozenset(),
        audited=False,
        needs_session=False,
        payload_schema="handshake-hello.json",
    )
    return table


METHODS: Mapping[str, MethodSpec] = MappingProxyType(_build())
"""Every exactly named method, keyed by its wire name."""

MCP_METHOD = MethodSpec(
    name="protocols/MCP/*",
    allowed=_ALL,
    payload_schema="mcp-message.json",
    content_bearing=True,
)
"""The spec shared by every wrapped MCP method (``protocols/MCP/<m>``, ``wrapped:mcp-<v>/<m>``)."""

_MCP_PREFIX = "protocols/MCP/"
_WRAPPED_MCP = re.compile(r"wrapped:mcp-[^/\s]+/\S+")


def lookup(method: object) -> MethodSpec | None:
    """The spec for ``method``, or ``None`` when ACS v0.1.0 defines no such method.

    Wrapped MCP methods share :data:`MCP_METHOD`; A2A wrapping is reserved for v0.2 and
    ``trace/*`` defines nothing yet, so both are unknown.
    """
    if not isinstance(method, str):
        return None
    spec = METHODS.get(method)
    if spec is not None:
        return spec
    if method.startswith(_MCP_PREFIX) and len(method) > len(_MCP_PREFIX):
        return MCP_METHOD
    if method.startswith("wrapped:mcp-") and _WRAPPED_MCP.fullmatch(method):
        return MCP_METHOD
    return None
