"""The agbom skill folder digest (``agbom-skill-digest/1``): one SHA-256 over a whole folder.

An Agent Skill is a folder (``SKILL.md`` plus scripts, references and assets), and an approval
must pin all of it: a changed ``scripts/run.sh`` under an unchanged ``SKILL.md`` is a different
skill. The algorithm is specified step by step in ``docs/skills.md`` ("Skill folder digest") so
that agent frameworks can reproduce it; in short:

1. Walk the folder. Regular files and symbolic links are entries; directories only contribute
   the entries below them (an empty directory changes nothing). Entries named ``.git`` (a
   repository or a worktree pointer) are skipped and reported in :attr:`SkillDigest.skipped`.
2. A symbolic link is hashed as a link (its target text, never followed). It must be relative
   and resolve inside the folder; anything else, and FIFOs, sockets and devices, is refused.
3. Sort entries by the UTF-8 bytes of their relative POSIX path.
4. Write one manifest line per entry:
   ``KIND SP EXEC SP SIZE SP SHA256 SP PATHLEN SP PATH LF`` where KIND is ``f`` (file) or
   ``l`` (link), EXEC is ``x`` when the owner-executable bit is set and ``-`` otherwise (always
   ``-`` for links), SIZE the content length in bytes, SHA256 the lowercase hex digest of the
   content (a link's content is its target text), PATHLEN the byte length of PATH.
5. The digest is SHA-256 of ``agbom-skill-digest/1 LF`` followed by the manifest lines.

The length prefix on PATH makes the framing unambiguous even for names holding spaces or
newlines. This module is pure: no global state, nothing written.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agbom.errors import AgbomError

ALGORITHM = "sha256"
FORMAT_TAG = b"agbom-skill-digest/1\n"

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_FILES = 10_000
DEFAULT_MAX_DEPTH = 32
_CHUNK = 1024 * 1024

# Names skipped at any depth; reported, never silently dropped.
SKIPPED_NAMES = frozenset({".git"})


class SkillDigestError(AgbomError):
    """The folder cannot be digested; the message names the offending file."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One entry of a digested skill folder."""

    path: str  # relative POSIX path inside the folder
    size: int  # bytes of content (a link's content is its target text)
    executable: bool  # owner-executable bit (always False for links)
    sha256: str  # lowercase hex of the content
    symlink: bool = False


@dataclass(frozen=True, slots=True)
class SkillDigest:
    """The result: the folder digest and the entries it covers, in digest order."""

    algorithm: str
    value: str
    files: tuple[SkillFile, ...]
    skipped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The wire form used by ``agbom skills digest --format json`` and scan reports."""
        return {
            "algorithm": self.algorithm,
            "value": self.value,
            "files": [
                {
                    "path": f.path,
                    "size": f.size,
                    "executable": f.executable,
                    "sha256": f.sha256,
                    **({"symlink": True} if f.symlink else {}),
                }
                for f in self.files
            ],
            "skipped": list(self.skipped),
        }


def _hash_file(full: str, rel: str, size_hint: int, max_file_bytes: int) -> tuple[int, str]:
    """Hash one regular file, refusing it when it is (or grows) over the size limit."""
    if size_hint > max_file_bytes:
        raise SkillDigestError(
            f"{rel}: {size_hint} bytes is over the {max_file_bytes} byte limit for skill files"
        )
    digest = hashlib.sha256()
    total = 0
    try:
        # O_NOFOLLOW: the entry was a regular file when listed; refuse a swap to a link.
        fd = os.open(
            full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError as exc:
        raise SkillDigestError(f"{rel}: cannot open: {exc.strerror or exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkillDigestError(f"{rel}: is no longer a regular file")
        while chunk := os.read(fd, _CHUNK):
            total += len(chunk)
            if total > max_file_bytes:
                raise SkillDigestError(
                    f"{rel}: over the {max_file_bytes} byte limit for skill files"
                )
            digest.update(chunk)
    except OSError as exc:
        raise SkillDigestError(f"{rel}: cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return total, digest.hexdigest()


def _inside(root_real: str, target: str) -> bool:
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


def digest_skill_folder(
    path: Path,
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_files: int = DEFAULT_MAX_FILES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> SkillDigest:
    """Compute the ``agbom-skill-digest/1`` digest of the skill folder ``path``.

    Raises :class:`SkillDigestError` naming the file for a symlink that is absolute or leaves
    the folder, a FIFO, socket or device, a file over ``max_file_bytes``, more than
    ``max_files`` entries, or nesting deeper than ``max_depth``.
    """
    root = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.stat(root).st_mode):
            raise SkillDigestError(f"{path}: not a folder")
    except OSError as exc:
        raise SkillDigestError(f"{path}: {exc.strerror or exc}") from exc

    root_real: str | None = None  # resolved lazily: only links need it
    entries: list[tuple[bytes, SkillFile]] = []
    skipped: list[str] = []
    stack: list[tuple[str, str, int]] = [(root, "", 0)]
    while stack:
        folder, prefix, depth = stack.pop()
        if depth > max_depth:
            raise SkillDigestError(f"{prefix or '.'}: nested deeper than {max_depth} folders")
        try:
            with os.scandir(folder) as listing:
                items = list(listing)
        except OSError as exc:
            raise SkillDigestError(f"{prefix or '.'}: cannot list: {exc.strerror or exc}") from exc
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
                target = os.readlink(item.path)
                if os.path.isabs(target):
                    raise SkillDigestError(
                        f"{rel}: symbolic link to an absolute path ({target}) is refused"
                    )
                if root_real is None:
                    root_real = os.path.realpath(root)
                resolved = os.path.realpath(os.path.join(os.path.dirname(item.path), target))
                if not _inside(root_real, resolved):
                    raise SkillDigestError(f"{rel}: symbolic link leaves the skill folder")
                data = os.fsencode(target)
                entry = SkillFile(
                    path=rel,
                    size=len(data),
                    executable=False,
                    sha256=hashlib.sha256(data).hexdigest(),
                    symlink=True,
                )
            elif stat.S_ISREG(mode):
                size, sha = _hash_file(item.path, rel, st.st_size, max_file_bytes)
                entry = SkillFile(
                    path=rel, size=size, executable=bool(mode & stat.S_IXUSR), sha256=sha
                )
            else:
                kind = (
                    "FIFO"
                    if stat.S_ISFIFO(mode)
                    else "socket"
                    if stat.S_ISSOCK(mode)
                    else "device file"
                )
                raise SkillDigestError(f"{rel}: {kind} is refused in a skill folder")
            entries.append((os.fsencode(rel), entry))

    entries.sort(key=lambda pair: pair[0])
    manifest = hashlib.sha256(FORMAT_TAG)
    for path_bytes, entry in entries:
        kind_tag = b"l" if entry.symlink else b"f"
        exe = b"x" if entry.executable else b"-"
        manifest.update(
            b"%s %s %d %s %d %s\n"
            % (kind_tag, exe, entry.size, entry.sha256.encode(), len(path_bytes), path_bytes)
        )
    return SkillDigest(
        algorithm=ALGORITHM,
        value=manifest.hexdigest(),
        files=tuple(entry for _, entry in entries),
        skipped=tuple(sorted(skipped)),
    )


__all__ = [
    "ALGORITHM",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "SkillDigest",
    "SkillDigestError",
    "SkillFile",
    "digest_skill_folder",
]
