"""The fleet summary (issue 45 item 6) answers exactly as the scan it replaces.

``fleet_components`` and ``fleet_component_agents`` read the summary the store keeps as
AgBOMs are saved; the scan (every agent's latest accepted AgBOM read whole, the statements
the store ran before) stays the definition. A random fleet with a fixed seed (agents
changing sessions, refused and back-dated versions, servers named alike under other ids,
pins and approvals of every kind) is listed both ways under every filter; then the summary
is rebuilt by the migration from stored versions, and kept under concurrent saves by two
handles (two replicas on PostgreSQL).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agbom.scan.lock import tool_set_pin
from agbom.store import SCHEMA_VERSION, Digest, Store
from agbom.store import _fleet_logic as fleet
from agbom.store._fleet_agents import list_fleet_agents
from agbom.store.postgres._migrations import SCHEMA_VERSION as PG_SCHEMA_VERSION

T0 = datetime(2026, 2, 1, tzinfo=UTC)


def _component(i: int) -> dict[str, Any]:
    kind = i % 6
    if kind in (0, 3):
        # a few skills share an id at other digests
        value = hashlib.sha256(f"skill-{i}".encode()).hexdigest()
        return {
            "id": f"skill-{i % 9}",
            "type": "skill",
            "name": f"Skill {i % 5}",
            "definition": {
                "ref": f"file://s{i}",
                "digest": {"algorithm": "SHA-256", "value": value},
            },
        }
    if kind == 1:
        # one purl under several ids and names: one fleet component, judged by each name
        return {
            "id": f"srv-{i % 4}",
            "type": "mcp_server",
            "name": f"server-{i % 3}",
            "version": None if i % 2 else "1.0",
            "endpoint": None,
            "purl": f"pkg:npm/server-{i % 5}" if i % 7 else None,
            "tools": [],
        }
    if kind == 2:
        return {
            "id": f"model-{i % 4}",
            "type": "model",
            "name": f"model-{i % 4}",
            "version": None if i % 3 == 0 else str(i % 2),
            "provider": "p" if i % 2 else None,
            "endpoint": None,
        }
    if kind == 4:
        return {"id": f"peer-{i % 5}", "type": "a2a_peer", "endpoint": f"https://p{i % 3}.example"}
    return {"id": f"tool-{i}", "type": "tool", "name": f"tool-{i}"}  # not a fleet type


def _skill_digest(i: int) -> Digest:
    return Digest("sha256", hashlib.sha256(f"skill-{i}".encode()).hexdigest())


SEVERITIES = ["info", "low", "medium", "high", "critical"]


def _findings(rng: random.Random, components: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the Guardian keeps with a version: findings naming some of its components (and
    ids it does not hold); now and then a finding or a field that is not what it should be."""
    if rng.random() < 0.3:
        return None
    ids = [c["id"] for c in components] + ["not-held"]
    findings: list[Any] = [
        {
            "rule_id": f"R-{rng.randrange(6)}",
            "severity": rng.choice(SEVERITIES),
            "action": "warn",
            "components": rng.sample(ids, rng.randrange(1, min(4, len(ids)) + 1)),
        }
        for _ in range(rng.randrange(1, 4))
    ]
    odd = rng.random()
    if odd < 0.1:
        findings.append({"rule_id": 5, "severity": "high", "components": ids})
    elif odd < 0.2:
        findings.append({"rule_id": "R-odd", "severity": "dire", "components": ids[:1]})
    elif odd < 0.25:
        findings.append("not a finding")
    elif odd < 0.3:
        findings.append({"rule_id": "R-x", "severity": "low", "components": "all"})
    return {"method": "agbom/snapshot", "findings": findings}


def _agent(n: int) -> str:
    """Agent ``n``: a developer on a machine with a host platform (two of three), else an
    agent that named itself."""
    host = ("cursor", "claude-code", None)[n % 3]
    return f"{host}/dev{n % 4}@m{n}" if host else f"agent-{n}"


