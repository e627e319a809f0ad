"""A step on a store that cannot be written is refused as the store failure it is.

The decision process that replaces a killed one on a read-only store restores the session
from the store and commits the step's entry on its own (not batched): the append fails, and
the answer must be ``audit_append_failed``, never ``internal_error`` nor an allow (the CI
failure of tests/reliability/test_reliability_crash.py at 0909c2f). Driven through
``Guardian.handle`` on a real SQLite file made unwritable (tests/store/unwritable.py).
"""

from __future__ import annotations

from pathlib import Path

from agbom.guardian import build_guardian
from tests.guardian.acs import hello, new_session_id, request
from tests.store.unwritable import unwritable

TOOL = {"tool": {"name": "read_file", "version": "1.0"}, "arguments": {"path": {"value": "a"}}}
STEPS = (
    ("steps/userMessage", {"content": "hi"}),
    ("steps/toolCallRequest", TOOL),
)


def test_a_restored_session_on_a_read_only_store_is_refused_audit_append_failed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ro.db"
    first = build_guardian(db)
    sid = new_session_id()
    for message in (hello(sid), request("steps/sessionStart", {}, session_id=sid)):
        assert "result" in first.handle(message)
    before = [e["entry_hash"] for e in first.store.chain_entries(sid)]
    first.store.close()  # its connection could write: the replacement's cannot
    with unwritable(db):
        replacement = build_guardian(db)  # holds no session: restores it from the store
        try:
            replies = [
                replacement.handle(request(method, payload, session_id=sid))
                for method, payload in STEPS
                for _ in range(2)  # the second one finds the session in memory
            ]
            after = [e["entry_hash"] for e in replacement.store.chain_entries(sid)]
        finally:
            replacement.store.close()
    for reply in replies:
        assert "result" not in reply, reply
        assert reply["error"]["code"] == -32603, reply
        assert reply["error"]["data"]["reason"] == "audit_append_failed", reply
        assert "read-only" in reply["error"]["data"]["message"], reply
    assert after == before  # nothing was decided without its entry
    # Writable again: the same session takes steps, on the chain as it was.
    again = build_guardian(db)
    try:
        reply = again.handle(request("steps/userMessage", {"content": "hi"}, session_id=sid))
        assert "result" in reply, reply
        stored = [e["entry_hash"] for e in again.store.chain_entries(sid)]
        assert stored == [*before, reply["result"]["chain_hash"]]
    finally:
        again.store.close()


def test_a_handshake_on_a_read_only_store_is_refused_store_unavailable_and_negotiates_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ro.db"
    build_guardian(db).store.close()  # the schema exists; the files then become unwritable
    sid = new_session_id()
    guardian = build_guardian(db)
    try:
        with unwritable(db):
            # This process opened the store before: reopen, as a restarted server would.
            guardian.store.close()
            guardian = build_guardian(db)
            refused = guardian.handle(hello(sid))
        # Writable again, the refused handshake has negotiated nothing.
        after = guardian.handle(request("steps/sessionStart", {}, session_id=sid))
        again = guardian.handle(hello(sid))
        started = guardian.handle(request("steps/sessionStart", {}, session_id=sid))
    finally:
        guardian.store.close()
    assert "result" not in refused, refused
    assert refused["error"]["code"] == -32603, refused
    assert refused["error"]["data"]["reason"] == "store_unavailable", refused
    assert "read-only" in refused["error"]["data"]["message"], refused
    assert "StoreError" not in refused["error"]["data"]["message"], refused
    assert after["error"]["data"]["reason"] == "no_handshake", after
    assert "result" in again, again
    assert started["result"]["decision"] == "allow", started
