"""The decision log: one redacted JSON line per committed decision, rotation by size, and a
full disk that drops (and counts) lines while decisions keep flowing."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from agbom.guardian import GuardianConfig, build_guardian
from agbom.guardian.core import Guardian
from agbom.telemetry import Telemetry
from agbom.telemetry.decision_log import DecisionLog
from tests.guardian.acs import hello, new_session_id, request
from tests.transports.served import Served, open_session, post, run_cli

GITHUB_TOKEN = "ghp_" + "Q" * 36
LOG_FIELDS = {
    "decision_id",
    "time",
    "agent_id",
    "session_id",
    "request_id",
    "method",
    "decision",
    "reason_codes",
    "policy_references",
    "chain_hash",
    "duration_ms",
}


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def guardian_logging_to(tmp_path: Path, log: Path, **settings: Any) -> Guardian:
    config = GuardianConfig(decision_log=str(log), **settings)
    return build_guardian(tmp_path / "store.db", config=config)


def telemetry_of(guardian: Guardian) -> Telemetry:
    assert isinstance(guardian.observer, Telemetry)
    return guardian.observer


def decide_messages(guardian: Guardian, count: int, session_id: str | None = None) -> list[Any]:
    """A session with ``count`` user messages; returns every answer."""
    sid = session_id or new_session_id()
    answers = [
        guardian.handle(hello(sid)),
        guardian.handle(request("steps/sessionStart", {}, session_id=sid)),
    ]
    for index in range(count):
        payload = {"content": f"message {index}"}
        answers.append(guardian.handle(request("steps/userMessage", payload, session_id=sid)))
    return answers


def test_one_redacted_line_per_decision_from_a_served_guardian(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    server = Served(
        db=tmp_path / "store.db", log=tmp_path / "serve.log", extra=["--decision-log", str(log)]
    ).start()
    try:
        sid = open_session(server.url)
        message = request(
            "steps/userMessage", {"content": f"my token is {GITHUB_TOKEN}"}, session_id=sid
        )
        tool = request(
            "steps/toolCallRequest",
            {"tool": {"name": f"deploy-{GITHUB_TOKEN}"}, "arguments": {}},
            session_id=sid,
            agent_id="agent-1",
        )
        ended = request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)
        answers = [post(server.url, r) for r in (message, tool, ended)]
    finally:
        server.stop()
    # (uvicorn shuts down gracefully on SIGTERM, then dies of it: the decision process has
    # committed and written its lines by then.)
    lines = read_lines(log)
    # sessionStart (from open_session), the message, the tool call, sessionEnd: no handshake.
    assert [line["method"] for line in lines] == [
        "steps/sessionStart",
        "steps/userMessage",
        "steps/toolCallRequest",
        "steps/sessionEnd",
    ]
    for line in lines:
        assert LOG_FIELDS <= set(line), line
        assert line["session_id"] == sid and line["agent_id"] == "agent-1"
        assert line["evaluator"] == "deterministic"
    assert len({line["decision_id"] for line in lines}) == 4
    for line, answer in zip(lines[1:], answers, strict=True):
        result = answer["result"]
        assert line["request_id"] == result["request_id"]
        assert line["decision"] == result["decision"]
        assert line["chain_hash"] == result["chain_hash"]
        assert line["reason_codes"] == result.get("reason_codes", [])
    assert lines[1]["decision"] == "modify" and "secret_redacted" in lines[1]["reason_codes"]
    assert lines[2]["tool"] == "<redacted>"
    assert GITHUB_TOKEN not in log.read_text()
    # The chain hashes are the audit chain's own entries.
    exported = run_cli("audit", "export", sid, "--db", str(tmp_path / "store.db"))
    assert exported.returncode == 0, exported.stderr
    hashes = [entry["entry_hash"] for entry in orjson.loads(exported.stdout)]
    assert [line["chain_hash"] for line in lines] == hashes


def test_the_log_rotates_by_size_and_keeps_n_files(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    guardian = guardian_logging_to(tmp_path, log, decision_log_max_bytes=2048, decision_log_keep=2)
    answers = decide_messages(guardian, 60)
    telemetry_of(guardian).close()
    assert all("result" in a for a in answers)
    files = sorted(p.name for p in tmp_path.glob("decisions.jsonl*"))
    assert files == ["decisions.jsonl", "decisions.jsonl.1", "decisions.jsonl.2"]
    for path in tmp_path.glob("decisions.jsonl*"):
        assert path.stat().st_size <= 2048
        assert all(
            line["method"] == "steps/userMessage" or line["method"] == "steps/sessionStart"
            for line in read_lines(path)
        )
    # The newest lines are in the live file, the oldest kept ones in .2; older ones are gone.
    newest = read_lines(log)[-1]
    assert newest["request_id"] == answers[-1]["result"]["request_id"]
    assert telemetry_of(guardian).stats()["decision-log"]["written"] == 61


def test_rotation_loses_no_line_when_enough_files_are_kept(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    guardian = guardian_logging_to(
        tmp_path, log, decision_log_max_bytes=4096, decision_log_keep=100
    )
    answers = decide_messages(guardian, 80)
    telemetry_of(guardian).close()
    seen = [line["request_id"] for p in tmp_path.glob("decisions.jsonl*") for line in read_lines(p)]
    expected = [a["result"]["request_id"] for a in answers[1:]]
    assert sorted(seen) == sorted(expected)
    assert len(list(tmp_path.glob("decisions.jsonl.*"))) >= 2


def test_a_full_disk_drops_and_counts_lines_and_decisions_keep_flowing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # /dev/full refuses every write with ENOSPC, as a full disk does.
    guardian = guardian_logging_to(tmp_path, Path("/dev/full"))
    answers = decide_messages(guardian, 20)
    assert [a["result"]["decision"] for a in answers[1:]] == ["allow"] * 21
    telemetry = telemetry_of(guardian)
    telemetry.close()
    stats = telemetry.stats()["decision-log"]
    assert stats == {"written": 0, "dropped": 21, "queued": 0}
    err = capfd.readouterr().err
    assert "decision log /dev/full: No space left on device" in err
    assert err.count("No space left on device") == 1  # one line per outage, not per record


@contextlib.contextmanager
def tiny_filesystem(path: Path, size_kb: int) -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tiny tmpfs needs root")
def test_a_disk_that_fills_and_frees_writes_a_dropped_marker(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with tiny_filesystem(tmp_path / "disk", 64) as disk:
        log = disk / "decisions.jsonl"
        guardian = guardian_logging_to(tmp_path, log)
        telemetry = telemetry_of(guardian)
        sid = new_session_id()
        before = decide_messages(guardian, 3, sid)
        _wait_for(lambda: telemetry.stats()["decision-log"]["written"] == 4)
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            for block in (65536, 4096, 1):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * block)
        finally:
            os.close(fd)
        # The log's last page may still hold a line or two: the rest are dropped, and counted.
        during = [
            guardian.handle(request("steps/userMessage", {"content": "x"}, session_id=sid))
            for _ in range(30)
        ]
        assert [a["result"]["decision"] for a in during] == ["allow"] * 30
        _wait_for(
            lambda: sum(telemetry.stats()["decision-log"][k] for k in ("written", "dropped")) == 34
        )
        dropped = telemetry.stats()["decision-log"]["dropped"]
        assert dropped >= 20
        filler.unlink()
        after = guardian.handle(request("steps/userMessage", {"content": "y"}, session_id=sid))
        telemetry.close()
        lines = read_lines(log)  # every line whole JSON, a cut one included
    # Every line is whole JSON (read_lines parsed them all, a batch cut short included). The
    # decision lines keep their order: the ones before, those of the outage the disk still
    # took, the one after; the markers account for every line that is not there.
    ids = [a["result"]["request_id"] for a in before[1:]]
    during_ids = [a["result"]["request_id"] for a in during]
    decided = [line["request_id"] for line in lines if "request_id" in line]
    markers = [line for line in lines if "dropped" in line]
    assert decided[:4] == ids and decided[-1] == after["result"]["request_id"]
    kept = decided[4:-1]
    assert kept == [rid for rid in during_ids if rid in kept]
    assert len(kept) == 30 - dropped
    assert all(set(m) == {"dropped", "time"} for m in markers)
    assert sum(m["dropped"] for m in markers) == dropped
    assert "dropped" in lines[-2]  # the last outage is told of before the line after it
    assert len(lines) == len(decided) + len(markers)
    err = capfd.readouterr().err
    assert "No space left on device" in err
    assert "writing again" in err


def test_a_full_queue_drops_and_counts_and_the_marker_says_how_many(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    sink = DecisionLog(log, capacity=5)
    telemetry = Telemetry([sink])  # not started yet: nothing drains the queue
    guardian = build_guardian(tmp_path / "store.db")
    guardian.observer = telemetry
    answers = decide_messages(guardian, 10)
    assert all("result" in a for a in answers)
    assert sink.stats()["dropped"] == 6  # 11 decisions, room for 5
    telemetry.start()
    telemetry.close()
    lines = read_lines(log)
    assert len(lines) == 6
    assert lines[0]["dropped"] == 6
    assert [line["request_id"] for line in lines[1:]] == [
        a["result"]["request_id"] for a in answers[1:6]
    ]


def test_serve_refuses_a_log_it_cannot_open(tmp_path: Path) -> None:
    done = run_cli(
        "serve", "--db", str(tmp_path / "s.db"), "--decision-log", str(tmp_path / "no" / "x")
    )
    assert done.returncode == 2
    err = done.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "--decision-log" in err and "not a directory" in err
    small = run_cli("serve", "--decision-log-max-bytes", "10", "--db", str(tmp_path / "s.db"))
    assert small.returncode == 2 and b"--decision-log-max-bytes" in small.stderr


def _wait_for(condition: Any, limit: int = 2000) -> None:
    """Poll the sink's thread (bounded by tries, not by a time the loaded machine may miss)."""
    import time

    for _ in range(limit):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("condition not reached")


