"""Crash safety and concurrency against real ``agbom serve`` processes.

Crash safety: SIGKILL the server at random points while clients stream steps, register and
load skills and approvers run ``agbom skills approve``; restart it on the same store. Then
every decision any client received is in the store exactly as answered, every chain verifies
(``agbom audit verify``), and every approval is recorded once.

Concurrency: two servers on one store, several HTTP clients each, and CLI approvals, all
writing at once: no "database is locked" (or any other error) reaches a client, no write is
lost.

The CI versions run for seconds; ``-m slow`` runs them for minutes (see docs/reliability.md).
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import pytest

from tests.reliability.workload import Approver, Client, Log, check_store
from tests.transports.served import Served

pytestmark = pytest.mark.network


def crash_run(tmp_path: Path, *, kills: int, clients: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    db = tmp_path / "crash.db"
    server = Served(db=db, log=tmp_path / "serve.log").start()
    log, stop = Log(), threading.Event()
    workers = [Client(lambda: server.url, log, stop, seed=seed + i) for i in range(clients)]
    workers.append(Approver(db, log, stop))
    for worker in workers:
        worker.start()
    try:
        for _ in range(kills):
            time.sleep(rng.uniform(0.3, 1.5))
            server.kill()  # SIGKILL mid-flight: requests in progress get no answer
            time.sleep(rng.uniform(0.0, 0.2))
            server.start()
        time.sleep(0.5)
    finally:
        stop.set()
        for worker in workers:
            worker.join(30)
        server.stop()
    unexpected = [e for e in log.client_errors if "-32603" in e or "locked" in e]
    assert not unexpected, unexpected[:3]
    assert not log.approve_failures, log.approve_failures[:3]
    counts = check_store(db, log)
    assert counts["heard"] > 0
    return counts


def test_sigkill_loses_nothing_a_client_heard(tmp_path: Path) -> None:
    counts = crash_run(tmp_path, kills=3, clients=3, seed=int.from_bytes(os.urandom(2), "big"))
    print("crash", counts)
    assert counts["approved"] > 0 and counts["transport_failures"] >= 0


@pytest.mark.slow
def test_sigkill_soak(tmp_path: Path) -> None:
    kills = int(os.environ.get("AGBOM_CRASH_KILLS", "60"))
    crash_run(tmp_path, kills=kills, clients=4, seed=int.from_bytes(os.urandom(2), "big"))


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
    concurrency_run(tmp_path, seconds=seconds, clients_per_server=4)
