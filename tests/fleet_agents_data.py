"""Agents of a fleet named as the hooks name them (``RUNTIME/USER@HOST``, issue 40), each
with a timeline of AgBOM versions, written through the store's public calls: the fleet-agents
tests of the store, the read API and the pages check what this fleet must list."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agbom.store import Store
from tests.fleet_data import D1, D2, D3, FILESYSTEM, GITHUB, MODEL, T0, decide, doc, saver, skill

ALICE_CC = "claude-code/alice@laptop"
ALICE_CURSOR = "cursor/alice@laptop"
BOB = "claude-code/bob@build-7"
CLAIMED = "codex/claimed:carol@remote"
NAMELESS = "claude-code"  # a hook that could not tell who asked

GITHUB_063 = {**GITHUB, "version": "0.6.3"}

OSV = Path(__file__).parent / "advisories" / "fixtures" / "osv"
# In that export, GHSA-7q2m-agb1-fs01 (critical) names @acme/mcp-filesystem before 1.4.2;
# PYSEC-2099-41 (high) names mcp-server-fetch from 0.2 to before 0.6.2.
ACME_141 = {
    "id": "acme-fs", "type": "mcp_server", "name": "acme-fs", "version": "1.4.1",
    "endpoint": None, "tools": [], "purl": "pkg:npm/%40acme/mcp-filesystem@1.4.1",
}  # fmt: skip
ACME_142 = {**ACME_141, "version": "1.4.2", "purl": "pkg:npm/%40acme/mcp-filesystem@1.4.2"}
FETCH_05 = {
    "id": "fetch", "type": "mcp_server", "name": "fetch", "version": "0.5",
    "endpoint": None, "tools": [], "purl": "pkg:pypi/mcp-server-fetch@0.5",
}  # fmt: skip
DAVE, ERIN, FRANK = "cursor/dave@ws-1", "claude-code/erin@ws-2", "claude-code/frank@ws-3"


def build(store: Store) -> None:
    """alice on Claude Code: deploy@D1 and GitHub 0.6.2, then deploy@D2 and GitHub 0.6.3
    with the model added, then a refused AgBOM adding lint@D3, then one removing the model;
    alice on Cursor: deploy@D1; bob: lint@D3 and the filesystem server; carol (a claim):
    the model; the nameless agent: GitHub 0.6.2. Approvals as tests/fleet_data.py makes
    them: deploy@D1 approved, deploy@D2 pending, lint@D3 denied; GitHub approved by name,
    the filesystem server not."""
    save = saver(store)
    save("s-a1", ALICE_CC, skill("deploy", D1), GITHUB)
    save("s-a1", ALICE_CC, skill("deploy", D2), GITHUB_063, MODEL)
    save(
        "s-a1", ALICE_CC, skill("deploy", D2), GITHUB_063, MODEL, skill("lint", D3),
        accepted=False,
    )  # fmt: skip
    save("s-a2", ALICE_CC, skill("deploy", D2), GITHUB_063)
    save("s-ac", ALICE_CURSOR, skill("deploy", D1))
    save("s-b", BOB, skill("lint", D3), FILESYSTEM)
    save("s-c", CLAIMED, MODEL)
    save("s-n", NAMELESS, GITHUB)
    decide(store, ALICE_CC)


def add_advisory_agents(store: Store) -> None:
    """dave (Cursor) runs acme-fs 1.4.1 and fetch 0.5, erin acme-fs 1.4.1, frank the fixed
    acme-fs 1.4.2 and deploy@D2."""
    for n, (session, agent, components) in enumerate(
        (
            ("s-d", DAVE, (ACME_141, FETCH_05)),
            ("s-e", ERIN, (ACME_141,)),
            ("s-f", FRANK, (ACME_142, skill("deploy", D2))),
        )
    ):
        store.save_agbom_version(
            session, agent_id=agent, document=doc(agent, *components),
            agbom_hash="sha256:" + hashlib.sha256(session.encode()).hexdigest(),
            now=T0.replace(hour=10, minute=n),
        )  # fmt: skip
