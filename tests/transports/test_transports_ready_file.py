"""``agbom serve --ready-file FILE``: a script learns that the server answers, and where, from a
file that appears only then (issue 42 item 2). Real ``agbom serve`` processes on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.transports.served import agbom_command, open_session, run_cli


def _start(tmp_path: Path, ready: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *agbom_command(),
            "serve",
            "--port",
            "0",
            "--db",
            str(tmp_path / "s.db"),
            "--ready-file",
            str(ready),
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "serve.log").open("wb"),
        env={**os.environ, "AGBOM_DEBUG": "0"},
    )


def _wait_for(ready: Path, proc: subprocess.Popen[bytes], timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    while not ready.exists():
        assert proc.poll() is None, "agbom serve exited before it was ready"
        assert time.monotonic() < deadline, "no ready file"
        time.sleep(0.02)
    return ready.read_text()


def test_the_ready_file_names_the_real_port_once_a_decision_can_be_made(tmp_path: Path) -> None:
    ready = tmp_path / "serve.ready"
    ready.write_text("http://127.0.0.1:1\n")  # left by an earlier run that was killed
    proc = _start(tmp_path, ready)
    try:
        # The stale file is removed before the server binds, so a waiting script waits for it.
        deadline = time.monotonic() + 30
        while ready.exists() and ready.read_text() == "http://127.0.0.1:1\n":
            assert time.monotonic() < deadline, "the stale ready file was kept"
            time.sleep(0.01)
        text = _wait_for(ready, proc)
        assert text.endswith("\n") and text.count("\n") == 1
        url = text.strip()
        assert url.startswith("http://127.0.0.1:") and url != "http://127.0.0.1:0"
        # The first request after the file appears is decided, not refused or queued for long.
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        open_session(url)
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".serve.ready")] == []
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0 or proc.returncode == -signal.SIGTERM
    assert not ready.exists()  # gone once the server stopped


def test_a_ready_file_the_server_cannot_write_is_a_usage_error(tmp_path: Path) -> None:
    missing = run_cli("serve", "--db", str(tmp_path / "s.db"), "--ready-file", "/nonexistent/r")
    assert missing.returncode == 2
    assert b"--ready-file" in missing.stderr and b"Traceback" not in missing.stderr
    stdio = run_cli("serve", "--stdio", "--ready-file", str(tmp_path / "r"), stdin=b"")
    assert stdio.returncode == 2 and b"not with --stdio" in stdio.stderr
    assert not (tmp_path / "s.db").exists()
