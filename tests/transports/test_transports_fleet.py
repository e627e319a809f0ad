"""``GET /v1/fleet/components`` and ``/v1/fleet/components/agents`` on a real ``agbom serve``
over 127.0.0.1: the fleet's components with their filters and pages, the agents of each, and
every bad query a 400 with its reason (never a 500)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.store import open_store
from agbom.transports import fleet
from tests import fleet_data
from tests.fleet_data import DEPLOY_D2, EXPECTED, FILESYSTEM_KEY, GITHUB_KEY, LINT_D3
from tests.guardian.acs import request
from tests.review.reviewing import register, skill_folder, version_of
from tests.transports.served import Served, open_session, post

pytestmark = pytest.mark.network

TOKEN = "fleet-token-" + "f" * 20
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("fleet")
    with open_store(folder / "store.db") as store:
        fleet_data.build(store)
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "token").chmod(0o600)
    server = Served(
        db=folder / "store.db",
        log=folder / "serve.log",
        extra=["--api-token-file", str(folder / "token")],
    ).start()
    yield server
    server.stop()


def get(served: Served, path: str, **params: Any) -> httpx.Response:
    return httpx.get(served.url + path, params=params, headers=AUTH, timeout=30)


def keys(body: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(c["type"], c["ref"], c["version"]) for c in body["components"]]


def test_the_fleets_components(served: Served) -> None:
    answer = get(served, "/v1/fleet/components")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert body["total"] == len(EXPECTED) and keys(body) == fleet_data.in_order(list(EXPECTED))
    for row in body["components"]:
        assert (row["name"], row["agents"], row["status"]) == EXPECTED[
            (row["type"], row["ref"], row["version"])
        ]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"type": "mcp_server"}, [FILESYSTEM_KEY, GITHUB_KEY]),
        ({"status": "pending"}, [DEPLOY_D2]),
        ({"type": "skill", "status": "denied"}, [LINT_D3]),
        ({"search": "FileSystem"}, [FILESYSTEM_KEY]),
        ({"search": "pkg:npm/%40model"}, [FILESYSTEM_KEY]),
        ({"search": "nothing-like-it"}, []),
    ],
)
def test_filters(served: Served, params: dict[str, str], expected: list[Any]) -> None:
    body = get(served, "/v1/fleet/components", **params).json()
    assert keys(body) == fleet_data.in_order(expected) and body["total"] == len(expected)


def test_pages(served: Served) -> None:
    seen: list[Any] = []
    for offset in (0, 3, 6):
        body = get(served, "/v1/fleet/components", limit="3", offset=str(offset)).json()
        assert (body["limit"], body["offset"], body["total"]) == (3, offset, len(EXPECTED))
        seen += keys(body)
    assert seen == fleet_data.in_order(list(EXPECTED))
    past = get(served, "/v1/fleet/components", offset="50").json()
    assert past == {"total": None, "limit": 100, "offset": 50, "components": []}


def test_each_row_leads_to_its_agents(served: Served) -> None:
    for row in get(served, "/v1/fleet/components").json()["components"]:
        params = {"type": row["type"], "ref": row["ref"]}
        if row["version"] is not None:
            params["version"] = row["version"]
        body = get(served, "/v1/fleet/components/agents", **params).json()
        assert body["total"] == row["agents"] == len(body["agents"]), (row, body)
        assert (body["type"], body["ref"], body["version"]) == (
            row["type"], row["ref"], row["version"],
        )  # fmt: skip
    github = get(served, "/v1/fleet/components/agents", type="mcp_server", ref=GITHUB_KEY[1],
                 version="0.6.2", limit="1", offset="1").json()  # fmt: skip
    assert github["total"] == 2 and [a["agent_id"] for a in github["agents"]] == ["dave"]
    assert github["agents"][0]["session_id"] == "s-dave-1"


@pytest.mark.parametrize(
    ("path", "params", "reason"),
    [
        ("/v1/fleet/components", {"limit": "abc"}, "limit must be a whole number"),
        ("/v1/fleet/components", {"limit": "-1"}, "limit must be a whole number"),
        ("/v1/fleet/components", {"limit": "0"}, "limit must be a whole number from 1 to 500"),
        ("/v1/fleet/components", {"limit": "501"}, "from 1 to 500"),
        ("/v1/fleet/components", {"limit": "1.5"}, "limit must be"),
        ("/v1/fleet/components", {"offset": "99999999"}, "offset must be"),
        ("/v1/fleet/components", {"offset": "1000001"}, "offset must be"),
        ("/v1/fleet/components", {"type": "tool"}, "type must be one of"),
        ("/v1/fleet/components", {"status": "ok"}, "status must be one of"),
        ("/v1/fleet/components", {"search": "x" * 257}, "at most 256"),
        ("/v1/fleet/components", {"search": "a\u202eb"}, "invisible"),
        ("/v1/fleet/components/agents", {"ref": "x"}, "type is required"),
        ("/v1/fleet/components/agents", {"type": "skill"}, "ref is required"),
        ("/v1/fleet/components/agents", {"type": "skill", "ref": ""}, "ref must be non-empty"),
        ("/v1/fleet/components/agents", {"type": "x", "ref": "y"}, "type must be one of"),
        ("/v1/fleet/components/agents", {"type": "skill", "ref": "y", "version": ""}, "version"),
        ("/v1/fleet/components/agents", {"type": "skill", "ref": "y" * 1025}, "at most 1024"),
        ("/v1/fleet/components/agents", {"type": "skill", "ref": "y", "limit": "x"}, "limit"),
    ],
)
def test_bad_queries_are_400_with_a_reason(
    served: Served, path: str, params: dict[str, str], reason: str
) -> None:
    answer = get(served, path, **params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["error"] in ("invalid_value", "invalid_identifier") and reason in body["message"]


def test_the_token_is_needed(served: Served) -> None:
    for path in ("/v1/fleet/components", "/v1/fleet/components/agents?type=skill&ref=deploy"):
        answer = httpx.get(served.url + path, timeout=30)
        assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"
        assert "deploy" not in answer.text and "github" not in answer.text


def test_the_fleet_routes_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    """The same answers from a server on PostgreSQL: the list, a filter, a row's agents."""
    with open_store(pg_url) as store:
        fleet_data.build(store)
    server = Served(db=pg_url, log=tmp_path / "serve.log", extra=[])  # type: ignore[arg-type]
    server.start()
    try:
        body = httpx.get(server.url + "/v1/fleet/components", timeout=30).json()
        assert keys(body) == fleet_data.in_order(list(EXPECTED))
        for row in body["components"]:
            assert (row["name"], row["agents"], row["status"]) == EXPECTED[
                (row["type"], row["ref"], row["version"])
            ]
        skills = httpx.get(server.url + "/v1/fleet/components?type=skill&status=denied", timeout=30)
        assert keys(skills.json()) == [LINT_D3]
        agents = httpx.get(
            server.url + "/v1/fleet/components/agents",
            params={"type": "mcp_server", "ref": GITHUB_KEY[1], "version": "0.6.2"},
            timeout=30,
        ).json()
        assert [a["agent_id"] for a in agents["agents"]] == ["alice", "dave"]
        bad = httpx.get(server.url + "/v1/fleet/components?limit=0", timeout=30)
        assert bad.status_code == 400 and "limit must be" in bad.json()["message"]
    finally:
        server.stop()


