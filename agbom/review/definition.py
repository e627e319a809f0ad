"""What a registration carried for review: the SKILL.md text and the file list, bounded and
checked against the digest the approval pins.

``steps/skillRegister`` may carry ``definition.body`` ("for inspection only"). agbom reads two
shapes of it:

- a string: the SKILL.md text;
- an object ``{"skill_md": TEXT, "files": [FILE, ...]}`` where each FILE is an entry as
  ``agbom skills digest --format json`` prints it (``path``, ``size``, ``executable``,
  ``sha256``, and ``symlink``/``target`` for a link), optionally with the file's content:
  ``text`` (the file decoded as UTF-8), or ``binary: true`` / ``oversize: true`` when the
  sender did not carry a binary or too large file's content.

Anything else is ignored. The body is the agent's word, so the page shows whether it matches
the digest: a file list is *verified* when the ``agbom-skill-digest`` manifest built from it
hashes to the registration's digest, and the SKILL.md text is verified when its SHA-256 is
the one a verified list gives ``SKILL.md``. The page shows, compares and checks only what the
digest covers (:meth:`Definition.covered`): the texts of a verified list whose SHA-256 is the
one listed. A SKILL.md must be text: a body whose list marks it binary is refused
(:func:`skill_md_problem`), and so is the registration.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_SKILL_MD_CHARS = 256 * 1024
MAX_FILES = 2000
MAX_PATH = 1024
MAX_FILE_TEXT = 256 * 1024  # characters of one file's text kept for the page
MAX_TEXT_TOTAL = 1024 * 1024  # characters of file text kept per registration, in all
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class DefinitionFile:
    path: str
    size: int
    executable: bool
    sha256: str
    target: str | None = None  # a link's target file
    text: str | None = None  # the content as text, when the registration carried it
    binary: bool = False  # the sender marked it binary (no text carried)
    oversize: bool = False  # its text was over a bound (the sender's or this module's)
    mismatched: bool = False  # a text was carried that is not the listed file's (dropped)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "size": self.size,
            "executable": self.executable,
            "sha256": self.sha256,
        }
        if self.target is not None:
            out.update(symlink=True, target=self.target)
        if self.text is not None:
            out["text"] = self.text
        if self.binary:
            out["binary"] = True
        if self.oversize:
            out["oversize"] = True
        if self.mismatched:
            out["mismatched"] = True
        return out

    @property
    def text_matches(self) -> bool | None:
        """Whether the carried text's UTF-8 bytes hash to the listed SHA-256 (None: no text).
        A text that does not match is not the file the digest pins."""
        if self.text is None:
            return None
        data = self.text.encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).hexdigest() == self.sha256

    def without_text(self, *, oversize: bool, mismatched: bool = False) -> DefinitionFile:
        return DefinitionFile(
            self.path,
            self.size,
            self.executable,
            self.sha256,
            self.target,
            None,
            self.binary,
            self.oversize or oversize,
            self.mismatched or mismatched,
        )

    def with_text(self, text: str) -> DefinitionFile:
        return DefinitionFile(self.path, self.size, self.executable, self.sha256, self.target, text)


@dataclass(frozen=True, slots=True)
class Definition:
    """The reviewable part of a registration: either part may be missing."""

    skill_md: str | None
    files: tuple[DefinitionFile, ...] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "skill_md": self.skill_md,
            "files": None if self.files is None else [f.to_json() for f in self.files],
        }

    @property
    def empty(self) -> bool:
        return self.skill_md is None and self.files is None

    def covered(self, algorithm: str, value: str) -> Definition:
        """What of this body the digest ``algorithm:value`` covers, the only part the page
        shows, compares and checks: the file list when it verifies, each with its text only
        when that hashes to the listed SHA-256 (SKILL.md's from ``skill_md`` when the list
        carried none), and ``skill_md`` only as that SKILL.md's verified text. Nothing when
        the list is missing or does not verify: a text the digest does not cover is the
        agent's word, and must not be read as what an approval pins."""
        if self.files is None or verify(self, algorithm, value).files_match is not True:
            return Definition(None, None)
        files = []
        for f in self.files:
            if f.text is not None and f.text_matches is not True:
                f = f.without_text(oversize=False, mismatched=True)
            if (
                f.path == "SKILL.md"
                and f.text is None
                and f.target is None
                and self.skill_md is not None
                and _sha256(self.skill_md) == f.sha256
            ):
                f = f.with_text(self.skill_md)
            files.append(f)
        skill_md = next((f.text for f in files if f.path == "SKILL.md"), None)
        return Definition(skill_md, tuple(files))