def random_fleet(store: Store, seed: int, agents: int = 14, saves: int = 60) -> None:
    """Saves in a random order: an agent keeps or changes session, some versions are refused,
    some are stored with a time before the agent's latest (never its latest then)."""
    rng = random.Random(seed)
    at = T0
    for n in range(saves):
        agent = _agent(rng.randrange(agents))
        session = f"{agent}-s{rng.randrange(3)}"
        picked = rng.sample(range(60), rng.randrange(0, 9))
        document = {"agent": {"id": agent}, "components": [_component(i) for i in picked]}
        at += timedelta(minutes=rng.randrange(0, 3))  # equal instants happen
        when = at - timedelta(days=1) if rng.random() < 0.1 else at
        store.save_agbom_version(
            session,
            agent_id=agent,
            document=document,
            agbom_hash=f"sha256:{seed}-{n}",
            now=when,
            accepted=rng.random() > 0.15,
            change=_findings(rng, document["components"]),
        )
    for i in range(0, 60, 6):
        status = rng.choice(["approved", "denied", "pending", "revoked", "approved"])
        expiry = T0 + timedelta(days=rng.choice([-1, 400])) if status == "approved" else None
        store.set_status(
            f"skill-{i % 9}", _skill_digest(i), status, actor="t", expires_at=expiry, now=T0
        )
    pin = tool_set_pin([])
    pin["definitions"] = []
    for name in ("server-0", "srv-1", "server-2"):
        store.approve_server(name, pin=pin, actor="t", reason="r")
    store.revoke_server("server-2", actor="t", reason="r")


def _scan(store: Store) -> tuple[Callable[..., dict[str, Any]], ...]:
    """The scan's answers, through the store's own runner and statements."""
    run = store._fleet_rows  # type: ignore[attr-defined]
    sql = _statements(store)
    scan = dataclasses.replace(
        sql, components=sql.scan_components, agents=sql.scan_agents,
        agent_list=sql.scan_agent_list,
    )  # fmt: skip
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def components(**filters: Any) -> dict[str, Any]:
        filters.setdefault("type", None)
        filters.setdefault("status", None)
        filters.setdefault("search", None)
        filters.setdefault("limit", None)
        filters.setdefault("offset", None)
        return fleet.list_components(run, scan, now, **filters)

    def agents(component: tuple[Any, Any, Any], **page: Any) -> dict[str, Any]:
        return fleet.list_agents(run, scan, now, component, page.get("limit"), page.get("offset"))

    def agent_list(**filters: Any) -> dict[str, Any]:
        for name in ("host", "search", "unapproved", "limit", "offset"):
            filters.setdefault(name, None)
        return list_fleet_agents(run, scan, now, **filters)

    return components, agents, agent_list


def _statements(store: Store) -> fleet.FleetSql:
    if type(store).__name__ == "SqliteStore":
        from agbom.store.sqlite.fleet import FLEET as SQLITE

        return SQLITE
    from agbom.store.postgres.fleet import FLEET as POSTGRES

    return POSTGRES


FILTERS: list[dict[str, Any]] = [
    {},
    {"limit": 3},
    {"limit": 4, "offset": 5},
    {"offset": 500},
    *({"type": t} for t in fleet.FLEET_TYPES),
    *({"status": s} for s in fleet.STATUSES),
    {"type": "mcp_server", "status": "unapproved"},
    {"search": "server"},
    {"search": "SKILL 1"},
    {"search": "pkg:npm/server-3"},
    {"search": "p/"},
    *({"severity": s} for s in SEVERITIES),
    {"severity": "medium", "type": "skill"},
    {"severity": "low", "status": "unapproved"},
    *({"host": h} for h in ("cursor", "claude-code", "agent-2", "curso", "dev1")),
    {"host": "cursor", "status": "unapproved"},
    {"host": "claude-code", "type": "skill", "limit": 2, "offset": 1},
    {"host": "cursor", "search": "server", "severity": "low"},
]


AGENT_FILTERS: list[dict[str, Any]] = [
    {},
    {"limit": 2},
    {"limit": 3, "offset": 2},
    {"offset": 100},
    {"unapproved": True},
    {"unapproved": False},
    {"unapproved": True, "limit": 2, "offset": 1},
    *({"host": h} for h in ("cursor", "claude-code", "agent-2", "curso", "dev1")),
    {"host": "cursor", "unapproved": True},
    {"search": "dev1"},
    {"search": "AGENT"},
    {"search": "cursor", "unapproved": True},
]


def assert_same_as_scan(store: Store) -> int:
    components, agents, agent_list = _scan(store)
    for filters in AGENT_FILTERS:
        assert store.fleet_agents(**filters) == agent_list(**filters), filters
    for filters in FILTERS:
        assert store.fleet_components(**filters) == components(**filters), filters
    listed = store.fleet_components(limit=1000)["components"]
    for row in listed:
        named = (row["type"], row["ref"], row["version"])
        assert store.fleet_component_agents(*named) == agents(named), named
        assert store.fleet_component_agents(*named, limit=1, offset=1) == agents(
            named, limit=1, offset=1
        )
    return len(listed)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_summary_answers_as_the_scan(store: Store, seed: int) -> None:
    random_fleet(store, seed)
    listed = assert_same_as_scan(store)
    assert listed > 10  # the fleet is not empty, so the comparison compares something


