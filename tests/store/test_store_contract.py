"""The store contract across handles: what one Guardian replica, or the CLI, writes through
its own handle is what every other handle on the same store sees, on every backend."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from store_helpers import make_digest, register
from test_store_chain import append

from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, Store, StoreError

Factory = Callable[[], Store]


def test_every_backend_satisfies_the_store_protocol(store: Store) -> None:
    assert isinstance(store, Store)
    assert store.schema_version > 0
    assert store.write_failure is None
    assert store.check_writable() is None
    assert store.location


def test_a_decision_made_elsewhere_takes_effect_on_the_next_verdict(store_factory: Factory) -> None:
    server, cli = store_factory(), store_factory()
    digest = make_digest("pdf")
    register(server, "pdf", digest)
    assert server.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).status == "pending"
    cli.set_status("pdf", digest, "approved", actor="alice")
    assert server.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).approved
    cli.set_status("pdf", digest, "revoked", actor="alice", reason="CVE")
    verdict = server.verdict("pdf", digest, agent_id="agent-1", tenant_id=None)
    assert verdict.status == "revoked" and not verdict.approved
    assert server.approved_digests("pdf") == []
    assert [h["to_status"] for h in server.history("pdf")] == ["pending", "approved", "revoked"]


def test_two_handles_cannot_fork_a_chain(store_factory: Factory) -> None:
    one, two = store_factory(), store_factory()
    root = append(one, "s", 1, None)
    append(one, "s", 2, root)
    with pytest.raises(ChainConflict):
        append(two, "s", 3, root)  # two still believes the head is the root
    outcomes = two.append_entries([ChainAppend("s", {"n": 3}, "h3", root, request_id="req-3")])
    assert len(outcomes) == 1 and isinstance(outcomes[0], ChainConflict)
    assert [e["seq"] for e in two.chain_entries("s")] == [1, 2]
    assert two.chain_tip("s") == one.chain_tip("s")


def test_replay_protection_holds_across_handles(store_factory: Factory) -> None:
    one, two = store_factory(), store_factory()
    first = append(one, "s", 1, None, request_id="r-1", nonce="n-1")
    with pytest.raises(DuplicateRequest) as caught:
        append(two, "s", 2, first, request_id="r-1")
    assert caught.value.field == "request_id"
    with pytest.raises(DuplicateRequest) as caught:
        append(two, "s", 2, first, request_id="r-2", nonce="n-1")
    assert caught.value.field == "nonce"
    # the same ids in another session are another session's business
    append(two, "other", 1, None, request_id="r-1", nonce="n-1")
    assert len(one.chain_entries("s")) == 1


def test_a_seal_made_on_one_handle_is_seen_by_all_and_is_final(store_factory: Factory) -> None:
    one, two = store_factory(), store_factory()
    one.upsert_session("s", agent_id="agent-1", status="open")
    head = append(one, "s", 1, None)
    one.upsert_session("s", agent_id="agent-1", status="closed")
    one.seal_session("s", head)
    seen = two.get_session("s")
    assert seen is not None and seen["sealed_head"] == head and seen["status"] == "closed"
    two.seal_session("s", "another-head")
    again = one.get_session("s")
    assert again is not None and again["sealed_head"] == head


def test_an_agbom_saved_on_one_handle_is_read_back_on_another(store_factory: Factory) -> None:
    one, two = store_factory(), store_factory()
    document = {
        "agent_id": "agent-1",
        "components": [{"id": "t1", "type": "tool", "name": "read_file", "version": "1.0"}],
    }
    version = one.save_agbom_version("s", agent_id="agent-1", document=document, agbom_hash="h1")
    stored = two.agbom_version("s")
    assert stored is not None and stored["version"] == version == 1
    assert stored["document"] == document and stored["agbom_hash"] == "h1"
    latest = two.latest_agbom_for_agent("agent-1")
    assert latest is not None and latest["version"] == 1
    assert [c["name"] for c in two.list_components(type="tool")] == ["read_file"]


def test_handles_in_threads_lose_no_write(store_factory: Factory) -> None:
    errors: list[BaseException] = []
    shared = store_factory()
    own = [store_factory() for _ in range(3)]

    def work(store: Store, prefix: str) -> None:
        try:
            previous = None
            for i in range(10):
                store.set_status(f"{prefix}-{i}", make_digest(prefix), "approved", actor=prefix)
                previous = append(store, prefix, i + 1, previous)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(shared, f"shared{n}")) for n in range(2)]
    threads += [threading.Thread(target=work, args=(h, f"own{n}")) for n, h in enumerate(own)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert len(shared.list_skills("approved")) == 5 * 10
    assert len(shared.chain_session_ids()) == 5
    assert all(len(shared.chain_entries(sid)) == 10 for sid in shared.chain_session_ids())


def test_a_closed_handle_refuses_every_piece_and_leaves_the_others_open(
    store_factory: Factory,
) -> None:
    closed, still_open = store_factory(), store_factory()
    closed.close()
    digest = make_digest("pdf")
    calls: list[Callable[[], object]] = [
        closed.list_skills,
        lambda: closed.verdict("pdf", digest, agent_id=None, tenant_id=None),
        lambda: closed.chain_head("s"),
        lambda: closed.get_session("s"),
        lambda: closed.agbom_version("s"),
    ]
    for call in calls:
        with pytest.raises(StoreError):
            call()
    # A batch either raises or refuses each entry (append_entries reports per entry).
    try:
        outcomes = closed.append_entries([ChainAppend("s", {"n": 1}, "h1", None)])
    except StoreError:
        outcomes = None
    assert outcomes is None or all(isinstance(o, StoreError) for o in outcomes)
    assert still_open.list_skills() == [] and still_open.chain_head("s") is None


def test_reopen_gives_a_handle_of_its_own(store: Store) -> None:
    other = store.reopen()
    try:
        register(other, "pdf", make_digest("pdf"))
    finally:
        other.close()
    assert [r.skill_id for r in store.list_skills()] == ["pdf"]


def test_a_handle_reads_what_others_appended_since_a_seq(store_factory: Factory) -> None:
    """What a stale replica reads to catch up: the entries after the last seq it folded."""
    one, two = store_factory(), store_factory()
    head = None
    for n in range(1, 6):
        head = append(one if n % 2 else two, "s", n, head)
    since = two.chain_entries("s", after=2)
    assert [e["seq"] for e in since] == [3, 4, 5]
    assert since[0]["previous_hash"] == two.chain_entries("s")[1]["entry_hash"]
    assert [e["n"] for e in since] == [3, 4, 5]
    assert two.chain_entries("s", after=5) == []
    assert two.chain_entries("s", after=0) == two.chain_entries("s")


def test_the_latest_accepted_agbom_version_number_is_the_same_on_every_handle(
    store_factory: Factory,
) -> None:
    one, two = store_factory(), store_factory()
    assert two.agbom_version_number("s") == 0
    document = {"agent_id": "agent-1", "components": []}
    one.save_agbom_version("s", agent_id="agent-1", document=document, agbom_hash="h1")
    second = one.save_agbom_version("s", agent_id="agent-1", document=document, agbom_hash="h2")
    assert two.agbom_version_number("s") == second == 2
    # A refused version is on the record, but it is not the session's AgBOM.
    one.save_agbom_version(
        "s", agent_id="agent-1", document=document, agbom_hash="h3", accepted=False
    )
    assert two.agbom_version_number("s") == 2
    latest = two.agbom_version("s")
    assert latest is not None and latest["version"] == 2
    assert two.agbom_version_number("other") == 0
