"""The agbom skill folder digest (``agbom-skill-digest/2``): one SHA-256 over a whole folder.

An Agent Skill is a folder (``SKILL.md`` plus scripts, references and assets), and an approval
must pin all of it: a changed ``scripts/run.sh`` under an unchanged ``SKILL.md`` is a different
skill. The algorithm is specified step by step in ``docs/skills.md`` ("Skill folder digest") so
that agent frameworks can reproduce it; in short:

1. Walk the folder. Regular files and symbolic links are entries; directories only contribute
   the entries below them (an empty directory changes nothing). Entries named ``.git`` (a
   repository or a worktree pointer) are skipped and reported in :attr:`SkillDigest.skipped`.
2. A symbolic link is *followed*: it must be relative, stay inside the folder at every step
   and end at a regular file there (``.git`` included: nothing a link reaches is skipped). Its
   entry commits to that file's content and executable bit and to where it points. Links to
   folders, links that loop or point at nothing, FIFOs, sockets and devices are refused, and
   so are two names in one folder that differ only by case (one hides the other on a
   case-insensitive file system).
3. Sort entries by the UTF-8 bytes of their relative POSIX path.
4. Write one manifest line per entry:
   ``f SP EXEC SP SIZE SP SHA256 SP PATHLEN SP PATH LF`` for a file and
   ``l SP EXEC SP SIZE SP SHA256 SP PATHLEN SP PATH SP TARGETLEN SP TARGET LF`` for a link,
   where EXEC is ``x`` when the owner-executable bit is set and ``-`` otherwise, SIZE and
   SHA256 the length and lowercase hex digest of the (target's) content, PATHLEN the byte
   length of PATH and TARGET the folder-relative path of the file the link ends at.
5. The digest is SHA-256 of a header line followed by the manifest lines. The header is
   ``agbom-skill-digest/2 LF`` when the manifest holds a link and ``agbom-skill-digest/1 LF``
   when it holds only files: a folder without links digests exactly as it did under ``/1``, so
   its approvals stay valid, and a folder with links can never collide with a ``/1`` value.

The length prefixes make the framing unambiguous even for names holding spaces or newlines.
Files with more than one hard link are digested like any file and listed in
:attr:`SkillDigest.hardlinked`: their content can be changed through a name outside the
folder. This module is pure: no global state, nothing written.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import stat
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agbom.errors import AgbomError

ALGORITHM = "sha256"
FORMAT = "agbom-skill-digest/2"
FORMAT_V1 = "agbom-skill-digest/1"
_HEADER_V1 = b"agbom-skill-digest/1\n"
_HEADER_V2 = b"agbom-skill-digest/2\n"

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_FILES = 10_000
DEFAULT_MAX_DEPTH = 32
_CHUNK = 1024 * 1024

# Names skipped at any depth when walking; reported, never silently dropped. A link into
# them is still followed and its target digested.
SKIPPED_NAMES = frozenset({".git"})


SCRIPT_SUFFIXES = frozenset(
    {".sh", ".bash", ".zsh", ".fish", ".ps1", ".psm1", ".bat", ".cmd", ".py", ".js", ".mjs",
     ".cjs", ".ts", ".rb", ".pl", ".php", ".lua"}
)  # fmt: skip


def is_script(path: str, executable: bool) -> bool:
    """Whether a skill file is code a reviewer must read: executable, under a ``scripts/``
    folder, or named as a script."""
    if executable or path.startswith("scripts/") or "/scripts/" in path:
        return True
    return os.path.splitext(path)[1].lower() in SCRIPT_SUFFIXES


def review_order(path: str, size: int, executable: bool) -> tuple[int, int, int, str]:
    """The order in which a skill's files matter to a reviewer, for whoever can carry or
    show only some of them: SKILL.md first (the folder's own before a nested skill's), then
    scripts, then the rest; small before large within each."""
    if path == "SKILL.md" or path.endswith("/SKILL.md"):
        tier = 0
    elif is_script(path, executable):
        tier = 1
    else:
        tier = 2
    return tier, path.count("/") if tier == 0 else 0, size, path


class SkillDigestError(AgbomError):
    """The folder cannot be digested; the message names the offending file."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One entry of a digested skill folder."""

    path: str  # relative POSIX path inside the folder
    size: int  # bytes of content (a link's: its target file's)
    executable: bool  # owner-executable bit (a link's: its target file's)
    sha256: str  # lowercase hex of the content
    symlink: bool = False
    target: str | None = None  # a link's target file, relative to the folder
    link_text: str | None = None  # a link's target text as stored (for the /1 value)


