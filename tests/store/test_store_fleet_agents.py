"""The agents of the fleet (issue 45 item 2) and the developer and host columns of its
components (item 1): one row per agent id, what its latest accepted AgBOM holds, what is not
approved, its last decision, and a timeline of its AgBOM versions with their diffs (both
backends)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agbom.store import Store, StoreValueError
from tests import fleet_agents_data as data
from tests.fleet_data import D1, D2, D3, T0


@pytest.fixture
def fleet(store: Store) -> Store:
    data.build(store)
    return store


def by_id(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["agent_id"]: a for a in page["agents"]}


def test_one_row_per_agent_with_its_identity_and_what_it_runs(fleet: Store) -> None:
    page = fleet.fleet_agents()
    assert page["total"] == 5 and (page["limit"], page["offset"]) == (100, 0)
    assert [a["agent_id"] for a in page["agents"]] == sorted(
        [data.NAMELESS, data.ALICE_CC, data.BOB, data.CLAIMED, data.ALICE_CURSOR]
    )
    rows = by_id(page)
    alice = rows[data.ALICE_CC]
    assert (alice["host"], alice["developer"], alice["machine"]) == (
        "claude-code",
        "alice",
        "laptop",
    )
    # her latest accepted AgBOM (s-a2): deploy@D2 (pending) and GitHub 0.6.3 (approved by
    # name); the refused AgBOM adding lint and the model of s-a1 are not what she runs now
    assert (alice["session_id"], alice["agbom_version"]) == ("s-a2", 1)
    assert alice["components"] == {"skill": 1, "mcp_server": 1, "model": 0, "a2a_peer": 0}
    assert alice["unapproved"] == 1
    bob = rows[data.BOB]  # lint@D3 denied, the filesystem server never approved
    assert bob["unapproved"] == 2 and bob["components"]["mcp_server"] == 1
    carol = rows[data.CLAIMED]  # a claim keeps its mark: it is not the verified carol
    assert (carol["host"], carol["developer"], carol["machine"]) == (
        "codex",
        "claimed:carol",
        "remote",
    )
    assert carol["unapproved"] == 0  # a model has no approval to lack
    nameless = rows[data.NAMELESS]
    assert (nameless["host"], nameless["developer"], nameless["machine"]) == (
        "claude-code",
        None,
        None,
    )
    assert all(a["last_decision"] is None for a in page["agents"])  # no chain entry yet


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"host": "cursor"}, [data.ALICE_CURSOR]),
        ({"host": "claude-code"}, [data.NAMELESS, data.ALICE_CC, data.BOB]),
        ({"host": "claude"}, []),  # a platform by its whole name, not a prefix
        ({"search": "ALICE"}, [data.ALICE_CC, data.ALICE_CURSOR]),
        ({"search": "claimed:"}, [data.CLAIMED]),
        ({"unapproved": True}, [data.ALICE_CC, data.BOB]),
        (
            {"unapproved": False},
            sorted([data.NAMELESS, data.ALICE_CC, data.BOB, data.CLAIMED, data.ALICE_CURSOR]),
        ),
        ({"host": "claude-code", "unapproved": True}, [data.ALICE_CC, data.BOB]),
    ],
)
def test_agent_filters(fleet: Store, filters: dict[str, Any], expected: list[str]) -> None:
    page = fleet.fleet_agents(**filters)
    assert [a["agent_id"] for a in page["agents"]] == expected
    assert page["total"] == (len(expected) if expected else 0)


def test_agent_pages_cover_the_list_once(fleet: Store) -> None:
    seen: list[str] = []
    for offset in (0, 2, 4):
        seen += [a["agent_id"] for a in fleet.fleet_agents(limit=2, offset=offset)["agents"]]
    assert seen == [a["agent_id"] for a in fleet.fleet_agents()["agents"]]
    assert fleet.fleet_agents(limit=2, offset=6) == {
        "total": None,
        "limit": 2,
        "offset": 6,
        "agents": [],
    }


def test_the_last_decision_of_the_agents_session(fleet: Store) -> None:
    entry = (
        '{"decision":"deny","entry_id":"e-2","reason_codes":["skill_denied"],'
        '"step_type":"skill_load","timestamp":"2026-03-01T09:30:00Z"}'
    )
    for text, digest, previous in (
        ('{"decision":"allow","entry_id":"e-1"}', "h1", None),
        (entry, "h2", "h1"),
    ):
        fleet.append_entry(
            "s-b",
            entry=text,
            entry_hash=digest,
            previous_hash=previous,
            request_id=None,
            nonce=None,
        )
    last = by_id(fleet.fleet_agents())[data.BOB]["last_decision"]
    assert last == {
        "decision": "deny",
        "step_type": "skill_load",
        "reason_codes": ["skill_denied"],
        "at": "2026-03-01T09:30:00Z",
        "entry_id": "e-2",
    }


def test_components_count_developers_and_host_platforms(fleet: Store) -> None:
    rows = {(c["name"], c["version"]): c for c in fleet.fleet_components()["components"]}
    deploy_d1 = rows[("deploy", f"sha256:{D1.value}")]
    # alice on Claude Code moved on to D2; alice on Cursor still runs D1: one developer
    assert (deploy_d1["agents"], deploy_d1["developers"], deploy_d1["hosts"]) == (1, 1, 1)
    github = rows[("github", "0.6.2")]  # the nameless agent alone: no developer known
    assert (github["agents"], github["developers"], github["hosts"]) == (1, 0, 1)
    fleet.save_agbom_version(
        "s-ac2", agent_id=data.ALICE_CURSOR,
        document=data.doc(data.ALICE_CURSOR, data.skill("deploy", D2)),
        agbom_hash="sha256:" + "c" * 64, now=T0 + timedelta(hours=1),
    )  # fmt: skip
    rows = {(c["name"], c["version"]): c for c in fleet.fleet_components()["components"]}
    d2 = rows[("deploy", f"sha256:{D2.value}")]
    assert (d2["agents"], d2["developers"], d2["hosts"]) == (2, 1, 2)  # alice, twice


def test_components_filtered_by_host_platform(fleet: Store) -> None:
    cursor = fleet.fleet_components(host="cursor")
    assert [(c["name"], c["version"], c["agents"]) for c in cursor["components"]] == [
        ("deploy", f"sha256:{D1.value}", 1)
    ]
    codex = fleet.fleet_components(host="codex", type="model")
    assert [c["name"] for c in codex["components"]] == ["claude-sonnet-4"]
    # the model is held by alice's older AgBOM and carol: on claude-code, nobody runs it now
    assert fleet.fleet_components(host="claude-code", type="model")["components"] == []
    assert fleet.fleet_components(host="windsurf")["total"] == 0


def test_an_agents_components_with_their_status(fleet: Store) -> None:
    held = fleet.fleet_agent_components(data.ALICE_CC)
    assert [(c["name"], c["version"], c["status"]) for c in held] == [
        ("github", "0.6.3", "approved"),
        ("deploy", f"sha256:{D2.value}", "pending"),
    ]
    assert fleet.fleet_agent_components("nobody/x@y") == []


def test_the_timeline_diffs_each_version_against_the_one_in_use(fleet: Store) -> None:
    page = fleet.fleet_agent_versions(data.ALICE_CC)
    assert page["total"] == 4 and page["limit"] == 20
    got = [(v["session_id"], v["version"], v["accepted"]) for v in page["versions"]]
    assert got == [("s-a2", 1, True), ("s-a1", 3, False), ("s-a1", 2, True), ("s-a1", 1, True)]
    newest, refused, second, first = page["versions"]
    # the first version: everything added
    assert first["base"] is None
    assert {c["id"] for c in first["changes"]["added"]} == {"deploy", "mcp-github"}
    # the second: the model added, deploy's digest and GitHub's version changed
    assert second["base"] == {"session_id": "s-a1", "version": 1}
    assert [c["id"] for c in second["changes"]["added"]] == ["m"]
    fields = {c["id"]: c["fields"] for c in second["changes"]["changed"]}
    assert fields["deploy"] == [
        {"field": "digest", "old": f"sha256:{D1.value}", "new": f"sha256:{D2.value}"}
    ]
    assert fields["mcp-github"] == [{"field": "version", "old": "0.6.2", "new": "0.6.3"}]
    # the refused one: what it tried to add, against the version in use
    assert refused["base"] == {"session_id": "s-a1", "version": 2}
    assert [(c["id"], c["digest"]) for c in refused["changes"]["added"]] == [
        ("lint", f"sha256:{D3.value}")
    ]
    # the newest (a new session) is compared with the accepted s-a1 v2, not the refused v3
    assert newest["base"] == {"session_id": "s-a1", "version": 2}
    assert [c["id"] for c in newest["changes"]["removed"]] == ["m"]
    assert newest["changes"]["added"] == [] and newest["changes"]["changed"] == []


def test_the_timeline_is_paged(fleet: Store) -> None:
    first = fleet.fleet_agent_versions(data.ALICE_CC, limit=3)
    last = fleet.fleet_agent_versions(data.ALICE_CC, limit=3, offset=3)
    assert len(first["versions"]) == 3 and first["total"] == 4
    assert [(v["session_id"], v["version"]) for v in last["versions"]] == [("s-a1", 1)]
    assert fleet.fleet_agent_versions("nobody")["versions"] == []
    assert fleet.fleet_agent_versions("nobody")["total"] == 0


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda s: s.fleet_agents(host="a/b"), "host must be"),
        (lambda s: s.fleet_agents(host="x" * 65), "host must be"),
        (lambda s: s.fleet_agents(search="a\u202eb"), "invisible"),
        (lambda s: s.fleet_agents(unapproved="yes"), "unapproved must be"),
        (lambda s: s.fleet_agents(limit=0), "limit must be"),
        (lambda s: s.fleet_components(host="cursor%"), "host must be"),
        (lambda s: s.fleet_agent_versions(""), "agent_id must be"),
        (lambda s: s.fleet_agent_versions("a\x00"), "NUL"),
        (lambda s: s.fleet_agent_versions("a", limit=51), "from 1 to 50"),
        (lambda s: s.fleet_agent_versions("a", offset=-1), "offset must be"),
        (lambda s: s.fleet_agent_components("x" * 1025), "agent_id must be"),
    ],
)
def test_bad_queries_are_refused(store: Store, call: Any, reason: str) -> None:
    with pytest.raises(StoreValueError, match=reason):
        call(store)
