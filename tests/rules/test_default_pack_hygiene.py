"""The default pack's AGB-HYG-001 (unpinned package) and AGB-HYG-006 (A2A card without
security) on the shapes a scan produces and on hand-written AgBOMs."""

from __future__ import annotations

from typing import Any

import pytest

from agbom.inventory import AgBOM, ComponentGraph
from agbom.rules import load_rules

RULES = load_rules()


def _fired(component: dict[str, Any]) -> set[str]:
    document = {"agent": {"id": "a"}, "components": [component]}
    return {f.rule_id for f in RULES.evaluate(ComponentGraph(AgBOM.from_document(document)))}


def _server(**fields: Any) -> dict[str, Any]:
    base = {
        "id": "srv",
        "type": "mcp_server",
        "name": "srv",
        "version": None,
        "endpoint": None,
        "tools": [],
        "registration_provenance": {"origin": "system"},
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("fields", "flagged"),
    [
        ({"purl": "pkg:npm/srv", "command": "npx -y srv"}, True),  # unpinned package
        ({"purl": "pkg:npm/srv@1.2.3", "version": "1.2.3", "command": "npx -y srv@1.2.3"}, False),
        ({"purl": "pkg:pypi/md@0.0.1a4", "version": "0.0.1a4"}, False),  # a pinned pre-release
        ({"purl": "pkg:npm/srv", "version": "latest"}, True),
        ({"purl": "pkg:github/org/repo"}, True),  # a git source without a ref
        ({"command": "node /opt/srv.js", "args": ["/opt/srv.js"]}, False),  # no package
        ({}, True),  # nothing says what runs: a package with an unknown version is assumed
        ({"endpoint": "https://mcp.example.com/mcp"}, False),  # a remote server
        # a bridge: the remote URL is its endpoint, the unpinned bridge package still counts
        ({"purl": "pkg:npm/mcp-remote", "endpoint": "https://mcp.example.com/sse"}, True),
        (
            {
                "purl": "pkg:npm/mcp-remote@0.1.29",
                "version": "0.1.29",
                "endpoint": "https://mcp.example.com/sse",
            },
            False,
        ),
    ],
)
def test_unpinned_package(fields: dict[str, Any], flagged: bool) -> None:
    assert ("AGB-HYG-001" in _fired(_server(**fields))) is flagged


@pytest.mark.parametrize(("schemes", "flagged"), [([], True), (["oauth"], False), (None, False)])
def test_a2a_card_without_security(schemes: list[str] | None, flagged: bool) -> None:
    peer: dict[str, Any] = {
        "id": "p",
        "type": "a2a_peer",
        "endpoint": "https://a.example.com",
        "protocol_version": "1.0",
        "registration_provenance": {"origin": "system"},
    }
    if schemes is not None:  # absent: an AgBOM that does not say, not a card without any
        peer["security_schemes"] = schemes
    assert ("AGB-HYG-006" in _fired(peer)) is flagged
