"""Session memory is bounded in bytes, not only in count; dropped sessions come back from the
store with the same inventory and chain."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

from agbom.guardian import GuardianConfig, build_guardian
from agbom.guardian.session import COMPONENT_BYTES
from tests.guardian.acs import request
from tests.guardian.test_guardian_pipeline import ok, open_session

COMPONENTS = 1500
BUDGET = 8 * 1024 * 1024


def inventory(session_index: int, count: int = COMPONENTS) -> dict[str, Any]:
    components = [
        {
            "id": f"tool-{session_index}-{i}",
            "type": "tool",
            "name": f"tool-{session_index}-{i}",
            "version": "1.0.0",
            "provider": "local",
            "capability": "fs.read",
            "registration_provenance": {"origin": "system"},
        }
        for i in range(count)
    ]
    return {"agent": {"id": "agent-1"}, "components": components}


def test_sessions_are_held_within_the_byte_bound_and_restored(tmp_path: Path) -> None:
    g = build_guardian(
        tmp_path / "s.db",
        config=GuardianConfig(max_session_bytes=BUDGET, strict_inventory=True),
    )
    sessions = []
    tracemalloc.start()
    try:
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        for index in range(12):
            sid = open_session(g)
            snap = ok(
                g.handle(request("agbom/snapshot", {"agbom": inventory(index)}, session_id=sid))
            )
            assert snap["decision"] == "allow", snap
            sessions.append(sid)
            held, estimated = g.memory_in_use()
            assert estimated <= BUDGET
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    held, estimated = g.memory_in_use()
    # Each session weighs over 1,500 * 2 KiB = 3 MiB: at most two fit in 8 MiB, not all twelve.
    assert COMPONENTS * COMPONENT_BYTES * held <= BUDGET
    assert 1 <= held <= 2
    # What was really allocated stays near the bound (twelve sessions would be ~25 MiB more).
    assert grown < 3 * BUDGET, grown
    # A dropped session is restored from the store: its inventory still decides.
    first = sessions[0]
    known = {"tool": {"name": "tool-0-7"}, "arguments": {}}
    assert (
        ok(g.handle(request("steps/toolCallRequest", known, session_id=first)))["decision"]
        == "allow"
    )
    unknown = {"tool": {"name": "tool-5-7"}, "arguments": {}}  # another session's tool
    denied = ok(g.handle(request("steps/toolCallRequest", unknown, session_id=first)))
    assert denied["decision"] == "deny"
    # ... and its chain goes on where it stopped.
    entries = g.store.chain_entries(first)
    assert [e["step_type"] for e in entries][-3:] == [
        "agbom/snapshot",
        "steps/toolCallRequest",
        "steps/toolCallRequest",
    ]
    g.store.close()


def test_the_weight_follows_what_a_session_remembers(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db")
    sid = open_session(g)
    session = g.session(sid)
    assert session is not None
    before = g.memory_in_use()[1]
    for _ in range(50):
        ok(g.handle(request("steps/userMessage", {"content": "hi"}, session_id=sid)))
    after = g.memory_in_use()[1]
    assert after > before
    assert after == sum(s.estimated_bytes() for s in [session])
    g.store.close()


def test_the_estimate_follows_what_a_held_inventory_measures(tmp_path: Path) -> None:
    """The weight a session is counted at, against the bytes its inventory, graph, findings
    and tool index hold, measured on the objects (sizing.held_bytes): within a factor the
    bound's documentation states (docs/reliability.md, "Bounds"), at three sizes."""
    from agbom.guardian.sizing import held_bytes

    g = build_guardian(tmp_path / "s.db")
    for size in (50, 500, 3000):
        sid = open_session(g)
        snap = ok(
            g.handle(request("agbom/snapshot", {"agbom": inventory(size, size)}, session_id=sid))
        )
        assert snap["decision"] == "allow", snap
        session = g.memory.held(sid)
        assert session is not None
        measured = held_bytes(session.agbom, session.graph, session.findings, session.tools_by_name)
        per_component = measured / size
        assert 0.6 * COMPONENT_BYTES <= per_component <= 1.25 * COMPONENT_BYTES, (
            size,
            per_component,
        )
        assert session.weight >= measured * 0.8, (size, session.weight, measured)
