"""Components across the fleet: the distinct components of every agent's latest accepted
AgBOM, with their agents and approval status, filtered and paged (both backends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agbom.store import Store, StoreValueError
from tests import fleet_data
from tests.fleet_data import (
    D1,
    DEPLOY_D1,
    DEPLOY_D2,
    EXPECTED,
    FILESYSTEM_KEY,
    GITHUB_KEY,
    LINT_D3,
    MODEL_KEY,
    PEER_KEY,
)


def keys(page: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(c["type"], c["ref"], c["version"]) for c in page["components"]]


@pytest.fixture
def fleet(store: Store) -> Store:
    fleet_data.build(store)
    return store


def test_every_distinct_component_of_the_latest_agboms(fleet: Store) -> None:
    page = fleet.fleet_components()
    assert page["total"] == len(EXPECTED) and (page["limit"], page["offset"]) == (100, 0)
    assert keys(page) == fleet_data.in_order(list(EXPECTED))
    for row in page["components"]:
        name, agents, status = EXPECTED[(row["type"], row["ref"], row["version"])]
        assert (row["name"], row["agents"], row["status"]) == (name, agents, status), row
    # a tool is not a fleet component; alice's first session (deploy@D1) is not her latest,
    # and carol's refused AgBOM (lint@D3) is not in use: lint counts dave alone
    assert {r["type"] for r in page["components"]} == {"skill", "mcp_server", "model", "a2a_peer"}
    fs = next(
        r for r in page["components"] if (r["type"], r["ref"], r["version"]) == FILESYSTEM_KEY
    )
    assert fs["purl"] == "pkg:npm/%40modelcontextprotocol/server-filesystem"
    gh = next(r for r in page["components"] if (r["type"], r["ref"], r["version"]) == GITHUB_KEY)
    assert (gh["first_seen"], gh["last_seen"]) == ("2026-03-01T09:03:00Z", "2026-03-01T09:06:00Z")


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"type": "skill"}, [DEPLOY_D1, DEPLOY_D2, LINT_D3]),
        ({"type": "mcp_server"}, [FILESYSTEM_KEY, GITHUB_KEY]),
        ({"status": "approved"}, [GITHUB_KEY, DEPLOY_D1]),
        ({"status": "pending"}, [DEPLOY_D2]),
        ({"status": "denied"}, [LINT_D3]),
        ({"status": "unapproved"}, [FILESYSTEM_KEY]),
        ({"status": "unreviewed"}, []),
        ({"type": "mcp_server", "status": "approved"}, [GITHUB_KEY]),
        ({"search": "GITHUB"}, [GITHUB_KEY]),  # case-insensitive, name
        ({"search": "modelcontextprotocol"}, [FILESYSTEM_KEY]),  # purl
        ({"search": "anthropic/"}, [MODEL_KEY]),  # ref
        ({"search": "100%"}, [LINT_D3]),  # % and _ are literal, not patterns
        ({"search": "_"}, [LINT_D3]),
        ({"search": "%"}, [FILESYSTEM_KEY, LINT_D3]),  # the purl holds %40
        ({"search": ""}, list(EXPECTED)),
    ],
)
def test_filters(fleet: Store, filters: dict[str, Any], expected: list[Any]) -> None:
    page = fleet.fleet_components(**filters)
    assert keys(page) == fleet_data.in_order(expected)
    assert page["total"] == len(expected)


def test_pages_cover_the_list_once(fleet: Store) -> None:
    seen = []
    for offset in range(0, 9, 2):
        page = fleet.fleet_components(limit=2, offset=offset)
        if offset < len(EXPECTED):
            assert page["total"] == len(EXPECTED) and len(page["components"]) <= 2
        else:
            assert page == {"total": None, "limit": 2, "offset": offset, "components": []}
        seen += keys(page)
    assert seen == fleet_data.in_order(list(EXPECTED))


def test_agents_of_one_component(fleet: Store) -> None:
    agents = fleet.fleet_component_agents(*GITHUB_KEY)
    assert agents["total"] == 2
    assert [(a["agent_id"], a["session_id"], a["status"]) for a in agents["agents"]] == [
        ("alice", "s-alice-2", "approved"),
        ("dave", "s-dave-1", "approved"),
    ]
    assert [a["agent_id"] for a in fleet.fleet_component_agents(*DEPLOY_D1)["agents"]] == ["bob"]
    assert [a["agent_id"] for a in fleet.fleet_component_agents(*PEER_KEY)["agents"]] == ["bob"]
    second = fleet.fleet_component_agents(*MODEL_KEY, limit=1, offset=1)
    assert second["total"] == 2 and [a["agent_id"] for a in second["agents"]] == ["carol"]
    assert fleet.fleet_component_agents("skill", "deploy", "sha256:" + "0" * 64)["agents"] == []


def test_an_expired_approval_is_not_approved(fleet: Store) -> None:
    now = datetime.now(UTC)
    later = now + timedelta(hours=1)
    fleet.set_status("deploy", D1, "approved", actor="rev", reason="short", expires_at=later)
    assert keys(fleet.fleet_components(status="approved")) == [GITHUB_KEY, DEPLOY_D1]
    fleet.set_status(
        "deploy", D1, "approved", actor="rev", reason="lapsed",
        expires_at=now - timedelta(hours=1), now=now - timedelta(days=1),
    )  # fmt: skip
    assert keys(fleet.fleet_components(status="expired")) == [DEPLOY_D1]
    assert keys(fleet.fleet_components(status="approved")) == [GITHUB_KEY]


def test_a_revoked_server_pin(fleet: Store) -> None:
    fleet.revoke_server("github", actor="rev", reason="compromised")
    assert keys(fleet.fleet_components(status="revoked")) == [GITHUB_KEY]


def test_an_agents_newer_agbom_replaces_what_it_held(fleet: Store) -> None:
    fleet.save_agbom_version(
        "s-bob-2",
        agent_id="bob",
        document=fleet_data.doc("bob", fleet_data.skill("deploy", fleet_data.D2)),
        agbom_hash="sha256:" + "b" * 64,
        now=fleet_data.T0 + timedelta(hours=1),
    )
    page = fleet.fleet_components()
    assert DEPLOY_D1 not in keys(page) and FILESYSTEM_KEY not in keys(page)
    d2 = next(r for r in page["components"] if (r["type"], r["ref"], r["version"]) == DEPLOY_D2)
    assert d2["agents"] == 2 and d2["last_seen"] == "2026-03-01T10:00:00Z"


def test_an_empty_store(store: Store) -> None:
    assert store.fleet_components() == {"total": 0, "limit": 100, "offset": 0, "components": []}


@pytest.mark.parametrize(
    ("filters", "reason"),
    [
        ({"type": "tool"}, "type must be one of"),
        ({"status": "good"}, "status must be one of"),
        ({"search": "x" * 257}, "at most 256"),
        ({"search": "a\u202eb"}, "invisible"),
        ({"limit": 0}, "limit must be"),
        ({"limit": 1_000_001}, "limit must be a whole number from 1 to 1000000"),
        ({"limit": True}, "limit must be"),
        ({"offset": -1}, "offset must be"),
        ({"offset": 1_000_001}, "offset must be"),
    ],
)
def test_bad_filters_are_refused(store: Store, filters: dict[str, Any], reason: str) -> None:
    with pytest.raises(StoreValueError, match=reason):
        store.fleet_components(**filters)


def test_bad_component_is_refused(store: Store) -> None:
    for args in (
        ("tool", "x", None),
        ("skill", "", None),
        ("skill", "x", "a\x00"),
        ("skill", "x" * 1025, None),
        ("skill", "x", "v" * 257),
    ):
        with pytest.raises(StoreValueError):
            store.fleet_component_agents(*args)
