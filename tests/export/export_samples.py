"""Sample AgBOMs shared by the export tests (a plain module: conftest names collide)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

DIGEST = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def every_type_document() -> dict[str, Any]:
    """One component of every type, with references and scan-style extra fields."""
    return {
        "acs_version": "0.1.0",
        "agent": {"id": "agent-1", "name": "Every Type Agent", "version": "1.2.3"},
        "generated_at": "2025-03-04T05:06:07+02:00",
        "components": [
            {
                "id": "model-1",
                "type": "model",
                "name": "claude",
                "version": "4",
                "provider": "anthropic",
                "endpoint": "https://api.anthropic.com/v1",
                "context_window": 200000,
                "args": {"temperature": 0.1, "api_key": "sk-ant-SECRET-MODEL-KEY"},
                "purl": "pkg:huggingface/org/model@1",
            },
            {
                "id": "tool-1",
                "type": "tool",
                "name": "read_file",
                "version": None,
                "provider": "runtime",
                "capability": ["fs.read", "fs.list"],
            },
            {
                "id": "mcp-1",
                "type": "mcp_server",
                "name": "filesystem",
                "version": "1.0.0",
                "endpoint": None,
                "tools": ["tool-1"],
                "transport": "stdio",
                "command": "npx -y server-fs --api-key SECRET-CLI-KEY /work",
                "env": {"GITHUB_TOKEN": "ghp_SECRET_ENV_VALUE"},
                "found_in": ["/home/u/.mcp.json", "/home/u/project/.mcp.json"],
                "disabled": False,
                "purl": "pkg:npm/%40scope/server-fs@1.0.0",
            },
            {
                "id": "peer-1",
                "type": "a2a_peer",
                "name": "flights",
                "endpoint": "https://bob:SECRET-PASSWORD@peer.example.com/a2a?token=SECRET-QUERY",
                "protocol_version": "0.2.5",
                "agent_card_ref": "https://peer.example.com/.well-known/agent-card.json",
            },
            {
                "id": "kb-1",
                "type": "knowledge_source",
                "name": "docs",
                "source_type": "vector_db",
                "endpoint": "https://vectors.example.com/c/docs",
                "schema_ref": "https://schemas.example.com/doc.json",
            },
            {
                "id": "mem-1",
                "type": "memory_store",
                "name": "buffer",
                "scope": "session",
                "store_type": "redis",
                "window_size": 20,
                "path": "agents/buffer",
            },
            {
                "id": "cap-1",
                "type": "agent_capability",
                "name": "code",
                "description": "write code",
                "tools": ["tool-1"],
                "mcp_servers": ["mcp-1"],
                "a2a_peers": ["peer-1"],
            },
            {
                "id": "skill-1",
                "type": "skill",
                "name": "review",
                "description": "review code",
                "definition": {
                    "ref": "https://skills.example.com/review/SKILL.md",
                    "digest": {"algorithm": "SHA-256", "value": DIGEST.upper()},
                },
                "declared_capabilities": ["fs.read"],
                "tools": ["tool-1"],
                "models": ["model-1"],
                "composed_skills": ["skill-2"],
                "registration_provenance": {
                    "provenance_id": "p-1",
                    "origin": "system",
                    "source_id": "registry",
                },
            },
            {
                "id": "skill-2",
                "type": "skill",
                "name": "lint",
                "description": "lint code",
                "definition": {
                    "ref": "skills/lint/SKILL.md",
                    "digest": {"algorithm": "sha512", "value": "ab" * 20},
                },
            },
        ],
    }