def test_fleet_reads_never_hold_up_the_loop_and_are_bounded(pg_url: str, tmp_path: Path) -> None:
    """With the fleet summary's tables locked, fleet reads wait on their own thread: the
    server still answers /healthz and a skill lookup, the ninth fleet request at once is 503
    busy, and the waiting ones are answered once the lock goes."""
    import psycopg

    with open_store(pg_url) as store:
        fleet_data.build(store)
    server = Served(db=pg_url, log=tmp_path / "serve.log", extra=[])  # type: ignore[arg-type]
    server.start()
    url = server.url + "/v1/fleet/components"
    try:
        with psycopg.connect(pg_url) as locker, ThreadPoolExecutor(16) as pool:
            locker.execute("LOCK TABLE fleet_summary, fleet_held IN ACCESS EXCLUSIVE MODE")
            sent = [pool.submit(httpx.get, url, timeout=120) for _ in range(fleet.MAX_WAITING)]
            for _ in range(8):  # until one is refused at once (a probe may wait with the rest)
                sent.append(pool.submit(httpx.get, url, timeout=120))
                with contextlib.suppress(TimeoutError):
                    if sent[-1].result(timeout=5).status_code == 503:
                        break
            assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200
            assert httpx.get(server.url + "/v1/skills/deploy", timeout=10).status_code == 200
            early = [f.result() for f in sent if f.done()]  # nothing read while locked
            assert early and all(a.json()["error"] == "busy" for a in early), early
            locker.rollback()
            answers = [f.result(timeout=120) for f in sent]
        read = [a for a in answers if a.status_code == 200]
        assert read and all(a.json()["total"] == len(EXPECTED) for a in read)
        # every read waited on the lock at once, and they were never more than the bound
        assert len(read) <= fleet.MAX_WAITING
        assert all(a.json()["error"] == "busy" for a in answers if a.status_code != 200)
    finally:
        server.stop()


