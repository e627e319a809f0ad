"""A skill named by a hook event, read on the machine where the skill lives.

A hook runs on the user's machine, as the user; ``agbom serve`` may run elsewhere, or under
another account. So the hook process itself (standalone mode, and thin mode before it forwards
the event) finds the skill folder (``<cwd>/.claude/skills/NAME``, then
``$HOME/.claude/skills/NAME`` of the hook's own environment), computes its
``agbom-skill-digest`` and collects its files for the review page. It attaches the result to
the event under :data:`EVENT_KEY`; the adapter decides on that report and never reads a
folder itself, so a server reads no path a client names unless its operator asked it to
(``serve --read-project-skills``, agbom/adapters/project_skills.py).

The folder is someone else's to shape, so the read is bounded (:class:`ReadLimits`): in bytes
actually read (a sparse file claims any size for free), in entries, and in time; each file is
opened with ``O_NOFOLLOW | O_NONBLOCK`` and its type checked on what was opened
(:func:`agbom.inventory.skill_digest.open_skill_file`). A folder past a bound is reported as
not digested, which the Guardian denies.

A file's text is carried when it is UTF-8 and at most :data:`MAX_FILE_TEXT_BYTES`; texts stop
at :data:`MAX_TEXT_TOTAL_BYTES` in all, taken in review order (SKILL.md, then scripts, small
before large: :func:`agbom.inventory.skill_digest.review_order`), so that no pile of licence
text can push SKILL.md or a script out. Other files are listed with path, size, executable bit
and SHA-256 only, marked ``binary`` or ``oversize``. The list itself is whole (the digest is
checked against it). Imports nothing heavy: thin mode runs this per Skill call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENT_KEY = "agbom_skill"
MAX_FILE_TEXT_BYTES = 256 * 1024
MAX_TEXT_TOTAL_BYTES = 512 * 1024
MAX_READ_BYTES = 32 * 1024 * 1024
"""Bytes read from one skill folder at most, its digest included."""
MAX_READ_ENTRIES = 2000
"""Entries (files, links, folders) listed in one skill folder at most: what the review page
keeps of a file list (agbom/review/definition.py)."""
READ_SECONDS = 2.0
"""How long one skill folder may take to read, where no other deadline is given."""


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """The bounds of one read: bytes actually read, entries listed, and the moment
    (:func:`time.monotonic`) it must be done by."""

    deadline: float
    max_bytes: int = MAX_READ_BYTES
    max_entries: int = MAX_READ_ENTRIES

    @classmethod
    def within(cls, seconds: float) -> ReadLimits:
        return cls(deadline=time.monotonic() + seconds)


def skill_roots(cwd: str | None, home: str | None) -> list[tuple[str, Path]]:
    """Where a skill is looked for, the folder whose skill Claude Code uses first: the user's
    (``home``), then the project's (``cwd``). See :func:`claude_paths.skill_roots` for the
    managed folder and the project's parents, which the hook process adds."""
    from agbom.adapters import claude_paths

    return claude_paths.skill_roots(cwd, home, {}, managed=False, parents=False)


def valid_name(name: str) -> bool:
    return (
        bool(name)
        and len(name) <= 255
        and "/" not in name
        and "\\" not in name
        and (name not in (".", "..") and "\x00" not in name)
    )


def _read_text(folder: Path, entry: dict[str, Any], limit: int) -> bytes | None:
    """The file's bytes when they are still exactly what was digested (at most ``limit``
    read), or None."""
    from agbom.inventory.skill_digest import open_skill_file

    try:
        opened = open_skill_file(folder / entry["path"])
    except OSError:
        return None  # unreadable now: listed, not shown
    if opened is None:
        return None  # no longer a regular file
    fd, _ = opened
    try:
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        return None  # changed since it was digested: not the pinned file
    return data


def _texts(folder: Path, files: list[dict[str, Any]], deadline: float) -> None:
    """Add ``text`` (or ``binary``/``oversize``) to each regular file's entry, in review
    order, bounded in bytes and time."""
    from agbom.inventory.skill_digest import review_order

    budget = MAX_TEXT_TOTAL_BYTES
    ordered = sorted(
        (e for e in files if not e.get("symlink")),  # a link's content is its target's entry
        key=lambda e: review_order(e["path"], int(e["size"]), bool(e["executable"])),
    )
    for entry in ordered:
        size = int(entry["size"])
        if size > MAX_FILE_TEXT_BYTES or size > budget or time.monotonic() > deadline:
            entry["oversize"] = True
            continue
        data = _read_text(folder, entry, size)
        if data is None:
            entry["oversize"] = True
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


