"""The README's "Try the Guardian" demo, run as written: its own shell blocks, as a script, by
the user a container or a fresh VM has (root), in an empty HOME with no git configuration and
no AGBOM_* variable, the way a new user runs it in their first hour.

The only change made to the README's text is the port: the demo's 8787 becomes a free one, so
that this test does not meet another server on the machine.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.transports.served import free_port

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"


def _demo_blocks() -> list[str]:
    section = README.split("## Try the Guardian", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def _fresh_user_env(tmp_path: Path) -> dict[str, str]:
    agbom = Path(sys.executable).parent / "agbom"  # the console script a user runs
    if not agbom.exists():
        pytest.skip("the agbom entry point is not installed")
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": f"{Path(agbom).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
    }


def _run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``bash`` on ``script`` as a user types it (a failing command does not stop the rest),
    in a session of its own. Output goes to files, not pipes, so that a server the script
    failed to stop cannot hold the test; whatever is left is killed with its process group."""
    out_path, err_path = cwd / ".demo.out", cwd / ".demo.err"
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(
            ["bash", "-c", script],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=180)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, out_path.read_text(), err_path.read_text()
    )


def _session_method(method: str) -> int:
    for line in SESSION.read_text().splitlines():
        request = orjson.loads(line)
        if request["method"] == method:
            return int(request["id"])
    raise AssertionError(f"no {method} in {SESSION}")


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    shutil.copytree(ROOT / "samples", work / "samples")
    return work


def test_the_demo_is_two_blocks() -> None:
    blocks = _demo_blocks()
    assert len(blocks) == 2
    assert "agbom skills import samples/approvals.yaml" in blocks[0]
    assert "agbom serve" in blocks[1]


def test_the_replay_demo_runs_as_root_without_git_config(checkout: Path, tmp_path: Path) -> None:
    env = _fresh_user_env(tmp_path)
    result = _run("set -e\n" + _demo_blocks()[0], checkout, env)
    assert result.returncode == 0, result.stderr
    answers = [orjson.loads(line) for line in result.stdout.splitlines() if line[:1] == "{"]
    load = _session_method("steps/skillLoad")
    loads = [a["result"] for a in answers if a.get("id") == load]
    assert len(loads) == 2, result.stdout  # one per replay
    # Before the import the skill is refused; after it, registered and loaded, as the README says.
    assert loads[0]["decision"] == "deny"
    assert loads[1]["decision"] == "allow", loads[1]
    assert "1 chain(s) verified" in result.stderr
    # The import recorded who the file says decided, not the importer (root, nobody).
    history = subprocess.run(
        ["agbom", "skills", "history", "skill-code-review", "--db", "demo2.db", "--format", "json"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = orjson.loads(history.stdout)
    assert [(r["actor"], r["source"], r["to_status"]) for r in rows] == [
        ("platform-team", "import", "approved")
    ]


def test_the_http_demo_answers_every_request(checkout: Path, tmp_path: Path) -> None:
    env = _fresh_user_env(tmp_path)
    script = _demo_blocks()[1].replace("8787", str(free_port()))
    result = _run(script, checkout, env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    requests = SESSION.read_text().splitlines()
    assert len(lines) == len(requests) == 10
    answers = [orjson.loads(line) for line in lines]  # no empty line: every request answered
    assert [a["id"] for a in answers] == [orjson.loads(r)["id"] for r in requests]
    assert all("result" in a for a in answers), answers
