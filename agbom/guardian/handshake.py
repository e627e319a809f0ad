"""The handshake: what a ClientHello offers, and the ServerHello agbom answers it with.

The checks a hello must pass are here (a supported version, provenance when policy needs it,
the transport it arrived on, methods agbom knows), apart from what the Guardian then records
for the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agbom.guardian.config import GuardianConfig
from agbom.protocol import (
    ACS_VERSION,
    SUPPORTED_SIGNATURE_ALGORITHMS,
    AcsError,
    lookup,
    version_supported,
)
from agbom.protocol import errors as codes

AGBOM_SERIALIZATIONS = ("canonical", "cyclonedx-1.6", "spdx-3.0")
"""What the ServerHello advertises: only values of the handshake schema's enum (agbom also
renders CycloneDX 1.7 on request, which that enum has no value for)."""
PROFILES = ("acs-core", "acs-inspect", "acs-inspect-dynamic", "acs-audit")
PROVENANCE_PROFILE = "acs-provenance"
"""Accepted only from a client that declares ``provenance_producer: deterministic``: the
Guardian then refuses a data-bearing field without provenance and keeps the session's lineage
for flow rules (guardian/flow.py)."""
TRACE_PROFILE = "acs-trace"
"""Accepted too when the Guardian emits Trace events (``agbom serve --otlp-endpoint``)."""
KNOWN_TRANSPORTS = ("http", "https", "stdio")
"""Transport names a ClientHello may offer that agbom can serve over; others are ignored."""
APPROVER_TYPES = ("human",)
"""Approver types that ASK answers name (``ask_details.approver.type``)."""


@dataclass(frozen=True, slots=True)
class ClientOffer:
    """What a ClientHello offers, reduced to what agbom can agree to."""

    versions: tuple[str, ...]
    transports: tuple[str, ...]
    evaluated: tuple[str, ...]  # methods_evaluated: the declared methods agbom knows
    negotiated: frozenset[str]
    profiles: tuple[str, ...]  # as offered, in order, without repeats
    can_modify: bool  # what the client says of itself (an agbom extension of the hello)
    can_ask: bool
    deterministic: bool = False  # provenance_producer: deterministic


def read_client_hello(
    hello: Mapping[str, Any], config: GuardianConfig, transport: str | None
) -> ClientOffer:
    """Check a (schema-valid) ClientHello; raise the ACS error that refuses it."""
    versions = tuple(v for v in hello["acs_versions_supported"] if version_supported(v))
    if not versions:
        raise AcsError(
            codes.UNSUPPORTED_VERSION,
            "unsupported_version",
            "none of the client's ACS versions is supported",
            data={"supported_versions": [ACS_VERSION]},
        )
    if config.policy_requires_provenance and hello.get("provenance_producer") == "none":
        raise AcsError(
            codes.PROVENANCE_REQUIRED,
            "provenance_required",
            "this Guardian's policy requires deterministic provenance",
        )
    listed = list(dict.fromkeys(hello["transports_supported"]))
    # Names agbom does not know (a later client's "grpc", say) are ignored: the hello is
    # served over one it knows, and refused only when none is left.
    offered = [t for t in listed if t in KNOWN_TRANSPORTS]
    if not offered:
        raise AcsError(
            codes.SESSION_REFUSED,
            "no_common_transport",
            f"none of the offered transports ({_listing(listed)}) is one this Guardian "
            f"knows ({', '.join(KNOWN_TRANSPORTS)})",
        )
    if transport is not None:
        # The hello arrived on a transport: the client must have offered it. "https" also
        # covers plain HTTP here, for a client behind a TLS-terminating proxy.
        arrival = ("http", "https") if transport == "http" else (transport,)
        transports = [t for t in offered if t in arrival]
        if not transports:
            raise AcsError(
                codes.SESSION_REFUSED,
                "transport_not_offered",
                f"the hello arrived over {transport}, which its transports_supported "
                f"({_listing(listed)}) does not list",
            )
    else:
        transports = [
            t
            for t in offered
            if t in config.transports or t == "https" and "http" in config.transports
        ]
    if not transports:
        raise AcsError(codes.SESSION_REFUSED, "no_common_transport", "no transport in common")
    implemented = [m for m in hello["methods_implemented"] if lookup(m) is not None]
    evaluated = sorted(m for m in implemented if m not in ("handshake/hello",))
    negotiated = set(evaluated)
    if any(m.startswith(("protocols/", "wrapped:")) for m in implemented):
        negotiated.add("protocols/MCP/*")
    declared = hello.get("client_capabilities")
    declared = declared if isinstance(declared, Mapping) else {}
    return ClientOffer(
        versions=versions,
        transports=tuple(transports),
        evaluated=tuple(evaluated),
        negotiated=frozenset(negotiated),
        profiles=tuple(dict.fromkeys(hello.get("profiles_supported") or [])),
        deterministic=hello.get("provenance_producer") == "deterministic",
        can_modify=declared.get("modify", True) is not False,
        can_ask=declared.get("ask", True) is not False,
    )


def _listing(names: list[str], limit: int = 8) -> str:
    """Offered names for a message: at most ``limit``, each cut to 32 characters and shown
    with escapes, so a hostile hello cannot fill the answer or the terminal reading it."""
    shown = ", ".join(ascii(name[:32]) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def server_hello(
    offer: ClientOffer, config: GuardianConfig, *, signing: bool, can_ask: bool
) -> dict[str, Any]:
    """The ServerHello for ``offer``: what this Guardian evaluates, signs and accepts."""
    profiles = (*PROFILES, TRACE_PROFILE) if config.traced else PROFILES
    if offer.deterministic:
        profiles = (*profiles, PROVENANCE_PROFILE)
    hello: dict[str, Any] = {
        "negotiated_version": max(
            offer.versions, key=lambda v: tuple(int(p) for p in v.split("."))
        ),
        "methods_evaluated": list(offer.evaluated),
        "selected_transport": offer.transports[0],
        "timeout_config": {"default_ms": config.default_timeout_ms, "per_method_ms": {}},
        "signature_algorithms_supported": list(SUPPORTED_SIGNATURE_ALGORITHMS) if signing else [],
        "skew_window_ms": config.skew_window_ms,
        "on_decision_failure": "deny" if config.on_decision_failure == "deny" else "proceed",
        "approver_types_supported": list(APPROVER_TYPES) if can_ask else [],
        "policy_requires_provenance": config.policy_requires_provenance,
        "agbom_serializations_supported": list(AGBOM_SERIALIZATIONS),
        # Only profiles the client offered (and agbom implements): an empty offer gets [].
        "profiles_accepted": [p for p in offer.profiles if p in profiles],
    }
    if config.traced:
        # Spans go to the operator's collector, whose address is not the client's business:
        # no otel_collector_endpoint. OCSF is an export of the audit chain, not emitted live.
        hello["trace_emission"] = {"otel_enabled": True, "ocsf_enabled": False}
    return hello