def test_a_fleet_that_changes_is_followed(store: Store) -> None:
    """Every save moves the summary with it, not only the first ones."""
    for round in range(4):
        random_fleet(store, 10 + round, saves=25)
        assert_same_as_scan(store)


def test_the_migration_builds_the_summary_of_stored_versions(
    store_factory: Callable[[], Store], store_location: str
) -> None:
    """A store written before the summary existed (its tables dropped, the schema put back
    to the version before) gets it built when it is opened."""
    store = store_factory()
    random_fleet(store, 5)
    expected = store.fleet_components(limit=1000)
    postgres = store_location.startswith("postgresql")
    previous = 6 if postgres else 12  # the version before the summary's
    store.close()
    drop = ["DROP TABLE fleet_held", "DROP TABLE fleet_summary", "DROP TABLE fleet_dirty"]
    drop.append("DROP TABLE fleet_agents")
    drop.append("DROP INDEX skill_history_by_at")
    # and what later versions added (PostgreSQL 8, SQLite 14: the decision counts)
    drop += ["DROP TABLE decision_days"]
    if postgres:
        drop += ["DROP TRIGGER chain_entries_counted ON chain_entries"]
        drop += ["DROP FUNCTION agbom_count_decisions()"]
    delete = "DELETE FROM schema_version WHERE version > " + str(previous)
    if postgres:
        import psycopg

        with psycopg.connect(store_location) as conn:
            for statement in [*drop, delete]:
                conn.execute(statement)
    else:
        with sqlite3.connect(store_location) as conn:
            for statement in [*drop, delete]:
                conn.execute(statement)
        conn.close()
    reopened = store_factory()
    assert reopened.schema_version == (PG_SCHEMA_VERSION if postgres else SCHEMA_VERSION)
    assert reopened.fleet_components(limit=1000) == expected
    assert_same_as_scan(reopened)


def test_concurrent_saves_by_two_handles(store_factory: Callable[[], Store]) -> None:
    """Two handles (two replicas on PostgreSQL) save AgBOMs of agents sharing components at
    once; each component's count is every agent that holds it, none lost to the other."""
    first, second = store_factory(), store_factory()
    errors: list[BaseException] = []

    def saves(store: Store, offset: int) -> None:
        try:
            for n in range(40):
                agent = f"agent-{offset + 2 * (n % 10)}"
                components = [_component(i) for i in (1, 2, 4, 7, n % 12)]
                store.save_agbom_version(
                    f"{agent}-s",
                    agent_id=agent,
                    document={"agent": {"id": agent}, "components": components},
                    agbom_hash=f"sha256:{offset}-{n}",
                    now=T0 + timedelta(seconds=n),
                )
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=saves, args=(s, o)) for s, o in ((first, 0), (second, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_same_as_scan(first)
    held = {
        (r["ref"], r["version"]): r["agents"]
        for r in first.fleet_components(type="model")["components"]
    }
    assert held[("model-2", "0")] == 20  # every agent of both handles holds component 2


def test_resent_agboms_and_new_sessions_with_the_same_components(store: Store) -> None:
    """The common save: an agent sends the AgBOM it sent last again, in its session or in a
    new one (a new session moves each component's first seen), sometimes back-dated or in
    the same instant. Such a save moves first and last seen rather than recomputing the
    components, and must still answer as the scan, whichever holder had the extreme."""
    random_fleet(store, 7)
    rng = random.Random(7)
    agents = [f"agent-{n}" for n in range(14)]
    at = T0 + timedelta(days=2)
    for n in range(60):
        agent = rng.choice(agents)
        latest = store.latest_agbom_for_agent(agent)
        if latest is None:
            continue
        session = latest["session_id"] if rng.random() < 0.5 else f"{agent}-new-{n}"
        at += timedelta(minutes=rng.randrange(0, 2))
        when = at - timedelta(days=3) if rng.random() < 0.1 else at
        store.save_agbom_version(
            session,
            agent_id=agent,
            document=latest["document"],
            agbom_hash=f"sha256:again-{n}",
            now=when,
        )
        if n % 15 == 14:
            assert_same_as_scan(store)
    assert assert_same_as_scan(store) > 10
