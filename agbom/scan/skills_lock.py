"""The ``skills`` installer's lock files: ``skills-lock.json`` (a project's) and
``~/.agents/.skill-lock.json`` (a user's), checked against the skill folders on disk.

The installer (npm package ``skills``) records one entry per installed skill, keyed by the
skill's name:

- the project lock (``version`` 1) has ``computedHash``: SHA-256 over the skill folder's
  regular files, each contributing its relative POSIX path and then its bytes, with no
  separator, in the order JavaScript's ``String.prototype.localeCompare`` gives their paths;
  folders named ``.git`` or ``node_modules`` are not walked and symbolic links are skipped;
- the user lock (``version`` 3) has ``skillFolderHash``: the git tree SHA-1 of the skill's
  folder in its source repository (40 hex digits), the same SHA-256 as above (64 digits, for
  other sources), or ``""`` (nothing recorded).

Neither is agbom's folder digest (``agbom-skill-digest/2``, :mod:`agbom.inventory.skill_digest`),
which also covers symbolic links, executable bits and ``node_modules``, frames each entry by
length, and orders by bytes; so both are computed, and each skill gets a ``skills_lock``
record beside its digest (``docs/skills.md``, "Skill lock files"). The hash is recomputed over
the *installed* folder: the installer hashes its source, then copies it leaving out
``metadata.json`` files and ``__pycache__`` / ``__pypackages__`` folders, so a source holding
those never matches its installed copy (reported as a mismatch: the copy is not what was
locked).

``localeCompare`` orders by the Unicode Collation Algorithm (ICU's root order, strength
tertiary). :func:`collation_key` reproduces it exactly for ASCII names (checked against Node
in tests/scan/test_skills_lock.py) and approximately for others (Latin letters with accents,
then other letters by code point): a folder with such names may be reported as not matching.
Everything read is bounded (:data:`MAX_LOCK_BYTES`, :data:`MAX_FILES`, :data:`MAX_FILE_BYTES`,
:data:`MAX_TOTAL_BYTES`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agbom.errors import InputError

PROJECT_LOCK = "skills-lock.json"
USER_LOCK = ".skill-lock.json"
MAX_LOCK_BYTES = 4 * 1024 * 1024
MAX_ENTRIES = 10_000
MAX_FILES = 10_000
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 32
_CHUNK = 1 << 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")

# How a lock entry's hash was computed.
INSTALLER_SHA256 = "skills-folder-sha256"  # computedHash, and 64-digit skillFolderHash
GIT_TREE = "git-tree-sha1"  # 40-digit skillFolderHash

# The rule fields the default pack matches (AGB-LOCK-006, AGB-LOCK-007).
STATUS_FIELD = "skills_lock_status"
RECORD_FIELD = "skills_lock"


class SkillsLockError(InputError):
    """A lock file of the ``skills`` installer cannot be used."""


# -- the installer's path order ----------------------------------------------------------------

# Printable ASCII in the order localeCompare puts them, one group per primary weight (a
# letter's two cases share one; lower case comes first at the tertiary level). Whitespace
# controls come before the space; the other controls are ignorable.
_ASCII_ORDER = (
    "\t", "\n", "\x0b", "\x0c", "\r", " ", "_", "-", ",", ";", ":", "!", "?", ".", "'", '"',
    "(", ")", "[", "]", "{", "}", "@", "*", "/", "\\", "&", "#", "%", "`", "^", "+", "<",
    "=", ">", "|", "~", "$", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
    *"abcdefghijklmnopqrstuvwxyz",
)  # fmt: skip
# Weights: ASCII punctuation and symbols by their rank; other punctuation, symbols and
# spaces after them by code point; then digits and ASCII letters by rank; then other letters
# by code point (an approximation of ICU's order of scripts).
_SYMBOLS = 0x100
_ALPHANUMERIC = 0x200000
_OTHER_LETTERS = 0x300000
_DIGITS_AT = _ASCII_ORDER.index("0")
_PRIMARY = {
    char: rank if rank < _DIGITS_AT else _ALPHANUMERIC + rank
    for rank, char in enumerate(_ASCII_ORDER)
}


# Latin letters with a stroke have no decomposition; the collation sorts each after its base
# letter at the accent level (ø between o and p).
_STROKED = {
    "ø": ("o", 0x338), "Ø": ("O", 0x338), "đ": ("d", 0x335), "Đ": ("D", 0x335),
    "ł": ("l", 0x337), "Ł": ("L", 0x337), "ħ": ("h", 0x335), "Ħ": ("H", 0x335),
    "ŧ": ("t", 0x335), "Ŧ": ("T", 0x335),
}  # fmt: skip


def _primary(char: str) -> int | None:
    """The primary weight of one case-folded character (``None``: ignorable)."""
    known = _PRIMARY.get(char)
    if known is not None:
        return known
    category = unicodedata.category(char)
    if category in ("Cc", "Cf"):
        return None
    if category == "Nd":
        return _ALPHANUMERIC + _DIGITS_AT + unicodedata.digit(char, 0)
    if category[0] in "PSZ":
        return _SYMBOLS + ord(char)
    return _OTHER_LETTERS + ord(char)


def collation_key(text: str) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...],
                                      tuple[int, ...], str]:  # fmt: skip
    """A sort key ordering strings as ``a.localeCompare(b)`` does in Node (ICU root
    collation, tertiary strength): primary weights (letters without case or accents), then
    accents, then case (lower first), then code points for what ICU calls equal."""
    primaries: list[int] = []
    accents: list[tuple[int, ...]] = []
    cases: list[int] = []
    for char in unicodedata.normalize("NFD", text):
        if char in _STROKED:  # a letter with a stroke sorts as its base letter, accented
            char, mark = _STROKED[char]
            upper = char != char.lower()
            primaries.append(_PRIMARY[char.lower()])
            accents.append((mark,))
            cases.append(1 if upper else 0)
            continue
        if unicodedata.combining(char):
            if accents:
                accents[-1] = (*accents[-1], ord(char))
            continue
        upper = char != char.lower()
        for folded in char.casefold():
            weight = _primary(folded)
            if weight is None:
                continue
            primaries.append(weight)
            accents.append(())
            cases.append(1 if upper else 0)
    return tuple(primaries), tuple(accents), tuple(cases), text


# -- the two hashes -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _File:
    path: str  # relative POSIX path
    full: str
    size: int
    executable: bool


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError as exc:
        raise SkillsLockError(f"{folder}: cannot list: {exc.strerror or exc}") from None


def _installer_files(root: str) -> list[_File]:
    """The files ``computedHash`` covers: regular files, not below ``.git`` or
    ``node_modules`` folders; links (to files or folders) are skipped."""
    out: list[_File] = []
    total = 0
    stack: list[tuple[str, str, int]] = [(root, "", 0)]
    while stack:
        folder, prefix, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SkillsLockError(f"{prefix or '.'}: nested deeper than {MAX_DEPTH} folders")
        for entry in _listing(folder):
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in (".git", "node_modules"):
                    stack.append((entry.path, rel + "/", depth + 1))
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            total += st.st_size
            if len(out) >= MAX_FILES or st.st_size > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES:
                raise SkillsLockError(f"{rel}: the folder is over the limits for hashing")
            out.append(_File(rel, entry.path, st.st_size, bool(st.st_mode & stat.S_IXUSR)))
    return out


def _chunks(full: str, rel: str) -> Iterator[bytes]:
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise SkillsLockError(f"{rel}: cannot open: {exc.strerror or exc}") from None
    read = 0
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            read += len(chunk)
            if read > MAX_FILE_BYTES:
                raise SkillsLockError(f"{rel}: grew over the limit while being hashed")
            yield chunk


def _text(rel: str) -> bytes:
    """A path as Node hands it to the hash: UTF-8, undecodable bytes as U+FFFD."""
    return os.fsencode(rel).decode("utf-8", "replace").encode("utf-8")


def installer_hash(folder: Path) -> str:
    """The ``skills`` installer's ``computedHash`` of ``folder`` (lowercase hex)."""
    files = _installer_files(os.fspath(folder))
    files.sort(key=lambda f: collation_key(_text(f.path).decode("utf-8")))
    digest = hashlib.sha256()
    for item in files:
        digest.update(_text(item.path))
        for chunk in _chunks(item.full, item.path):
            digest.update(chunk)
    return digest.hexdigest()