def test_the_charts_numbers(served: Served) -> None:
    """``/v1/fleet/charts`` answers what the Overview page draws, with the read API's token."""
    assert httpx.get(served.url + "/v1/fleet/charts", timeout=30).status_code == 401
    answer = get(served, "/v1/fleet/charts")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    body = answer.json()
    counts = {row["status"]: row["count"] for row in body["components_by_status"]}
    for status in {s for _, _, s in EXPECTED.values()}:
        assert counts[status] == sum(1 for *_, s in EXPECTED.values() if s == status), status
    assert sum(counts.values()) == len(EXPECTED)
    days = body["pending_by_day"]
    assert len(days) == 30 and days[-1]["pending"] == 1  # deploy at D2 was registered today
    assert [d["day"] for d in days] == sorted(d["day"] for d in days)


def test_the_charts_count_the_guardians_decisions(served: Served, tmp_path: Path) -> None:
    """Decisions the served Guardian makes over ACS are in the charts' counts at once: a
    session started is an allow; a skill nobody approved, registered, a deny with its reason
    codes, which the charts' top denied rules count."""
    before = get(served, "/v1/fleet/charts").json()
    version = version_of("never-approved", skill_folder(tmp_path / "s", {"SKILL.md": "# s\n"}))
    _, denied = register(served.url, version, agent_id="charts-agent", capabilities=[])
    assert denied["result"]["decision"] == "deny", denied
    codes = denied["result"].get("reason_codes") or []
    after = get(served, "/v1/fleet/charts").json()
    today, was = after["decisions_by_day"][-1], before["decisions_by_day"][-1]
    assert today["day"] == was["day"] and len(after["decisions_by_day"]) == 30
    assert (today["allow"] - was["allow"], today["deny"] - was["deny"]) == (1, 1)
    rules = {r["rule"]: r["count"] for r in after["top_denied_rules"]}
    old = {r["rule"]: r["count"] for r in before["top_denied_rules"]}
    counted = [c for c in codes if not c.startswith("warn:")]
    assert counted and all(rules[c] == old.get(c, 0) + 1 for c in counted), (codes, rules)


def test_the_guardians_findings_on_a_component(served: Served) -> None:
    """An AgBOM the served Guardian takes with a warning (the default rules: an MCP server
    run from a package without an exact version) keeps it: the component lists the
    finding, and the severity filter finds it."""
    sid = open_session(served.url)
    server = {
        "id": "unpinned", "type": "mcp_server", "name": "unpinned-server", "version": None,
        "purl": "pkg:npm/unpinned-server", "endpoint": None, "tools": [],
        "registration_provenance": {"origin": "system"},
    }  # fmt: skip
    agbom = {"agent": {"id": "agent-1"}, "components": [server]}
    taken = post(served.url, request("agbom/snapshot", {"agbom": agbom}, session_id=sid))
    assert taken["result"]["decision"] == "allow", taken
    assert any(c.startswith("warn:AGB-HYG-001") for c in taken["result"]["reason_codes"]), taken
    body = get(served, "/v1/fleet/components", search="unpinned-server").json()
    [row] = body["components"]
    assert (row["severity"], row["findings"]) == ("medium", ["AGB-HYG-001"])
    medium = get(served, "/v1/fleet/components", severity="medium", limit="500").json()
    assert row in medium["components"]
    assert all(r["severity"] in ("medium", "high", "critical") for r in medium["components"])
    high = get(served, "/v1/fleet/components", severity="high", limit="500").json()
    assert row not in high["components"]
    refused = get(served, "/v1/fleet/components", severity="dire")
    assert refused.status_code == 400 and "severity must be one of" in refused.text
