"""Helpers shared by the store tests."""

from __future__ import annotations

import hashlib

from agbom.store import Digest


def make_digest(seed: str) -> Digest:
    """A valid sha256 digest derived from ``seed`` (distinct seeds give distinct digests)."""
    return Digest("sha256", hashlib.sha256(seed.encode()).hexdigest())


def register(store, skill_id: str, digest: Digest, *, agent_id: str = "agent-1", **extra):
    """Register a pair the way the Guardian does on steps/skillRegister."""
    fields = {
        "ref": f"file://skills/{skill_id}",
        "declared_capabilities": ["fs.read"],
        "composition": {"tools": ["read_file"]},
        "provenance": {"origin": "system", "source_id": "marketplace"},
        "tenant_id": None,
    }
    fields.update(extra)
    return store.record_registration(skill_id=skill_id, digest=digest, agent_id=agent_id, **fields)
