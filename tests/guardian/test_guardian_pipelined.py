"""Pipelined commits: steps decided in one turn of the event loop share one commit, and no
answer leaves before its entry is stored. Driven through the transport's public entry
(``handle_body_pipelined``) on a real event loop and a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest

from agbom.guardian import Guardian, build_guardian
from agbom.guardian import session as session_module
from agbom.protocol import entry_hash, verify_chain
from agbom.store import SqliteStore
from agbom.transports.interface import Limits, handle_body_pipelined
from tests.guardian.acs import hello, new_session_id, request

T = TypeVar("T")
TOOL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "a"}}}


PUSH_OUT = 2 * 4 + 2
"""Steps after the first that push its id out of a session's memory of 4 (the tests set
RECENT_REQUEST_IDS to 4; a session keeps the latest 4 to 8)."""


@pytest.fixture
def guardian(tmp_path: Path) -> Guardian:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def run(guardian: Guardian, body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body`` on an event loop with the Guardian's pipelined commits switched on."""

    async def main() -> T:
        guardian.start_pipelined_commits(asyncio.get_running_loop().call_soon_threadsafe)
        try:
            return await body()
        finally:
            guardian.stop_pipelined_commits()

    return asyncio.run(main())


async def send(guardian: Guardian, message: Any) -> Any:
    return orjson.loads(await handle_body_pipelined(guardian, orjson.dumps(message), Limits()))


def open_session(guardian: Guardian) -> str:
    sid = new_session_id()
    for message in (hello(sid), request("steps/sessionStart", {}, session_id=sid)):
        assert "result" in guardian.handle(message)
    return sid


def stored_hashes(guardian: Guardian, sid: str) -> list[str]:
    return [e["entry_hash"] for e in guardian.store.chain_entries(sid)]


def verified(guardian: Guardian, sid: str, head: str | None = None) -> bool:
    entries = [
        {k: v for k, v in e.items() if k != "seq"} for e in guardian.store.chain_entries(sid)
    ]
    return verify_chain(entries, expected_head=head) is None


def test_concurrent_steps_of_two_sessions_each_answer_with_their_stored_entry(
    guardian: Guardian,
) -> None:
    a, b = open_session(guardian), open_session(guardian)
    steps = [request("steps/toolCallRequest", TOOL, session_id=(a, b)[i % 2]) for i in range(80)]

    replies = run(guardian, lambda: asyncio.gather(*(send(guardian, s) for s in steps)))

    for sid in (a, b):
        answered = [
            r["result"]["chain_hash"]
            for s, r in zip(steps, replies, strict=True)
            if s["params"]["metadata"]["session_id"] == sid
        ]
        assert all(r["result"]["decision"] == "allow" for r in replies)
        # Every answer names an entry that is in the store, in the order it was decided.
        assert stored_hashes(guardian, sid)[-40:] == answered
        assert verified(guardian, sid)


def test_answers_wait_for_the_commit(guardian: Guardian) -> None:
    sid = open_session(guardian)
    before = len(stored_hashes(guardian, sid))
    seen_in_store: list[int] = []

    async def body() -> None:
        async def one() -> None:
            await send(guardian, request("steps/toolCallRequest", TOOL, session_id=sid))
            # By the time the answer is back, its entry is in the store.
            seen_in_store.append(len(stored_hashes(guardian, sid)))

        await asyncio.gather(*(one() for _ in range(10)))

    run(guardian, body)
    assert min(seen_in_store) >= before + 1
    assert len(stored_hashes(guardian, sid)) == before + 10


def test_a_replay_older_than_memory_is_refused_by_the_store(
    guardian: Guardian, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "RECENT_REQUEST_IDS", 4)
    sid = open_session(guardian)
    first = request("steps/toolCallRequest", TOOL, session_id=sid)

    async def body() -> list[Any]:
        out = [await send(guardian, first)]
        filler = [request("steps/toolCallRequest", TOOL, session_id=sid) for _ in range(PUSH_OUT)]
        out += [await send(guardian, m) for m in filler]  # push the first id out of memory
        out.append(await send(guardian, first))
        out.append(await send(guardian, request("steps/toolCallRequest", TOOL, session_id=sid)))
        return out

    replies = run(guardian, body)
    assert replies[-2]["error"]["code"] == -32005
    assert replies[-2]["error"]["data"]["reason"] == "duplicate_request_id"
    assert replies[-1]["result"]["decision"] == "allow"  # the session recovered from the store
    assert stored_hashes(guardian, sid)[-1] == replies[-1]["result"]["chain_hash"]
    assert verified(guardian, sid)


