"""Sessions, AgBOM versions, the component index and skill churn."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agbom.store import SqliteStore, StoreError

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def doc(*components: dict) -> dict:
    return {"agent": {"id": "a"}, "components": list(components)}


MODEL = {"id": "m1", "type": "model", "name": "gpt-x", "version": "1"}
MODEL_V2 = {"id": "m1", "type": "model", "name": "gpt-x", "version": "2"}
MCP = {"id": "gh", "type": "mcp_server", "name": "github", "version": None, "tools": []}
PEER = {"id": "peer-1", "type": "a2a_peer", "endpoint": "https://p", "protocol_version": "1"}


def test_sessions_upsert_and_list(store: SqliteStore) -> None:
    store.upsert_session("s1", agent_id="a", tenant_id="acme", status="active", started_at=T0)
    store.upsert_session("s2", agent_id="b", status="active", parent_session_id="s1")
    store.upsert_session(
        "s1", agent_id="a", status="ended", ended_at=T0 + timedelta(hours=1), negotiated={"p": 1}
    )
    s1 = store.get_session("s1")
    assert s1 is not None
    assert s1["status"] == "ended"
    assert s1["tenant_id"] == "acme"  # kept: the update passed None
    assert s1["started_at"] == "2025-03-01T09:00:00Z"
    assert s1["ended_at"] == "2025-03-01T10:00:00Z"
    assert s1["negotiated"] == {"p": 1}
    assert store.get_session("nope") is None
    assert [s["session_id"] for s in store.list_sessions()] == ["s1", "s2"]
    assert [s["session_id"] for s in store.list_sessions("b")] == ["s2"]
    assert store.get_session("s2")["parent_session_id"] == "s1"


def test_agbom_versions_number_per_session(store: SqliteStore) -> None:
    v1 = store.save_agbom_version(
        "s1", agent_id="a", document=doc(MODEL, MCP), agbom_hash="h1", now=T0
    )
    v2 = store.save_agbom_version(
        "s1",
        agent_id="a",
        document=doc(MODEL_V2, MCP),
        agbom_hash="h2",
        change={"changed": ["m1"]},
        now=T0 + timedelta(minutes=5),
    )
    other = store.save_agbom_version("s2", agent_id="b", document=doc(MCP), agbom_hash="h3")
    assert (v1, v2, other) == (1, 2, 1)
    latest = store.agbom_version("s1")
    assert latest is not None and latest["version"] == 2 and latest["change"] == {"changed": ["m1"]}
    first = store.agbom_version("s1", 1)
    assert first is not None and first["document"] == doc(MODEL, MCP)
    assert first["agbom_hash"] == "h1"
    assert store.agbom_version("s1", 3) is None
    latest_b = store.latest_agbom_for_agent("b")
    assert latest_b is not None and latest_b["session_id"] == "s2"
    assert store.latest_agbom_for_agent("nobody") is None


def test_component_index_answers_who_uses_what_since_when(store: SqliteStore) -> None:
    store.save_agbom_version("s1", agent_id="a", document=doc(MODEL, MCP), agbom_hash="h", now=T0)
    later = T0 + timedelta(days=1)
    store.save_agbom_version(
        "s1", agent_id="a", document=doc(MODEL, MCP), agbom_hash="h", now=later
    )
    store.save_agbom_version("s2", agent_id="b", document=doc(MCP, PEER), agbom_hash="h", now=later)
    servers = store.list_components(type="mcp_server")
    assert len(servers) == 1
    gh = servers[0]
    assert gh["name"] == "github" and gh["version"] is None
    assert gh["agents"] == ["a", "b"] and gh["sessions"] == 2
    assert gh["first_seen"] == "2025-03-01T09:00:00Z"  # since when: first version of s1
    assert gh["last_seen"] == "2025-03-02T09:00:00Z"
    models = store.list_components(type="model")
    assert [(m["name"], m["version"], m["agents"]) for m in models] == [("gpt-x", "1", ["a"])]
    assert [c["component_id"] for c in store.list_components(name="git*")] == ["gh"]
    peers = store.list_components(type="a2a_peer")
    assert peers[0]["name"] == "peer-1"  # no name: indexed under its id
    agents = store.list_agents()
    assert [(a["agent_id"], a["sessions"]) for a in agents] == [("a", 1), ("b", 1)]


def test_agbom_version_rejects_non_documents(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match="must be an object"):
        store.save_agbom_version("s1", agent_id="a", document=[1], agbom_hash="h")  # type: ignore[arg-type]
    assert store.agbom_version("s1") is None


def test_skill_churn(store: SqliteStore) -> None:
    counts = [store.record_skill_event("s1", "pdf", "load") for _ in range(3)]
    assert counts == [1, 2, 3]
    assert store.record_skill_event("s1", "pdf", "unload") == 1
    assert store.record_skill_event("s1", "web", "load") == 1
    assert store.record_skill_event("s2", "pdf", "load") == 1
    churn = store.skill_churn("s1")
    assert [(c["skill_id"], c["loads"], c["unloads"]) for c in churn] == [
        ("pdf", 3, 1),
        ("web", 1, 0),
    ]
    assert len(store.skill_churn()) == 3
    with pytest.raises(StoreError, match="load"):
        store.record_skill_event("s1", "pdf", "reload")
