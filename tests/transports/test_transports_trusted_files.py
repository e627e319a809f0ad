"""Key, token and reviewers files that another user could have written are refused at start
(issue 38 item 6), through the real ``agbom serve`` and ``agbom reviewers`` commands.

As the store is (tests/store/test_store_ownership.py): a file that belongs to another user
(root excepted), or that its group or others may write, is refused with one line that says
how to fix it. A file that holds a secret (``--secret-file``, ``--keys-file``,
``--api-token-file``, ``--signing-key``, ``--ui-secret-file``) may not be read by others
either, as signing keys and the review secret already could not (chmod 600). The tests run
as root: the other user is uid/gid 65534 (``nobody``), whose files root can still read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.transports.served import run_cli

OTHER = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="gives files to another user")


def _secret(folder: Path) -> Path:
    path = folder / "secret"
    path.write_bytes(b"a-shared-hmac-secret-of-32-bytes-or-more-0123456789")
    return path


def _keys(folder: Path) -> Path:
    path = folder / "keys.json"
    path.write_text('{"k1": "hex:' + "ab" * 32 + '"}')
    return path


def _token(folder: Path) -> Path:
    path = folder / "token"
    path.write_text("api-token-0123456789abcdef\n")
    return path


def _signing_key(folder: Path) -> Path:
    done = run_cli("keys", "generate", "-a", "Ed25519", "--out", str(folder / "signing"))
    assert done.returncode == 0, done.stderr
    return folder / "signing.key"


def _ui_secret(folder: Path) -> Path:
    done = run_cli("reviewers", "secret", str(folder / "ui.secret"))
    assert done.returncode == 0, done.stderr
    return folder / "ui.secret"


def _reviewers(folder: Path) -> Path:
    path = folder / "reviewers.json"
    done = run_cli("reviewers", "add", "alice", "--role", "approver", "--file", str(path))
    assert done.returncode == 0, done.stderr
    return path


Maker = Callable[[Path], Path]
# (option, how the file is made, what else serve needs for it, how the message names it)
FILES: dict[str, tuple[Maker, list[str], str]] = {
    "--secret-file": (_secret, [], "key file"),
    "--keys-file": (_keys, [], "key file"),
    "--api-token-file": (_token, [], "token file"),
    "--signing-key": (_signing_key, [], "private key"),
    "--ui-secret-file": (_ui_secret, ["--reviewers-file", "REVIEWERS"], "ui secret file"),
    "--reviewers-file": (_reviewers, [], "reviewers file"),
}
SECRETS = [option for option in FILES if option != "--reviewers-file"]


def _serve(tmp_path: Path, option: str, path: Path, extra: list[str]) -> tuple[int, str]:
    args = [a.replace("REVIEWERS", str(_reviewers(tmp_path))) for a in extra]
    done = run_cli(
        "serve", "--port", "0", "--db", str(tmp_path / "s.db"), option, str(path), *args,
        timeout=60,
    )  # fmt: skip
    return done.returncode, done.stderr.decode()


def _refused(code: int, stderr: str, *words: str) -> None:
    assert code != 0, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("agbom: error: "), stderr
    assert "Traceback" not in stderr
    for word in words:
        assert word in stderr, stderr


@pytest.mark.parametrize("option", list(FILES))
def test_a_file_of_another_user_is_refused(tmp_path: Path, option: str) -> None:
    make, extra, label = FILES[option]
    path = make(tmp_path)
    os.chmod(path, 0o600)
    os.chown(path, OTHER, OTHER)
    code, stderr = _serve(tmp_path, option, path, extra)
    _refused(code, stderr, f"{label} {path} belongs to uid 65534", "sudo chown")


@pytest.mark.parametrize("option", list(FILES))
def test_a_file_others_may_write_is_refused(tmp_path: Path, option: str) -> None:
    make, extra, label = FILES[option]
    path = make(tmp_path)
    os.chmod(path, 0o622)
    code, stderr = _serve(tmp_path, option, path, extra)
    fix = "chmod 600 it" if option in SECRETS else f"chmod go-w {path}"
    _refused(code, stderr, f"{label} {path} ", "(mode 0622)", fix)


@pytest.mark.parametrize("option", SECRETS)
def test_a_secret_others_may_read_is_refused(tmp_path: Path, option: str) -> None:
    make, extra, label = FILES[option]
    path = make(tmp_path)
    os.chmod(path, 0o644)
    code, stderr = _serve(tmp_path, option, path, extra)
    _refused(code, stderr, f"{label} {path} is readable or writable by others (mode 0644)")


def test_a_reviewers_file_others_may_read_is_used_and_not_extended_when_others_may_write(
    tmp_path: Path,
) -> None:
    """Token hashes and roles are no secret; who may write them decides who approves."""
    path = _reviewers(tmp_path)
    os.chmod(path, 0o644)
    listed = run_cli("reviewers", "list", "--file", str(path))
    assert listed.returncode == 0 and b"alice" in listed.stdout, listed.stderr
    os.chmod(path, 0o666)
    added = run_cli("reviewers", "add", "mallory", "--role", "approver", "--file", str(path))
    assert added.returncode != 0
    assert b"is writable by others (mode 0666)" in added.stderr
    os.chmod(path, 0o600)
    assert b"mallory" not in run_cli("reviewers", "list", "--file", str(path)).stdout
