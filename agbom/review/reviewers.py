"""The reviewers file: who may use the review page, with which role, and their token hashes.

A reviewer is a name (what the approval history records), a role (``viewer`` reads,
``approver`` also approves, denies and revokes) and, unless they sign in through a trusted
reverse proxy, the SHA-256 of a token. The token itself is printed once by
``agbom reviewers add`` and never stored: a copy of the file lets nobody sign in. Tokens are
32 random bytes, so a plain SHA-256 is as hard to invert as the token is to guess; a slow
password hash would only slow down every sign-in.

The file is JSON, written atomically with mode 0600, and re-read by a running server when it
changes, so adding or removing a reviewer needs no restart (a removed reviewer's sessions end
at their next request).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from agbom._private_files import read_trusted_file
from agbom.errors import InputError
from agbom.review._files import write_private

FORMAT = "agbom-reviewers/1"
TOKEN_PREFIX = "agr_"
MAX_FILE_BYTES = 1024 * 1024
MAX_REVIEWERS = 1000
MAX_NAME = 64
MAX_TOKEN = 256
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class Role(StrEnum):
    """What a reviewer may do on the page."""

    VIEWER = "viewer"
    APPROVER = "approver"


class ReviewersError(InputError):
    """The reviewers file or a reviewer entry is unusable; the message says why."""


@dataclass(frozen=True, slots=True)
class Reviewer:
    """One entry of the reviewers file."""

    name: str
    role: Role
    token_sha256: str | None  # None: signs in only through the trusted proxy header

    @property
    def may_decide(self) -> bool:
        return self.role is Role.APPROVER

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": str(self.role), "token_sha256": self.token_sha256}


def check_name(name: Any) -> str:
    """A reviewer name: 1-64 letters, digits and ``._@+-``, starting with a letter or digit."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ReviewersError(
            "a reviewer name is 1 to 64 letters, digits or ._@+- (starting with a letter or digit)"
        )
    return name


def check_role(role: Any) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise ReviewersError(f"role must be viewer or approver, not {str(role)[:32]!r}") from None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def load(path: Path) -> list[Reviewer]:
    """The reviewers in ``path``; a :class:`ReviewersError` naming the problem otherwise."""
    # Who may approve: refused when another user could have written it (agbom/_ownership.py).
    raw = read_trusted_file(path, "reviewers file", MAX_FILE_BYTES, ReviewersError)
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ReviewersError(f"reviewers file {path} is not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ReviewersError(f"reviewers file {path} is not an {FORMAT} document")
    entries = doc.get("reviewers")
    if not isinstance(entries, list) or len(entries) > MAX_REVIEWERS:
        raise ReviewersError(f"reviewers file {path}: 'reviewers' must be a list (at most 1000)")
    out: list[Reviewer] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ReviewersError(f"reviewers file {path}: entry {index} is not an object")
        try:
            name = check_name(entry.get("name"))
            role = check_role(entry.get("role"))
        except ReviewersError as exc:
            raise ReviewersError(f"reviewers file {path}: entry {index}: {exc}") from None
        digest = entry.get("token_sha256")
        if digest is not None and (not isinstance(digest, str) or not _HEX64.fullmatch(digest)):
            raise ReviewersError(f"reviewers file {path}: entry {index}: bad token_sha256")
        if name in seen:
            raise ReviewersError(f"reviewers file {path}: {name} is listed twice")
        seen.add(name)
        out.append(Reviewer(name, role, digest))
    return out


def save(path: Path, reviewers: list[Reviewer]) -> None:
    """Write ``reviewers`` to ``path`` atomically, readable by its owner only."""
    doc = {"format": FORMAT, "reviewers": [r.to_json() for r in reviewers]}
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    write_private(path, data, prefix=".reviewers-")


def add(path: Path, name: str, role: Role, *, with_token: bool = True) -> str | None:
    """Add (or re-issue) reviewer ``name``; returns the new token, to be shown once."""
    check_name(name)
    reviewers = load(path) if path.exists() else []
    token = new_token() if with_token else None
    entry = Reviewer(name, role, None if token is None else hash_token(token))
    others = [r for r in reviewers if r.name != name]
    if len(others) >= MAX_REVIEWERS:
        raise ReviewersError(f"reviewers file {path} already lists {MAX_REVIEWERS} reviewers")
    save(path, [*others, entry])
    return token


def remove(path: Path, name: str) -> bool:
    reviewers = load(path)
    kept = [r for r in reviewers if r.name != name]
    if len(kept) == len(reviewers):
        return False
    save(path, kept)
    return True


class ReviewerDirectory:
    """The reviewers file as a running server sees it: re-read when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self._by_name: dict[str, Reviewer] = {}
        self.refresh()

    def refresh(self) -> None:
        """Re-read the file when its inode, size or mtime changed. A file that became
        unreadable or invalid empties the directory (fail closed) until it is fixed."""
        try:
            st = self.path.stat()
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp == self._stamp and stamp is not None:
            return
        self._stamp = stamp
        try:
            self._by_name = {r.name: r for r in load(self.path)}
        except ReviewersError:
            self._by_name = {}

    def by_name(self, name: str) -> Reviewer | None:
        self.refresh()
        return self._by_name.get(name)

    def by_token(self, token: str) -> Reviewer | None:
        """The reviewer whose token this is; every entry is compared in constant time."""
        self.refresh()
        if not token or len(token) > MAX_TOKEN:
            return None
        digest = hash_token(token)
        found = None
        for reviewer in self._by_name.values():
            if reviewer.token_sha256 is not None and hmac.compare_digest(
                reviewer.token_sha256, digest
            ):
                found = reviewer
        return found
