"""``GET /v1/fleet/agents``, ``/v1/fleet/agents/components``, ``/v1/fleet/agents/versions``
and ``/v1/fleet/advisories`` on a real ``agbom serve --osv`` over 127.0.0.1, and the host
filter of ``/v1/fleet/components`` (issue 45 items 1-3): rows as the store gives them, every
bad query a 400 with its reason, and the advisories route a 404 on a server without --osv."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.store import open_store
from tests import fleet_agents_data as data
from tests.transports.served import Served

pytestmark = pytest.mark.network

TOKEN = "fleet-token-" + "a" * 20
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _fleet(folder: Path) -> Path:
    db = folder / "store.db"
    with open_store(db) as store:
        data.build(store)
        data.add_advisory_agents(store)
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "token").chmod(0o600)
    return db


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("fleet-agents")
    server = Served(
        db=_fleet(folder),
        log=folder / "serve.log",
        extra=["--api-token-file", str(folder / "token"), "--osv", str(data.OSV)],
    ).start()
    yield server
    server.stop()


def get(served: Served, path: str, **params: Any) -> httpx.Response:
    return httpx.get(served.url + path, params=params, headers=AUTH, timeout=60)


def test_the_fleets_agents(served: Served) -> None:
    answer = get(served, "/v1/fleet/agents")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    body = answer.json()
    rows = {a["agent_id"]: a for a in body["agents"]}
    assert body["total"] == 8 and len(rows) == 8
    alice = rows[data.ALICE_CC]
    assert (alice["host"], alice["developer"], alice["machine"]) == (
        "claude-code",
        "alice",
        "laptop",
    )
    assert alice["components"]["skill"] == 1 and alice["unapproved"] == 1
    assert rows["cursor/dave@ws-1"]["unapproved"] == 2  # two servers nobody approved
    only_cursor = get(served, "/v1/fleet/agents", host="cursor").json()
    assert [a["agent_id"] for a in only_cursor["agents"]] == [data.ALICE_CURSOR, "cursor/dave@ws-1"]
    flagged = get(served, "/v1/fleet/agents", unapproved="true", search="ALICE").json()
    assert [a["agent_id"] for a in flagged["agents"]] == [data.ALICE_CC]  # not her Cursor
    second = get(served, "/v1/fleet/agents", limit=3, offset=3).json()
    assert [a["agent_id"] for a in second["agents"]] == [a["agent_id"] for a in body["agents"]][3:6]


def test_what_one_agent_runs_and_its_timeline(served: Served) -> None:
    held = get(served, "/v1/fleet/agents/components", agent_id=data.ALICE_CC).json()
    assert held["agent_id"] == data.ALICE_CC
    assert [(c["name"], c["status"]) for c in held["components"]] == [
        ("github", "approved"),
        ("deploy", "pending"),
    ]
    timeline = get(served, "/v1/fleet/agents/versions", agent_id=data.ALICE_CC, limit=2).json()
    assert timeline["total"] == 4 and timeline["limit"] == 2
    newest, refused = timeline["versions"]
    assert [c["id"] for c in newest["changes"]["removed"]] == ["m"]
    assert not refused["accepted"] and [c["id"] for c in refused["changes"]["added"]] == ["lint"]
    older = get(served, "/v1/fleet/agents/versions", agent_id=data.ALICE_CC, offset=2).json()
    fields = {c["id"]: c["fields"] for c in older["versions"][0]["changes"]["changed"]}
    assert fields["mcp-github"] == [{"field": "version", "old": "0.6.2", "new": "0.6.3"}]
    unknown = get(served, "/v1/fleet/agents/versions", agent_id="nobody").json()
    assert unknown["versions"] == [] and unknown["total"] == 0


def test_components_by_host_with_developers(served: Served) -> None:
    body = get(served, "/v1/fleet/components", host="cursor", type="mcp_server").json()
    assert [(c["name"], c["agents"], c["developers"], c["hosts"]) for c in body["components"]] == [
        ("acme-fs", 1, 1, 1),
        ("fetch", 1, 1, 1),
    ]
    everywhere = get(served, "/v1/fleet/components", search="acme").json()["components"]
    acme = next(c for c in everywhere if c["version"] == "1.4.1")
    assert (acme["agents"], acme["developers"], acme["hosts"]) == (2, 2, 2)


def test_the_components_advisories_name(served: Served) -> None:
    body = get(served, "/v1/fleet/advisories").json()
    assert body["loaded"] and not body["cut"] and body["scanned"] >= 9
    # the critical one first; acme-fs 1.4.2 is fixed; the filesystem server of the sample
    # fleet has a purl without a version, which matches nothing
    got = [(c["name"], c["version"], c["worst"], c["agents"]) for c in body["components"]]
    assert got == [("acme-fs", "1.4.1", "critical", 2), ("fetch", "0.5", "high", 1)]
    acme = body["components"][0]
    assert [a["id"] for a in acme["advisories"]] == ["GHSA-7q2m-agb1-fs01"]
    assert acme["advisories"][0]["fixed"] == ["1.4.2", "2.1.0"]
    assert acme["status"] == "unapproved"
    assert body["total"] == len(body["components"]) == 2
    agents = get(
        served,
        "/v1/fleet/components/agents",
        type=acme["type"],
        ref=acme["ref"],
        version=acme["version"],
    ).json()
    assert [a["agent_id"] for a in agents["agents"]] == [
        "claude-code/erin@ws-2",
        "cursor/dave@ws-1",
    ]
    critical = get(served, "/v1/fleet/advisories", severity="critical").json()
    assert [c["name"] for c in critical["components"]] == ["acme-fs"]
    high = get(served, "/v1/fleet/advisories", severity="high").json()
    assert [(c["name"], [a["id"] for a in c["advisories"]]) for c in high["components"]] == [
        ("fetch", ["PYSEC-2099-41"])
    ]
    assert get(served, "/v1/fleet/advisories", severity="low").json()["components"] == []


@pytest.mark.parametrize(
    ("path", "params", "field", "reason"),
    [
        ("/v1/fleet/agents", {"host": "cursor/x"}, None, "host must be"),
        ("/v1/fleet/agents", {"unapproved": "yes"}, "unapproved", "true or false"),
        ("/v1/fleet/agents", {"search": "a\u202eb"}, None, "invisible"),
        ("/v1/fleet/agents", {"limit": "501"}, "limit", "from 1 to 500"),
        ("/v1/fleet/agents", {"offset": "-1"}, "offset", "whole number"),
        ("/v1/fleet/components", {"host": "a b"}, None, "host must be"),
        ("/v1/fleet/agents/components", {}, "agent_id", "agent_id is required"),
        ("/v1/fleet/agents/components", {"agent_id": "a\x07"}, None, "invisible"),
        ("/v1/fleet/agents/versions", {"agent_id": "x", "limit": "51"}, "limit", "from 1 to 50"),
        ("/v1/fleet/agents/versions", {}, "agent_id", "agent_id is required"),
        ("/v1/fleet/advisories", {"severity": "severe"}, None, "severity must be one of"),
    ],
)
def test_bad_queries_are_400_with_the_reason(
    served: Served, path: str, params: dict[str, str], field: str | None, reason: str
) -> None:
    answer = get(served, path, **params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert reason in body["message"]
    if field is not None:
        assert body["field"] == field


def test_without_osv_the_advisories_route_is_404(tmp_path: Path) -> None:
    db = _fleet(tmp_path)
    server = Served(
        db=db, log=tmp_path / "serve.log", extra=["--api-token-file", str(tmp_path / "token")]
    ).start()
    try:
        answer = get(server, "/v1/fleet/advisories")
        assert answer.status_code == 404 and answer.json()["error"] == "not_configured"
        assert httpx.get(server.url + "/v1/fleet/agents", timeout=30).status_code == 401
    finally:
        server.stop()
