"""A real ``agbom serve`` subprocess on loopback, and small HTTP/ACS helpers around it.

Shared by the transport tests and the reliability tests (which kill and restart it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.guardian.acs import hello, request


def agbom_command() -> list[str]:
    """The installed console script (what users run), else ``python -m agbom``."""
    script = Path(sys.executable).parent / "agbom"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agbom"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_cli(*args: str, stdin: bytes | None = None, timeout: float = 60) -> subprocess.Popen:
    """Run ``agbom ARGS`` to completion; returns the CompletedProcess."""
    return subprocess.run(  # type: ignore[return-value]
        [*agbom_command(), *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "AGBOM_DEBUG": "0"},
    )


@dataclass
class Served:
    """One ``agbom serve`` process. ``start()`` waits for /healthz; ``kill()`` is SIGKILL."""

    db: Path
    log: Path
    extra: list[str] = field(default_factory=list)
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    cwd: Path | None = None
    env: dict[str, str] | None = None
    preexec_fn: Callable[[], None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> Served:
        self.port = free_port()
        command = [
            *agbom_command(),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--db",
            str(self.db),
            *self.extra,
        ]
        with self.log.open("ab") as sink:
            self.proc = subprocess.Popen(
                command,
                stdout=sink,
                stderr=subprocess.STDOUT,
                cwd=self.cwd,
                env=self.env,
                preexec_fn=self.preexec_fn,  # resource limits for the server under test
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"agbom serve exited {self.proc.returncode}: {self.logs()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"agbom serve did not become healthy: {self.logs()}")
            time.sleep(0.05)

    def logs(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, grace_s: float = 10) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.kill()


def post(url: str, body: bytes | Any, *, client: httpx.Client | None = None) -> Any:
    """POST to /acs; ``body`` is raw bytes or a JSON value. Returns the parsed JSON reply."""
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    sender = client or httpx
    reply = sender.post(
        f"{url}/acs", content=data, headers={"content-type": "application/json"}, timeout=30
    )
    assert reply.status_code == 200, reply.text
    return orjson.loads(reply.content)


def open_session(url: str, session_id: str | None = None, *, client: httpx.Client | None = None):
    sid = session_id or str(uuid.uuid4())
    assert "result" in post(url, hello(sid), client=client)
    started = post(url, request("steps/sessionStart", {}, session_id=sid), client=client)
    assert started["result"]["decision"] == "allow", started
    return sid
