"""``agbom serve --max-memory-mib``: the decision process's real resident size stays within the
bound while sessions keep sending big snapshots, and the sessions dropped to keep it there are
restored from the store intact when they come back.

The resident size is read from /proc, as ``ps`` would, not from anything agbom reports about
itself. The same traffic against a server whose bound is far away shows what the bound
prevents: without it the process grows well past where the bounded one stays.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.guardian.acs import request
from tests.guardian.test_guardian_memory import inventory
from tests.transports.served import Served, open_session, post

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

BOUND_MIB = 128
OVERSHOOT_MIB = 24
"""What the bound may be passed by (docs/reliability.md, "Bounds"): the resident size is
looked at every 8 MiB of estimated growth, and one snapshot is being prepared meanwhile."""
SESSIONS = 22
COMPONENTS = 3_000  # about 6 MiB held per session: 22 of them are ~130 MiB over an idle process


def decision_pid(front: int) -> int:
    for task in Path(f"/proc/{front}/task").iterdir():
        children = (task / "children").read_text().split()
        if children:
            return int(children[0])
    raise AssertionError("agbom serve has no decision process")


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class Peak(threading.Thread):
    """The highest resident size of ``pid`` seen, sampled every 10 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.halt = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.halt.wait(0.01):
            self.peak = max(self.peak, resident_mib(self.pid))


def send_snapshots(served: Served) -> tuple[list[str], float]:
    """Open :data:`SESSIONS` sessions, each sending one snapshot; the decision process's peak
    resident size meanwhile (MiB)."""
    sampler = Peak(decision_pid(served.proc.pid))  # type: ignore[union-attr]
    sampler.start()
    sessions = []
    try:
        with httpx.Client(timeout=120) as client:
            for index in range(SESSIONS):
                sid = open_session(served.url, client=client)
                reply = post(
                    served.url,
                    request(
                        "agbom/snapshot",
                        {"agbom": inventory(index, COMPONENTS)},
                        session_id=sid,
                    ),
                    client=client,
                )
                assert reply["result"]["decision"] == "allow", reply
                sessions.append(sid)
        time.sleep(0.2)
    finally:
        sampler.halt.set()
        sampler.join(5)
    return sessions, sampler.peak


@pytest.fixture
def bounded(tmp_path: Path) -> Iterator[Served]:
    served = Served(
        tmp_path / "s.db",
        tmp_path / "serve.log",
        ["--strict", "--max-memory-mib", str(BOUND_MIB), "--max-body-bytes", str(8 << 20)],
    ).start()
    yield served
    served.stop()


def test_resident_size_stays_within_the_bound_and_dropped_sessions_come_back(
    bounded: Served, tmp_path: Path
) -> None:
    sessions, peak = send_snapshots(bounded)
    assert peak <= BOUND_MIB + OVERSHOOT_MIB, f"decision process peaked at {peak:.0f} MiB"

    # The first session was surely dropped to keep the bound; it comes back from the store
    # with its inventory (a tool of its snapshot is known, others are not: --strict) and its
    # version history (an agbom/changed applies to its snapshot).
    first = sessions[0]
    known = post(
        bounded.url,
        request(
            "steps/toolCallRequest",
            {"tool": {"name": "tool-0-7"}, "arguments": {}},
            session_id=first,
        ),
    )
    assert known["result"]["decision"] == "allow", known
    unknown = post(
        bounded.url,
        request(
            "steps/toolCallRequest",
            {"tool": {"name": "tool-1-7"}, "arguments": {}},
            session_id=first,
        ),
    )
    assert unknown["result"]["decision"] == "deny", unknown
    added = {
        "id": "late-tool",
        "type": "tool",
        "name": "late-tool",
        "version": "1.0.0",
        "provider": "local",
        "capability": "fs.read",
        "registration_provenance": {"origin": "system"},
    }
    changed = post(
        bounded.url,
        request(
            "agbom/changed",
            {"added": [added], "removed": [], "changed": []},
            session_id=first,
        ),
    )
    assert changed["result"]["decision"] == "allow", changed
    late = post(
        bounded.url,
        request(
            "steps/toolCallRequest",
            {"tool": {"name": "late-tool"}, "arguments": {}},
            session_id=first,
        ),
    )
    assert late["result"]["decision"] == "allow", late


def test_the_same_traffic_grows_past_the_bound_without_it(tmp_path: Path) -> None:
    served = Served(
        tmp_path / "s.db",
        tmp_path / "serve.log",
        ["--strict", "--max-memory-mib", "4096", "--max-body-bytes", str(8 << 20)],
    ).start()
    try:
        _sessions, peak = send_snapshots(served)
    finally:
        served.stop()
    assert peak > BOUND_MIB + OVERSHOOT_MIB, f"only {peak:.0f} MiB: the bound test proves nothing"


def test_a_bound_below_what_a_server_needs_is_refused(tmp_path: Path) -> None:
    from tests.transports.served import run_cli

    result = run_cli("serve", "--db", str(tmp_path / "s.db"), "--max-memory-mib", "16")
    assert result.returncode == 2
    assert b"--max-memory-mib" in result.stderr and b"128" in result.stderr
    assert b"Traceback" not in result.stderr
    assert not (tmp_path / "s.db").exists()