def local_skill(
    name: str,
    *,
    cwd: str | None,
    home: str | None,
    limits: ReadLimits | None = None,
    environ: Any = None,
    parents: bool = False,
    roots: list[tuple[str, Path]] | None = None,
) -> dict[str, Any]:
    """What the hook's machine holds for skill ``name``.

    Found: ``{"name", "found": true, "scope": "managed"|"user"|"project"|"plugin",
    "folder", "digest": HEX, "files": [...]}`` (and ``"plugin": "name@marketplace"`` for a
    plugin's skill); not found or refused: ``{"name", "found": false, "looked_in": [...],
    "error": TEXT|null}``. Never raises for a bad folder.

    Looked for as Claude Code finds it: ``plugin:skill`` in the installed plugins (only with
    ``home``: a server reads no plugin folder); any other name in the skills folders, the
    one that wins first (managed and the project's parents only when ``parents``: the hook
    process, never the server). ``roots`` (``(scope, folder)``, in order) replaces Claude
    Code's folders for another host's (agbom/adapters/host_skills.py), which has no plugins.
    """
    from agbom.adapters import claude_paths

    if not valid_name(name):
        return {"name": name[:255], "found": False, "looked_in": [], "error": "not a skill name"}
    limits = limits or ReadLimits.within(READ_SECONDS)
    if ":" in name and roots is None:
        if home is None:
            return {"name": name, "found": False, "looked_in": [], "error": None}
        folder, plugin, looked = claude_paths.plugin_skill_folder(name, home, environ, cwd)
        if folder is None or plugin is None:
            return {"name": name, "found": False, "looked_in": looked[:8], "error": None}
        info = read_skill_folder(name, folder, "plugin", limits, looked)
        if info.get("found"):
            info["plugin"] = plugin["key"]
        return info
    if roots is None:
        roots = claude_paths.skill_roots(cwd, home, environ, managed=parents, parents=parents)
    looked = [str(root / name) for _, root in roots]
    for scope, root in roots:
        folder = root / name
        try:
            if not (folder / "SKILL.md").is_file():
                continue
        except OSError:
            continue
        return read_skill_folder(name, folder, scope, limits, looked)
    return {"name": name, "found": False, "looked_in": looked, "error": None}


def read_skill_folder(
    name: str, folder: Path, scope: str, limits: ReadLimits, looked: list[str]
) -> dict[str, Any]:
    """The report of one skill folder: its digest and files (texts in review order), or
    why it cannot be digested."""
    from agbom.inventory.skill_digest import ReadBudget, SkillDigestError, digest_skill_folder

    budget = ReadBudget(
        max_bytes=limits.max_bytes, max_entries=limits.max_entries, deadline=limits.deadline
    )
    try:
        digest = digest_skill_folder(folder, budget=budget)
    except SkillDigestError as exc:
        return {
            "name": name,
            "found": False,
            "looked_in": looked[:8],
            "error": f"{folder}: cannot be digested: {exc}",
        }
    files: list[dict[str, Any]] = list(digest.to_json()["files"])  # type: ignore[call-overload]
    _texts(folder, files, limits.deadline)
    return {
        "name": name,
        "found": True,
        "scope": scope,
        "folder": str(folder),
        "digest": digest.value,
        "files": files,
    }


def fitted(info: dict[str, Any], room: int) -> dict[str, Any]:
    """``info`` with texts dropped, last in review order first (each marked oversize), until
    its JSON takes at most ``room`` bytes; every text dropped when that is not enough."""
    from agbom.inventory.skill_digest import review_order

    files = [dict(f) for f in info.get("files") or []]
    out = {**info, "files": files}
    size = len(json.dumps(out).encode())
    carried = sorted(
        (f for f in files if "text" in f),
        key=lambda f: review_order(f["path"], int(f["size"]), bool(f["executable"])),
    )
    while size > room and carried:
        dropped = carried.pop()
        size -= len(json.dumps(dropped.pop("text")).encode()) - len(', "oversize": true')
        dropped["oversize"] = True
    return out


_TYPED = re.compile(r"/([A-Za-z0-9_][A-Za-z0-9_.:-]{0,254})(?=\s|$)")
EXPANSION = "UserPromptExpansion"
PROMPT = "UserPromptSubmit"


def typed_command(prompt: Any) -> str | None:
    """The ``name`` of a prompt that starts with ``/name`` (a typed slash command), else None."""
    if not isinstance(prompt, str):
        return None
    match = _TYPED.match(prompt.lstrip()[:300])
    return match.group(1) if match else None


def skill_of(event: Any) -> tuple[str, str | None] | None:
    """``(name, cwd)`` of the skill a Claude Code event loads, else None: ``PreToolUse`` of
    the Skill tool (``tool_input.skill``), a typed ``/name`` (``UserPromptExpansion``'s
    ``command_name``; ``UserPromptSubmit``'s prompt on builds without it)."""
    if not isinstance(event, dict):
        return None
    kind = event.get("hook_event_name")
    name: Any = None
    if kind == "PreToolUse" and event.get("tool_name") == "Skill":
        tool_input = event.get("tool_input")
        if isinstance(tool_input, dict):
            name = tool_input.get("skill") or tool_input.get("command")
    elif kind == EXPANSION and event.get("expansion_type", "slash_command") == "slash_command":
        name = event.get("command_name")
    elif kind == PROMPT:
        name = typed_command(event.get("prompt"))
    if not isinstance(name, str) or not name.strip():
        return None
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    return name.strip().lstrip("/"), cwd


