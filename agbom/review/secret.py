"""The review page's signing secret: what makes a session cookie good on every replica.

A session is not kept anywhere: its cookie is a record signed with a key derived from this
secret, so any ``agbom serve`` given the same file (``--ui-secret-file``) accepts it, and a
restart keeps it. The file holds one secret per line, each 32 random bytes or more written as
hex or base64: the first line signs and is accepted, an optional second line (the previous
secret, during a rotation) is only accepted. It must be a regular file that its owner alone
may read (mode 0600 or 0400): anyone who reads it can sign in as any reviewer.

Without the file the page signs with a random secret of its own process: sessions then end
with the process and are not good on another replica.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from agbom._private_files import read_private_file
from agbom.errors import InputError
from agbom.review._files import write_private

MIN_SECRET_BYTES = 32
MAX_FILE_BYTES = 4096
MAX_SECRETS = 2  # the current one and the previous one
MIN_DISTINCT_BYTES = 16  # 32 random bytes hold ~30 distinct values; "aaaa..." holds 1
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


class UiSecretError(InputError):
    """The secret file is unusable; the message says why (and never holds the secret)."""


@dataclass(frozen=True, slots=True)
class SigningKeys:
    """The keys derived from one secret, one per purpose, so that no value signed for one
    purpose (a session cookie) is ever a valid value for another (a CSRF token)."""

    session: bytes
    csrf: bytes
    credential: bytes
    login: bytes

    @classmethod
    def derive(cls, secret: bytes) -> SigningKeys:
        def key(purpose: str) -> bytes:
            return hmac.new(secret, f"agbom-review/{purpose}/v1".encode(), hashlib.sha256).digest()

        return cls(key("session"), key("csrf"), key("credential"), key("login"))


def _decode(line: str, path: Path, number: int) -> bytes:
    where = f"ui secret file {path}, line {number}"
    if _HEX.fullmatch(line) and len(line) % 2 == 0:
        raw = bytes.fromhex(line)
    elif _BASE64.fullmatch(line):
        text = line.replace("-", "+").replace("_", "/").rstrip("=")
        try:
            raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise UiSecretError(f"{where}: not hex or base64") from None
    else:
        raise UiSecretError(f"{where}: not hex or base64 (make one with 'agbom reviewers secret')")
    if len(raw) < MIN_SECRET_BYTES:
        raise UiSecretError(
            f"{where}: {len(raw)} bytes; a secret needs at least {MIN_SECRET_BYTES} random bytes"
        )
    if len(set(raw)) < MIN_DISTINCT_BYTES:
        raise UiSecretError(f"{where}: does not look random (too few distinct bytes)")
    return raw


def load_secrets(path: Path) -> list[bytes]:
    """The secrets in ``path``, the signing one first; a :class:`UiSecretError` otherwise."""
    raw = read_private_file(path, "ui secret file", MAX_FILE_BYTES, UiSecretError)
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise UiSecretError(f"ui secret file {path} is not hex or base64 text") from None
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        raise UiSecretError(f"ui secret file {path} is empty")
    if len(lines) > MAX_SECRETS:
        raise UiSecretError(
            f"ui secret file {path} holds {len(lines)} secrets; at most 2 (current, previous)"
        )
    found = [_decode(line, path, number) for number, line in enumerate(lines, 1)]
    if len(found) == 2 and hmac.compare_digest(found[0], found[1]):
        raise UiSecretError(f"ui secret file {path} gives the same secret twice")
    return found


class SecretSource:
    """The keys a running server signs and checks with.

    From a file, it is re-read when the file changes (inode, size, mode or change times),
    so a rotation needs no restart; a file that becomes unusable leaves no key at all
    (every session and sign-in is refused) until it is fixed. Without a file, one random
    secret for the life of this process.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._stamp: tuple[int, ...] | None = None
        self._keys: list[SigningKeys] = []
        self.problem: str | None = None
        if path is None:
            self._keys = [SigningKeys.derive(secrets.token_bytes(MIN_SECRET_BYTES))]
        else:
            self._keys = [SigningKeys.derive(s) for s in load_secrets(path)]  # fail at start
            self._stamp = self._stat()

    @property
    def shared(self) -> bool:
        """Whether the secret comes from a file (other replicas and restarts can share it)."""
        return self.path is not None

    def _stat(self) -> tuple[int, ...] | None:
        assert self.path is not None
        try:
            info = self.path.stat()
        except OSError:
            return None
        # The mode and change time too: a file made readable by others is refused at once.
        return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_ctime_ns)

    def keys(self) -> list[SigningKeys]:
        """The signing keys first, then the previous secret's; empty while the file is bad."""
        if self.path is None:
            return self._keys
        stamp = self._stat()
        if stamp is not None and stamp == self._stamp:
            return self._keys
        self._stamp = stamp
        try:
            self._keys = [SigningKeys.derive(s) for s in load_secrets(self.path)]
            self.problem = None
        except UiSecretError as exc:
            self._keys = []
            self.problem = str(exc)
        return self._keys


def _write(path: Path, lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("ascii")
    write_private(path, data, prefix=".ui-secret-")


def write_secret(path: Path, *, keep_previous: bool) -> None:
    """A new random secret in ``path`` (mode 0600, written atomically). With
    ``keep_previous`` the file's current secret stays as the accepted previous one."""
    lines = [secrets.token_hex(MIN_SECRET_BYTES)]
    if keep_previous:
        lines.append(load_secrets(path)[0].hex())
    elif path.exists() or path.is_symlink():
        raise UiSecretError(
            f"ui secret file {path} exists (--rotate puts a new one first and keeps it as previous)"
        )
    _write(path, lines)


def drop_previous_secret(path: Path) -> None:
    """Keep only the current secret of ``path``: sessions signed with the previous one end."""
    _write(path, [load_secrets(path)[0].hex()])
