"""Bounded memory of a long-running Guardian: ended sessions are freed, and open sessions
beyond a bound are dropped least-recently-used first and restored from the store intact.

The Guardian bounds the sessions it holds twice: in count (2,048, ``MAX_SESSIONS_IN_MEMORY``)
and in estimated bytes (``GuardianConfig.max_session_bytes``, 512 MiB; the estimate counts
components and remembered ids, see ``SessionState.estimated_bytes``). These tests check both
bounds through ``Guardian.memory_in_use``, and, with tracemalloc, that a dropped session's
memory really is released, so what the process holds follows the bound and not the number of
sessions ever seen. tests/guardian/test_guardian_memory.py checks the estimate against big
inventories.
"""

from __future__ import annotations

import copy
import gc
import tracemalloc
import uuid
from pathlib import Path

import pytest

from agbom.guardian import GuardianConfig, build_guardian
from agbom.guardian import memory as guardian_memory
from agbom.protocol import verify_chain
from tests.guardian.acs import hello, request


def _open(g, sid: str) -> None:
    assert "result" in g.handle(hello(sid))
    started = g.handle(request("steps/sessionStart", {}, session_id=sid))
    assert started["result"]["decision"] == "allow"


def test_ended_sessions_leave_memory_and_stay_sealed(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db")
    sid = str(uuid.uuid4())
    _open(g, sid)
    g.handle(request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))
    assert g.memory.held(sid) is None
    late = g.handle(request("steps/userMessage", {"content": "x"}, session_id=sid))
    assert late["error"]["data"]["reason"] == "session_closed"
    assert len(g.store.chain_entries(sid)) == 2
    g.store.close()


def test_open_sessions_are_bounded_in_count_and_restored_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guardian_memory, "MAX_SESSIONS_IN_MEMORY", 4)
    g = build_guardian(tmp_path / "s.db")
    sids = [str(uuid.uuid4()) for _ in range(10)]
    sent = {}
    for sid in sids:
        _open(g, sid)
        sent[sid] = request("steps/userMessage", {"content": "first"}, session_id=sid)
        assert g.handle(sent[sid])["result"]["decision"] == "allow"
        assert g.memory_in_use()[0] <= 4
    for sid in sids:
        # A replay of an evicted session's request is still refused (the store remembers).
        assert g.handle(copy.deepcopy(sent[sid]))["error"]["code"] == -32005
        reply = g.handle(request("steps/userMessage", {"content": "again"}, session_id=sid))
        assert reply["result"]["chain_hash"] == g.store.chain_head(sid)
        entries = [{k: v for k, v in e.items() if k != "seq"} for e in g.store.chain_entries(sid)]
        assert len(entries) == 3 and verify_chain(entries) is None
        assert g.memory_in_use()[0] <= 4
    g.store.close()


def _snapshot(components: int, seed: str) -> dict:
    return {
        "agent": {"id": "agent-1"},
        "components": [
            {
                "id": f"tool-{seed}-{n:05d}",
                "type": "tool",
                "name": f"tool_{seed}_{n}",
                "version": "1.0",
                "provider": "local",
                "capability": "fs.read",
                "registration_provenance": {"origin": "system"},
            }
            for n in range(components)
        ],
    }


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_dropped_sessions_release_their_agbom(tmp_path: Path) -> None:
    """Past the byte bound, memory stops growing: each dropped session's AgBOM and graph are
    freed, not kept by anything else. Sessions hold 60-component AgBOMs; the bound fits
    three. From 3 sessions to 9, traced memory may grow by at most two sessions' worth (it
    grows by about six when dropped sessions stay reachable). Allocations, not time."""
    g = build_guardian(tmp_path / "probe.db")
    _open(g, "probe")
    g.handle(request("agbom/snapshot", {"agbom": _snapshot(60, "probe")}, session_id="probe"))
    weight = g.memory_in_use()[1]
    g.store.close()
    budget = 3 * weight + weight // 2
    g = build_guardian(tmp_path / "s.db", config=GuardianConfig(max_session_bytes=budget))
    try:

        def session_with_agbom(n: int) -> None:
            sid = f"big-{n}"
            _open(g, sid)
            reply = g.handle(
                request("agbom/snapshot", {"agbom": _snapshot(60, str(n))}, session_id=sid)
            )
            assert reply["result"]["decision"] == "allow", reply
            held, estimated = g.memory_in_use()
            assert estimated <= budget and held <= 3, (held, estimated, budget)

        session_with_agbom(0)  # warms every cache that is filled once
        tracemalloc.start()
        try:
            first = _traced()
            for n in range(1, 4):
                session_with_agbom(n)
            at_bound = _traced()
            for n in range(4, 10):
                session_with_agbom(n)
            past_bound = _traced()
        finally:
            tracemalloc.stop()
        per_session = (at_bound - first) / 3
        print(f"memory: {per_session:.0f} B per session, {past_bound - at_bound} B past the bound")
        assert per_session > 20_000, per_session  # an AgBOM of this size is held while open
        assert past_bound - at_bound < 2 * per_session, (past_bound - at_bound, per_session)
        # The first session was dropped, and comes back from the store with its inventory.
        known = {"tool": {"name": "tool_1_7"}, "arguments": {}}
        reply = g.handle(request("steps/toolCallRequest", known, session_id="big-1"))
        assert reply["result"]["decision"] == "allow", reply
    finally:
        g.store.close()
