"""A small fleet written through the store's public calls, for the fleet-components tests of
the store, the read API, the CLI and the page (each checks what this fleet must list)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from agbom.scan.lock import canonical_tool, tool_set_pin
from agbom.store import Digest, Store

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def digest(seed: str) -> Digest:
    return Digest("sha256", hashlib.sha256(seed.encode()).hexdigest())


D1, D2, D3 = digest("deploy-1"), digest("deploy-2"), digest("lint-1")


def skill(skill_id: str, d: Digest, name: str | None = None) -> dict[str, Any]:
    return {
        "id": skill_id,
        "type": "skill",
        "name": name or skill_id,
        "description": "a skill",
        # written as agents may spell it: the store compares digests normalized
        "definition": {
            "ref": f"file://{skill_id}",
            "digest": {"algorithm": "SHA-256", "value": d.value.upper()},
        },
    }


GITHUB = {
    "id": "mcp-github",
    "type": "mcp_server",
    "name": "github",
    "version": "0.6.2",
    "endpoint": "https://api.githubcopilot.com/mcp/",
    "tools": [],
}
FILESYSTEM = {
    "id": "fs",
    "type": "mcp_server",
    "name": "filesystem",
    "version": None,
    "endpoint": None,
    "purl": "pkg:npm/%40modelcontextprotocol/server-filesystem",
    "tools": [],
}
MODEL = {
    "id": "m",
    "type": "model",
    "name": "claude-sonnet-4",
    "version": "20250514",
    "provider": "anthropic",
    "endpoint": None,
    "context_window": None,
}
PEER = {
    "id": "p",
    "type": "a2a_peer",
    "endpoint": "https://peer.example/a2a",
    "protocol_version": "1",
}
TOOL = {
    "id": "t",
    "type": "tool",
    "name": "search",
    "version": None,
    "provider": None,
    "capability": None,
}


def doc(agent: str, *components: dict[str, Any]) -> dict[str, Any]:
    return {"agent": {"id": agent}, "components": sorted(components, key=lambda c: c["id"])}


def saver(store: Store) -> Any:
    """``save(session, agent, *components, accepted=True)``: one AgBOM version each call, a
    minute after the last (from :data:`T0`)."""
    at = T0

    def save(
        session: str, agent: str, *components: dict[str, Any], accepted: bool = True,
        findings: list[dict[str, Any]] | None = None,
    ) -> None:  # fmt: skip
        nonlocal at
        at += timedelta(minutes=1)
        store.save_agbom_version(
            session,
            agent_id=agent,
            document=doc(agent, *components),
            agbom_hash="sha256:" + hashlib.sha256(f"{session}{at}".encode()).hexdigest(),
            now=at,
            accepted=accepted,
            change={"method": "agbom/snapshot", "findings": findings} if findings else None,
        )

    return save


def finding(rule_id: str, severity: str, *components: str) -> dict[str, Any]:
    """A warning as the Guardian keeps it with the AgBOM it took."""
    return {"rule_id": rule_id, "severity": severity, "action": "warn", "components": components}


def decide(store: Store, registered_by: str) -> None:
    """deploy@D1 approved, deploy@D2 pending, lint@D3 denied (each registered by
    ``registered_by``); GitHub's server approved under its name."""
    for skill_id, d, status in (
        ("deploy", D1, "approved"),
        ("deploy", D2, None),
        ("lint", D3, "denied"),
    ):
        store.record_registration(
            skill_id=skill_id,
            digest=d,
            agent_id=registered_by,
            ref=f"file://{skill_id}",
            declared_capabilities=[],
            composition={},
            provenance=None,
            tenant_id=None,
        )
        if status is not None:
            store.set_status(skill_id, d, status, actor="rev", reason="checked")
    canonical = [
        canonical_tool(
            {"name": "search", "description": "s", "inputSchema": {"type": "object"}}, "t"
        )
    ]
    pin = tool_set_pin(canonical)
    pin["definitions"] = canonical
    store.approve_server("GitHub", pin=pin, actor="rev", reason="ok")


def build(store: Store) -> None:
    """alice: an old session with deploy@D1, then her latest with deploy@D2 and GitHub;
    bob: deploy@D1, the filesystem server, the model and a peer; carol: an accepted AgBOM
    with the model, then a refused one with lint@D3 (never in use); dave: lint@D3 and
    GitHub. Approvals: deploy@D1 approved, deploy@D2 pending, lint@D3 denied; GitHub has an
    approved pin under its name, the filesystem server none. bob's and dave's AgBOMs keep
    rule findings (:data:`FINDINGS`)."""
    save = saver(store)
    save("s-alice-1", "alice", skill("deploy", D1), MODEL)
    save("s-bob-1", "bob", skill("deploy", D1), FILESYSTEM, MODEL, PEER, TOOL, findings=[
        finding("AGB-FS-WRITE", "high", "fs"), finding("AGB-FS-ROOT", "low", "fs", "m"),
    ])  # fmt: skip
    save("s-alice-2", "alice", skill("deploy", D2), GITHUB)
    save("s-carol-1", "carol", MODEL)
    save("s-carol-1", "carol", MODEL, skill("lint", D3), accepted=False)
    save("s-dave-1", "dave", skill("lint", D3, name="Lint_100%"), GITHUB, findings=[
        finding("AGB-GH-TOKEN", "medium", "mcp-github"),
    ])  # fmt: skip
    decide(store, "alice")


DEPLOY_D1 = ("skill", "deploy", f"sha256:{D1.value}")
DEPLOY_D2 = ("skill", "deploy", f"sha256:{D2.value}")
LINT_D3 = ("skill", "lint", f"sha256:{D3.value}")
GITHUB_KEY = ("mcp_server", "https://api.githubcopilot.com/mcp/", "0.6.2")
FILESYSTEM_KEY = ("mcp_server", "pkg:npm/%40modelcontextprotocol/server-filesystem", None)
MODEL_KEY = ("model", "anthropic/claude-sonnet-4", "20250514")
PEER_KEY = ("a2a_peer", "https://peer.example/a2a", None)

EXPECTED = {
    # (type, ref, version): (name, agents, status)
    PEER_KEY: ("p", 1, None),  # a peer without a name is indexed by its id
    FILESYSTEM_KEY: ("filesystem", 1, "unapproved"),
    GITHUB_KEY: ("github", 2, "approved"),
    MODEL_KEY: ("claude-sonnet-4", 2, None),
    DEPLOY_D1: ("deploy", 1, "approved"),
    DEPLOY_D2: ("deploy", 1, "pending"),
    LINT_D3: ("Lint_100%", 1, "denied"),
}
"""What the fleet lists."""

FINDINGS = {
    # (type, ref, version): (worst severity, rule ids) of the findings the latest AgBOMs keep
    FILESYSTEM_KEY: ("high", ["AGB-FS-ROOT", "AGB-FS-WRITE"]),  # bob's
    MODEL_KEY: ("low", ["AGB-FS-ROOT"]),  # bob's: the finding names the model too
    GITHUB_KEY: ("medium", ["AGB-GH-TOKEN"]),  # dave's (alice's AgBOM has none)
}
"""The components with findings (the others have none)."""


def in_order(keys: list[tuple[str, str, str | None]]) -> list[tuple[str, str, str | None]]:
    """The order the fleet lists them in: by type, then name, ref and version, bytewise."""
    return sorted(keys, key=lambda k: (k[0], EXPECTED[k][0], k[1], k[2] or ""))