def git_tree_hash(folder: Path) -> str:
    """The git tree SHA-1 ``folder`` would have if committed as it is (modes 100644,
    100755, 120000 for links; folders holding no file are left out, as git does)."""
    budget = {"files": 0, "bytes": 0}

    def tree(path: str, rel: str, depth: int) -> bytes | None:
        if depth > MAX_DEPTH:
            raise SkillsLockError(f"{rel or '.'}: nested deeper than {MAX_DEPTH} folders")
        rows: list[tuple[bytes, bytes, bytes]] = []  # (sort name, mode + name, sha)
        for entry in _listing(path):
            name = os.fsencode(entry.name)
            here = rel + entry.name
            if entry.name == ".git":
                continue
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                sub = tree(entry.path, here + "/", depth + 1)
                if sub is not None:
                    rows.append((name + b"/", b"40000 " + name, sub))
                continue
            budget["files"] += 1
            if stat.S_ISLNK(st.st_mode):
                body = os.fsencode(os.readlink(entry.path))
                mode = b"120000"
            elif stat.S_ISREG(st.st_mode):
                budget["bytes"] += st.st_size
                if budget["bytes"] > MAX_TOTAL_BYTES or st.st_size > MAX_FILE_BYTES:
                    raise SkillsLockError(f"{here}: the folder is over the limits for hashing")
                body = b"".join(_chunks(entry.path, here))
                mode = b"100755" if st.st_mode & stat.S_IXUSR else b"100644"
            else:
                continue
            if budget["files"] > MAX_FILES:
                raise SkillsLockError(f"{here}: the folder holds more than {MAX_FILES} files")
            blob = hashlib.sha1(b"blob %d\0" % len(body) + body, usedforsecurity=False)
            rows.append((name, mode + b" " + name, blob.digest()))
        if not rows:
            return None
        rows.sort(key=lambda row: row[0])
        body = b"".join(head + b"\0" + sha for _, head, sha in rows)
        return hashlib.sha1(b"tree %d\0" % len(body) + body, usedforsecurity=False).digest()

    top = tree(os.fspath(folder), "", 0)
    if top is None:  # git's empty tree
        return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    return top.hex()


