"""Where Claude Code keeps what a session can load, on the machine the hook runs on.

Read by the hook process (thin and standalone mode), as the user, and never by the server for
a client-named path (agbom/adapters/project_skills.py reads project folders an operator
allowed). Standard library only: thin mode imports this on the events that need it.

Sources, per Claude Code's docs (docs/skills.md, docs/plugins-reference.md, docs/mcp.md,
summarised in ../shared/reference/hook-wire-formats-hosts.md §2.1):

- **skills**, in the order Claude Code lets one name win over another: managed
  (``<managed>/.claude/skills``), personal (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, then
  ``skills``), project (``.claude/skills`` in the start folder and each parent up to the
  repository root);
- **plugins**: ``<config>/plugins/installed_plugins.json`` (format 1: one object per
  ``name@marketplace``; format 2: a list of installs per key, each with ``scope``,
  ``installPath`` and, for project and local installs, ``projectPath``); their skills under
  ``<installPath>/skills/NAME`` and the folders ``plugin.json`` adds with ``skills``, named
  ``plugin:NAME`` as the Skill tool names them;
- **MCP servers**: ``~/.claude.json`` (``mcpServers``: user scope;
  ``projects.<folder>.mcpServers``: local scope), ``.mcp.json`` in the project (project
  scope), ``<managed>/managed-mcp.json``, and each plugin's ``.mcp.json`` or ``plugin.json``
  ``mcpServers``.

Every read is bounded in bytes (:data:`MAX_CONFIG_BYTES`, :data:`MAX_USER_CONFIG_BYTES`) and
count (:data:`MAX_PLUGINS`, :data:`MAX_SERVERS`); files are opened without following a final
link into a FIFO or device (``O_NONBLOCK``, type checked on what was opened).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

CONFIG_DIR_ENV = "CLAUDE_CONFIG_DIR"
MANAGED_DIR_ENV = "AGBOM_CLAUDE_MANAGED_DIR"
"""Where the managed settings folder is, when not at the platform's place (tests, images that
relocate it). The hook runs as the user, who could as well not run it: this moves nothing a
user could not move anyway."""
MAX_CONFIG_BYTES = 1024 * 1024
MAX_USER_CONFIG_BYTES = 16 * 1024 * 1024
"""``~/.claude.json`` also holds Claude Code's per-project history and grows large."""
MAX_PLUGINS = 200
MAX_SERVERS = 200
MAX_PARENTS = 32
_MANAGED = {
    "linux": "/etc/claude-code",
    "darwin": "/Library/Application Support/ClaudeCode",
    "win32": "C:\\Program Files\\ClaudeCode",
}


def config_dir(home: str | None, environ: dict[str, str] | Any) -> Path | None:
    """Claude Code's user folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = environ.get(CONFIG_DIR_ENV) if environ is not None else None
    if isinstance(configured, str) and os.path.isabs(configured):
        return Path(configured)
    if home and os.path.isabs(home):
        return Path(home) / ".claude"
    return None


def user_config_file(home: str | None, environ: dict[str, str] | Any) -> Path | None:
    """The file of user- and local-scope MCP servers: ``~/.claude.json`` (inside
    ``$CLAUDE_CONFIG_DIR`` when that is set)."""
    configured = environ.get(CONFIG_DIR_ENV) if environ is not None else None
    if isinstance(configured, str) and os.path.isabs(configured):
        return Path(configured) / ".claude.json"
    if home and os.path.isabs(home):
        return Path(home) / ".claude.json"
    return None


def managed_dir(environ: dict[str, str] | Any) -> Path | None:
    """The managed settings folder of this platform (:data:`MANAGED_DIR_ENV` overrides)."""
    configured = environ.get(MANAGED_DIR_ENV) if environ is not None else None
    if isinstance(configured, str) and os.path.isabs(configured):
        return Path(configured)
    place = _MANAGED.get(sys.platform)
    return Path(place) if place else None


def project_dirs(cwd: str | None) -> list[Path]:
    """The start folder and its parents up to the repository root (the first holding
    ``.git``); the start folder alone outside a repository. Nearest first."""
    if not cwd or not os.path.isabs(cwd) or "\x00" in cwd:
        return []
    start = Path(cwd)
    chain = [start]
    for parent in start.parents:
        if len(chain) > MAX_PARENTS:
            break
        chain.append(parent)
    for index, folder in enumerate(chain):
        try:
            if (folder / ".git").exists():
                return chain[: index + 1]
        except OSError:
            continue
    return [start]


def skill_roots(
    cwd: str | None,
    home: str | None,
    environ: dict[str, str] | Any = None,
    *,
    managed: bool = True,
    parents: bool = True,
) -> list[tuple[str, Path]]:
    """The skills folders, the one whose skill wins first: managed, personal, project."""
    roots: list[tuple[str, Path]] = []
    if managed and home is not None:
        folder = managed_dir(environ)
        if folder is not None:
            roots.append(("managed", folder / ".claude" / "skills"))
    user = config_dir(home, environ or {})
    if user is not None:
        roots.append(("user", user / "skills"))
    projects = project_dirs(cwd) if parents else ([Path(cwd)] if cwd and os.path.isabs(cwd) else [])
    roots.extend(("project", folder / ".claude" / "skills") for folder in projects)
    return roots


def command_files(cwd: str | None, home: str | None, environ: Any, name: str) -> list[Path]:
    """Legacy command files (``.claude/commands/NAME.md``) that could hold ``/NAME``."""
    found: list[Path] = []
    places = [("project", p / ".claude" / "commands") for p in project_dirs(cwd)]
    user = config_dir(home, environ or {})
    if user is not None:
        places.append(("user", user / "commands"))
    for _, folder in places:
        candidate = folder / f"{name}.md"
        try:
            if candidate.is_file():
                found.append(candidate)
        except OSError:
            continue
    return found


# -- bounded reads -------------------------------------------------------------------------------


def read_json(path: Path, limit: int = MAX_CONFIG_BYTES) -> tuple[Any, str | None]:
    """``(document, None)``, or ``(None, why)`` when the file is missing, not a regular file,
    over ``limit`` bytes or not JSON. A missing file says ``None`` for both."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path}: cannot open: {exc.strerror or exc}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, f"{path}: not a regular file"
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1024 * 1024):
            size += len(chunk)
            if size > limit:
                return None, f"{path}: larger than {limit} bytes (not read)"
            chunks.append(chunk)
    except OSError as exc:
        return None, f"{path}: cannot read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    try:
        return json.loads(b"".join(chunks)), None
    except (ValueError, RecursionError):
        return None, f"{path}: not valid JSON"


