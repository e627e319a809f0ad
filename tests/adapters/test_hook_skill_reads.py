"""Issue 38 item 1: no hook request makes the server read a folder it names, or stalls it.

Real processes throughout: ``agbom serve`` on 127.0.0.1, the thin hook command
``agbom hook claude-code --server URL``, HTTP requests as Claude Code's HTTP hooks send them.
The folders are the issue's: 64 sparse files of 16 MiB (1 GiB to read, no disk used), and a
file swapped for a FIFO after the digest has hashed it. Bounds are asserted against figures
measured in the same run (the time the folder takes to read here, the hook's own start),
never against a fixed speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.inventory.skill_digest import digest_skill_folder
from tests.adapters.hook_helpers import agbom_command, run_hook
from tests.transports.served import Served, open_session, post

SECRET = "only-on-the-server-host: db password is hunter2"
MIB = 1024 * 1024


def _event(cwd: Path, skill: str, session: str | None = None) -> dict[str, Any]:
    return {
        "session_id": session or str(uuid.uuid4()),
        "hook_event_name": "PreToolUse",
        "cwd": str(cwd),
        "tool_name": "Skill",
        "tool_input": {"skill": skill},
    }


def _sparse_skill(project: Path, name: str = "bloat", files: int = 64) -> Path:
    folder = project / ".claude" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n{SECRET}\n")
    for index in range(files):
        with (folder / f"blob{index:02d}.bin").open("wb") as handle:
            handle.truncate(16 * MIB)  # a hole: no disk used, 16 MiB to read
    return folder


def _home(tmp_path: Path) -> Path:
    """The hook user's HOME (no skills of their own)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


def _deny_reason(body: bytes) -> str:
    doc = json.loads(body)
    hook = doc["hookSpecificOutput"]
    assert hook["permissionDecision"] == "deny", doc
    return str(hook["permissionDecisionReason"])


def _hook(url: str, event: dict[str, Any], *, token: str | None = None) -> httpx.Response:
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(f"{url}/hooks/claude-code", json=event, headers=headers, timeout=120)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(*extra: str) -> Served:
        served = Served(
            db=tmp_path / f"serve{len(started)}.db",
            log=tmp_path / f"serve{len(started)}.log",
            extra=["--decision-timeout", "20", *extra],
        ).start()
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


def _bystander(url: str, stop: threading.Event, latencies: list[float]) -> None:
    """Another session's small decisions, one after another, until ``stop``."""
    with httpx.Client() as client:
        sid = open_session(url, client=client)
        from tests.guardian.acs import request

        while not stop.is_set():
            began = time.perf_counter()
            answer = post(url, request("steps/userMessage", {"content": "hi"}, session_id=sid),
                          client=client)  # fmt: skip
            latencies.append(time.perf_counter() - began)
            assert answer["result"]["decision"] == "allow", answer


@pytest.mark.parametrize("reads", [False, True], ids=["default", "read-project-skills"])
def test_a_sparse_folder_named_by_a_hook_event_never_holds_up_other_decisions(
    serve: Callable[..., Served], tmp_path: Path, reads: bool
) -> None:
    project = tmp_path / "project"
    folder = _sparse_skill(project)
    # The anchor: what reading this folder whole costs on this machine, now.
    began = time.perf_counter()
    digest_skill_folder(folder)
    read_s = time.perf_counter() - began
    served = serve(*(["--read-project-skills", str(tmp_path)] if reads else []))

    stop = threading.Event()
    latencies: list[float] = []
    watcher = threading.Thread(target=_bystander, args=(served.url, stop, latencies))
    watcher.start()
    try:
        time.sleep(0.3)
        answers: list[httpx.Response] = []

        def load() -> None:
            answers.append(_hook(served.url, _event(project, "bloat")))

        hooks = [threading.Thread(target=load) for _ in range(3)]
        for thread in hooks:
            thread.start()
        for thread in hooks:
            thread.join(120)
        time.sleep(0.3)
    finally:
        stop.set()
        watcher.join(60)
    assert len(answers) == 3 and len(latencies) > 3
    # The bystander never waited for the folder: before, one decision waited at least one
    # whole read (3.6 s here against a 1.5 s read).
    assert max(latencies) < read_s * 0.75, (max(latencies), read_s)
    for answer in answers:
        assert answer.status_code == 200
        reason = _deny_reason(answer.content)
        if reads:
            # the read stopped at its bound, or found both workers busy
            assert "bytes read at most" in reason or "reading other skill" in reason, reason
        else:
            assert "reads no folder an event names" in reason, reason
    # Nothing of the folder was stored for the review page.
    from agbom.store import open_store

    with open_store(str(served.db), create=False) as store:
        for record in store.skill_records("skill:bloat"):
            kept = store.skill_definition(record.skill_id, record.digest)
            assert kept is None or SECRET not in json.dumps(kept)


