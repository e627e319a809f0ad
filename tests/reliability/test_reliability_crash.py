"""Crash safety and concurrency against real ``agbom serve`` processes.

Crash safety: SIGKILL the server at random points while clients stream steps, register and
load skills and approvers run ``agbom skills approve``: its front process, its decision
process (the SQLite writer) or its whole process group, in turn; it comes back on the same
store. Then every decision any client received is in the store exactly as answered, every
chain verifies (``agbom audit verify``), every approval is recorded once, and every request is
accounted for: answered with a decision, answered with ``guardian_unavailable`` while the
decision process was down, or not answered while the front was down, and at no other time.

Concurrency: two servers on one store, several HTTP clients each, and CLI approvals, all
writing at once: no "database is locked" (or any other error) reaches a client, no write is
lost.

The CI versions run for seconds; ``-m slow`` runs them for minutes (see docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.store import SqliteStore
from tests.guardian.acs import request
from tests.reliability.workload import (
    Approver,
    Client,
    Log,
    Span,
    check_store,
    decision_pid,
    wait_healthy,
)
from tests.store.unwritable import unwritable
from tests.transports.served import Served, open_session, post, run_cli

pytestmark = pytest.mark.network


KILLS = ("front", "decision", "group")
"""What a kill takes down: the HTTP front process (its decision process then stops on its
own, committing what it has), the decision process (the SQLite writer, killed mid-batch; the
front restarts it), or the whole process group (both at once, as the OOM killer or a
container stop would: nothing shuts down gracefully)."""
START_TIMEOUT_S = 120.0
"""How long a restart may take: a start on a machine busy with other test suites was seen
at 35-41 s (the window is measured, so a slow start changes no accounting)."""
SLACK_S = 0.5
"""How far past a kill's recovery an interrupted request may still end (a client thread that
was not scheduled): failures and errors must fall inside a kill window widened by this."""


@dataclass
class Kill:
    what: str
    at: float
    recovered: float = 0.0

    def covers(self, span: Span) -> bool:
        return span.end >= self.at and span.start <= self.recovered + SLACK_S


def kill(server: Served, what: str) -> Kill:
    """SIGKILL ``what`` of ``server`` while clients stream, and bring it back."""
    assert server.proc is not None
    front = server.proc.pid
    if what == "decision":
        pid = decision_pid(front)
        record = Kill(what, time.monotonic())
        os.kill(pid, signal.SIGKILL)
        decision_pid(front, other_than=pid, timeout=START_TIMEOUT_S)  # the front started one
        wait_healthy(server.url, timeout=START_TIMEOUT_S)
    else:
        record = Kill(what, time.monotonic())
        if what == "group":
            os.killpg(front, signal.SIGKILL)  # served with its own group: see crash_run
            server.proc.wait(10)
        else:
            server.kill()
        time.sleep(random.uniform(0.0, 0.2))
        server.start(timeout=START_TIMEOUT_S)
    record.recovered = time.monotonic()
    return record


def crash_run(tmp_path: Path, *, kills: int, clients: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    db = tmp_path / "crash.db"
    # Its own process group, so that a group kill takes the front and the decision process.
    server = Served(db=db, log=tmp_path / "serve.log", preexec_fn=os.setpgrp)
    server.start(timeout=START_TIMEOUT_S)
    log, stop = Log(), threading.Event()
    workers = [Client(lambda: server.url, log, stop, seed=seed + i) for i in range(clients)]
    workers.append(Approver(db, log, stop))
    for worker in workers:
        worker.start()
    done: list[Kill] = []
    order = [KILLS[(n + seed) % len(KILLS)] for n in range(kills)]  # each kind, in turn
    try:
        for what in order:
            time.sleep(rng.uniform(0.3, 1.5))
            done.append(kill(server, what))  # mid-flight: clients never pause
        time.sleep(0.5)
    finally:
        stop.set()
        for worker in workers:
            worker.join(30)
        server.stop()
    assert not log.crashed, log.crashed[:3]
    assert not any(worker.is_alive() for worker in workers)
    # Every request ended one way: heard (checked against the store below), a hello, an
    # error answer, or no answer.
    assert log.unaccounted() == 0, (log.sent, len(log.heard), log.hellos, len(log.errors))
    # No answer only while the front was down; an error answer only while the decision
    # process was, and only the one that says so (never a store error, never "locked").
    front_down = [k for k in done if k.what != "decision"]
    decider_down = [k for k in done if k.what == "decision"]
    stray = [f for f in log.failures if not any(k.covers(f) for k in front_down)]
    assert not stray, (stray[:3], done)
    errors = [e for e in log.errors if e.reason != "session_already_started"]
    unexpected = [
        e.body
        for e in errors
        if e.reason != "guardian_unavailable" or not any(k.covers(e) for k in decider_down)
    ]
    assert not unexpected, (unexpected[:3], done)
    # Each kill hit clients that were sending: no kill went by unnoticed.
    for k in front_down:
        assert any(k.covers(f) for f in log.failures), k
    for k in decider_down:
        assert any(k.covers(e) for e in errors), k
    assert not log.approve_failures, log.approve_failures[:3]
    assert "Traceback" not in server.logs()
    counts = check_store(db, log)
    assert counts["heard"] > 0
    counts["kills"] = len(done)
    counts["errors"] = len(log.errors)
    counts["sent"] = log.sent
    return counts


def test_sigkill_loses_nothing_a_client_heard(tmp_path: Path) -> None:
    """One kill of each kind: the front, the decision process, the whole process group."""
    counts = crash_run(tmp_path, kills=3, clients=3, seed=int.from_bytes(os.urandom(2), "big"))
    print("crash", counts)
    assert counts["approved"] > 0


@pytest.mark.slow
def test_sigkill_soak(tmp_path: Path) -> None:
    kills = int(os.environ.get("AGBOM_CRASH_KILLS", "60"))
    counts = crash_run(tmp_path, kills=kills, clients=4, seed=int.from_bytes(os.urandom(2), "big"))
    print("crash soak", counts)


def concurrency_run(tmp_path: Path, *, seconds: float, clients_per_server: int) -> dict[str, int]:
    db = tmp_path / "shared.db"
    servers = [Served(db=db, log=tmp_path / f"serve{i}.log").start() for i in range(2)]
    log, stop = Log(), threading.Event()
    workers: list[threading.Thread] = []
    for index, server in enumerate(servers):
        for i in range(clients_per_server):
            url = server.url
            workers.append(Client(lambda url=url: url, log, stop, seed=100 * index + i))
    workers += [Approver(db, log, stop), Approver(db, log, stop)]
    for worker in workers:
        worker.start()
    try:
        time.sleep(seconds)
    finally:
        stop.set()
        for worker in workers:
            worker.join(60)
        for server in servers:
            server.stop()
    assert not log.client_errors, log.client_errors[:3]
    assert not log.approve_failures, log.approve_failures[:3]
    assert log.transport_failures == 0
    for server in servers:
        assert "locked" not in server.logs() and "Traceback" not in server.logs()
    counts = check_store(db, log)
    assert counts["heard"] > 0 and counts["approved"] > 0
    return counts


def test_concurrent_servers_clients_and_cli_approvals(tmp_path: Path) -> None:
    print("concurrency", concurrency_run(tmp_path, seconds=5, clients_per_server=3))


@pytest.mark.slow
def test_concurrency_for_minutes(tmp_path: Path) -> None:
    seconds = float(os.environ.get("AGBOM_CONCURRENCY_SECONDS", "180"))
    print("concurrency", concurrency_run(tmp_path, seconds=seconds, clients_per_server=4))


def test_a_store_read_only_for_3_s_takes_writes_again(tmp_path: Path) -> None:
    """The store cannot be written for 3 s (``chattr +i`` as root, ``chmod a-w`` otherwise;
    see tests/store/unwritable.py), and the decision process is killed meanwhile, so its
    replacement opens the store read-only. Nothing is decided while it cannot write, and
    ``/healthz`` answers 503 all along. Once the files are writable, the same decision process
    writes again, with no restart, and ``/healthz`` answers 200."""
    db = tmp_path / "ro.db"
    server = Served(db=db, log=tmp_path / "serve.log").start(timeout=START_TIMEOUT_S)
    assert server.proc is not None
    front = server.proc.pid
    http = httpx.Client(timeout=30)

    def step(sid: str) -> dict[str, Any]:
        message = request("steps/userMessage", {"content": "hi"}, session_id=sid)
        return post(server.url, message, client=http)  # type: ignore[no-any-return]

    def health() -> int:
        return http.get(f"{server.url}/healthz").status_code

    try:
        sid = open_session(server.url, client=http)
        heard = [step(sid)["result"]["chain_hash"]]
        with unwritable(db) as files:
            assert len(files) == 3  # the database, its WAL and its shared-memory index
            killed = decision_pid(front)
            with contextlib.suppress(ProcessLookupError):
                os.kill(killed, signal.SIGKILL)
            replacement = decision_pid(front, other_than=killed, timeout=START_TIMEOUT_S)
            began = time.monotonic()
            statuses, store_errors = set(), 0
            while time.monotonic() - began < 3.0 or not store_errors:
                assert time.monotonic() - began < START_TIMEOUT_S, "no answer from the replacement"
                reply = step(sid)
                assert "error" in reply, reply  # nothing is decided without its chain entry
                reason = reply["error"]["data"]["reason"]
                assert reason in ("guardian_unavailable", "audit_append_failed"), reply
                store_errors += reason == "audit_append_failed"
                statuses.add(health())
                time.sleep(0.05)
            assert statuses == {503}, statuses
        writable = time.monotonic()
        while "result" not in (reply := step(sid)):
            assert reply["error"]["data"]["reason"] == "audit_append_failed", reply
            assert time.monotonic() - writable < 30, "no write 30 s after the store was writable"
            time.sleep(0.05)
        print(f"read-only: recovered {time.monotonic() - writable:.3f} s after it was writable")
        heard.append(reply["result"]["chain_hash"])
        assert health() == 200
        assert decision_pid(front) == replacement  # recovered by itself, not by a restart
    finally:
        http.close()
        server.stop()
    assert "Traceback" not in server.logs()
    with SqliteStore.open(db) as store:
        stored = [e["entry_hash"] for e in store.chain_entries(sid)]
    assert stored[-1] == heard[-1] and heard[0] in stored
    assert len(stored) == 3  # sessionStart and the two steps that were answered with a decision
    verify = run_cli("audit", "verify", "--db", str(db))
    assert verify.returncode == 0, verify.stdout
