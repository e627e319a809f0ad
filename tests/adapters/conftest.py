"""Fixtures for hook handler tests: a rule pack, the agbom command, a real ``agbom serve``."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

BAN_PACK = """\
pack: hook-tests
version: 1
rules:
  - id: no-shell
    kind: ban
    severity: high
    action: deny
    message: "tool {component.name} is banned"
    match:
      type: tool
      name: [Bash, shell__exec_command, shell]
  - id: no-evil-crm
    kind: ban
    severity: high
    action: deny
    message: "MCP server {component.name} is banned"
    match:
      type: mcp_server
      name: evil-crm
"""


def agbom_command() -> list[str]:
    """The installed console script (what a runtime runs), else ``python -m agbom``."""
    script = Path(sys.executable).parent / "agbom"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agbom"]


@dataclass
class Run:
    code: int
    stdout: bytes
    stderr: str
    seconds: float

    @property
    def json(self) -> object:
        import json

        return json.loads(self.stdout)


def run_hook(args: list[str], stdin: bytes | str, *, env: dict | None = None) -> Run:
    """Run ``agbom hook ARGS`` as a real subprocess with ``stdin``."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    full_env = {**os.environ, "AGBOM_DEBUG": "0", **(env or {})}
    started = time.perf_counter()
    proc = subprocess.run(
        [*agbom_command(), "hook", *args],
        input=data,
        capture_output=True,
        env=full_env,
        timeout=60,
        check=False,
    )
    return Run(
        proc.returncode,
        proc.stdout,
        proc.stderr.decode("utf-8", "replace"),
        time.perf_counter() - started,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def rules_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rules")
    (folder / "bans.yaml").write_text(BAN_PACK)
    return folder


@dataclass
class Server:
    url: str
    port: int
    db: Path


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, rules_dir: Path) -> Iterator[Server]:
    """A real ``agbom serve`` on a free loopback port, killed after the tests."""
    db = tmp_path_factory.mktemp("serve") / "serve.db"
    port = free_port()
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                *agbom_command(),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--db",
                str(db),
                "--rules",
                str(rules_dir),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"agbom serve exited {proc.returncode}: {log.read_text()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"agbom serve did not start: {log.read_text()}")
            time.sleep(0.1)
        yield Server(url=f"http://127.0.0.1:{port}", port=port, db=db)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
