"""Several ``agbom serve`` replicas on one store, with nothing sticky in front of them.

Every request of a session may reach any replica: clients here send each request to the next
replica in turn. The store is one SQLite file (replicas on one host) or one PostgreSQL
database of the throwaway cluster (tests/pgcluster.py). Afterwards every decision a client
heard is in the store exactly once, as answered, and ``agbom audit verify`` passes; a session
ended on one replica is refused by all; a request id or nonce decided on one replica is a
replay on the others; a revoke made with the CLI denies the very next load on every replica;
and while the PostgreSQL server is down, ``/healthz`` answers 503 and nothing is allowed.

The crash test kills random replicas (SIGKILL of the whole process group, or of the decision
process alone) while clients stream, and restarts them.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.guardian.acs import hello, request
from tests.pgcluster import ClusterUnavailable, PgCluster
from tests.reliability.workload import (
    Approver,
    Client,
    Log,
    check_store,
    decision_pid,
    digest_of,
    wait_healthy,
)
from tests.transports.served import Served, post, run_cli

pytestmark = pytest.mark.network

START_TIMEOUT_S = 120.0
"""How long a replica's start may take on a machine busy with other test suites."""


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the replicas keep their one store: a SQLite file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "replicas.db")
    return str(request.getfixturevalue("pg_url"))


def start_replicas(location: str, log_dir: Path, count: int, **options: Any) -> list[Served]:
    """``count`` servers on ``location``, started side by side (a start takes seconds)."""
    replicas = [
        Served(db=location, log=log_dir / f"replica{i}.log", **options)  # type: ignore[arg-type]
        for i in range(count)
    ]
    with ThreadPoolExecutor(count) as pool:
        list(pool.map(lambda served: served.start(timeout=START_TIMEOUT_S), replicas))
    return replicas


def stop_all(replicas: list[Served]) -> None:
    for replica in replicas:
        replica.stop()


def round_robin(replicas: list[Served], start: int = 0) -> Callable[[], str]:
    """The URL of the next replica, in turn (read at each call: a restart changes its port)."""
    turn = itertools.count(start)
    return lambda: replicas[next(turn) % len(replicas)].url


def reason(reply: dict[str, Any]) -> str:
    return str(reply["error"]["data"]["reason"])


def test_steps_sent_round_robin_to_3_replicas_are_all_decided_and_stored_once(
    location: str, tmp_path: Path
) -> None:
    """No session is pinned to a replica: each replica's view of a session's chain is stale
    most of the time, and every step is still decided (reloaded, decided again) and stored."""
    replicas = start_replicas(location, tmp_path, 3)
    log, stop = Log(), threading.Event()
    workers: list[threading.Thread] = [
        Client(round_robin(replicas, i), log, stop, seed=i) for i in range(3)
    ]
    workers.append(Approver(location, log, stop))  # type: ignore[arg-type]
    for worker in workers:
        worker.start()
    try:
        deadline = time.monotonic() + 60
        # Run until enough of every kind went through (bounded by count, not by a duration).
        while len(log.heard) < 150 or not log.approved:
            assert time.monotonic() < deadline, (len(log.heard), len(log.approved))
            assert not log.errors and not log.crashed, (log.client_errors[:3], log.crashed)
            time.sleep(0.1)
    finally:
        stop.set()
        for worker in workers:
            worker.join(60)
        stop_all(replicas)
    assert not log.crashed, log.crashed[:3]
    assert not log.client_errors, log.client_errors[:3]
    assert log.transport_failures == 0 and log.unaccounted() == 0
    assert not log.approve_failures, log.approve_failures[:3]
    for replica in replicas:
        assert "Traceback" not in replica.logs()
    counts = check_store(location, log)
    print("round robin", counts)
    assert counts["sessions"] == 3 and counts["heard"] >= 150