# -- lock files ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LockEntry:
    """One skill of a lock file: its hash as recorded, and how it was computed."""

    name: str
    algorithm: str | None  # INSTALLER_SHA256, GIT_TREE, or None (nothing usable recorded)
    value: str
    source: str
    problem: str | None = None  # why the entry cannot be verified


@dataclass(frozen=True, slots=True)
class SkillsLock:
    """A lock file of the ``skills`` installer, and where its skills are installed."""

    path: Path
    scope: str  # "project" (skills-lock.json) or "user" (~/.agents/.skill-lock.json)
    root: Path  # the project folder, or the home folder
    entries: Mapping[str, LockEntry]

    def entry_for(self, *names: str) -> LockEntry | None:
        """The entry of a skill known by any of ``names`` (its folder name, its frontmatter
        name): exact key first, then the installer's folder name for a key."""
        for name in names:
            if name in self.entries:
                return self.entries[name]
        for key, entry in self.entries.items():
            if sanitized(key) in names:
                return entry
        return None


def sanitized(name: str) -> str:
    """The folder name the installer gives a skill called ``name``."""
    lowered = re.sub(r"[^a-z0-9._]+", "-", name.lower())
    return re.sub(r"^[.\-]+|[.\-]+$", "", lowered)[:255] or "unnamed-skill"


def lock_scope(path: Path) -> str | None:
    """``project``, ``user`` or ``None``: which lock file ``path`` is, by its name."""
    if path.name == PROJECT_LOCK:
        return "project"
    if path.name == USER_LOCK:
        return "user"
    return None


def is_skills_lock(path: Path) -> bool:
    """Whether ``path`` is named as one of the installer's lock files."""
    return lock_scope(path) is not None


def _entry(name: str, raw: Mapping[str, Any], field: str) -> LockEntry:
    source = raw.get("source")
    source_text = source[:2048] if isinstance(source, str) else ""
    value = raw.get(field)
    if not isinstance(value, str):
        return LockEntry(name, None, "", source_text, f"no {field} recorded")
    lowered = value.strip().lower()
    if _HEX64.match(lowered):
        return LockEntry(name, INSTALLER_SHA256, lowered, source_text)
    if field == "skillFolderHash" and _HEX40.match(lowered):
        return LockEntry(name, GIT_TREE, lowered, source_text)
    problem = f"{field} is empty" if not lowered else f"{field} is not a hash agbom knows"
    return LockEntry(name, None, lowered[:80], source_text, problem)