def test_serve_refuses_a_planted_symlink_as_decision_log(tmp_path: Path) -> None:
    """Issue 27 item 3: a link at the log's path is refused at start, in one line, and what it
    points at is left untouched (no agent text appended to a shell rc file)."""
    target = tmp_path / "bashrc"
    target.write_text("# rc\n")
    link = tmp_path / "decisions.jsonl"
    link.symlink_to(target)
    done = run_cli("serve", "--db", str(tmp_path / "s.db"), "--decision-log", str(link))
    assert done.returncode == 2
    err = done.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "--decision-log" in err and "symbolic link" in err
    assert target.read_text() == "# rc\n"


def test_a_link_planted_at_the_log_path_is_refused_by_the_library_too(tmp_path: Path) -> None:
    """Building a Guardian with such a log fails in one line (every open, the reopen after a
    rotation included, goes through the same O_NOFOLLOW open and owner check)."""
    from agbom.errors import InputError

    target = tmp_path / "profile"
    target.write_text("")
    log = tmp_path / "decisions.jsonl"
    log.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link; refused"):
        guardian_logging_to(tmp_path, log)
    assert target.read_text() == ""


def test_secrets_in_any_field_are_redacted_and_controls_escaped(tmp_path: Path) -> None:
    """Issue 27 item 3: tool names carrying sk_live_, AIza and user:password@ URLs come out
    redacted; the agent id is written as text, one entry per line."""
    log = tmp_path / "decisions.jsonl"
    guardian = guardian_logging_to(tmp_path, log)
    sid = new_session_id()
    guardian.handle(hello(sid))
    guardian.handle(request("steps/sessionStart", {}, session_id=sid, agent_id="$(touch x)"))
    names = [
        "pay_sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "maps-AIzaSyA1234567890abcdefghijklmnopqrstu",
        "fetch postgresql://bob:hunter2pass@db.example/x",
    ]
    for name in names:
        call = {"tool": {"name": name}, "arguments": {}}
        guardian.handle(
            request("steps/toolCallRequest", call, session_id=sid, agent_id="$(touch x)")
        )
    telemetry_of(guardian).close()
    text = log.read_text()
    for secret in ("sk_live_4eC39", "AIzaSyA123", "hunter2pass"):
        assert secret not in text
    lines = read_lines(log)
    assert len(lines) == 4 and all(line["agent_id"] == "$(touch x)" for line in lines)
    assert [line["tool"] for line in lines[1:]] == [
        "pay_<redacted>",
        "maps-<redacted>",
        "fetch postgresql://bob:<redacted>@db.example/x",
    ]