def test_an_end_a_request_id_and_a_nonce_seen_by_one_replica_hold_on_all(
    location: str, tmp_path: Path
) -> None:
    first, second = replicas = start_replicas(location, tmp_path, 2)
    http = httpx.Client(timeout=30)
    try:
        sid = str(uuid.uuid4())
        assert "result" in post(first.url, hello(sid), client=http)
        started = post(second.url, request("steps/sessionStart", {}, session_id=sid), client=http)
        assert started["result"]["decision"] == "allow", started
        # Both replicas now hold the session in memory; each step moves it on the other.
        step = request("steps/userMessage", {"content": "one"}, session_id=sid, nonce="n" * 24)
        assert post(first.url, step, client=http)["result"]["decision"] == "allow"
        replayed = post(second.url, step, client=http)
        assert replayed["error"]["code"] == -32005, replayed
        assert reason(replayed) == "duplicate_request_id"
        same_nonce = request(
            "steps/userMessage", {"content": "two"}, session_id=sid, nonce="n" * 24
        )
        refused = post(second.url, same_nonce, client=http)
        assert refused["error"]["code"] == -32005 and reason(refused) == "duplicate_nonce"
        again = post(first.url, request("steps/sessionStart", {}, session_id=sid), client=http)
        assert reason(again) == "session_already_started", again
        end = request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)
        ended = post(second.url, end, client=http)
        assert ended["result"]["decision"] == "allow", ended
        for replica in replicas:
            after = request("steps/userMessage", {"content": "late"}, session_id=sid)
            refused = post(replica.url, after, client=http)
            assert refused["error"]["code"] == -32000, refused
            assert reason(refused) == "session_closed"
            rehello = post(replica.url, hello(sid), client=http)
            assert reason(rehello) == "session_already_started", rehello
    finally:
        http.close()
        stop_all(replicas)
    verify = run_cli("audit", "verify", "--db", location)
    assert verify.returncode == 0, verify.stdout.decode() + verify.stderr.decode()
    assert "sealed" in verify.stdout.decode()
    from agbom.store import open_store

    with open_store(location, create=False) as store:
        entries = store.chain_entries(sid)
        assert [e["step_type"] for e in entries] == [
            "steps/sessionStart",
            "steps/userMessage",
            "steps/sessionEnd",
        ]
        assert store.get_session(sid)["sealed_head"] == entries[-1]["entry_hash"]


def test_a_revoke_with_the_cli_denies_the_next_load_on_every_replica(
    location: str, tmp_path: Path
) -> None:
    """Approvals are not cached by a replica: each decision reads the verdict from the store,
    so a decision made after the CLI's commit sees it, on every replica (the bound is the
    commit itself)."""
    replicas = start_replicas(location, tmp_path, 2)
    http = httpx.Client(timeout=30)
    name = f"skill-{uuid.uuid4().hex[:8]}"
    value = digest_of(name)
    digest = {"algorithm": "sha256", "value": value}

    def load(url: str, sid: str) -> str:
        payload = {
            "skill_id": name,
            "digest": digest,
            "load_trigger": "user",
            "load_path": [{"skill_id": name}],
        }
        reply = post(url, request("steps/skillLoad", payload, session_id=sid), client=http)
        return str(reply["result"]["decision"])

    def cli(*args: str) -> None:
        where = ["--digest", f"sha256:{value}", "--db", location, "--reason", "replica test"]
        done = run_cli("skills", *args, name, *where)
        assert done.returncode == 0, done.stderr.decode()

    try:
        sessions = []
        for index, replica in enumerate(replicas):
            sid = str(uuid.uuid4())
            assert "result" in post(replica.url, hello(sid), client=http)
            other = replicas[(index + 1) % len(replicas)]
            assert "result" in post(
                other.url, request("steps/sessionStart", {}, session_id=sid), client=http
            )
            sessions.append(sid)
        register = {
            "skill_id": name,
            "definition": {"ref": f"skills/{name}", "digest": digest},
            "declared_capabilities": [],
        }
        # Registered in a session of its own: a session that saw its registration denied
        # cannot load the pair (it must register again once approved).
        registrar = str(uuid.uuid4())
        assert "result" in post(replicas[0].url, hello(registrar), client=http)
        registered = post(
            replicas[1].url,
            request("steps/skillRegister", register, session_id=registrar),
            client=http,
        )
        assert registered["result"]["decision"] == "deny"  # pending until approved
        assert [load(r.url, sid) for r, sid in zip(replicas, sessions, strict=True)] == [
            "deny",
            "deny",
        ]
        cli("approve")
        assert [load(r.url, sid) for r, sid in zip(replicas, sessions, strict=True)] == [
            "allow",
            "allow",
        ]
        cli("revoke")
        # The very next load on each replica, each one also reached through the other.
        for turn in range(2):
            for index, replica in enumerate(replicas):
                sid = sessions[(index + turn) % len(sessions)]
                assert load(replica.url, sid) == "deny", (replica.url, turn)
    finally:
        http.close()
        stop_all(replicas)


