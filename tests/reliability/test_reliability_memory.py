"""Bounded memory of a long-running Guardian: ended sessions are freed, and open sessions
beyond a bound are dropped least-recently-used first and restored from the store intact."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

import pytest

from agbom.guardian import build_guardian
from agbom.guardian import core as guardian_core
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
    assert sid not in g._sessions
    late = g.handle(request("steps/userMessage", {"content": "x"}, session_id=sid))
    assert late["error"]["data"]["reason"] == "session_closed"
    assert len(g.store.chain_entries(sid)) == 2
    g.store.close()


def test_open_sessions_are_bounded_and_restored_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guardian_core, "MAX_SESSIONS_IN_MEMORY", 4)
    g = build_guardian(tmp_path / "s.db")
    sids = [str(uuid.uuid4()) for _ in range(10)]
    sent = {}
    for sid in sids:
        _open(g, sid)
        sent[sid] = request("steps/userMessage", {"content": "first"}, session_id=sid)
        assert g.handle(sent[sid])["result"]["decision"] == "allow"
        assert len(g._sessions) <= 4
    assert sids[0] not in g._sessions
    for sid in sids:
        # A replay of an evicted session's request is still refused (the store remembers).
        assert g.handle(copy.deepcopy(sent[sid]))["error"]["code"] == -32005
        reply = g.handle(request("steps/userMessage", {"content": "again"}, session_id=sid))
        assert reply["result"]["chain_hash"] == g.store.chain_head(sid)
        entries = [{k: v for k, v in e.items() if k != "seq"} for e in g.store.chain_entries(sid)]
        assert len(entries) == 3 and verify_chain(entries) is None
        assert len(g._sessions) <= 4
    g.store.close()
