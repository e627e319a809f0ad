"""Fixtures for hook handler tests: a rule pack, the agbom command, a real ``agbom serve``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_helpers import Server, agbom_command, free_port, wait_serving

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
  - id: ask-deploy
    kind: ban
    severity: high
    action: ask
    message: "{component.name} deploys to production"
    match:
      type: tool
      name: deploy
"""


@pytest.fixture(scope="session")
def rules_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rules")
    (folder / "bans.yaml").write_text(BAN_PACK)
    return folder


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
        try:
            wait_serving(port, proc)
        except RuntimeError as exc:
            pytest.fail(f"{exc}: {log.read_text()}")
        yield Server(url=f"http://127.0.0.1:{port}", port=port, db=db)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
