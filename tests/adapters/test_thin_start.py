"""What the thin hook costs per event, held down: what it imports, how it starts and ends.

A host starts one hook process per tool call (issue 40: at most 1.5x ``python -c pass``).
The hook launcher (bin/agbom-hook) runs here as the installer leaves it, with this
interpreter; ``-S`` keeps ``site`` (and an editable install's import finder, which loads
:mod:`re` and :mod:`urllib` for every process) out of the list of what the hook imports, and
``-X importtime`` lists every module the process imports, the launcher's ``os._exit``
notwithstanding. The launcher must answer exactly as ``agbom hook`` does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import host_events as ev
import pytest
from hook_helpers import Server, free_port, run_hook

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "bin" / "agbom-hook"

# What thin mode may import, beyond what the interpreter loads before any code runs: agbom's
# hook path and three C modules. Not re, json, enum, functools, collections, typing,
# importlib, urllib, pathlib, socket, signal, selectors, dataclasses, http, ssl or
# __future__: each of those was a millisecond or more of every event.
ALLOWED = {
    "agbom",
    "agbom.cli",
    "agbom.adapters",
    "agbom.adapters.headers",
    "agbom.adapters.identity",
    "agbom.adapters.replies",
    "agbom.adapters.host_replies",
    "agbom.adapters.wire_json",
    "agbom.adapters.thin",
    "_json",
    "_socket",
    "_signal",
    "pwd",
}
# With --token-file: the private-file check (agbom/_private_files.py) and what it imports.
TOKEN_ALLOWED = {"agbom._private_files", "agbom._ownership", "__future__"}


def _claude(event: str, **fields: object) -> bytes:
    doc = {"session_id": str(uuid.uuid4()), "cwd": "/tmp", "hook_event_name": event, **fields}
    return json.dumps(doc).encode()


def _launch(
    args: list[str], stdin: bytes, *, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "AGBOM_DEBUG": "0", **(env or {})}
    return subprocess.run(
        [sys.executable, "-S", "-X", "importtime", str(LAUNCHER), *args],
        input=stdin,
        capture_output=True,
        env=full_env,
        timeout=60,
        check=False,
    )


def _imported(stderr: bytes) -> set[str]:
    names = set()
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names - {"imported package"}


@pytest.fixture(scope="module")
def at_start() -> set[str]:
    """What every process has imported before it runs anything: the interpreter's own start
    and :mod:`os` (which ``site`` imports; ``-S`` leaves it out)."""
    done = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", "import os"],
        capture_output=True,
        check=True,
    )
    return _imported(done.stderr)


def _cases(server: Server, token: Path) -> Iterator[tuple[str, list[str], bytes, set[str]]]:
    down = f"http://127.0.0.1:{free_port()}"
    read = _claude("PreToolUse", tool_name="Read", tool_input={"file_path": "/etc/hosts"})
    yield "allowed", ["claude-code", "--server", server.url], read, ALLOWED
    bash = _claude("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    yield "denied", ["claude-code", "--server", server.url], bash, ALLOWED
    yield "server down", ["claude-code", "--server", down], read, ALLOWED
    yield "down, fail-open", ["claude-code", "--server", down, "--fail-open"], read, ALLOWED
    prompt = _claude("UserPromptSubmit", prompt="explain this")
    yield "prompt", ["claude-code", "--server", server.url], prompt, ALLOWED
    tokened = ["claude-code", "--server", server.url, "--token-file", str(token)]
    yield "token file", tokened, read, ALLOWED | TOKEN_ALLOWED
    hosts = {
        "cursor": ev.cursor_shell("s", "ls"),
        "codex": ev.codex_tool("s", "apply_patch", {"command": "*** Begin Patch"}),
        "gemini-cli": ev.gemini_tool("s", "read_file", {"file_path": "/etc/hosts"}),
        "copilot": ev.copilot_tool("s", "view", {"path": "/etc/hosts"}),
        "windsurf": ev.windsurf("pre_read_code", "s", {"file_path": "/etc/hosts"}),
        "opencode": ev.opencode_tool("s", "read", {"filePath": "/etc/hosts"}),
    }
    for host, event in hosts.items():
        yield host, [host, "--server", server.url], event, ALLOWED
        yield f"{host}, down", [host, "--server", down], event, ALLOWED


def test_thin_mode_imports_only_its_own_path(
    server: Server, at_start: set[str], tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text("t" * 32 + "\n")
    token.chmod(0o600)
    seen = []
    for name, args, event, allowed in _cases(server, token):
        done = _launch(args, event, env={"AGBOM_HOOK_EVENT": "preToolUse"})
        assert done.returncode in (0, 2), (name, done.stderr[-2000:])
        assert b"Traceback" not in done.stderr, (name, done.stderr[-2000:])
        extra = _imported(done.stderr) - at_start - allowed
        assert extra == set(), (name, sorted(extra))
        seen.append((name, done.returncode))
    # The cases reach the paths meant: answers from the server and failure answers.
    assert {"allowed", "server down", "token file", "opencode, down"} <= {n for n, _ in seen}


def _untimed(lines: list[str]) -> list[str]:
    """The lines without the decision's duration the server's diagnostic ends with."""
    return [re.sub(r" \(\d+(\.\d+)? ms\)$", "", line) for line in lines]


def test_the_launcher_answers_as_agbom_hook(server: Server) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    events = {
        "claude-code": lambda s: _claude(
            "PreToolUse", session_id=s, tool_name="Bash", tool_input={"command": "ls"}
        ),
        "cursor": lambda s: ev.cursor_shell(s, "ls"),
        "codex": lambda s: ev.codex_tool(s, "Read", {}),
        "gemini-cli": lambda s: ev.gemini_tool(s, "read_file", {"file_path": "/etc/hosts"}),
        "copilot": lambda s: ev.copilot_tool(s, "view", {"path": "/etc/hosts"}),
        "windsurf": lambda s: ev.windsurf("pre_run_command", s, {"command_line": "ls"}),
        "opencode": lambda s: ev.opencode_tool(s, "read", {"filePath": "/etc/hosts"}),
    }
    env = {"AGBOM_HOOK_EVENT": "preToolUse"}
    for host, event in events.items():
        for options in ([server.url], [down], [down, "--fail-open"], ["ftp://x"]):
            args = [host, "--server", *options]
            # Each run its own session, so that neither sees the other's history.
            theirs = run_hook(args, event(str(uuid.uuid4())), env=env)
            ours = _launch(args, event(str(uuid.uuid4())), env=env)
            assert (ours.returncode, ours.stdout) == (theirs.code, theirs.stdout), (host, options)
            said = [ln for ln in ours.stderr.decode().splitlines() if not ln.startswith("import")]
            assert _untimed(said) == _untimed(theirs.stderr.splitlines()), (host, options)
