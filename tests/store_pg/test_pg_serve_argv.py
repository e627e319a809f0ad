"""The store URL given to ``agbom serve`` through ``$AGBOM_DB`` (password and all) never lands
on the command line of a process serve starts: ``/proc/PID/cmdline`` is readable by every
local user (issue 27, item 2)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.transports.served import agbom_command, free_port


def _tree(root: int) -> list[int]:
    """ROOT and every process below it (from /proc/PID/task/*/children)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
    return found


def test_no_process_serve_starts_has_the_password_on_its_command_line(
    pg_url: str, tmp_path: Path
) -> None:
    password = urlsplit(pg_url).password
    assert password and len(password) >= 8
    port = free_port()
    env = {**os.environ, "AGBOM_DB": pg_url, "AGBOM_DEBUG": "0"}
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(  # noqa: S603 - our own console script
            [*agbom_command(), "serve", "--host", "127.0.0.1", "--port", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        pids = _tree(proc.pid)
        assert len(pids) >= 2, "serve runs a decision process of its own"
        for pid in pids:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert password.encode() not in cmdline, (pid, cmdline[:200])
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