# -- PostgreSQL down -----------------------------------------------------------------------------


@pytest.fixture
def own_cluster() -> Iterator[PgCluster]:
    """A cluster of this test alone: it is stopped and started again under the replicas."""
    try:
        cluster = PgCluster()
    except ClusterUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {exc}", pytrace=False)
        pytest.skip(str(exc))
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.mark.parametrize("extra", [[], ["--single-process"]], ids=["decision-process", "single"])
def test_while_postgresql_is_down_healthz_is_503_and_nothing_is_allowed(
    own_cluster: PgCluster, tmp_path: Path, extra: list[str]
) -> None:
    url = own_cluster.url(own_cluster.create_database())
    replicas = start_replicas(url, tmp_path, 2, extra=extra)
    http = httpx.Client(timeout=60)

    def health(replica: Served) -> int:
        return http.get(f"{replica.url}/healthz").status_code

    try:
        sid = str(uuid.uuid4())
        assert "result" in post(replicas[0].url, hello(sid), client=http)
        start = request("steps/sessionStart", {}, session_id=sid)
        assert post(replicas[1].url, start, client=http)["result"]["decision"] == "allow"
        port = own_cluster.port
        own_cluster.stop()
        # No request needed: each replica probes the database while idle.
        deadline = time.monotonic() + 60
        while any(health(r) != 503 for r in replicas):
            assert time.monotonic() < deadline, [health(r) for r in replicas]
            time.sleep(0.1)
        refusals = set()
        for replica in replicas * 2:
            step = request("steps/userMessage", {"content": "while down"}, session_id=sid)
            reply = post(replica.url, step, client=http)
            assert "error" in reply, reply  # fail closed: never an allow without its entry
            assert reply["error"]["code"] == -32603
            assert "password" not in str(reply) and own_cluster.password not in str(reply)
            refusals.add(reason(reply))
        assert refusals <= {"store_unavailable", "audit_append_failed", "internal_error"}
        assert "store_unavailable" in refusals
        own_cluster.start(port=port)
        deadline = time.monotonic() + 60
        while any(health(r) != 200 for r in replicas):
            assert time.monotonic() < deadline, [health(r) for r in replicas]
            time.sleep(0.1)
        for replica in replicas:
            step = request("steps/userMessage", {"content": "back"}, session_id=sid)
            assert post(replica.url, step, client=http)["result"]["decision"] == "allow"
    finally:
        http.close()
        stop_all(replicas)
    for replica in replicas:
        assert own_cluster.password not in replica.logs()
        assert "Traceback" not in replica.logs()
    verify = run_cli("audit", "verify", "--db", url)
    assert verify.returncode == 0, verify.stdout.decode() + verify.stderr.decode()
    from agbom.store import open_store

    with open_store(url, create=False) as store:
        kinds = [e["step_type"] for e in store.chain_entries(sid)]
    assert kinds == ["steps/sessionStart", "steps/userMessage", "steps/userMessage"]


