"""What a Claude Code session can load, read by the hook at ``SessionStart``.

The hook process (thin and standalone mode), as the user, lists the skills of every skills
folder Claude Code reads (managed, personal, project and its parents, and each installed
plugin's), the MCP servers of every config scope, and the installed plugins
(agbom/adapters/claude_paths.py); it digests each skill folder and keeps the head of its
``SKILL.md`` (where the frontmatter is). The report goes with the event under
:data:`EVENT_KEY`; the adapter turns it into the session's ``agbom/snapshot``
(agbom/adapters/claude_code.py), so the fleet knows each developer's skills and servers
before any is used. ``SessionStart`` cannot block: the later gates (the Skill tool, a typed
``/name``, ``ConfigChange``) decide.

Bounded like every read of someone else's folders: :data:`MAX_SKILLS` skills,
:data:`MAX_INVENTORY_BYTES` read in all (one :class:`~agbom.inventory.skill_digest.ReadBudget`
across the folders) and the caller's deadline; what is past a bound is listed without a
digest and the report says ``truncated``. MCP env and header values never leave the machine
(claude_paths drops them); arguments and URLs are redacted by the server before anything is
recorded (agbom/scan/mcp_server.py). Standard library and agbom's stdlib-only modules only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from agbom.adapters import claude_paths
from agbom.adapters.skill_files import ReadLimits, valid_name, with_local_skill

EVENT_KEY = "agbom_inventory"
MAX_SKILLS = 500
MAX_INVENTORY_BYTES = 64 * 1024 * 1024
"""Bytes read to digest all the session's skill folders at most."""
SKILL_MD_HEAD = 8 * 1024
"""Bytes of each ``SKILL.md`` sent for its frontmatter (name, description, allowed-tools)."""


def _head(folder: Path) -> str | None:
    from agbom.inventory.skill_digest import open_skill_file

    try:
        opened = open_skill_file(folder / "SKILL.md")
    except OSError:
        return None
    if opened is None:
        return None
    fd, _ = opened
    try:
        data = os.read(fd, SKILL_MD_HEAD)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def _candidates(
    home: str | None, environ: Any, cwd: str | None, plugins: list[dict[str, Any]]
) -> list[tuple[str, str, Path, str | None]]:
    """``(name, scope, folder, plugin key)`` of every skill the session can load, the winner
    of each name only (managed, then personal, then project); plugin skills are
    ``plugin:name``."""
    seen: set[str] = set()
    out: list[tuple[str, str, Path, str | None]] = []

    def take(root: Path) -> list[tuple[str, Path]]:
        try:
            names = sorted(os.listdir(root))[: MAX_SKILLS * 2]
        except OSError:
            return []
        found = []
        for name in names:
            if not valid_name(name) or name.startswith("."):
                continue
            try:
                if (root / name / "SKILL.md").is_file():
                    found.append((name, root / name))
            except OSError:
                continue
        return found

    for scope, root in claude_paths.skill_roots(cwd, home, environ):
        for name, folder in take(root):
            if name not in seen:
                seen.add(name)
                out.append((name, scope, folder, None))
    for plugin in plugins:
        for root in claude_paths.plugin_skill_dirs(plugin):
            for name, folder in take(root):
                qualified = f"{plugin['name']}:{name}"
                if qualified not in seen:
                    seen.add(qualified)
                    out.append((qualified, "plugin", folder, plugin["key"]))
    return out


def session_inventory(
    cwd: str | None, *, home: str | None, environ: Any, limits: ReadLimits
) -> dict[str, Any]:
    """The report described in the module docstring."""
    from agbom.inventory.skill_digest import ReadBudget, SkillDigestError, digest_skill_folder

    started = time.monotonic()
    enabled = claude_paths.enabled_plugins(home, environ, cwd)
    plugins = []
    for plugin in claude_paths.installed_plugins(home, environ, cwd):
        plugin["enabled"] = enabled.get(plugin["key"])
        plugins.append(plugin)
    loadable = [p for p in plugins if p["enabled"] is not False]
    candidates = _candidates(home, environ, cwd, loadable)
    truncated = len(candidates) > MAX_SKILLS
    budget = ReadBudget(
        max_bytes=min(limits.max_bytes * 2, MAX_INVENTORY_BYTES),
        max_entries=limits.max_entries * 10,
        deadline=limits.deadline,
    )
    skills: list[dict[str, Any]] = []
    for name, scope, folder, plugin_key in candidates[:MAX_SKILLS]:
        item: dict[str, Any] = {"name": name, "scope": scope, "folder": str(folder)}
        if plugin_key is not None:
            item["plugin"] = plugin_key
        if time.monotonic() > limits.deadline:
            item["error"] = "not digested: the inventory's time ran out"
            truncated = True
        else:
            try:
                item["digest"] = digest_skill_folder(folder, budget=budget).value
            except SkillDigestError as exc:
                item["error"] = f"cannot be digested: {exc}"[:512]
            head = _head(folder)
            if head is not None:
                item["skill_md"] = head
        skills.append(item)
    servers, problems = claude_paths.mcp_servers(home, environ, cwd, loadable)
    return {
        "skills": skills,
        "mcp_servers": servers,
        "plugins": [
            {k: p[k] for k in ("key", "name", "marketplace", "scope", "version", "enabled")}
            for p in plugins
        ],
        "problems": problems,
        "truncated": truncated,
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
    }


def with_inventory(
    event: dict[str, Any], *, home: str | None, environ: Any, limits: ReadLimits, limit: int
) -> bytes | None:
    """``event`` with its session's inventory attached, within ``limit`` bytes: SKILL.md
    heads are dropped first, then the lists are cut (and the report says ``truncated``)."""
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    report = session_inventory(cwd, home=home, environ=environ, limits=limits)
    data = json.dumps({**event, EVENT_KEY: report}).encode()
    if len(data) <= limit:
        return data
    for skill in report["skills"]:
        skill.pop("skill_md", None)
    report["truncated"] = True
    while True:
        data = json.dumps({**event, EVENT_KEY: report}).encode()
        if len(data) <= limit:
            return data
        if not report["skills"] and not report["mcp_servers"]:
            return None
        for key in ("skills", "mcp_servers"):
            report[key] = report[key][: len(report[key]) // 2]


def enrich(raw: bytes, *, home: str | None, environ: Any, limits: ReadLimits, limit: int) -> bytes:
    """The Claude Code event ``raw`` with what the hook's machine holds for it attached: the
    session's inventory at ``SessionStart``, the skill a Skill call, a typed ``/name`` or a
    ``ConfigChange`` names (:func:`agbom.adapters.skill_files.with_local_skill`)."""
    if b"SessionStart" in raw:
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            return raw  # the adapter answers malformed input
        if isinstance(event, dict) and event.get("hook_event_name") == "SessionStart":
            attached = with_inventory(event, home=home, environ=environ, limits=limits, limit=limit)
            return attached or raw
    return with_local_skill(raw, home=home, environ=environ, limits=limits, limit=limit)