@dataclass(frozen=True, slots=True)
class SkillDigest:
    """The result: the folder digest and the entries it covers, in digest order."""

    algorithm: str
    value: str
    files: tuple[SkillFile, ...]
    skipped: tuple[str, ...] = ()
    hardlinked: tuple[str, ...] = ()
    format: str = FORMAT
    # The agbom-skill-digest/1 value of the same folder when it differs from ``value`` (the
    # folder holds links); an approval of that value pinned the link text, not the code.
    v1_value: str | None = None

    def to_json(self) -> dict[str, object]:
        """The wire form used by ``agbom skills digest --format json`` and scan reports."""
        return {
            "algorithm": self.algorithm,
            "value": self.value,
            "format": self.format,
            "files": [
                {
                    "path": f.path,
                    "size": f.size,
                    "executable": f.executable,
                    "sha256": f.sha256,
                    **({"symlink": True, "target": f.target} if f.symlink else {}),
                }
                for f in self.files
            ],
            "skipped": list(self.skipped),
            "hardlinked": list(self.hardlinked),
            **({"v1_value": self.v1_value} if self.v1_value is not None else {}),
        }


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def open_skill_file(full: str | os.PathLike[str]) -> tuple[int, os.stat_result] | None:
    """``(fd, stat)`` of a skill folder's regular file, opened for reading, or None when the
    name is now something else. Every read of a skill folder opens its files here:

    - ``O_NOFOLLOW``: a file swapped for a link since it was listed is not followed;
    - ``O_NONBLOCK``: a file swapped for a FIFO does not wait for a writer (an open for
      reading blocks until one comes), nor a device for its hardware;
    - the type checked with ``fstat`` on what was opened, not on the name before.

    Raises OSError when the name cannot be opened; the caller owns the descriptor.
    """
    fd = os.open(full, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st


@dataclass(slots=True)
class ReadBudget:
    """What one digest may read in all: bytes actually read (not the sizes the folder
    claims, which a sparse file makes cheap to inflate), entries listed, and a deadline on
    :func:`time.monotonic`. A hook or a server reading a folder someone else controls sets
    it; ``agbom scan`` and ``agbom skills digest`` read the folders they are given whole."""

    max_bytes: int | None = None
    max_entries: int | None = None
    deadline: float | None = None
    read: int = 0
    listed: int = 0

    def take(self, size: int, rel: str) -> None:
        self.read += size
        if self.max_bytes is not None and self.read > self.max_bytes:
            raise SkillDigestError(
                f"{rel}: the folder holds more than the {self.max_bytes} bytes read at most"
            )
        self.check_time(rel)

    def count(self, rel: str) -> None:
        self.listed += 1
        if self.max_entries is not None and self.listed > self.max_entries:
            raise SkillDigestError(
                f"{rel}: the folder lists more than the {self.max_entries} entries read at most"
            )

    def check_time(self, rel: str) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SkillDigestError(f"{rel}: reading the folder took longer than allowed")


def _hash_file(
    full: str,
    rel: str,
    size_hint: int,
    max_file_bytes: int,
    expect: tuple[int, int],
    budget: ReadBudget,
) -> tuple[int, str]:
    """Hash one regular file, refusing it when it is (or grows) over the size limit.

    ``expect`` is the (device, inode) seen when the file was listed: a swap in between is
    refused rather than hashed.
    """
    if size_hint > max_file_bytes:
        raise SkillDigestError(
            f"{rel}: {size_hint} bytes is over the {max_file_bytes} byte limit for skill files"
        )
    digest = hashlib.sha256()
    total = 0
    try:
        opened = open_skill_file(full)
    except OSError as exc:
        raise SkillDigestError(f"{rel}: cannot open: {exc.strerror or exc}") from exc
    if opened is None:
        raise SkillDigestError(f"{rel}: changed while it was being digested")
    fd, st = opened
    try:
        if (st.st_dev, st.st_ino) != expect:
            raise SkillDigestError(f"{rel}: changed while it was being digested")
        while chunk := os.read(fd, _CHUNK):
            total += len(chunk)
            if total > max_file_bytes:
                raise SkillDigestError(
                    f"{rel}: over the {max_file_bytes} byte limit for skill files"
                )
            budget.take(len(chunk), rel)
            digest.update(chunk)
    except OSError as exc:
        raise SkillDigestError(f"{rel}: cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return total, digest.hexdigest()


def _inside(root_real: str, target: str) -> bool:
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


def _fold(name: str) -> str:
    """The form under which a case-insensitive file system (APFS, NTFS) compares names."""
    if name.isascii():
        return name.lower()  # the same as below for ASCII, at a fraction of the cost
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device file"


class _Walk:
    """One digest computation: the limits, the folder's real path, and what was hashed."""

    def __init__(self, root: str, max_file_bytes: int, budget: ReadBudget) -> None:
        self.root = root
        self.budget = budget
        self._root_real: str | None = None  # resolved lazily: only links need it
        self.max_file_bytes = max_file_bytes
        # (device, inode) -> (size, sha256): each file is read once however many names
        # (links, hard links) reach it, so links to one big file cost one read.
        self.hashed: dict[tuple[int, int], tuple[int, str]] = {}
        self.hardlinked: set[str] = set()

    @property
    def root_real(self) -> str:
        if self._root_real is None:
            self._root_real = os.path.realpath(self.root)
        return self._root_real

    def file(self, full: str, rel: str, st: os.stat_result) -> tuple[int, str]:
        key = (st.st_dev, st.st_ino)
        known = self.hashed.get(key)
        if known is None:
            known = _hash_file(full, rel, st.st_size, self.max_file_bytes, key, self.budget)
            self.hashed[key] = known
        if st.st_nlink > 1:
            self.hardlinked.add(rel)
        return known

    def link(self, full: str, rel: str) -> SkillFile:
        try:
            text = os.readlink(full)
        except OSError as exc:
            raise SkillDigestError(f"{rel}: cannot read link: {exc.strerror or exc}") from exc
        if os.path.isabs(text):
            raise SkillDigestError(f"{rel}: symbolic link to an absolute path ({text}) is refused")
        # Every hop must stay inside: the link text itself, and where it finally resolves
        # (a hop through a link outside the folder would let someone else retarget it).
        lexical = posixpath.normpath(posixpath.join(posixpath.dirname(rel), text))
        if lexical == ".." or lexical.startswith("../"):
            raise SkillDigestError(f"{rel}: symbolic link leaves the skill folder")
        try:
            resolved = os.path.realpath(full, strict=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SkillDigestError(f"{rel}: symbolic link loops") from exc
            if exc.errno == errno.ENOENT:
                raise SkillDigestError(f"{rel}: symbolic link points at nothing") from exc
            raise SkillDigestError(f"{rel}: cannot follow link: {exc.strerror or exc}") from exc
        if not _inside(self.root_real, resolved):
            raise SkillDigestError(f"{rel}: symbolic link leaves the skill folder")
        target = os.path.relpath(resolved, self.root_real).replace(os.sep, "/")
        try:
            st = os.stat(resolved, follow_symlinks=False)
        except OSError as exc:
            raise SkillDigestError(f"{rel}: cannot follow link: {exc.strerror or exc}") from exc
        if stat.S_ISDIR(st.st_mode):
            raise SkillDigestError(
                f"{rel}: symbolic link to a folder ({target}) is refused; copy the folder"
            )
        if not stat.S_ISREG(st.st_mode):
            raise SkillDigestError(f"{rel}: symbolic link to a {_kind(st.st_mode)} is refused")
        size, sha = self.file(resolved, target, st)
        return SkillFile(
            path=rel,
            size=size,
            executable=bool(st.st_mode & stat.S_IXUSR),
            sha256=sha,
            symlink=True,
            target=target,
            link_text=text,
        )


def _manifest(entries: list[tuple[bytes, SkillFile]]) -> str:
    has_links = any(entry.symlink for _, entry in entries)
    manifest = hashlib.sha256(_HEADER_V2 if has_links else _HEADER_V1)
    for path_bytes, entry in entries:
        exe = b"x" if entry.executable else b"-"
        line = b"%s %s %d %s %d %s" % (
            b"l" if entry.symlink else b"f",
            exe,
            entry.size,
            entry.sha256.encode(),
            len(path_bytes),
            path_bytes,
        )
        if entry.symlink:
            target = os.fsencode(entry.target or "")
            line += b" %d %s" % (len(target), target)
        manifest.update(line + b"\n")
    return manifest.hexdigest()


def digest_of_files(files: Iterable[SkillFile]) -> str:
    """The ``agbom-skill-digest/2`` value (hex) of these entries of a digested folder, as
    :func:`digest_skill_folder` computes it over a whole folder: used to digest a folder less
    a detached signature that cannot sign itself (agbom/scan/skill_sigstore.py)."""
    entries = sorted(((os.fsencode(f.path), f) for f in files), key=lambda pair: pair[0])
    return _manifest(entries)


def _manifest_v1(entries: list[tuple[bytes, SkillFile]]) -> str:
    """What ``agbom-skill-digest/1`` gave: a link hashed as its target text, never followed."""
    manifest = hashlib.sha256(_HEADER_V1)
    for path_bytes, entry in entries:
        if entry.symlink:
            data = os.fsencode(entry.link_text or "")
            kind, exe, size, sha = b"l", b"-", len(data), hashlib.sha256(data).hexdigest()
        else:
            kind, exe = b"f", b"x" if entry.executable else b"-"
            size, sha = entry.size, entry.sha256
        manifest.update(
            b"%s %s %d %s %d %s\n" % (kind, exe, size, sha.encode(), len(path_bytes), path_bytes)
        )
    return manifest.hexdigest()


def digest_skill_folder(
    path: Path,
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_files: int = DEFAULT_MAX_FILES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    budget: ReadBudget | None = None,
) -> SkillDigest:
    """Compute the ``agbom-skill-digest/2`` digest of the skill folder ``path``.

    Raises :class:`SkillDigestError` naming the file for a symbolic link that is absolute,
    leaves the folder, loops, points at nothing or at a folder; a FIFO, socket or device; two
    names differing only by case; a file over ``max_file_bytes``; more than ``max_files``
    entries; nesting deeper than ``max_depth``; or a read past ``budget``.
    """
    budget = budget if budget is not None else ReadBudget()
    root = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.stat(root).st_mode):
            raise SkillDigestError(f"{path}: not a folder")
    except OSError as exc:
        raise SkillDigestError(f"{path}: {exc.strerror or exc}") from exc

    walk = _Walk(root, max_file_bytes, budget)
    entries: list[tuple[bytes, SkillFile]] = []
    skipped: list[str] = []
    stack: list[tuple[str, str, int]] = [(root, "", 0)]
    while stack:
        folder, prefix, depth = stack.pop()
        if depth > max_depth:
            raise SkillDigestError(f"{prefix or '.'}: nested deeper than {max_depth} folders")
        budget.check_time(prefix or ".")
        try:
            with os.scandir(folder) as listing:
                items = []
                for item in listing:
                    budget.count(prefix + item.name)
                    items.append(item)
        except OSError as exc:
            raise SkillDigestError(f"{prefix or '.'}: cannot list: {exc.strerror or exc}") from exc
        folded: dict[str, str] = {}
        for item in items:
            other = folded.setdefault(_fold(item.name), item.name)
            if other != item.name:
                first, second = sorted((other, item.name))
                raise SkillDigestError(
                    f"{prefix}{second}: name differs from {prefix}{first} only by case "
                    "(one hides the other on a case-insensitive file system)"
                )
        for item in items:
            rel = prefix + item.name
            if item.name in SKIPPED_NAMES:
                skipped.append(rel)
                continue
            try:
                st = item.stat(follow_symlinks=False)
            except OSError as exc:
                raise SkillDigestError(f"{rel}: {exc.strerror or exc}") from exc
            mode = st.st_mode
            if stat.S_ISDIR(mode):
                stack.append((item.path, rel + "/", depth + 1))
                continue
            if len(entries) >= max_files:
                raise SkillDigestError(f"{rel}: the folder holds more than {max_files} files")
            if stat.S_ISLNK(mode):
                entry = walk.link(item.path, rel)
            elif stat.S_ISREG(mode):
                size, sha = walk.file(item.path, rel, st)
                entry = SkillFile(
                    path=rel, size=size, executable=bool(mode & stat.S_IXUSR), sha256=sha
                )
            else:
                raise SkillDigestError(f"{rel}: {_kind(mode)} is refused in a skill folder")
            entries.append((os.fsencode(rel), entry))

    entries.sort(key=lambda pair: pair[0])
    value = _manifest(entries)
    has_links = any(entry.symlink for _, entry in entries)
    return SkillDigest(
        algorithm=ALGORITHM,
        value=value,
        files=tuple(entry for _, entry in entries),
        skipped=tuple(sorted(skipped)),
        hardlinked=tuple(sorted(walk.hardlinked)),
        v1_value=_manifest_v1(entries) if has_links else None,
    )


__all__ = [
    "ALGORITHM",
    "ReadBudget",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "FORMAT",
    "FORMAT_V1",
    "SkillDigest",
    "SkillDigestError",
    "SkillFile",
    "digest_skill_folder",
    "is_script",
    "open_skill_file",
    "review_order",
]