def parse_skills_lock(data: bytes, path: Path) -> SkillsLock:
    """A lock file's entries; a malformed one is a :class:`SkillsLockError` naming it."""
    scope = lock_scope(path) or "project"
    if len(data) > MAX_LOCK_BYTES:
        raise SkillsLockError(f"{path}: larger than {MAX_LOCK_BYTES} bytes")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SkillsLockError(f"{path}: not valid JSON ({exc.msg})") from None
    skills = doc.get("skills") if isinstance(doc, Mapping) else None
    version = doc.get("version") if isinstance(doc, Mapping) else None
    if not isinstance(skills, Mapping) or type(version) is not int:
        raise SkillsLockError(f"{path}: not a skills lock file (no 'version' and 'skills')")
    if len(skills) > MAX_ENTRIES:
        raise SkillsLockError(f"{path}: more than {MAX_ENTRIES} skills")
    # The installer ignores older versions of each file (it starts a new one), so do we.
    oldest = 1 if scope == "project" else 3
    if version < oldest:
        raise SkillsLockError(
            f"{path}: version {version} is older than the installer reads ({oldest})"
        )
    field = "computedHash" if scope == "project" else "skillFolderHash"
    entries = {
        str(name): _entry(str(name), raw if isinstance(raw, Mapping) else {}, field)
        for name, raw in skills.items()
    }
    if scope == "project":
        root = path.parent
    else:  # ~/.agents/.skill-lock.json; under $XDG_STATE_HOME/skills the home is unknown
        root = path.parent.parent if path.parent.name == ".agents" else path.parent
    return SkillsLock(path, scope, root, entries)