def test_control_characters_are_escaped_in_log_text() -> None:
    from agbom.telemetry.record import log_text

    assert log_text("a\u2028b\x85c\u202ed\ne\x1b") == "a\\u2028b\\u0085c\\u202ed\\u000ae\\u001b"


def test_a_link_swapped_in_for_the_live_file_is_never_written_through(tmp_path: Path) -> None:
    """Issue 27 item 3, rotation: someone with write access to the log's folder replaces the
    live file with a link to a shell rc file. Lines already going to the open file stay
    there; the rotation moves the link aside (a rename never follows it), and the file opened
    after it is a new regular file: nothing reaches the rc file, however many rotations."""
    rc = tmp_path / "bashrc"
    rc.write_text("# rc\n")
    log = tmp_path / "decisions.jsonl"
    guardian = guardian_logging_to(tmp_path, log, decision_log_max_bytes=2048, decision_log_keep=2)
    sid = new_session_id()
    decide_messages(guardian, 2, session_id=sid)
    _wait_for(lambda: log.is_file() and len(log.read_bytes().splitlines()) == 3)
    log.unlink()
    log.symlink_to(rc)
    for index in range(40):  # past 2,048 bytes several times: rotations
        payload = {"content": f"$(touch {tmp_path}/pwned) {index}"}
        guardian.handle(request("steps/userMessage", payload, session_id=sid))
    telemetry_of(guardian).close()
    assert rc.read_text() == "# rc\n"
    assert not (tmp_path / "pwned").exists()
    assert log.is_file() and not log.is_symlink()
    rotated = [tmp_path / "decisions.jsonl.1", tmp_path / "decisions.jsonl.2"]
    assert all(path.exists() or path.is_symlink() for path in rotated)
    for line in read_lines(log):
        assert line["session_id"] == sid