def _file(raw: Any) -> DefinitionFile | None:
    if not isinstance(raw, Mapping):
        return None
    path, size, sha = raw.get("path"), raw.get("size"), raw.get("sha256")
    executable = raw.get("executable", False)
    if not isinstance(path, str) or not path or len(path) > MAX_PATH:
        return None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size < 2**53:
        return None
    if not isinstance(sha, str) or not _HEX64.fullmatch(sha) or not isinstance(executable, bool):
        return None
    target = raw.get("target") if raw.get("symlink") is True else None
    if target is not None and (not isinstance(target, str) or not target or len(target) > MAX_PATH):
        return None
    text = raw.get("text")
    binary = raw.get("binary") is True
    oversize = raw.get("oversize") is True
    if not isinstance(text, str) or binary or target is not None:
        text = None  # a link's content is its target's entry
    elif len(text) > MAX_FILE_TEXT:
        text, oversize = None, True
    return DefinitionFile(path, size, executable, sha, target, text, binary, oversize)


def _bounded_texts(files: list[DefinitionFile]) -> list[DefinitionFile]:
    """Texts kept until :data:`MAX_TEXT_TOTAL` characters, SKILL.md first, then scripts,
    small before large (:func:`agbom.inventory.skill_digest.review_order`: a pile of licence
    text must not push them out); the rest are kept as entries marked oversize (the list stays
    whole and in path order, so the digest check still holds)."""
    from agbom.inventory.skill_digest import review_order

    budget = MAX_TEXT_TOTAL
    kept: set[str] = set()
    for f in sorted(
        (f for f in files if f.text is not None),
        key=lambda f: review_order(f.path, f.size, f.executable),
    ):
        assert f.text is not None
        if len(f.text) <= budget:
            budget -= len(f.text)
            kept.add(f.path)
    return [f if f.text is None or f.path in kept else f.without_text(oversize=True) for f in files]


def skill_md_problem(body: Any) -> str | None:
    """Why a registration's body cannot stand, or None: a SKILL.md is what the model reads,
    so it must be text, never an entry marked binary (which the page cannot show)."""
    raw_files = body.get("files") if isinstance(body, Mapping) else None
    if not isinstance(raw_files, list):
        return None
    for raw in raw_files[: MAX_FILES + 1]:
        if isinstance(raw, Mapping) and raw.get("path") == "SKILL.md" and raw.get("binary") is True:
            return "its file list marks SKILL.md binary: a SKILL.md must be text"
    return None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def parse_body(body: Any) -> Definition | None:
    """The reviewable definition in a ``definition.body``, or None when it carries none.

    Bounded: SKILL.md text over 256 Ki characters, a list over 2,000 files or any malformed
    file entry drops that part (never the registration): a partial list would show a diff
    that is not the real one.
    """
    skill_md: Any = None
    files: tuple[DefinitionFile, ...] | None = None
    if isinstance(body, str):
        skill_md = body
    elif isinstance(body, Mapping):
        skill_md = body.get("skill_md")
        raw_files = body.get("files")
        if isinstance(raw_files, list) and len(raw_files) <= MAX_FILES:
            parsed = [_file(f) for f in raw_files]
            if all(f is not None for f in parsed):
                unique = {f.path: f for f in parsed if f is not None}
                if len(unique) == len(parsed):
                    ordered = sorted(unique.values(), key=lambda f: f.path.encode())
                    files = tuple(_bounded_texts(ordered))
    if not isinstance(skill_md, str) or len(skill_md) > MAX_SKILL_MD_CHARS:
        skill_md = None
    if skill_md is None and files is not None:
        listed = next((f for f in files if f.path == "SKILL.md"), None)
        if listed is not None and listed.text is not None:
            skill_md = listed.text
    definition = Definition(skill_md, files)
    return None if definition.empty else definition