def read_skills_lock(path: Path) -> SkillsLock:
    """Read and parse a lock file (bounded)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_LOCK_BYTES + 1)
    except OSError as exc:
        raise SkillsLockError(f"{path}: {exc.strerror or 'cannot be read'}") from None
    return parse_skills_lock(data, path)


@functools.lru_cache(maxsize=64)
def _cached_lock(path: str, mtime_ns: int, size: int) -> SkillsLock | str:
    del mtime_ns, size  # part of the cache key only
    try:
        return read_skills_lock(Path(path))
    except SkillsLockError as exc:
        return str(exc)


# -- which lock governs a skill folder ----------------------------------------------------------


def _skill_places(root: Path) -> list[Path]:
    """The folders under ``root`` where the installer puts skills: ``.agents/skills`` and
    each hidden agent folder's ``skills`` (``.claude/skills``, ``.config/opencode/skills``).
    Eve's copies (``agent/skills``) are not among them: the installer rewrites their
    ``SKILL.md``, so no recorded hash can match them."""
    places = [root / ".agents" / "skills"]
    try:
        children = sorted(e.name for e in os.scandir(root) if e.name.startswith("."))
    except OSError:
        children = []
    for name in children:
        if name in (".agents", ".git"):
            continue
        places.append(root / name / "skills")
        if name == ".config":
            try:
                places.extend(
                    root / name / sub / "skills" for sub in sorted(os.listdir(root / name))
                )
            except OSError:
                pass
    return [p for p in places if stat.S_ISDIR(_lstat_mode(p))]


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def _lock_roots(folder: Path) -> list[Path]:
    """The folders whose lock files may govern the skill in ``folder``: the one holding the
    agent folder (``ROOT/.claude/skills/NAME``, ``ROOT/.config/opencode/skills/NAME``)."""
    skills = folder.parent
    if skills.name != "skills":
        return []
    agent = skills.parent
    roots = [agent.parent] if agent.name.startswith(".") else []
    if agent.parent.name == ".config":
        roots.append(agent.parent.parent)
    return roots


def _within(path: Path, roots: Sequence[Path] | None) -> bool:
    if roots is None:
        return True
    real = os.path.realpath(path)
    return any(real == str(r) or real.startswith(str(r).rstrip(os.sep) + os.sep) for r in roots)


def governing_locks(folder: Path, roots: Sequence[Path] | None = None) -> list[SkillsLock | str]:
    """The lock files (or why each cannot be read) that cover the skill in ``folder``;
    with ``roots``, only lock files inside them."""
    found: list[SkillsLock | str] = []
    for root in _lock_roots(folder):
        for candidate in (root / PROJECT_LOCK, root / ".agents" / USER_LOCK):
            try:
                info = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and _within(candidate, roots):
                found.append(_cached_lock(str(candidate), info.st_mtime_ns, info.st_size))
    return found


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """One skill folder against one lock entry (or against none)."""

    status: str  # matches | mismatch | unlocked | unverifiable | missing
    lock: str  # the lock file
    name: str
    algorithm: str | None = None
    locked: str | None = None
    computed: str | None = None
    reason: str | None = None
    folder: str | None = None  # the installed copy checked (verify_lock)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "lock": self.lock, "entry": self.name}
        for key in ("algorithm", "locked", "computed", "reason", "folder"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def check_entry(
    lock: SkillsLock, entry: LockEntry, folder: Path, *, shown: str | None = None
) -> EntryCheck:
    """Whether ``folder`` still holds what ``entry`` locked (``shown``: the folder as
    reported, when the caller wants it in the result)."""
    where = str(lock.path)
    if entry.algorithm is None:
        return EntryCheck("unverifiable", where, entry.name, reason=entry.problem, folder=shown)
    try:
        if entry.algorithm == GIT_TREE:
            computed = git_tree_hash(folder)
        else:
            computed = installer_hash(folder)
    except SkillsLockError as exc:
        return EntryCheck("unverifiable", where, entry.name, entry.algorithm, entry.value,
                          reason=str(exc), folder=shown)  # fmt: skip
    if computed == entry.value:
        return EntryCheck("matches", where, entry.name, entry.algorithm, entry.value, computed,
                          folder=shown)  # fmt: skip
    return EntryCheck("mismatch", where, entry.name, entry.algorithm, entry.value, computed,
                      reason=_MISMATCH, folder=shown)  # fmt: skip


_MISMATCH = (
    "the installed files are not the ones the lock records (the installer leaves "
    "metadata.json, __pycache__ and __pypackages__ out of its copies: a skill whose source "
    "held them never matches)"
)


def status_for_folder(
    folder: Path, name: str, roots: Sequence[Path] | None = None
) -> dict[str, Any] | None:
    """The ``skills_lock`` record of the skill in ``folder`` (frontmatter name ``name``):
    ``None`` when no lock file covers its place; otherwise the first lock that names it,
    checked, else ``unlocked`` (or ``unverifiable`` when a covering lock is unreadable)."""
    locks = governing_locks(folder, roots)
    if not locks:
        return None
    problems = [item for item in locks if isinstance(item, str)]
    for lock in locks:
        if isinstance(lock, str):
            continue
        entry = lock.entry_for(folder.name, name)
        if entry is not None:
            return check_entry(lock, entry, folder).to_json()
    readable = [lock for lock in locks if not isinstance(lock, str)]
    if problems:
        return {"status": "unverifiable", "lock": "", "entry": name, "reason": problems[0]}
    return EntryCheck("unlocked", str(readable[0].path), name,
                      reason="the skill is installed where the lock covers but not in it"
                      ).to_json()  # fmt: skip


def _skill_name(folder: Path) -> str:
    """The frontmatter ``name`` of the skill in ``folder`` (its folder name when unread)."""
    try:
        with open(folder / "SKILL.md", "rb") as handle:
            head = handle.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return folder.name
    found = re.search(r"^name:[ \t]*['\"]?([^'\"\r\n]+?)['\"]?[ \t]*$", head, re.MULTILINE)
    return found.group(1) if found else folder.name


def verify_lock(lock: SkillsLock) -> list[EntryCheck]:
    """Every entry of ``lock`` against each installed copy of it (``missing`` when there is
    none), then each skill installed where the lock covers but not in it (``unlocked``),
    in name order. A folder reached twice (a link from an agent folder) counts once."""
    installed: dict[str, Path] = {}  # real path -> first place it was found
    for place in _skill_places(lock.root):
        for item in sorted(os.listdir(place)):
            folder = place / item
            if os.path.isfile(folder / "SKILL.md"):
                installed.setdefault(os.path.realpath(folder), folder)
    claimed: set[str] = set()
    results: list[EntryCheck] = []
    for key in sorted(lock.entries):
        entry = lock.entries[key]
        want = {key, sanitized(key)}
        copies = [(real, f) for real, f in installed.items() if f.name in want]
        if not copies:
            results.append(EntryCheck("missing", str(lock.path), key, entry.algorithm,
                                      entry.value or None,
                                      reason="no installed folder for this entry"))  # fmt: skip
        for real, folder in copies:
            claimed.add(real)
            results.append(check_entry(lock, entry, folder, shown=str(folder)))
    for real, folder in sorted(installed.items(), key=lambda pair: str(pair[1])):
        if real in claimed:
            continue
        name = _skill_name(folder)
        named = lock.entry_for(folder.name, name)
        if named is not None:  # installed under another folder name than the installer's
            results.append(check_entry(lock, named, folder, shown=str(folder)))
            continue
        results.append(EntryCheck("unlocked", str(lock.path), name, folder=str(folder),
                                  reason=f"installed at {folder} but not in the lock"))  # fmt: skip
    return results


__all__ = [
    "GIT_TREE",
    "INSTALLER_SHA256",
    "PROJECT_LOCK",
    "RECORD_FIELD",
    "STATUS_FIELD",
    "USER_LOCK",
    "EntryCheck",
    "LockEntry",
    "SkillsLock",
    "SkillsLockError",
    "check_entry",
    "collation_key",
    "git_tree_hash",
    "installer_hash",
    "is_skills_lock",
    "lock_scope",
    "parse_skills_lock",
    "read_skills_lock",
    "sanitized",
    "status_for_folder",
    "verify_lock",
]