def _inside(folder: Path, target: Path) -> bool:
    root = os.path.realpath(folder)
    real = os.path.realpath(target)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


# -- plugins -------------------------------------------------------------------------------------


def installed_plugins(home: str | None, environ: Any, cwd: str | None) -> list[dict[str, Any]]:
    """The plugins installed for this user and, for project and local installs, for the
    project ``cwd`` lies in: ``{"key", "name", "marketplace", "path", "scope", "version"}``."""
    user = config_dir(home, environ or {})
    if user is None:
        return []
    doc, _ = read_json(user / "plugins" / "installed_plugins.json")
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    if not isinstance(plugins, dict):
        return []
    here = os.path.realpath(cwd) if cwd and os.path.isabs(cwd) else None
    out: list[dict[str, Any]] = []
    for key, installs in list(plugins.items())[:MAX_PLUGINS]:
        if not isinstance(key, str) or not key:
            continue
        name, _, marketplace = key.partition("@")
        for install in installs if isinstance(installs, list) else [installs]:
            if not isinstance(install, dict):
                continue
            path = install.get("installPath")
            if not isinstance(path, str) or not os.path.isabs(path):
                continue
            scope = install.get("scope") if isinstance(install.get("scope"), str) else "user"
            project = install.get("projectPath")
            if scope in ("project", "local") and isinstance(project, str):
                root = os.path.realpath(project)
                if here is None or not (here == root or here.startswith(root + os.sep)):
                    continue  # installed for another project
            version = install.get("version")
            out.append(
                {
                    "key": key[:255],
                    "name": name[:255],
                    "marketplace": marketplace[:255],
                    "path": path,
                    "scope": scope,
                    "version": version[:128] if isinstance(version, str) else None,
                }
            )
    return out


def enabled_plugins(home: str | None, environ: Any, cwd: str | None) -> dict[str, bool]:
    """``enabledPlugins`` merged as Claude Code merges settings: user, then the project's
    ``.claude/settings.json`` and ``settings.local.json``, then managed settings (each later
    one wins for the keys it names)."""
    files: list[Path] = []
    user = config_dir(home, environ or {})
    if user is not None:
        files.append(user / "settings.json")
    if cwd and os.path.isabs(cwd):
        project = Path(cwd) / ".claude"
        files += [project / "settings.json", project / "settings.local.json"]
    managed = managed_dir(environ)
    if managed is not None:
        files.append(managed / "managed-settings.json")
    merged: dict[str, bool] = {}
    for path in files:
        doc, _ = read_json(path)
        value = doc.get("enabledPlugins") if isinstance(doc, dict) else None
        if isinstance(value, dict):
            merged.update(
                (key, on)
                for key, on in list(value.items())[:MAX_PLUGINS]
                if isinstance(key, str) and isinstance(on, bool)
            )
    return merged


def plugin_manifest(plugin: dict[str, Any]) -> dict[str, Any]:
    """The plugin's ``.claude-plugin/plugin.json`` (an empty object when absent or bad)."""
    doc, _ = read_json(Path(plugin["path"]) / ".claude-plugin" / "plugin.json")
    return doc if isinstance(doc, dict) else {}


