"""Name/value properties both exporters write for fields that have no slot of their own.

CycloneDX carries them as ``properties``, SPDX 3.0.1 in its CycloneDX-properties extension;
the names and values are the same in both (``acs:*`` for ACS fields, ``agbom:*`` for agbom's
own), so a consumer reading either finds the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agbom.inventory import Component, ComponentType

COMMON_FIELDS = frozenset(
    {"id", "type", "name", "version", "description", "registration_provenance", "purl"}
)
TYPE_FIELDS: Mapping[ComponentType, frozenset[str]] = {
    ComponentType.MODEL: frozenset({"provider", "endpoint", "context_window", "args", "digest"}),
    ComponentType.MCP_SERVER: frozenset({"endpoint", "tools", "provider"}),
    ComponentType.A2A_PEER: frozenset({"endpoint", "protocol_version", "agent_card_ref"}),
    ComponentType.TOOL: frozenset({"provider", "capability", "digest"}),
    ComponentType.KNOWLEDGE_SOURCE: frozenset({"source_type", "endpoint", "schema_ref"}),
    ComponentType.MEMORY_STORE: frozenset({"scope", "store_type", "path", "window_size"}),
    ComponentType.AGENT_CAPABILITY: frozenset({"tools", "mcp_servers", "a2a_peers"}),
    ComponentType.SKILL: frozenset(
        {
            "definition",
            "declared_capabilities",
            "tools",
            "mcp_servers",
            "a2a_peers",
            "models",
            "composed_skills",
        }
    ),
}
# Scalar ACS fields with no slot of their own in either format, exported as acs:<field>.
ACS_SCALARS: Mapping[ComponentType, tuple[str, ...]] = {
    ComponentType.MODEL: ("context_window",),
    ComponentType.A2A_PEER: ("protocol_version",),
    ComponentType.KNOWLEDGE_SOURCE: ("source_type", "schema_ref"),
    ComponentType.MEMORY_STORE: ("scope", "store_type", "path", "window_size"),
}


def property_text(value: Any) -> str:
    """A property value: strings as they are, everything else as compact, key-sorted JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def common_property_pairs(component: Component) -> list[tuple[str, Any]]:
    """The ACS type and the registration provenance, one pair per value."""
    pairs: list[tuple[str, Any]] = [("acs:type", component.type.value)]
    provenance = component.get("registration_provenance")
    if isinstance(provenance, Mapping):
        for field in sorted(provenance):
            value = provenance[field]
            if value is None:
                continue
            name = f"acs:registration_provenance.{field}"
            if isinstance(value, list):
                pairs.extend((name, v) for v in value)
            else:
                pairs.append((name, value))
    return pairs
