"""``agbom replay --secret-encoding``: a recording signed by a client that decodes its hex key
file verifies with ``hex``, and is refused under the default (the raw bytes) with a message
that says how the key was read. The CLI runs as a subprocess, over a real SQLite store."""

from __future__ import annotations

import secrets
from pathlib import Path

import orjson

from agbom.protocol import KeyRing
from tests.guardian.acs import hello, new_session_id, request
from tests.transports.served import run_cli


def recording(tmp_path: Path) -> tuple[Path, Path]:
    key = tmp_path / "key"
    key.write_text(secrets.token_hex(32) + "\n")  # what `openssl rand -hex 32 > key` writes
    key.chmod(0o600)
    decoded = KeyRing(bytes.fromhex(key.read_text().strip()), "k1")
    sid = new_session_id()
    lines = [hello(sid), request("steps/sessionStart", {}, session_id=sid)]
    signed = [decoded.sign(line, sid) for line in lines]
    path = tmp_path / "signed.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in signed) + b"\n")
    return path, key


def replay(path: Path, key: Path, db: Path, *extra: str) -> list[dict[str, object]]:
    done = run_cli(
        "replay", str(path), "--db", str(db), "--secret-file", str(key), "--key-id", "k1",
        "--format", "jsonl", *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def test_replay_decodes_the_key_file_as_told(tmp_path: Path) -> None:
    path, key = recording(tmp_path)
    answers = replay(path, key, tmp_path / "hex.db", "--secret-encoding", "hex")
    assert "result" in answers[0] and answers[1]["result"]["decision"] == "allow"


def test_the_default_reads_the_raw_bytes_and_says_so(tmp_path: Path) -> None:
    path, key = recording(tmp_path)
    error = replay(path, key, tmp_path / "raw.db")[0]["error"]
    assert error["code"] == -32004 and error["data"]["reason"] == "signature_mismatch"
    message = error["data"]["message"]
    assert "raw bytes (65, a trailing newline included)" in message
    assert "--secret-encoding" in message and key.read_text().strip() not in message


def test_an_unknown_encoding_is_a_usage_error(tmp_path: Path) -> None:
    path, key = recording(tmp_path)
    done = run_cli(
        "replay", str(path), "--db", str(tmp_path / "x.db"), "--secret-file", str(key),
        "--secret-encoding", "hexadecimal",
    )  # fmt: skip
    assert done.returncode == 2 and b"--secret-encoding" in done.stderr
    assert not (tmp_path / "x.db").exists()


def test_serve_notes_a_hex_key_file_read_raw_without_quoting_it(tmp_path: Path) -> None:
    """Issue 30 item 4's changed default, said at start: `openssl rand -hex 32 > k` is used as
    its 65 ASCII bytes, as the reference reads it; serve says so once, names the option that
    decodes it, and never prints the key. A binary key, or --secret-encoding hex, says nothing."""
    text = secrets.token_hex(32)
    hex_key = tmp_path / "hex.key"
    hex_key.write_text(text + "\n")
    binary = tmp_path / "binary.key"
    binary.write_bytes(bytes(range(1, 33)))
    for key in (hex_key, binary):
        key.chmod(0o600)

    def started(key: Path, *extra: str) -> str:
        done = run_cli(
            "serve",
            "--stdio",
            "--db",
            str(tmp_path / "s.db"),
            "--secret-file",
            str(key),
            *extra,
            stdin=b"",  # end of input: the stdio server stops at once
        )
        assert done.returncode == 0, done.stderr
        return done.stderr.decode()

    noted = started(hex_key)
    assert (
        "holds hex text" in noted and "65 raw bytes" in noted and "--secret-encoding hex" in noted
    )
    assert text not in noted and text[:16] not in noted
    assert "holds hex text" not in started(binary)
    assert "holds hex text" not in started(hex_key, "--secret-encoding", "hex")
