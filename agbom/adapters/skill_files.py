"""A skill named by a hook event, read on the machine where the skill lives.

A hook runs on the user's machine, as the user; ``agbom serve`` may run elsewhere, or under
another account. So the hook process itself (standalone mode, and thin mode before it forwards
the event) finds the skill folder (``<cwd>/.claude/skills/NAME``, then
``$HOME/.claude/skills/NAME`` of the hook's own environment), computes its
``agbom-skill-digest`` and collects its files for the review page. Thin mode attaches the
result to the event under :data:`EVENT_KEY`; the server's adapter uses it instead of reading
its own disk (where the user's home is not, or is another user's).

Bounded: a file's text is carried when it is UTF-8 and at most :data:`MAX_FILE_TEXT_BYTES`;
texts stop at :data:`MAX_TEXT_TOTAL_BYTES` in all. Other files are listed with path, size,
executable bit and SHA-256 only, marked ``binary`` or ``oversize``. The list itself is whole
(the digest is checked against it). Imports nothing heavy: thin mode runs this per Skill call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

EVENT_KEY = "agbom_skill"
MAX_FILE_TEXT_BYTES = 256 * 1024
MAX_TEXT_TOTAL_BYTES = 512 * 1024


def skill_roots(cwd: str | None, home: str | None) -> list[tuple[str, Path]]:
    """Where a skill is looked for: the project's skills first, then the user's."""
    roots: list[tuple[str, Path]] = []
    if cwd and os.path.isabs(cwd):
        roots.append(("project", Path(cwd) / ".claude" / "skills"))
    if home and os.path.isabs(home):
        roots.append(("user", Path(home) / ".claude" / "skills"))
    return roots


def valid_name(name: str) -> bool:
    return (
        bool(name)
        and len(name) <= 255
        and "/" not in name
        and "\\" not in name
        and (name not in (".", "..") and "\x00" not in name)
    )


def _texts(folder: Path, files: list[dict[str, Any]]) -> None:
    """Add ``text`` (or ``binary``/``oversize``) to each regular file's entry, bounded."""
    budget = MAX_TEXT_TOTAL_BYTES
    for entry in files:
        if entry.get("symlink"):
            continue  # a link's content is its target's entry
        size = int(entry["size"])
        if size > MAX_FILE_TEXT_BYTES or size > budget:
            entry["oversize"] = True
            continue
        try:
            fd = os.open(folder / entry["path"], os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                data = os.read(fd, size + 1)
            finally:
                os.close(fd)
        except OSError:
            entry["oversize"] = True  # unreadable now: listed, not shown
            continue
        import hashlib

        if len(data) != size or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            entry["oversize"] = True  # changed since it was digested: not the pinned file
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            entry["binary"] = True
            continue
        if "\x00" in text:
            entry["binary"] = True
            continue
        entry["text"] = text
        budget -= size


def local_skill(name: str, *, cwd: str | None, home: str | None) -> dict[str, Any]:
    """What the hook's machine holds for skill ``name``.

    Found: ``{"name", "found": true, "scope": "project"|"user", "folder", "digest": HEX,
    "files": [...]}``; not found or refused: ``{"name", "found": false, "looked_in": [...],
    "error": TEXT|null}``. Never raises for a bad folder.
    """
    roots = skill_roots(cwd, home)
    looked = [str(root / name) for _, root in roots] if valid_name(name) else []
    if not valid_name(name):
        return {"name": name[:255], "found": False, "looked_in": [], "error": "not a skill name"}
    for scope, root in roots:
        folder = root / name
        try:
            if not (folder / "SKILL.md").is_file():
                continue
        except OSError:
            continue
        from agbom.inventory.skill_digest import SkillDigestError, digest_skill_folder

        try:
            digest = digest_skill_folder(folder)
        except SkillDigestError as exc:
            return {
                "name": name,
                "found": False,
                "looked_in": looked,
                "error": f"{folder}: cannot be digested: {exc}",
            }
        files: list[dict[str, Any]] = list(digest.to_json()["files"])  # type: ignore[call-overload]
        _texts(folder, files)
        return {
            "name": name,
            "found": True,
            "scope": scope,
            "folder": str(folder),
            "digest": digest.value,
            "files": files,
        }
    return {"name": name, "found": False, "looked_in": looked, "error": None}


def strip_texts(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` with every file's text dropped (marked oversize): when the event would grow
    past its size limit with them."""
    files = [dict(f) for f in info.get("files") or []]
    for f in files:
        if f.pop("text", None) is not None:
            f["oversize"] = True
    return {**info, "files": files}
