"""The skill a Gemini CLI or opencode event loads, read in the hook process.

Both hosts load a skill through a tool call the hook sees: Gemini CLI's ``activate_skill``
(``BeforeTool``; the user's typed ``/name`` becomes the same call) and opencode's ``skill``
tool (``tool.execute.before``). As for Claude Code, the hook process (thin or standalone mode,
as the user, on the user's machine) finds the folder, digests it and collects its files with
the bounded reader (:func:`agbom.adapters.skill_files.local_skill`), and attaches the report
under ``agbom_skill``; the adapter decides on it and reads nothing itself. Only the folders
differ, per host (their documentation, docs/hosts/):

- Gemini CLI: ``.agents/skills`` then ``.gemini/skills`` in the workspace (``cwd``), then the
  same two under HOME (within a tier the ``.agents`` folder wins);
- opencode: ``.opencode/skills``, ``.claude/skills``, ``.agents/skills`` in ``cwd`` and each
  folder above it up to the worktree, then ``~/.config/opencode/skills``, ``~/.claude/skills``,
  ``~/.agents/skills``.

A skill shipped inside a Gemini CLI extension is not looked for: its load is denied as not
found (docs/hosts/gemini-cli.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agbom.adapters import host_replies, skill_files

GEMINI_SKILL_TOOL = "activate_skill"
OPENCODE_SKILL_TOOL = "skill"
MAX_WALK = 32


def skill_request(runtime: str, event: Any) -> tuple[str, dict[str, str | None]] | None:
    """``(name, where)`` when ``event`` loads a skill on ``runtime``, else None; ``where``
    holds the event's ``cwd`` (and opencode's ``worktree``)."""
    if not isinstance(event, dict):
        return None
    if runtime == host_replies.GEMINI:
        if event.get("hook_event_name") != "BeforeTool":
            return None
        if event.get("tool_name") != GEMINI_SKILL_TOOL:
            return None
        args = event.get("tool_input")
    elif runtime == host_replies.OPENCODE:
        if event.get("hook_event_name") != "tool.execute.before":
            return None
        if event.get("tool") != OPENCODE_SKILL_TOOL:
            return None
        args = event.get("args")
    else:
        return None
    name = args.get("name") if isinstance(args, dict) else None
    if not isinstance(name, str) or not name.strip():
        return None
    where = {key: _string(event.get(key)) for key in ("cwd", "worktree")}
    return name.strip().lstrip("/"), where


def skill_roots(
    runtime: str, where: dict[str, str | None], home: str | None
) -> list[tuple[str, Path]]:
    """The folders ``runtime`` loads skills from, in the order it prefers them."""
    cwd = where.get("cwd")
    roots: list[tuple[str, Path]] = []
    home_path = Path(home) if home and os.path.isabs(home) else None
    if runtime == host_replies.GEMINI:
        if cwd and os.path.isabs(cwd):
            roots += [("project", Path(cwd) / sub / "skills") for sub in (".agents", ".gemini")]
        if home_path is not None:
            roots += [("user", home_path / sub / "skills") for sub in (".agents", ".gemini")]
    elif runtime == host_replies.OPENCODE:
        for folder in _up_to_worktree(cwd, where.get("worktree")):
            roots += [
                ("project", folder / sub / "skills") for sub in (".opencode", ".claude", ".agents")
            ]
        if home_path is not None:
            roots += [
                ("user", home_path / ".config" / "opencode" / "skills"),
                ("user", home_path / ".claude" / "skills"),
                ("user", home_path / ".agents" / "skills"),
            ]
    return roots


def with_local_skill(
    runtime: str, raw: bytes, *, home: str | None, limits: skill_files.ReadLimits, limit: int
) -> bytes:
    """``raw`` with the report of the skill it loads attached; unchanged for any other event
    (or one that cannot be parsed: the adapter answers malformed input)."""
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    wanted = skill_request(runtime, event)
    if wanted is None:
        return raw
    name, where = wanted
    roots = skill_roots(runtime, where, home)
    info = skill_files.local_skill(
        name, cwd=where.get("cwd"), home=home, limits=limits, roots=roots
    )
    return skill_files.attached(event, info, limit) or raw


def _up_to_worktree(cwd: str | None, worktree: str | None) -> list[Path]:
    """``cwd`` and each folder above it up to ``worktree`` (just ``cwd`` when the worktree is
    not above it), at most :data:`MAX_WALK` of them."""
    if not cwd or not os.path.isabs(cwd):
        return []
    start = Path(os.path.normpath(cwd))
    top = Path(os.path.normpath(worktree)) if worktree and os.path.isabs(worktree) else None
    if top is None or (top != start and top not in start.parents):
        return [start]
    folders = [start]
    for parent in start.parents:
        if len(folders) >= MAX_WALK or not parent.is_relative_to(top):
            break
        folders.append(parent)
    return folders


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