def test_a_step_that_a_foreign_append_outran_is_decided_again_on_the_stored_head(
    guardian: Guardian,
) -> None:
    """Another process (a replica on the same store) appends to the session behind the
    Guardian's back: the queued entry that chained on the old head is refused by the store,
    and the step is decided again on the reloaded session instead of failing."""
    sid = open_session(guardian)
    other = SqliteStore.open(guardian.store.path)  # another process appending to the session
    head = guardian.store.chain_head(sid)

    foreign = {"entry_id": "2", "step_id": "foreign", "step_type": "steps/userMessage"}
    other.append_entry(
        sid,
        entry=foreign,
        entry_hash=entry_hash(foreign, head),
        previous_hash=head,
        request_id="foreign",
        nonce=None,
    )
    other.close()

    async def body() -> list[Any]:
        first = await send(guardian, request("steps/toolCallRequest", TOOL, session_id=sid))
        second = await send(guardian, request("steps/toolCallRequest", TOOL, session_id=sid))
        return [first, second]

    first, second = run(guardian, body)
    assert first["result"]["decision"] == "allow", first
    assert second["result"]["decision"] == "allow", second
    hashes = stored_hashes(guardian, sid)
    # sessionStart, the foreign entry, then both steps, each answered with its stored hash
    assert hashes[1:] == [
        entry_hash(foreign, head),
        first["result"]["chain_hash"],
        second["result"]["chain_hash"],
    ]
    assert verified(guardian, sid)


def test_a_replay_of_a_request_another_process_recorded_is_refused(guardian: Guardian) -> None:
    """The request id was decided elsewhere (not in this Guardian's memory): it is a replay."""
    sid = open_session(guardian)
    step = request("steps/toolCallRequest", TOOL, session_id=sid)
    other = SqliteStore.open(guardian.store.path)
    head = guardian.store.chain_head(sid)
    foreign = {"entry_id": "2", "step_id": step["params"]["request_id"], "step_type": "x"}
    other.append_entry(
        sid,
        entry=foreign,
        entry_hash=entry_hash(foreign, head),
        previous_hash=head,
        request_id=step["params"]["request_id"],
        nonce=None,
    )
    other.close()
    replay = run(guardian, lambda: send(guardian, step))
    assert replay["error"]["code"] == -32005, replay
    assert replay["error"]["data"]["reason"] == "duplicate_request_id"
    assert len(stored_hashes(guardian, sid)) == 2
    assert verified(guardian, sid)


def test_session_end_in_the_same_turn_seals_the_last_entry(guardian: Guardian) -> None:
    sid = open_session(guardian)

    async def body() -> list[Any]:
        steps = [request("steps/toolCallRequest", TOOL, session_id=sid) for _ in range(5)]
        end = request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)
        return await asyncio.gather(*(send(guardian, m) for m in [*steps, end]))

    replies = run(guardian, body)
    assert all("result" in r for r in replies), replies
    sealed = guardian.store.get_session(sid)["sealed_head"]
    assert sealed == replies[-1]["result"]["chain_hash"] == stored_hashes(guardian, sid)[-1]
    assert verified(guardian, sid, head=sealed)


def test_a_batch_is_answered_in_order_after_its_entries_are_stored(guardian: Guardian) -> None:
    sid = open_session(guardian)
    batch = [request("steps/toolCallRequest", TOOL, session_id=sid) for _ in range(4)]
    replies = run(guardian, lambda: send(guardian, batch))
    assert [r["id"] for r in replies] == [m["id"] for m in batch]
    assert stored_hashes(guardian, sid)[-4:] == [r["result"]["chain_hash"] for r in replies]


def test_when_the_store_fails_no_queued_step_is_allowed(guardian: Guardian) -> None:
    sid = open_session(guardian)

    async def body() -> list[Any]:
        pending = [
            asyncio.ensure_future(
                send(guardian, request("steps/toolCallRequest", TOOL, session_id=sid))
            )
            for _ in range(3)
        ]
        await asyncio.sleep(0)  # decided and queued, not yet committed
        guardian.store.close()
        return await asyncio.gather(*pending)

    replies = run(guardian, body)
    assert [r["error"]["data"]["reason"] for r in replies] == ["audit_append_failed"] * 3


def test_an_error_found_at_commit_is_signed_in_a_signed_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agbom.protocol import KeyRing, verify_envelope

    monkeypatch.setattr(session_module, "RECENT_REQUEST_IDS", 4)
    secret = tmp_path / "k"
    secret.write_bytes(bytes(range(48)))
    secret.chmod(0o600)
    g = build_guardian(tmp_path / "s.db", secret_file=secret, key_id="k1")
    ring = KeyRing.from_file(secret, "k1")
    sid = new_session_id()
    for message in (hello(sid), request("steps/sessionStart", {}, session_id=sid)):
        assert "result" in g.handle(ring.sign(message, sid))
    first = ring.sign(request("steps/toolCallRequest", TOOL, session_id=sid), sid)

    async def body() -> list[Any]:
        out = [await send(g, first)]
        # These push the first id out of memory: only the store can catch its replay.
        filler = [
            ring.sign(request("steps/toolCallRequest", TOOL, session_id=sid), sid)
            for _ in range(PUSH_OUT)
        ]
        out += [await send(g, m) for m in filler]
        out.append(await send(g, first))
        return out

    replies = run(g, body)
    replay = replies[-1]
    assert replay["error"]["code"] == -32005
    assert replay["error"]["signature"]["key_id"] == "k1"
    verify_envelope(replay, ring.session_key(sid))
    g.store.close()
