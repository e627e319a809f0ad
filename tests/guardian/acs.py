"""Builders for ACS requests used by the Guardian and transport tests."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime
from typing import Any

ALL_METHODS = [
    "steps/sessionStart",
    "steps/agentTrigger",
    "steps/turnStart",
    "steps/userMessage",
    "steps/agentResponse",
    "steps/knowledgeRetrieval",
    "steps/memoryContextRetrieval",
    "steps/memoryStore",
    "steps/toolCallRequest",
    "steps/toolCallResult",
    "steps/preCompact",
    "steps/postCompact",
    "steps/subagentStart",
    "steps/subagentStop",
    "steps/skillRegister",
    "steps/skillLoad",
    "steps/skillUnload",
    "steps/turnEnd",
    "steps/sessionEnd",
    "agbom/snapshot",
    "agbom/changed",
    "system/ping",
    "protocols/MCP/tools/call",
]

_ids = itertools.count(1)


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def request(
    method: str,
    payload: Any,
    *,
    session_id: str,
    agent_id: str = "agent-1",
    turn_id: str | None = None,
    request_id: str | None = None,
    timestamp: str | None = None,
    nonce: str | None = None,
    acs_version: str = "0.1.0",
    **metadata: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"agent_id": agent_id, "session_id": session_id, **metadata}
    if turn_id:
        meta["turn_id"] = turn_id
    params: dict[str, Any] = {
        "acs_version": acs_version,
        "request_id": request_id or str(uuid.uuid4()),
        "timestamp": timestamp or now_iso(),
        "metadata": meta,
        "payload": payload,
    }
    if nonce:
        params["nonce"] = nonce
    return {"jsonrpc": "2.0", "method": method, "id": next(_ids), "params": params}


def hello(session_id: str, methods: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    payload = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": methods or ALL_METHODS,
        "transports_supported": ["http", "stdio"],
        "provenance_producer": "deterministic",
        **extra,
    }
    return request("handshake/hello", payload, session_id=session_id)


def new_session_id() -> str:
    return str(uuid.uuid4())


SHA_A = "a" * 64
SHA_B = "b" * 64
SHA_C = "c" * 64


def digest(value: str = SHA_A) -> dict[str, str]:
    return {"algorithm": "sha256", "value": value}


def one_tool_agbom(name: str, capability: str) -> dict[str, Any]:
    """An AgBOM of agent-1 holding one local tool, ``name``, with ``capability``."""
    tool = {
        "id": name,
        "type": "tool",
        "name": name,
        "version": "1",
        "provider": "local",
        "capability": capability,
        "registration_provenance": {"origin": "system"},
    }
    return {"agent": {"id": "agent-1"}, "components": [tool]}


FILTERED_PACK = """
pack: filtered
rules:
  - id: F-001
    kind: flow
    severity: high
    action: deny
    message: "{argument} of {tool.name} from {origin}: {lineage}"
    sink: {tool: SINK}
    source: {origin: [tool_output, retrieved]}
"""
"""A pack of one deny flow rule filtered by source (the shape docs/rules.md documents), whose
sink is the tool named in place of ``SINK`` (``FILTERED_PACK.replace("SINK", "Bash")``)."""


# A small AgBOM (one tool exposed by one MCP server) shared by the Guardian and server tests.
SAMPLE_AGBOM = {
    "agent": {"id": "agent-1", "name": "coder"},
    "components": [
        {
            "id": "fs-read",
            "type": "tool",
            "name": "read_file",
            "version": "1.0.0",
            "provider": "local",
            "capability": "fs.read",
        },
        {
            "id": "gh",
            "type": "mcp_server",
            "name": "github",
            "version": "1.2.0",
            "endpoint": "https://api.example.com/mcp",
            "tools": ["fs-read"],
        },
    ],
}
