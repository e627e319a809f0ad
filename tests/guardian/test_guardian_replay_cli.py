"""``agbom replay`` and ``agbom serve --stdio`` refuse input they cannot use, in one line, and
write nothing for it. Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from tests.guardian.acs import hello, new_session_id, request
from tests.transports.served import run_cli

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"


def one_line(stderr: bytes) -> str:
    text = stderr.decode()
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


def test_garbage_recordings_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    lines = SESSION.read_bytes().splitlines()
    cases = {
        "binary.jsonl": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(40)), ":1: binary data"),
        "empty.jsonl": (b"", "no requests to replay"),
        "blank.jsonl": (b"\n\n  \n", "no requests to replay"),
        # Cut in the middle of the last line: nothing of the first lines is replayed either.
        "truncated.jsonl": (
            b"\n".join(lines[:-1]) + b"\n" + lines[-1][:40],
            f":{len(lines)}: not JSON",
        ),
        "not-rpc.jsonl": (b'{"hello": 1}\n', ":1: not a JSON-RPC request"),
    }
    for name, (content, expected) in cases.items():
        recording = tmp_path / name
        recording.write_bytes(content)
        db = tmp_path / f"{name}.db"
        done = run_cli("replay", str(recording), "--db", str(db))
        assert done.returncode == 1, (name, done.stdout, done.stderr)
        assert expected in one_line(done.stderr), (name, done.stderr)
        assert done.stdout == b""
        assert not db.exists(), name


def test_replaying_into_a_store_that_holds_the_session_says_so_once(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = run_cli("replay", str(SESSION), "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert len(first.stdout.splitlines()) == 10  # not a terminal: the raw responses
    again = run_cli("replay", str(SESSION), "--db", str(db))
    assert again.returncode == 1
    assert "already ended in" in one_line(again.stderr)
    assert again.stdout == b""


def test_the_table_names_step_method_decision_and_reasons(tmp_path: Path) -> None:
    done = run_cli("replay", str(SESSION), "--db", str(tmp_path / "s.db"), "--format", "table")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.decode().splitlines()
    assert rows[0].split() == ["line", "method", "decision", "reason", "codes"]
    assert any("steps/userMessage" in r and "modify" in r and "secret_redacted" in r for r in rows)
    assert any("steps/skillLoad" in r and "deny" in r for r in rows)
    bad = run_cli("replay", str(SESSION), "--db", str(tmp_path / "t.db"), "--format", "xml")
    assert bad.returncode == 2


def framed(*messages: object) -> bytes:
    out = b""
    for message in messages:
        body = orjson.dumps(message)
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def test_stdio_answers_unframed_input_with_a_framing_error(tmp_path: Path) -> None:
    sid = new_session_id()
    json_lines = (json.dumps(hello(sid)) + "\n").encode()
    truncated = framed(hello(sid))[:-10]
    no_length = b"Content-Type: application/json\r\n\r\n{}"
    for stdin, expected in (
        (json_lines, "JSON lines? use agbom replay"),
        (truncated, "input ended after"),
        (no_length, "headers without a Content-Length"),
    ):
        done = run_cli("serve", "--stdio", "--db", str(tmp_path / "s.db"), stdin=stdin)
        assert done.returncode == 1, done
        assert expected in one_line(done.stderr)
        header, _, body = done.stdout.partition(b"\r\n\r\n")
        error = orjson.loads(body)["error"]
        assert error["code"] == -32600 and error["data"]["reason"] == "bad_framing"
    # Framed messages before the bad part are answered first.
    done = run_cli(
        "serve",
        "--stdio",
        "--db",
        str(tmp_path / "t.db"),
        stdin=framed(hello(sid), request("steps/sessionStart", {}, session_id=sid)) + b"oops\n",
    )
    assert done.returncode == 1
    replies = unframed(done.stdout)
    assert "negotiated_version" in replies[0]["result"]
    assert replies[1]["result"]["decision"] == "allow"
    assert replies[2]["error"]["data"]["reason"] == "bad_framing" and len(replies) == 3


def unframed(data: bytes) -> list[dict]:
    out = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        out.append(orjson.loads(rest[:length]))
        data = rest[length:]
    return out
