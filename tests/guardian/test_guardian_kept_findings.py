"""The rule findings the Guardian keeps with the AgBOM versions it takes (issue 45: each
fleet component's findings): an accepted snapshot keeps its warnings, each naming its
components; a component observed in use afterwards adds a version that keeps them too; and
the fleet's components list them, while the agents listing still names only what refused an
AgBOM."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agbom.guardian import Guardian, build_guardian
from agbom.store._inventory_logic import agbom_status
from tests.guardian.acs import hello, new_session_id, request

UNPINNED = {
    "id": "unpinned", "type": "mcp_server", "name": "unpinned-server", "version": None,
    "purl": "pkg:npm/unpinned-server", "endpoint": None, "tools": [],
    "registration_provenance": {"origin": "system"},
}  # fmt: skip
OBSERVED = {
    "id": "seen", "type": "mcp_server", "name": "seen-server", "version": "1.0.0",
    "endpoint": "https://seen.example/mcp", "tools": [],
    "registration_provenance": {"origin": "system"},
}  # fmt: skip


@pytest.fixture
def guardian(tmp_path: Path) -> Iterator[Guardian]:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def ok(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in response, response
    result: dict[str, Any] = response["result"]
    return result


def snapshot(g: Guardian) -> str:
    sid = new_session_id()
    ok(g.handle(hello(sid)))
    assert ok(g.handle(request("steps/sessionStart", {}, session_id=sid)))["decision"] == "allow"
    agbom = {"agent": {"id": "agent-1"}, "components": [UNPINNED]}
    taken = ok(g.handle(request("agbom/snapshot", {"agbom": agbom}, session_id=sid)))
    assert taken["decision"] == "allow" and "warn:AGB-HYG-001" in taken["reason_codes"]
    return sid


def test_an_accepted_snapshot_keeps_its_warnings(guardian: Guardian) -> None:
    snapshot(guardian)
    latest = guardian.store.latest_agbom_for_agent("agent-1")
    assert latest is not None and latest["accepted"]
    kept = latest["change"]["findings"]
    assert {"rule_id": "AGB-HYG-001", "severity": "medium", "action": "warn",
            "components": ["unpinned"]} in kept  # fmt: skip
    assert agbom_status(latest)["findings"] == []  # what refused it: nothing
    [row] = guardian.store.fleet_components(search="unpinned-server")["components"]
    assert row["severity"] == "medium" and "AGB-HYG-001" in row["findings"]


def test_a_component_observed_after_keeps_the_findings_known(guardian: Guardian) -> None:
    sid = snapshot(guardian)
    before = guardian.store.latest_agbom_for_agent("agent-1")
    guardian.observe_component(sid, "agent-1", OBSERVED)
    after = guardian.store.latest_agbom_for_agent("agent-1")
    assert before is not None and after is not None
    assert after["version"] == before["version"] + 1
    assert after["change"]["method"] == "observed" and after["change"]["component"] == "seen"
    assert after["change"]["findings"] == before["change"]["findings"]
    rows = {r["name"]: r for r in guardian.store.fleet_components()["components"]}
    assert rows["unpinned-server"]["severity"] == "medium"
    assert rows["seen-server"]["severity"] is None and rows["seen-server"]["findings"] == []
