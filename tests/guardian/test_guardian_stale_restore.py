"""A session that went stale on one replica is restored from where it was, not from scratch.

Two Guardians on one SQLite file are two replicas: each step one of them appends makes the
other's view of the session stale. The stale one used to read and fold the session's whole
chain again (5.8 ms a step at 1,000 entries, 97 ms at 16,000: benchmarks/bench_stale_restore.py);
it now extends the fold it restored the session from with the entries appended since
(guardian/session.py, ``ChainFold``). These tests check that the two give the same session:
the fold itself, property-tested over random chains and every split point, and two replicas
taking turns at random on a real store, with what the session's memory decides across them
(a toolCallResult naming the other replica's call, a replay of the other replica's request,
the end of the session).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.guardian import Guardian, build_guardian
from agbom.guardian import session as session_module
from agbom.guardian.session import ChainFold
from agbom.protocol import verify_chain
from agbom.store import SqliteStore
from tests.guardian.acs import SAMPLE_AGBOM, hello, new_session_id, request

TOOL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "a"}}}
STEP_TYPES = (
    "steps/toolCallRequest",
    "steps/userMessage",
    "steps/turnStart",
    "steps/turnEnd",
    "steps/skillRegister",
    "steps/sessionEnd",
)


def folded(fold: ChainFold) -> tuple[Any, ...]:
    """Everything a fold holds, remembered ids in their order (dict equality ignores it)."""
    return (
        fold.seq,
        fold.head,
        fold.ended,
        fold.deferrals,
        fold.turn_id,
        list(fold.request_ids.items()),
        list(fold.tool_calls.items()),
        sorted(fold.denied),
    )


@st.composite
def chains(draw: st.DrawFn) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    previous = None
    for seq in range(1, draw(st.integers(0, 40)) + 1):
        step_type = draw(st.sampled_from(STEP_TYPES))
        entry: dict[str, Any] = {
            "step_type": step_type,
            "step_id": f"r{draw(st.integers(0, 12))}",  # repeats: re-remembered ids move last
            "decision": draw(st.sampled_from(["allow", "deny", "defer"])),
            "seq": seq,
            "previous_hash": previous,
            "entry_hash": f"h{seq}",
        }
        if draw(st.booleans()):
            entry["turn_id"] = f"t{draw(st.integers(0, 3))}"
        if step_type == "steps/skillRegister":
            entry["skill"] = {
                "skill_id": f"s{draw(st.integers(0, 4))}",
                "algorithm": "sha256",
                "value": "0" * 64,
            }
        entries.append(entry)
        previous = entry["entry_hash"]
    return entries


@settings(max_examples=200, deadline=None)
@given(chains(), st.data())
def test_a_fold_extended_by_the_rest_of_its_chain_is_the_fold_of_the_whole_chain(
    entries: list[dict[str, Any]], data: st.DataObject
) -> None:
    bounds = {"RECENT_REQUEST_IDS": 3}  # small: the trims happen
    saved = {name: getattr(session_module, name) for name in bounds}
    for name, value in bounds.items():
        setattr(session_module, name, value)
    try:
        split = data.draw(st.integers(0, len(entries)))
        whole = ChainFold.of(entries)
        start = ChainFold.of(entries[:split])
        before = folded(start)
        extended = start.extended(entries[split:])
        assert extended is not None
        assert folded(extended) == folded(whole)
        assert folded(start) == before  # the fold it started from is left as it was
        assert len(whole.request_ids) <= 2 * 3
    finally:
        for name, value in saved.items():
            setattr(session_module, name, value)


def test_entries_that_do_not_continue_the_fold_are_refused() -> None:
    entries = [
        {"step_type": "steps/userMessage", "step_id": f"r{seq}", "seq": seq}
        | {"previous_hash": f"h{seq - 1}" if seq > 1 else None, "entry_hash": f"h{seq}"}
        for seq in range(1, 6)
    ]
    start = ChainFold.of(entries[:2])
    assert start.extended(entries[3:]) is None  # seq 3 is missing
    forked = [{**entries[2], "previous_hash": "elsewhere"}, *entries[3:]]
    assert start.extended(forked) is None
    extended = start.extended(entries[2:])
    assert extended is not None and extended.head == "h5"


def _answered(guardian: Guardian, message: dict[str, Any]) -> dict[str, Any]:
    reply = guardian.handle(message)
    assert "result" in reply or "error" in reply, reply
    return reply


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_replicas_taking_turns_at_random_decide_as_one(tmp_path: Path, seed: int) -> None:
    db = tmp_path / "replicas.db"
    replicas = [build_guardian(db), build_guardian(db)]
    restores: list[int] = []
    for replica in replicas:
        real = replica.store.chain_entries

        def recorded(session_id: str, *, after: int = 0, real: Any = real) -> Any:
            restores.append(after)
            return real(session_id, after=after)

        replica.store.chain_entries = recorded  # type: ignore[method-assign]
    reader = SqliteStore.open(db)  # the test's own reads, not counted
    rng = random.Random(seed)
    sid = new_session_id()
    try:
        opening = (
            hello(sid),
            request("steps/sessionStart", {}, session_id=sid),
            request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid),
        )
        for message in opening:
            assert "result" in replicas[0].handle(message)
        version = 0
        calls: list[tuple[int, str]] = []  # (replica, request_id) of each toolCallRequest
        turn = 0
        for _ in range(60):
            index = rng.randrange(2)
            guardian = replicas[index]
            kind = rng.choice(["call", "call", "result", "message", "turn", "inventory"])
            if kind == "result" and calls:
                # Named by the other replica as often as not: its memory of the session's
                # tool calls must come across the stale restore.
                _, ref = rng.choice(calls)
                payload = {
                    "tool": {"name": "read_file"},
                    "exit_status": "success",
                    "outputs": [{"value": "x"}],
                    "request_id_ref": ref,
                }
                reply = _answered(
                    guardian, request("steps/toolCallResult", payload, session_id=sid)
                )
                assert "result" in reply, reply
            elif kind == "turn":
                turn += 1
                payload = {"turn_id": f"t{turn}", "triggered_by": "user_message"}
                started = request("steps/turnStart", payload, session_id=sid)
                assert "result" in _answered(guardian, started)
                other = replicas[1 - index]
                ended = request(
                    "steps/turnEnd",
                    {"turn_id": f"t{turn}", "outcome": "completed", "step_count": 1},
                    session_id=sid,
                )
                assert "result" in _answered(other, ended)
            elif kind == "inventory":
                # A new AgBOM version on one replica: the other must not keep the one it held.
                version += 1
                tool = {**SAMPLE_AGBOM["components"][0], "description": f"v{version}"}
                change = request("agbom/changed", {"changed": [tool]}, session_id=sid)
                assert _answered(guardian, change)["result"]["decision"] == "allow"
            elif kind == "message":
                step = request("steps/userMessage", {"content": "hi"}, session_id=sid)
                assert "result" in _answered(guardian, step)
            else:
                step = request("steps/toolCallRequest", TOOL, session_id=sid)
                reply = _answered(guardian, step)
                assert reply["result"]["decision"] == "allow", reply
                calls.append((index, step["params"]["request_id"]))
                # The other replica refuses the same request as the replay it is.
                replay = _answered(replicas[1 - index], step)
                assert replay["error"]["code"] == -32005, replay
            session = guardian.memory.held(sid)
            latest = reader.agbom_version(sid)
            assert session is not None and session.agbom is not None and latest is not None
            assert session.agbom.agbom_hash == latest["agbom_hash"]
            if session.chain is not None:
                # What this replica restored the session from is what the stored chain up to
                # that point folds to.
                stored = reader.chain_entries(sid)
                assert folded(session.chain) == folded(ChainFold.of(stored[: session.chain.seq]))
        end = request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)
        assert "result" in _answered(replicas[0], end)
        late = _answered(
            replicas[1], request("steps/userMessage", {"content": "late"}, session_id=sid)
        )
        assert late["error"]["data"]["reason"] == "session_closed", late
        entries = reader.chain_entries(sid)
    finally:
        for replica in replicas:
            replica.store.close()
        reader.close()
    assert verify_chain([{k: v for k, v in e.items() if k != "seq"} for e in entries]) is None
    # Each replica folds the whole chain once at most (its first restore of the session);
    # every later restore starts from where the last one was.
    assert sum(1 for after in restores if after == 0) <= 2, restores
    assert sum(1 for after in restores if after > 0) >= 10, restores
