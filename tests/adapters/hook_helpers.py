"""Helpers for the hook handler tests: the agbom command, running a hook, a free port."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


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


@dataclass
class Server:
    url: str
    port: int
    db: Path


def wait_serving(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Return once ``agbom serve`` on ``port`` answers ``/healthz``; raise RuntimeError if the
    process exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"agbom serve exited {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("agbom serve did not start")
        time.sleep(0.1)


def skill_event(cwd: Path, skill: str, session_id: str) -> bytes:
    """A Claude Code ``PreToolUse`` event loading the skill ``skill`` from ``cwd``."""
    import json

    event = {
        "session_id": session_id,
        "hook_event_name": "PreToolUse",
        "cwd": str(cwd),
        "tool_name": "Skill",
        "tool_input": {"skill": skill},
    }
    return json.dumps(event).encode()


def denial_reason(doc: object) -> str:
    """The reason of a Claude Code ``PreToolUse`` deny (an assertion error otherwise)."""
    assert isinstance(doc, dict) and "hookSpecificOutput" in doc, doc
    hook = doc["hookSpecificOutput"]
    assert hook["permissionDecision"] == "deny", doc
    return str(hook["permissionDecisionReason"])
