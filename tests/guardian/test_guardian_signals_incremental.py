"""`agbom serve --osv/--lock` judges an `agbom/changed` diff from what it touched
(`GuardianSignals.annotate_change`): the result must be what annotating the whole AgBOM gives,
component for component and hash for hash, and a reload of the export or the lock, or a new
server approval, must make the next change annotate the whole AgBOM again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agbom.guardian import build_guardian
from agbom.guardian.config import GuardianConfig
from agbom.guardian.signals import GuardianSignals
from agbom.inventory import AgBOM, apply_changed_payload
from agbom.scan.lock import build_lock
from agbom.store import open_store
from tests.guardian.acs import request
from tests.guardian.test_guardian_pipeline import ok, open_session

AFFECTED = "pkg:npm/bench-affected@1.0.0"
OTHER = "pkg:npm/bench-other@1.0.0"
SERVERS = 4


def advisory(name: str, severity: str = "HIGH") -> dict[str, Any]:
    return {
        "schema_version": "1.6.0",
        "id": f"GHSA-test-{name}",
        "modified": "2026-01-01T00:00:00Z",
        "summary": f"every version of {name} is affected",
        "affected": [
            {
                "package": {"ecosystem": "npm", "name": name},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}],
            }
        ],
        "database_specific": {"severity": severity},
    }


def tool(index: int, *, purl: str | None = None, description: str = "reads") -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": f"t{index}",
        "type": "tool",
        "name": f"t{index}",
        "version": "1",
        "provider": "acme",
        "capability": "fs.read",
        "description": description,
    }
    if purl is not None:
        data["purl"] = purl
    return data


def server(index: int, tools: list[str]) -> dict[str, Any]:
    return {
        "id": f"s{index}",
        "type": "mcp_server",
        "name": f"s{index}",
        "version": "1.0.0",
        "endpoint": None,
        "tools": tools,
    }


def first_document() -> dict[str, Any]:
    tools = [tool(i, purl=AFFECTED if i % 3 == 0 else OTHER) for i in range(12)]
    servers = [server(s, [f"t{i}" for i in range(12) if i % SERVERS == s]) for s in range(SERVERS)]
    return {"agent": {"id": "agent-1"}, "components": [*tools, *servers]}


@pytest.fixture
def setting(tmp_path: Path) -> tuple[Path, Path, Path]:
    osv = tmp_path / "osv"
    osv.mkdir()
    (osv / "a.json").write_bytes(orjson.dumps(advisory("bench-affected")))
    lock = tmp_path / "agbom.lock.json"
    lock.write_bytes(orjson.dumps(build_lock(AgBOM.from_document(first_document()))))
    return osv, lock, tmp_path / "s.db"


# One step of a random change: (kind, tool index, server index, flag).
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["describe", "purl", "claim", "move", "add", "remove"]),
        st.integers(0, 11),
        st.integers(0, SERVERS - 1),
        st.booleans(),
    ),
    min_size=1,
    max_size=12,
)


def change_of(current: AgBOM, step: tuple[str, int, int, bool], serial: int) -> dict[str, Any]:
    """An `agbom/changed` diff payload that ``step`` makes of ``current``."""
    kind, index, target, flag = step
    tools = sorted(c.id for c in current if c.type.value == "tool")
    tid = tools[index % len(tools)]
    data = dict(current.components[tid].data)
    owner = next(c for c in current if c.type.value == "mcp_server" and tid in c.data["tools"])
    if kind == "describe":
        data["description"] = f"now does thing {serial}" if flag else "reads"
        return {"changed": [data]}
    if kind == "purl":
        data["purl"] = AFFECTED if flag else OTHER
        return {"changed": [data]}
    if kind == "claim":  # a client's own signals, which only the export and the lock decide
        data["vulnerabilities"] = [{"id": "MADE-UP"}]
        if flag:
            data["tools_drift"] = {"detail": "claimed"}
        return {"changed": [data]}
    servers = {c.id: dict(c.data) for c in current if c.type.value == "mcp_server"}
    if kind == "move":
        destination = servers[f"s{target}"]
        if destination["id"] == owner.id:
            return {"changed": [data]}
        source = dict(servers[owner.id], tools=[t for t in owner.data["tools"] if t != tid])
        destination["tools"] = [*destination["tools"], tid]
        return {"changed": [source, destination]}
    if kind == "add":
        new = tool(100 + serial, purl=AFFECTED if flag else None)
        destination = servers[f"s{target}"]
        destination["tools"] = [*destination["tools"], new["id"]]
        return {"added": [new], "changed": [destination]}
    if len(owner.data["tools"]) == 1 or len(tools) <= 2:
        return {"changed": [data]}
    source = dict(servers[owner.id], tools=[t for t in owner.data["tools"] if t != tid])
    return {"removed": [tid], "changed": [source]}


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS, approve=st.booleans())
def test_a_change_is_annotated_as_the_whole_agbom_would_be(
    setting: tuple[Path, Path, Path], steps: list[tuple[str, int, int, bool]], approve: bool
) -> None:
    osv, lock, db = setting
    signals = GuardianSignals(osv, lock, report=lambda _message: None)
    with open_store(str(db)) as store:
        if approve:
            # s3 approved with a tool set it does not have: drift judged by the approval.
            pin = {"definitions": [{"name": "t3", "description": "approved"}]}
            store.approve_server("s3", pin=pin, actor="test", reason="test")
        current = signals.annotate(AgBOM.from_document(first_document()), store)
        for serial, step in enumerate(steps):
            applied, _diff = apply_changed_payload(current, change_of(current, step, serial))
            found = signals.annotate_change(current, applied, store)
            assert found is not None, step
            incremental, replaced = found
            whole = signals.annotate(applied, store)
            assert [c.data for c in incremental] == [c.data for c in whole], step
            assert incremental.agbom_hash == whole.agbom_hash
            assert incremental.agbom_hash == AgBOM.from_document(whole.to_document()).agbom_hash
            moved = {
                c.id
                for c in incremental
                if current.get(c.id) is not None and current.components[c.id].data != c.data
            }
            named = applied.changed_since(current) or frozenset()
            assert moved - named <= replaced, step
            current = incremental


def test_a_reload_or_an_approval_makes_the_next_change_annotate_everything(
    setting: tuple[Path, Path, Path],
) -> None:
    osv, lock, db = setting
    signals = GuardianSignals(osv, lock, report=lambda _message: None)
    with open_store(str(db)) as store:
        current = signals.annotate(AgBOM.from_document(first_document()), store)
        touch = {"changed": [dict(current.components["t1"].data, capability="fs.write")]}
        applied, _ = apply_changed_payload(current, touch)
        found = signals.annotate_change(current, applied, store)
        assert found is not None
        current = found[0]

        # The export now also names t2's package: t2 is not in the next change.
        (osv / "b.json").write_bytes(orjson.dumps(advisory("bench-other")))
        signals.reload()
        applied, _ = apply_changed_payload(current, touch)
        assert signals.annotate_change(current, applied, store) is None
        current = signals.annotate(applied, store)
        assert current.components["t2"].data.get("vulnerabilities")

        # s1 approved with another tool set: its drift must show on the next change too.
        store.approve_server("s1", pin={"definitions": [{"name": "x"}]}, actor="t", reason="t")
        applied, _ = apply_changed_payload(current, touch)
        assert signals.annotate_change(current, applied, store) is None

        # An AgBOM not derived from the one annotated, or never annotated here, is not guessed.
        fresh = AgBOM.from_document(first_document())
        assert signals.annotate_change(fresh, applied, store) is None


def test_the_guardian_denies_what_a_reloaded_export_finds_on_an_untouched_component(
    setting: tuple[Path, Path, Path],
) -> None:
    osv, lock, db = setting
    config = GuardianConfig(osv_path=str(osv), lock_path=str(lock))
    g = build_guardian(db, config=config, with_default_rules=True)
    try:
        sid = open_session(g)

        def decide(method: str, payload: dict[str, Any]) -> str:
            return str(ok(g.handle(request(method, payload, session_id=sid)))["decision"])

        assert decide("agbom/snapshot", {"agbom": first_document()}) == "allow"
        t1 = tool(1, purl=OTHER)
        assert decide("agbom/changed", {"changed": [dict(t1, capability="fs.write")]}) == "allow"
        # Drift on t5's server, from a change to t5 alone: judged on that change.
        widened = tool(5, description="new: also deletes files")  # fs.write: an expansion
        assert decide("agbom/changed", {"changed": [widened]}) == "deny"
        # A critical advisory for bench-other, loaded while the session runs: the next change
        # names only t1, and AGB-VULN-001 must still see every tool on bench-other.
        (osv / "b.json").write_bytes(orjson.dumps(advisory("bench-other", "CRITICAL")))
        assert g.policies.signals is not None
        g.policies.signals.reload()
        assert decide("agbom/changed", {"changed": [t1]}) == "deny"
    finally:
        g.store.close()
