"""Sample components and a hypothesis strategy for valid AgBOM documents (shared by the
inventory tests; the basename is unique so the test modules can import it directly)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from agbom.inventory import REFERENCE_FIELDS, ComponentType

HEX_A = "ab" * 32
HEX_B = "cd" * 32

PROVENANCE = {"provenance_id": "p-1", "origin": "system", "source_id": "manifest.json"}

# Only the required fields of each type.
MINIMAL: dict[str, dict[str, Any]] = {
    "model": {
        "id": "m1",
        "type": "model",
        "name": "gpt-x",
        "version": "2025-01",
        "provider": "openai",
        "endpoint": "https://api.example/v1",
        "context_window": 128000,
    },
    "mcp_server": {
        "id": "srv1",
        "type": "mcp_server",
        "name": "files",
        "version": "1.2.0",
        "endpoint": "stdio",
        "tools": [],
    },
    "a2a_peer": {
        "id": "peer1",
        "type": "a2a_peer",
        "endpoint": "https://peer.example/a2a",
        "protocol_version": "0.3",
    },
    "tool": {
        "id": "t1",
        "type": "tool",
        "name": "read_file",
        "version": "1.0",
        "provider": "files",
        "capability": "fs.read",
    },
    "knowledge_source": {
        "id": "ks1",
        "type": "knowledge_source",
        "name": "docs",
        "source_type": "vector_db",
    },
    "memory_store": {
        "id": "mem1",
        "type": "memory_store",
        "name": "scratch",
        "scope": "session",
        "store_type": "redis",
    },
    "agent_capability": {
        "id": "cap1",
        "type": "agent_capability",
        "name": "research",
        "description": "Look things up",
    },
    "skill": {
        "id": "sk1",
        "type": "skill",
        "name": "summarize",
        "description": "Summarize a document",
        "definition": {
            "ref": "skills/summarize",
            "digest": {"algorithm": "sha256", "value": HEX_A},
        },
    },
}

# Every optional field, provenance, and references that resolve inside FULL_DOCUMENT.
FULL: dict[str, dict[str, Any]] = {
    "model": {
        **MINIMAL["model"],
        "args": {"temperature": 0.2},
        "registration_provenance": PROVENANCE,
    },
    "mcp_server": {
        **MINIMAL["mcp_server"],
        "tools": ["t1"],
        "registration_provenance": PROVENANCE,
    },
    "a2a_peer": {
        **MINIMAL["a2a_peer"],
        "name": "billing-agent",
        "agent_card_ref": "https://peer.example/.well-known/agent-card.json",
        "registration_provenance": PROVENANCE,
    },
    "tool": {
        **MINIMAL["tool"],
        "capability": ["fs.read", "fs.list"],
        "registration_provenance": PROVENANCE,
    },
    "knowledge_source": {
        **MINIMAL["knowledge_source"],
        "endpoint": "https://vectors.example",
        "schema_ref": "schemas/docs.json",
        "registration_provenance": PROVENANCE,
    },
    "memory_store": {
        **MINIMAL["memory_store"],
        "path": "/var/lib/agent/mem",
        "window_size": 50,
        "registration_provenance": PROVENANCE,
    },
    "agent_capability": {
        **MINIMAL["agent_capability"],
        "tools": ["t1"],
        "mcp_servers": ["srv1"],
        "a2a_peers": ["peer1"],
        "registration_provenance": PROVENANCE,
    },
    "skill": {
        **MINIMAL["skill"],
        "declared_capabilities": ["fs.read"],
        "tools": ["t1"],
        "mcp_servers": ["srv1"],
        "a2a_peers": ["peer1"],
        "models": ["m1"],
        "composed_skills": ["sk2"],
        "registration_provenance": PROVENANCE,
    },
}

SKILL2 = {
    **MINIMAL["skill"],
    "id": "sk2",
    "name": "outline",
    "definition": {"ref": "skills/outline", "digest": {"algorithm": "sha256", "value": HEX_B}},
}


def full_document() -> dict[str, Any]:
    """A document holding every type with every optional field (a fresh copy sharing nothing:
    deepcopy would keep the one PROVENANCE object shared between components)."""
    return json.loads(
        json.dumps(
            {
                "acs_version": "0.1.0",
                "agent": {"id": "agent-1", "name": "helper", "version": "1.0"},
                "components": [*FULL.values(), SKILL2],
            }
        )
    )


def minimal_document() -> dict[str, Any]:
    return copy.deepcopy({"components": list(MINIMAL.values())})


# -- hypothesis ----------------------------------------------------------------------------------

ID_POOL = ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
TYPES = tuple(ComponentType)
_short = st.text(alphabet="xyz01-", max_size=4)
_nullable = st.none() | _short
_digest = st.fixed_dictionaries(
    {"algorithm": st.sampled_from(["sha256", "SHA-256"]), "value": st.sampled_from([HEX_A, HEX_B])}
)
_provenance = st.fixed_dictionaries(
    {"origin": st.sampled_from(["system", "user_input", "external"])},
    optional={"source_id": _short},
)


def _fields(ctype: ComponentType) -> st.SearchStrategy[dict[str, Any]]:
    """Required fields plus some optional ones for one type (references added separately)."""
    required: dict[str, st.SearchStrategy[Any]]
    optional: dict[str, st.SearchStrategy[Any]] = {
        "registration_provenance": _provenance,
        "purl": _short,  # an unknown extra field: must be kept
    }
    if ctype is ComponentType.MODEL:
        required = {
            "name": _short,
            "version": _nullable,
            "provider": _nullable,
            "endpoint": _nullable,
            "context_window": st.none() | st.integers(0, 2**40),
        }
        optional["args"] = st.fixed_dictionaries({}, optional={"t": st.floats(0, 2)})
    elif ctype is ComponentType.MCP_SERVER:
        required = {"name": _short, "version": _nullable, "endpoint": _nullable}
    elif ctype is ComponentType.A2A_PEER:
        required = {"endpoint": _short, "protocol_version": _short}
        optional["agent_card_ref"] = _short
    elif ctype is ComponentType.TOOL:
        required = {
            "name": _short,
            "version": _nullable,
            "provider": _nullable,
            "capability": st.none() | _short | st.lists(_short, max_size=2),
        }
    elif ctype is ComponentType.KNOWLEDGE_SOURCE:
        required = {"name": _short, "source_type": st.sampled_from(["vector_db", "other"])}
        optional["endpoint"] = _nullable
    elif ctype is ComponentType.MEMORY_STORE:
        required = {
            "name": _short,
            "scope": st.sampled_from(["session", "global"]),
            "store_type": _short,
        }
        optional["window_size"] = st.integers(0, 100)
    elif ctype is ComponentType.AGENT_CAPABILITY:
        required = {"name": _short, "description": _short}
    else:
        required = {
            "name": _short,
            "description": _short,
            "definition": st.fixed_dictionaries({"ref": _short, "digest": _digest}),
        }
        optional["declared_capabilities"] = st.lists(_short, max_size=2)
    return st.fixed_dictionaries(required, optional=optional)


@st.composite
def agbom_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A valid wire document over ids from ID_POOL, with references between components
    (including skill cycles and self-composition), in shuffled component order."""
    chosen = draw(st.lists(st.sampled_from(ID_POOL), unique=True, max_size=len(ID_POOL)))
    types = {cid: draw(st.sampled_from(TYPES)) for cid in chosen}
    by_type: dict[ComponentType, list[str]] = {}
    for cid, ctype in types.items():
        by_type.setdefault(ctype, []).append(cid)
    components = []
    for cid, ctype in types.items():
        component = {"id": cid, "type": ctype.value, **draw(_fields(ctype))}
        for field, target_type in REFERENCE_FIELDS.get(ctype, {}).items():
            targets = by_type.get(target_type, [])
            if targets and draw(st.booleans()):
                component[field] = draw(st.lists(st.sampled_from(targets), unique=True))
        if ctype is ComponentType.MCP_SERVER:
            component.setdefault("tools", [])
        components.append(component)
    document: dict[str, Any] = {"components": draw(st.permutations(components))}
    if draw(st.booleans()):
        document["agent"] = {"id": draw(st.sampled_from(["agent-1", "agent-2"]))}
    if draw(st.booleans()):
        document["acs_version"] = "0.1.0"
    return document