# -- crash ---------------------------------------------------------------------------------------

ALLOWED_ERRORS = frozenset({"guardian_unavailable", "session_already_started"})
"""Error answers a client may get while replicas are killed: its replica's decision process
was down (the front restarts it), or a sessionStart whose first answer was lost had in fact
been committed. Never a store error, never a chain conflict."""


def kill_one(replicas: list[Served], rng: random.Random) -> str:
    """SIGKILL a random replica (its whole process group, or its decision process alone) and
    bring it back; returns what was killed."""
    replica = rng.choice(replicas)
    assert replica.proc is not None
    front = replica.proc.pid
    if rng.random() < 0.5:
        pid = decision_pid(front)
        os.kill(pid, signal.SIGKILL)
        decision_pid(front, other_than=pid, timeout=START_TIMEOUT_S)
        wait_healthy(replica.url, timeout=START_TIMEOUT_S)
        return "decision"
    os.killpg(front, signal.SIGKILL)  # front and decision process at once, as a crash would
    replica.proc.wait(10)
    replica.start(timeout=START_TIMEOUT_S)
    return "group"


def crash_run(location: str, tmp_path: Path, *, kills: int, clients: int, seed: int) -> dict:
    rng = random.Random(seed)
    replicas = start_replicas(location, tmp_path, 3, preexec_fn=os.setpgrp)
    log, stop = Log(), threading.Event()
    workers: list[threading.Thread] = [
        Client(round_robin(replicas, i), log, stop, seed=seed + i) for i in range(clients)
    ]
    workers.append(Approver(location, log, stop))  # type: ignore[arg-type]
    for worker in workers:
        worker.start()
    done = []
    try:
        for _ in range(kills):
            before = len(log.heard)
            deadline = time.monotonic() + 60
            while len(log.heard) < before + 20:  # clients got going again since the last kill
                assert time.monotonic() < deadline, "no decisions since the last kill"
                time.sleep(0.05)
            done.append(kill_one(replicas, rng))
        before = len(log.heard)
        deadline = time.monotonic() + 60
        while len(log.heard) < before + 20:
            assert time.monotonic() < deadline, "no decisions after the last kill"
            time.sleep(0.05)
    finally:
        stop.set()
        for worker in workers:
            worker.join(60)
        stop_all(replicas)
    assert not log.crashed, log.crashed[:3]
    assert not any(worker.is_alive() for worker in workers)
    assert log.unaccounted() == 0, (log.sent, len(log.heard), log.hellos, len(log.errors))
    unexpected = [e.body for e in log.errors if e.reason not in ALLOWED_ERRORS]
    assert not unexpected, unexpected[:3]
    assert not log.approve_failures, log.approve_failures[:3]
    for replica in replicas:
        assert "Traceback" not in replica.logs()
    counts = check_store(location, log)
    counts.update(kills=len(done), errors=len(log.errors), sent=log.sent)
    return counts


def test_sigkill_of_random_replicas_on_postgresql_loses_nothing_a_client_heard(
    pg_url: str, tmp_path: Path
) -> None:
    """3 replicas, clients round-robin over them, 3 random kills with restarts."""
    seed = int.from_bytes(os.urandom(2), "big")
    counts = crash_run(pg_url, tmp_path, kills=3, clients=3, seed=seed)
    print("replicas crash", seed, counts)
    assert counts["kills"] == 3 and counts["heard"] > 0


@pytest.mark.slow
def test_sigkill_of_random_replicas_soak(location: str, tmp_path: Path) -> None:
    kills = int(os.environ.get("AGBOM_REPLICA_KILLS", "30"))
    seed = int.from_bytes(os.urandom(2), "big")
    counts = crash_run(location, tmp_path, kills=kills, clients=4, seed=seed)
    print("replicas crash soak", seed, counts)