def manifest_digest(files: tuple[DefinitionFile, ...]) -> str:
    """The ``agbom-skill-digest`` value of a folder holding exactly ``files``
    (docs/skills.md, "The algorithm, step by step")."""
    has_link = any(f.target is not None for f in files)
    lines = [b"agbom-skill-digest/2\n" if has_link else b"agbom-skill-digest/1\n"]
    for f in sorted(files, key=lambda f: f.path.encode()):
        path = f.path.encode("utf-8", "surrogateescape")
        kind = b"l" if f.target is not None else b"f"
        line = b"%s %s %d %s %d %s" % (
            kind,
            b"x" if f.executable else b"-",
            f.size,
            f.sha256.encode(),
            len(path),
            path,
        )
        if f.target is not None:
            target = f.target.encode("utf-8", "surrogateescape")
            line += b" %d %s" % (len(target), target)
        lines.append(line + b"\n")
    return hashlib.sha256(b"".join(lines)).hexdigest()


@dataclass(frozen=True, slots=True)
class Verification:
    files_match: bool | None  # None: no file list, or a digest that is not SHA-256
    skill_md_match: bool | None  # None: no text, or no verified list to check it against


def verify(definition: Definition, algorithm: str, value: str) -> Verification:
    files_match: bool | None = None
    skill_md_match: bool | None = None
    if definition.files is not None and algorithm == "sha256":
        files_match = manifest_digest(definition.files) == value
    if files_match and definition.skill_md is not None:
        listed = next((f for f in definition.files or () if f.path == "SKILL.md"), None)
        if listed is not None:
            text_hash = hashlib.sha256(definition.skill_md.encode("utf-8", "surrogatepass"))
            skill_md_match = text_hash.hexdigest() == listed.sha256
        else:
            skill_md_match = False
    return Verification(files_match, skill_md_match)


def _lean(definition: Definition) -> Definition:
    files = definition.files
    if files is not None:
        files = tuple(f if f.text is None else f.without_text(oversize=True) for f in files)
    return Definition(definition.skill_md, files)


def _verified_files(kept: Mapping[str, Any], algorithm: str, value: str) -> bool:
    parsed = parse_body(kept)
    return parsed is not None and verify(parsed, algorithm, value).files_match is True


def remember(store: Any, skill_id: str, digest: Any, body: Any) -> None:
    """Keep what a ``skillRegister`` carried for review (called by the Guardian).

    The first body of a pair is kept; a later one replaces it only when its file list matches
    the digest and the kept one's does not, so an agent cannot overwrite a verified
    definition with its own text. The body is for inspection only: nothing here may change
    the decision, so a body the store refuses (too large) is simply not kept.
    """
    from agbom.store.interface import StoreError

    if skill_md_problem(body) is not None:
        return  # refused with the registration (agbom/guardian/policy_skills.py)
    definition = parse_body(body)
    if definition is None:
        return
    try:
        kept = store.skill_definition(skill_id, digest)
        if kept is None:
            try:
                store.record_definition(skill_id, digest, definition.to_json())
            except StoreError:
                # Over the store's bound (texts escape larger in JSON): keep the list and
                # SKILL.md without the other files' texts rather than nothing.
                store.record_definition(skill_id, digest, _lean(definition).to_json())
        elif not _verified_files(kept, digest.algorithm, digest.value):
            if verify(definition, digest.algorithm, digest.value).files_match:
                store.record_definition(skill_id, digest, definition.to_json(), replace=True)
    except StoreError:
        return
