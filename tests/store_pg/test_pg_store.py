"""What only the PostgreSQL store has to show: replicas on one database, triggers, NOTIFY,
migrations and the errors of a database, all on the throwaway cluster."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from agbom.protocol import entry_hash
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, StoreError, open_store
from agbom.store.postgres import APPROVALS_CHANNEL, SCHEMA_VERSION, PostgresStore, display_url
from tests.pgcluster import PgCluster
from tests.store.store_helpers import make_digest, register


def append(store: PostgresStore, session: str, n: int, previous: str | None, **kw: str) -> str:
    entry = {"entry_id": f"{session}-{n}", "n": n}
    digest = entry_hash(entry, previous)
    store.append_entry(
        session,
        entry=entry,
        entry_hash=digest,
        previous_hash=previous,
        request_id=kw.get("request_id", f"req-{n}"),
        nonce=kw.get("nonce"),
    )
    return digest


@pytest.fixture
def replicas(pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    with PostgresStore.open(pg_url) as one, PostgresStore.open(pg_url) as two:
        yield one, two


def test_open_store_picks_postgres_and_hides_the_password(pg_url: str, pg_cluster) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
        assert store.schema_version == SCHEMA_VERSION
        assert pg_cluster.password not in store.location
        assert store.location.startswith("postgresql://agbom@127.0.0.1:")


def test_two_replicas_cannot_fork_a_chain(replicas) -> None:
    one, two = replicas
    root = append(one, "s", 1, None)
    append(one, "s", 2, root)
    with pytest.raises(ChainConflict):
        append(two, "s", 3, root)  # two's head is stale: one appended after it
    assert [e["seq"] for e in two.chain_entries("s")] == [1, 2]


def test_racing_appends_on_one_head_commit_exactly_one(pg_url: str) -> None:
    """Eight stores (replicas) append on the same head at once: one wins, every other one
    gets ChainConflict, and the chain stays linear."""
    stores = [PostgresStore.open(pg_url, pool_size=1) for _ in range(8)]
    try:
        root = append(stores[0], "race", 1, None)
        start = threading.Barrier(len(stores))
        outcomes: list[object] = [None] * len(stores)

        def go(index: int) -> None:
            start.wait(timeout=60)
            try:
                outcomes[index] = append(stores[index], "race", 2, root, request_id=f"r{index}")
            except StoreError as exc:
                outcomes[index] = exc

        threads = [threading.Thread(target=go, args=(i,)) for i in range(len(stores))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        won = [o for o in outcomes if isinstance(o, str)]
        lost = [o for o in outcomes if isinstance(o, ChainConflict)]
        assert len(won) == 1 and len(lost) == len(stores) - 1, outcomes
        entries = stores[0].chain_entries("race")
        assert [e["seq"] for e in entries] == [1, 2]
        assert entries[1]["previous_hash"] == root
    finally:
        for store in stores:
            store.close()


def test_replay_is_refused_on_another_replica(replicas) -> None:
    one, two = replicas
    head = append(one, "s", 1, None, request_id="req-x", nonce="n-1")
    with pytest.raises(DuplicateRequest) as by_id:
        append(two, "s", 2, head, request_id="req-x")
    assert by_id.value.field == "request_id"
    with pytest.raises(DuplicateRequest) as by_nonce:
        append(two, "s", 2, head, request_id="req-y", nonce="n-1")
    assert by_nonce.value.field == "nonce"
    assert len(one.chain_entries("s")) == 1


def test_a_seal_and_a_revoke_on_one_replica_are_seen_by_the_other(replicas) -> None:
    one, two = replicas
    digest = make_digest("pdf")
    register(one, "pdf", digest)
    two.set_status("pdf", digest, "approved", actor="alice")
    assert one.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).approved
    two.set_status("pdf", digest, "revoked", actor="alice", reason="CVE")
    assert one.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).status == "revoked"
    one.upsert_session("s", agent_id="agent-1", status="ended")
    one.seal_session("s", "head-1")
    two.seal_session("s", "head-2")  # a seal is final, whoever writes second
    assert two.get_session("s")["sealed_head"] == "head-1"


def test_history_tables_are_append_only_in_the_database(store: PostgresStore, pg_url) -> None:
    digest = make_digest("pdf")
    register(store, "pdf", digest)
    store.set_status("pdf", digest, "approved", actor="alice")
    append(store, "s", 1, None)
    store.save_agbom_version("s", agent_id="a", document={"components": []}, agbom_hash="h")
    store.record_skill_event("s", "pdf", "load")
    with psycopg.connect(pg_url, autocommit=True) as raw:
        for table in ("skill_history", "chain_entries", "agbom_versions", "skill_events"):
            for sql in (f"UPDATE {table} SET session_id = session_id", f"DELETE FROM {table}"):
                if table == "skill_history":
                    sql = sql.replace("session_id", "actor")
                with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                    raw.execute(sql)
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                raw.execute(f"TRUNCATE {table}")
    assert [h["actor"] for h in store.history("pdf", digest)] == ["agent-1", "alice"]
    assert len(store.chain_entries("s")) == 1


def test_approval_changes_notify_in_their_transaction(store: PostgresStore, pg_url) -> None:
    digest = make_digest("pdf")
    with psycopg.connect(pg_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {APPROVALS_CHANNEL}")
        register(store, "pdf", digest)
        store.set_status("pdf", digest, "approved", actor="alice")
        register(store, "pdf", digest)  # known and decided: only last_seen moves, no notice
        doc = {
            "approvals": [
                {
                    "skill_id": "csv",
                    "digest": str(make_digest("csv")),
                    "status": "denied",
                    "decided_at": "2026-01-01T00:00:00Z",
                }
            ]
        }
        assert store.import_approvals(doc, actor="ci") == 1
        assert store.import_approvals(doc, actor="ci") == 0  # nothing changed: no notice
        payloads = [n.payload for n in listener.notifies(timeout=5, stop_after=3)]
        assert payloads == ["pdf", "pdf", "csv"]
        assert [n.payload for n in listener.notifies(timeout=0.5)] == []


def test_a_batch_refuses_one_bad_entry_and_keeps_the_others(store: PostgresStore) -> None:
    first = {"entry_id": "1"}
    first_hash = entry_hash(first, None)
    second = {"entry_id": "2"}
    outcomes = store.append_entries(
        [
            ChainAppend("s", first, first_hash, None, request_id="r1"),
            ChainAppend("t", {"entry_id": "x"}, "h", None, request_id="bad\u0000id"),
            ChainAppend("s", second, entry_hash(second, first_hash), first_hash, request_id="r2"),
        ]
    )
    assert outcomes[0] == 1 and outcomes[2] == 2
    assert isinstance(outcomes[1], StoreError) and "NUL" in str(outcomes[1])
    assert store.chain_session_ids() == ["s"]


def test_replicas_starting_at_once_migrate_once(pg_url: str) -> None:
    opened: list[PostgresStore] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait(timeout=60)
        try:
            opened.append(PostgresStore.open(pg_url, pool_size=1))
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    try:
        assert errors == [] and len(opened) == 4
        with psycopg.connect(pg_url) as raw:
            rows = raw.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
    finally:
        for store in opened:
            store.close()


def test_a_newer_store_is_refused(pg_url: str) -> None:
    PostgresStore.open(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as raw:
        raw.execute(
            "INSERT INTO schema_version VALUES (%s, '2030-01-01T00:00:00Z')", (SCHEMA_VERSION + 1,)
        )
    with pytest.raises(StoreError, match="newer than this agbom supports"):
        PostgresStore.open(pg_url)


def test_a_foreign_database_and_an_empty_one_without_create(pg_url: str) -> None:
    with pytest.raises(StoreError, match="no agbom store in this database"):
        PostgresStore.open(pg_url, create=False)
    with psycopg.connect(pg_url, autocommit=True) as raw:
        raw.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(StoreError, match="not an agbom store"):
        PostgresStore.open(pg_url)


def test_errors_of_the_database_are_one_line_without_the_password(pg_cluster: PgCluster) -> None:
    wrong = "S3cr3t-wrong-pw"
    with pytest.raises(StoreError) as bad_login:
        open_store(pg_cluster.url("postgres", password=wrong))
    message = str(bad_login.value)
    assert "password authentication failed" in message
    assert wrong not in message and "\n" not in message
    with pytest.raises(StoreError) as missing:
        open_store(pg_cluster.url("no_such_db"))
    assert "no_such_db" in str(missing.value) and pg_cluster.password not in str(missing.value)
    with pytest.raises(StoreError, match="cannot open store") as unreachable:
        open_store(f"postgresql://agbom:{wrong}@127.0.0.1:1/x?connect_timeout=5")
    assert wrong not in str(unreachable.value)


def test_a_stopped_database_is_a_write_failure_until_it_is_back(pg_url, pg_cluster) -> None:
    with PostgresStore.open(pg_url, timeout=3) as store:
        append(store, "s", 1, None)
        pg_cluster.stop()
        try:
            with pytest.raises(StoreError, match="unreachable"):
                store.chain_head("s")
            assert store.write_failure is not None
            assert pg_cluster.password not in store.write_failure
            assert store.check_writable() is not None
        finally:
            pg_cluster.start(pg_cluster.port)
        # Back: the health probe finds it (bounded, the machine may be loaded).
        deadline = time.monotonic() + 60
        while store.check_writable() is not None and time.monotonic() < deadline:
            time.sleep(0.25)
        assert store.check_writable() is None
        assert store.write_failure is None
        assert len(store.chain_entries("s")) == 1


def test_a_closed_store_raises(pg_url: str) -> None:
    store = PostgresStore.open(pg_url)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.chain_head("s")
    assert store.append_entries([ChainAppend("s", {"entry_id": "1"}, "h", None)]) != [1]


def _linked_batch(session: str, previous: str | None, tag: str, n: int) -> list[ChainAppend]:
    batch = []
    for i in range(n):
        entry = {"entry_id": f"{tag}-{i}"}
        digest = entry_hash(entry, previous)
        batch.append(ChainAppend(session, entry, digest, previous, request_id=f"{tag}-{i}"))
        previous = digest
    return batch


def test_two_replicas_committing_batches_on_one_head(replicas) -> None:
    """Both batches chain on the same head: the first stores all of its entries in one
    statement, the second gets ChainConflict for every entry and stores none."""
    one, two = replicas
    root = append(one, "s", 1, None)
    first = one.append_entries(_linked_batch("s", root, "a", 5))
    assert first == [2, 3, 4, 5, 6]
    second = two.append_entries(_linked_batch("s", root, "b", 5))
    assert all(isinstance(outcome, ChainConflict) for outcome in second), second
    entries = two.chain_entries("s")
    assert [e["entry_id"] for e in entries] == ["s-1", "a-0", "a-1", "a-2", "a-3", "a-4"]


def test_a_replay_inside_a_batch_refuses_that_entry_only(store: PostgresStore) -> None:
    head = append(store, "s", 1, None, request_id="seen")
    batch = _linked_batch("s", head, "c", 3)
    replayed = ChainAppend(
        "s", batch[1].entry, batch[1].entry_hash, batch[1].previous_hash, request_id="seen"
    )
    outcomes = store.append_entries([batch[0], replayed, batch[2]])
    assert outcomes[0] == 2
    assert isinstance(outcomes[1], DuplicateRequest) and outcomes[1].field == "request_id"
    assert isinstance(outcomes[2], ChainConflict)  # it chained on the refused entry
    assert store.chain_tip("s") == (2, batch[0].entry_hash)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:S3cret@db:5433/agbom", "postgresql://u@db:5433/agbom"),
        ("postgresql://db/agbom?password=S3cret&sslmode=require", "postgresql://db/agbom"),
        (
            "postgres://u:S3cret@%2Fvar%2Frun%2Fpostgresql/agbom",
            "postgresql://u@/var/run/postgresql/agbom",
        ),
        ("postgresql://u:S3cret@db/agbom?sslmode=nonsense[", "postgresql://u@db/agbom"),
    ],
)
def test_a_store_is_named_without_its_password(url: str, shown: str) -> None:
    assert display_url(url) == shown


def test_a_password_in_the_query_is_not_in_the_error() -> None:
    with pytest.raises(StoreError) as failed:
        open_store("postgresql://agbom@127.0.0.1:1/x?password=S3cret-q&connect_timeout=3")
    assert "S3cret-q" not in str(failed.value) and "\n" not in str(failed.value)