def plugin_skill_dirs(plugin: dict[str, Any], manifest: dict[str, Any] | None = None) -> list[Path]:
    """The folders whose sub-folders are the plugin's skills: ``skills/`` and those
    ``plugin.json`` names under ``skills`` (kept inside the plugin)."""
    root = Path(plugin["path"])
    dirs = [root / "skills"]
    extra = (manifest if manifest is not None else plugin_manifest(plugin)).get("skills")
    for item in [extra] if isinstance(extra, str) else extra if isinstance(extra, list) else []:
        if isinstance(item, str) and item and not os.path.isabs(item):
            candidate = root / item
            if _inside(root, candidate) and candidate not in dirs:
                dirs.append(candidate)
    return dirs[:16]


def plugin_skill_folder(
    name: str, home: str | None, environ: Any, cwd: str | None
) -> tuple[Path | None, dict[str, Any] | None, list[str]]:
    """``(folder, plugin, looked_in)`` for the Skill tool's ``plugin:skill``; folder None when
    no installed plugin of that name holds the skill."""
    plugin_name, _, skill = name.partition(":")
    looked: list[str] = []
    for plugin in installed_plugins(home, environ, cwd):
        if plugin["name"] != plugin_name:
            continue
        for folder in plugin_skill_dirs(plugin):
            candidate = folder / skill
            looked.append(str(candidate))
            try:
                if (candidate / "SKILL.md").is_file() and _inside(Path(plugin["path"]), candidate):
                    return candidate, plugin, looked
            except OSError:
                continue
    return None, None, looked


# -- MCP servers ---------------------------------------------------------------------------------


def _clean_server(entry: Any) -> Any:
    """An MCP server entry with the values of ``env`` and ``headers`` dropped (their names
    are kept): they are where credentials are written, and no rule reads them."""
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    for field in ("env", "headers"):
        value = out.get(field)
        if isinstance(value, dict):
            out[field] = {str(k)[:255]: "" for k in list(value)[:256]}
    return out


def _servers_in(value: Any, scope: str, source: str, plugin: str | None) -> list[dict[str, Any]]:
    if not isinstance(value, dict):
        return []
    out = []
    for name, entry in list(value.items())[:MAX_SERVERS]:
        item = {"name": str(name)[:255], "scope": scope, "source": source, "entry": entry}
        item["entry"] = _clean_server(entry)
        if plugin is not None:
            item["plugin"] = plugin
        out.append(item)
    return out


def mcp_servers(
    home: str | None, environ: Any, cwd: str | None, plugins: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """``(servers, problems)``: every MCP server of every Claude Code config scope, as
    ``{"name", "scope", "source", "entry", "plugin"?}`` (env and header values dropped)."""
    servers: list[dict[str, Any]] = []
    problems: list[str] = []
    managed = managed_dir(environ)
    if managed is not None:
        path = managed / "managed-mcp.json"
        doc, why = read_json(path)
        if why:
            problems.append(why)
        if isinstance(doc, dict):
            servers += _servers_in(doc.get("mcpServers"), "managed", str(path), None)
    user_file = user_config_file(home, environ or {})
    if user_file is not None:
        doc, why = read_json(user_file, MAX_USER_CONFIG_BYTES)
        if why:
            problems.append(why)
        if isinstance(doc, dict):
            servers += _servers_in(doc.get("mcpServers"), "user", str(user_file), None)
            projects = doc.get("projects")
            if isinstance(projects, dict):
                for folder in project_dirs(cwd):
                    settings = projects.get(str(folder))
                    if isinstance(settings, dict):
                        where = f"{user_file} projects.{folder}"
                        servers += _servers_in(settings.get("mcpServers"), "local", where, None)
    for folder in project_dirs(cwd):
        path = folder / ".mcp.json"
        doc, why = read_json(path)
        if why:
            problems.append(why)
        if isinstance(doc, dict):
            servers += _servers_in(doc.get("mcpServers"), "project", str(path), None)
    for plugin in plugins:
        root = Path(plugin["path"])
        value = plugin_manifest(plugin).get("mcpServers")
        source = root / ".claude-plugin" / "plugin.json"
        if isinstance(value, str) and not os.path.isabs(value) and _inside(root, root / value):
            source = root / value
            doc, why = read_json(source)
            value = doc.get("mcpServers", doc) if isinstance(doc, dict) else None
            if why:
                problems.append(why)
        if not isinstance(value, dict):
            source = root / ".mcp.json"
            doc, why = read_json(source)
            value = doc.get("mcpServers", doc) if isinstance(doc, dict) else None
            if why:
                problems.append(why)
        servers += _servers_in(value, "plugin", str(source), plugin["key"])
    return servers[:MAX_SERVERS], problems[:20]
