"""Component builders shared by the rules tests: minimal valid wire dicts and their graph."""

from __future__ import annotations

from typing import Any

from agbom.inventory import AgBOM, ComponentGraph

DIGEST = {"algorithm": "sha256", "value": "ab" * 32}
PROV = {"origin": "system"}


def tool(tid: str, cap: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": tid,
        "type": "tool",
        "name": tid,
        "version": "1",
        "provider": "acme",
        "capability": cap,
        **extra,
    }


def skill(sid: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "skill",
        "name": sid,
        "description": "d",
        "definition": {"ref": sid, "digest": DIGEST},
        "registration_provenance": PROV,
        **extra,
    }


def server(sid: str, tools: list[str], **extra: Any) -> dict[str, Any]:
    data = {
        "id": sid,
        "type": "mcp_server",
        "name": sid,
        "version": "1.0.0",
        "endpoint": None,
        "tools": tools,
        "registration_provenance": PROV,
    }
    data.update(extra)
    return data


def graph_of(*components: dict[str, Any]) -> ComponentGraph:
    return ComponentGraph(AgBOM.from_document({"components": list(components)}))