def attached(event: dict[str, Any], info: dict[str, Any], limit: int) -> bytes | None:
    """The event with ``info`` attached, within ``limit`` bytes (texts dropped first, then a
    report that the list is too large), or None when even that does not fit."""
    room = limit - len(json.dumps(event).encode()) - len(f', "{EVENT_KEY}": ')
    attempt = fitted(info, room) if info.get("found") else info
    data = json.dumps({**event, EVENT_KEY: attempt}).encode()
    if len(data) <= limit:
        return data
    too_big: dict[str, Any] = {
        "name": info.get("name"),
        "found": False,
        "looked_in": [],
        "error": f"{info.get('folder')}: its file list is over the {limit} byte event limit",
    }
    data = json.dumps({**event, EVENT_KEY: too_big}).encode()
    return data if len(data) <= limit else None


def with_local_skill(
    raw: bytes,
    *,
    home: str | None,
    limits: ReadLimits,
    limit: int,
    environ: Any = None,
) -> bytes:
    """The Claude Code event ``raw`` with what it names read here and attached: the skill a
    Skill call or a typed ``/name`` loads (:data:`EVENT_KEY`), the skill folder a
    ``ConfigChange`` of source ``skills`` changed (also :data:`EVENT_KEY`). ``raw`` is
    returned unchanged for any other event; events that cannot be one of these are not even
    parsed. (``SessionStart``'s inventory: :func:`agbom.adapters.claude_inventory.enrich`.)"""
    if not needs_local_read(raw):
        return raw
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return raw  # the adapter answers malformed input
    if not isinstance(event, dict):
        return raw
    kind = event.get("hook_event_name")
    if kind == "ConfigChange":
        info = changed_skill(event, home=home, environ=environ, limits=limits)
        return raw if info is None else attached(event, info, limit) or raw
    wanted = skill_of(event)
    if wanted is None:
        return raw
    name, cwd = wanted
    info = local_skill(name, cwd=cwd, home=home, limits=limits, environ=environ, parents=True)
    if not info.get("found") and kind in (EXPANSION, PROMPT):
        from agbom.adapters import claude_paths

        commands = claude_paths.command_files(cwd, home, environ, name) if ":" not in name else []
        if commands:
            info["command_file"] = str(commands[0])
    return attached(event, info, limit) or raw


def needs_local_read(raw: bytes) -> bool:
    """Whether ``raw`` may be an event :func:`with_local_skill` reads something for."""
    from agbom.adapters.replies import claude_needs_local_read

    return claude_needs_local_read(raw)


def changed_skill(
    event: dict[str, Any], *, home: str | None, environ: Any, limits: ReadLimits
) -> dict[str, Any] | None:
    """The report of the skill folder a ``ConfigChange`` of source ``skills`` names in
    ``file_path`` (the folder below the nearest ``.claude/skills``), or None for any other
    change. A folder whose ``SKILL.md`` is gone is reported ``removed``."""
    if event.get("source") != "skills":
        return None
    path = event.get("file_path")
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path:
        return {"name": "", "found": False, "looked_in": [], "error": "no absolute file_path"}
    parts = Path(path).parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == "skills" and parts[index - 1] == ".claude" and index + 1 < len(parts):
            name = parts[index + 1]
            folder = Path(*parts[: index + 2])
            break
    else:
        from agbom.adapters import claude_paths

        user = claude_paths.config_dir(home, environ or {})
        rel = _below(user / "skills", Path(path)) if user is not None else None
        if rel is None:
            return {"name": "", "found": False, "looked_in": [path[:512]], "error": None}
        name, folder = rel, user / "skills" / rel  # type: ignore[operator]
    if not valid_name(name):
        return {"name": name[:255], "found": False, "looked_in": [], "error": "not a skill name"}
    try:
        present = (folder / "SKILL.md").is_file()
    except OSError:
        present = False
    if not present:
        return {"name": name, "found": False, "looked_in": [str(folder)], "error": None,
                "removed": True}  # fmt: skip
    return read_skill_folder(name, folder, _scope_of(folder, home, environ), limits, [str(folder)])


def _scope_of(folder: Path, home: str | None, environ: Any) -> str:
    from agbom.adapters import claude_paths

    for scope, root in (
        ("managed", claude_paths.managed_dir(environ or {})),
        ("user", claude_paths.config_dir(home, environ or {})),
    ):
        if root is not None and _below(root, folder) is not None:
            return scope
    return "project"


def _below(root: Path, path: Path) -> str | None:
    """The first part of ``path`` below ``root``, or None when it is not below it."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    return rel.parts[0] if rel.parts else None