def test_without_the_option_the_server_reads_nothing_a_client_names(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    folder = project / ".claude" / "skills" / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: notes\ndescription: d\n---\n{SECRET}\n")
    served = serve()
    reason = _deny_reason(_hook(served.url, _event(project, "notes")).content)
    assert "reads no folder an event names" in reason
    assert digest_skill_folder(folder).value not in reason
    from agbom.store import open_store

    with open_store(str(served.db), create=False) as store:
        records = store.skill_records("skill:notes")
        assert all(store.skill_definition(r.skill_id, r.digest) is None for r in records)
        assert not any(r.digest.value == digest_skill_folder(folder).value for r in records)


def test_with_the_option_only_folders_under_its_roots_are_read(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    for project in (allowed, other):
        folder = project / ".claude" / "skills" / "notes"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: notes\ndescription: d\n---\n{project}\n")
    # A link out of the root is not a way in.
    escape = allowed / "escape" / ".claude"
    escape.parent.mkdir()
    escape.symlink_to(other / ".claude")
    served = serve("--read-project-skills", str(allowed))
    inside = _deny_reason(_hook(served.url, _event(allowed, "notes")).content)
    digest = digest_skill_folder(allowed / ".claude" / "skills" / "notes").value
    assert f"--digest sha256:{digest}" in inside  # read, registered, pending
    outside = _deny_reason(_hook(served.url, _event(other, "notes")).content)
    assert "not under a --read-project-skills folder" in outside
    linked = _deny_reason(_hook(served.url, _event(allowed / "escape", "notes")).content)
    assert "resolves outside the allowed folders" in linked


def _pids(root: int) -> list[int]:
    """``root`` and its descendants (the front process and its decision process)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
    return out


def _swap_when_opened(pid: int, watched: Path, target: Path, done: threading.Event) -> None:
    """Once a process of ``pid``'s tree has a file of the folder ``watched`` open (the digest
    is past ``target``, which sits before it in the walk), replace ``target`` with a FIFO."""
    deadline = time.monotonic() + 60
    while not done.is_set() and time.monotonic() < deadline:
        for each in _pids(pid):
            try:
                fds = list(Path(f"/proc/{each}/fd").iterdir())
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(fd).startswith(f"{watched}/"):
                        target.unlink()
                        os.mkfifo(target)
                        done.set()
                        return
                except OSError:
                    continue
        time.sleep(0.0005)


def _fifo_skill(project: Path) -> tuple[Path, Path, Path]:
    """A folder whose root files are digested before ``assets/`` (the walk lists the root
    first): ``notes.md``, to become a FIFO, and two sparse files under 32 MiB in all."""
    folder = project / ".claude" / "skills" / "swapped"
    (folder / "assets").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: swapped\ndescription: d\n---\nRead notes.md\n")
    (folder / "notes.md").write_text("notes\n")
    for name, size in (("a.bin", 15 * MIB), ("b.bin", 15 * MIB)):
        with (folder / "assets" / name).open("wb") as handle:
            handle.truncate(size)
    return folder, folder / "notes.md", folder / "assets"


@pytest.mark.parametrize("reads", [False, True], ids=["default", "read-project-skills"])
def test_a_file_swapped_for_a_fifo_never_blocks_the_server(
    serve: Callable[..., Served], tmp_path: Path, reads: bool
) -> None:
    project = tmp_path / "project"
    folder, notes, watched = _fifo_skill(project)
    served = serve(*(["--read-project-skills", str(tmp_path)] if reads else []))
    assert served.proc is not None
    done = threading.Event()
    swapper = threading.Thread(
        target=_swap_when_opened, args=(served.proc.pid, watched, notes, done)
    )
    swapper.start()
    began = time.perf_counter()
    try:
        answer = _hook(served.url, _event(project, "swapped"))
    finally:
        done.set()
        swapper.join(60)
    took = time.perf_counter() - began
    # A decision, not the front giving up on a stuck decision process (--decision-timeout 20).
    assert took < 20, took
    reason = _deny_reason(answer.content)
    assert "unavailable" not in reason, reason
    # And the next request of another session is decided as usual.
    with httpx.Client() as client:
        open_session(served.url, client=client)
    if reads:
        assert notes.is_fifo()  # the swap happened while the server read the folder
        assert "pending" in reason or "not approved" in reason or "--digest" in reason, reason


def test_the_thin_hook_never_blocks_on_a_fifo_swapped_in(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    served, home, project = serve(), _home(tmp_path), tmp_path / "project"
    folder, notes, watched = _fifo_skill(project)
    proc = subprocess.Popen(
        [*agbom_command(), "hook", "claude-code", "--server", served.url, "--timeout", "20"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "HOME": str(home), "AGBOM_DEBUG": "0"},
    )
    done = threading.Event()
    swapper = threading.Thread(target=_swap_when_opened, args=(proc.pid, watched, notes, done))
    swapper.start()
    try:
        out, err = proc.communicate(json.dumps(_event(project, "swapped")).encode(), timeout=40)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the thin hook blocked on the FIFO")
    finally:
        done.set()
        swapper.join(60)
    assert notes.is_fifo()
    assert proc.returncode == 0, err
    reason = _deny_reason(out)
    assert f"--digest sha256:{digest_of_listing(folder, notes)}" in reason, reason


def digest_of_listing(folder: Path, fifo: Path) -> str:
    """The digest the hook computed: the folder as it was, notes.md a regular file."""
    fifo.unlink()
    fifo.write_text("notes\n")
    return digest_skill_folder(folder).value


def test_the_thin_hooks_timeout_covers_the_read_of_the_skill(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    served, home, project = serve(), _home(tmp_path), tmp_path / "project"
    _sparse_skill(project)
    args = ["claude-code", "--server", served.url, "--timeout", "1"]
    # The anchor: the same hook answering an event that loads no skill, in this run.
    plain = {**_event(project, "bloat"), "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    anchor = min(run_hook(args, json.dumps(plain), env={"HOME": str(home)}).seconds
                 for _ in range(3))  # fmt: skip
    run = run_hook(args, json.dumps(_event(project, "bloat")), env={"HOME": str(home)})
    # --timeout 1 is the whole exchange, the read included: the hook is back within it
    # plus its own start (5.3 s before: the read came before the timeout's clock started).
    assert run.seconds < 1 + anchor + 0.5, (run.seconds, anchor)
    assert run.code == 0, run.stderr
    reason = _deny_reason(run.stdout)
    assert "bytes read at most" in reason or "longer than --timeout" in reason, reason


def _token_file(path: Path, token: str) -> Path:
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


def test_the_hook_endpoints_can_require_a_token(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    token = "hook-token-" + uuid.uuid4().hex
    served = serve("--hook-token-file", str(_token_file(tmp_path / "hook-token", token)))
    prompt = {
        "session_id": str(uuid.uuid4()),
        "hook_event_name": "PreToolUse",
        "cwd": str(tmp_path),
        "tool_name": "Read",
        "tool_input": {"file_path": "README.md"},
    }
    # Claude Code's HTTP hook without the header: a deny (HTTP 200, which it reads), not an
    # error it would take as "no objection"; nothing is decided.
    bare = _hook(served.url, prompt)
    assert bare.status_code == 200 and bare.headers["x-agbom-exit-code"] == "0"
    assert "valid hook token" in _deny_reason(bare.content)
    wrong = _hook(served.url, prompt, token="x" * 40)
    assert "valid hook token" in _deny_reason(wrong.content)
    right = _hook(served.url, prompt, token=token)
    assert right.status_code == 200 and json.loads(right.content) == {}
    # Thin mode sends it from --token-file (or $AGBOM_HOOK_TOKEN_FILE).
    mine = _token_file(tmp_path / "mine", token)
    args = ["claude-code", "--server", served.url, "--timeout", "20"]
    thin = run_hook([*args, "--token-file", str(mine)], json.dumps(prompt))
    assert thin.code == 0 and json.loads(thin.stdout) == {}, thin.stderr
    via_env = run_hook(args, json.dumps(prompt), env={"AGBOM_HOOK_TOKEN_FILE": str(mine)})
    assert via_env.code == 0 and json.loads(via_env.stdout) == {}, via_env.stderr
    without = run_hook(args, json.dumps(prompt))
    assert "valid hook token" in _deny_reason(without.stdout)
    # A token file others can read is refused, as the server's own token files are.
    mine.chmod(0o644)
    loose = run_hook([*args, "--token-file", str(mine)], json.dumps(prompt))
    assert loose.code == 2 and "readable or writable by others" in loose.stderr


def test_the_new_serve_options_are_checked_before_the_server_starts(tmp_path: Path) -> None:
    from tests.transports.served import run_cli

    missing = run_cli("serve", "--db", str(tmp_path / "a.db"), "--read-project-skills",
                      str(tmp_path / "nowhere"))  # fmt: skip
    assert missing.returncode == 2 and b"not a folder" in missing.stderr
    stdio = run_cli("serve", "--stdio", "--db", str(tmp_path / "a.db"),
                    "--read-project-skills", str(tmp_path))  # fmt: skip
    assert stdio.returncode == 2 and b"not --stdio" in stdio.stderr
    short = tmp_path / "short-token"
    short.write_text("tiny\n")
    short.chmod(0o600)  # (a token file others can read is refused before its length is read)
    too_short = run_cli("serve", "--db", str(tmp_path / "a.db"), "--port", "0",
                        "--hook-token-file", str(short))  # fmt: skip
    assert too_short.returncode != 0 and b"shorter than 16 characters" in too_short.stderr
