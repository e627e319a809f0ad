"""Where each host keeps its hooks, which events agbom installs there, and what each host
leaves open: one table (:data:`HOSTS`), read by ``agbom hook install|uninstall|doctor`` and
the docs (docs/hosts/).

A row says, per host: the file of each scope (user, project, managed) and its format, the
events agbom gates or records there, the hook entry written for each, and the host's own
failure behaviour. To gate another event of a host (say Claude Code's
``UserPromptExpansion``), add it to that host's ``events``; install, uninstall and doctor
follow. Facts and their sources: ``shared/reference/hook-wire-formats-hosts.md``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agbom.hostconfig.interface import HostConfigError

SCOPES = ("user", "project", "managed")
EVENT_ENV = "AGBOM_HOOK_EVENT"  # agbom.adapters.host_replies.EVENT_ENV
EVENT_HEADER = "X-Agbom-Hook-Event"
# What the host waits for one hook, in seconds, where agbom sets it: above thin mode's default
# --timeout (3 s), so that agbom answers a slow server itself, per its failure mode.
HOST_TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class Event:
    """One host event agbom installs a hook for."""

    name: str
    gates: str  # what the hook sees there, for doctor and the docs
    blocking: bool  # whether the host lets a hook stop the action
    matcher: str | None = None


@dataclass(frozen=True, slots=True)
class Places:
    """How a host's paths are found: its HOME, the project folder, the system root."""

    home: Path
    project: Path
    root: Path = Path("/")
    environ: Mapping[str, str] = field(default_factory=dict)

    def system(self, path: str) -> Path:
        return self.root / path.lstrip("/")


@dataclass(frozen=True, slots=True)
class Host:
    """A row of the table."""

    name: str
    title: str
    format: str  # json-groups, json-flat, toml-groups, plugin
    events: tuple[Event, ...]
    paths: Callable[[str, Places], Path | None]
    entry: Callable[[Event, str], dict[str, Any]]
    binaries: tuple[str, ...]
    config_dirs: Callable[[Places], tuple[Path, ...]]
    fails_open: tuple[str, ...]
    open_paths: tuple[str, ...]
    default_scope: str = "user"
    skeleton: Mapping[str, Any] = field(default_factory=dict)  # top-level keys a new file needs
    jsonc: bool = False
    scope_notes: Mapping[str, str] = field(default_factory=dict)

    def path(self, scope: str, places: Places) -> Path:
        """The file ``scope`` writes, or a one-line error when the host has none there."""
        found = self.paths(scope, places)
        if found is None:
            raise HostConfigError(f"{self.title} has no {scope} hook configuration agbom can write")
        return found


def _mac() -> bool:
    return sys.platform == "darwin"


def _env_dir(places: Places, var: str, default: Path) -> Path:
    value = places.environ.get(var)
    return Path(value) if value and os.path.isabs(value) else default


# -- Claude Code ---------------------------------------------------------------------------------


def _claude_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        return p.home / ".claude" / "settings.json"
    if scope == "project":
        return p.project / ".claude" / "settings.json"
    if _mac():
        return p.system("/Library/Application Support/ClaudeCode/managed-settings.json")
    return p.system("/etc/claude-code/managed-settings.json")


def _claude_entry(event: Event, command: str) -> dict[str, Any]:
    handler: dict[str, Any] = {"type": "command", "command": command, "timeout": HOST_TIMEOUT_S}
    if event.blocking:
        handler["onFailure"] = "block"
    group: dict[str, Any] = {"matcher": event.matcher} if event.matcher else {}
    group["hooks"] = [handler]
    return group


# -- Cursor --------------------------------------------------------------------------------------


def _cursor_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        return p.home / ".cursor" / "hooks.json"
    if scope == "project":
        return p.project / ".cursor" / "hooks.json"
    if _mac():
        return p.system("/Library/Application Support/Cursor/hooks.json")
    return None  # Cursor's Linux enterprise path is not documented


def _cursor_entry(event: Event, command: str) -> dict[str, Any]:
    # No "timeout": its unit is not documented (ms in one source, s in another), and a wrong
    # guess with failClosed would block every call.
    entry: dict[str, Any] = {"command": command}
    if event.blocking:
        entry["failClosed"] = True
    return entry


# -- Codex CLI -----------------------------------------------------------------------------------


def _codex_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        return _env_dir(p, "CODEX_HOME", p.home / ".codex") / "config.toml"
    if scope == "project":
        return p.project / ".codex" / "config.toml"
    return p.system("/etc/codex/requirements.toml")


def _codex_entry(event: Event, command: str) -> dict[str, Any]:
    handler = {
        "type": "command",
        "command": command,
        "timeout": HOST_TIMEOUT_S,
        "statusMessage": "agbom",
    }
    group: dict[str, Any] = {"matcher": event.matcher} if event.matcher else {}
    group["hooks"] = [handler]
    return group


# -- Gemini CLI ----------------------------------------------------------------------------------


def _gemini_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        return p.home / ".gemini" / "settings.json"
    if scope == "project":
        return p.project / ".gemini" / "settings.json"
    if _mac():
        return p.system("/Library/Application Support/GeminiCli/settings.json")
    return p.system("/etc/gemini-cli/settings.json")


def _gemini_entry(event: Event, command: str) -> dict[str, Any]:
    handler = {
        "type": "command",
        "name": "agbom",
        "command": command,
        "timeout": HOST_TIMEOUT_S * 1000,  # milliseconds
        "description": "agbom policy and skill approvals",
    }
    group: dict[str, Any] = {"matcher": event.matcher} if event.matcher else {}
    group["hooks"] = [handler]
    return group


# -- GitHub Copilot CLI --------------------------------------------------------------------------


def _copilot_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        return _env_dir(p, "COPILOT_HOME", p.home / ".copilot") / "hooks" / "agbom.json"
    if scope == "project":
        return p.project / ".github" / "hooks" / "agbom.json"
    return p.system("/etc/github-copilot/policy.d/agbom.json")


def _copilot_entry(event: Event, command: str) -> dict[str, Any]:
    if command.startswith(("http://", "https://")):
        return {
            "type": "http",
            "url": command,
            "headers": {EVENT_HEADER: event.name},
            "timeoutSec": HOST_TIMEOUT_S,
        }
    return {
        "type": "command",
        "bash": command,
        "env": {EVENT_ENV: event.name},
        "timeoutSec": HOST_TIMEOUT_S,
    }


# -- Windsurf ------------------------------------------------------------------------------------


def _windsurf_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        return p.home / ".codeium" / "windsurf" / "hooks.json"
    if scope == "project":
        return p.project / ".windsurf" / "hooks.json"
    if _mac():
        return p.system("/Library/Application Support/Windsurf/hooks.json")
    return p.system("/etc/windsurf/hooks.json")


def _windsurf_entry(event: Event, command: str) -> dict[str, Any]:
    return {"command": command, "show_output": True}


# -- opencode ------------------------------------------------------------------------------------


def _opencode_paths(scope: str, p: Places) -> Path | None:
    if scope == "user":
        config = _env_dir(p, "XDG_CONFIG_HOME", p.home / ".config")
        return config / "opencode" / "plugins" / "agbom.ts"
    if scope == "project":
        return p.project / ".opencode" / "plugins" / "agbom.ts"
    return None  # opencode has no system-wide plugin folder


def _no_entry(event: Event, command: str) -> dict[str, Any]:
    return {}


_CLAUDE_EVENTS = (
    Event("PreToolUse", "every tool call, MCP tools and skill loads (Skill) included", True, "*"),
    Event("UserPromptSubmit", "prompts", True),
    Event("SessionStart", "session start (a deny answers continue: false)", True),
    Event("PostToolUse", "tool results (recorded)", False, "*"),
    Event("Stop", "the agent's answers (recorded)", False),
)

HOSTS: dict[str, Host] = {
    "claude-code": Host(
        name="claude-code",
        title="Claude Code",
        format="json-groups",
        events=_CLAUDE_EVENTS,
        paths=_claude_paths,
        entry=_claude_entry,
        binaries=("claude",),
        config_dirs=lambda p: (p.home / ".claude",),
        fails_open=(
            "a hook that cannot start, times out or exits with a code other than 0 or 2 lets "
            "the action through, unless the entry says onFailure: block (Claude Code 2.1.295+)",
            "an HTTP hook lets the action through when the server is down or slow",
        ),
        open_paths=(
            "a skill preloaded into a subagent (skills: in the agent file) fires no hook",
            "a typed /skill fires UserPromptExpansion, not PreToolUse (not installed here)",
            "a skill file changed mid-session fires ConfigChange only (not installed here)",
        ),
    ),
    "cursor": Host(
        name="cursor",
        title="Cursor",
        format="json-flat",
        events=(
            Event("preToolUse", "every tool call", True),
            Event("beforeShellExecution", "shell commands", True),
            Event("beforeMCPExecution", "MCP tool calls", True),
            Event("beforeReadFile", "file reads", True),
            Event("beforeSubmitPrompt", "prompts", True),
            Event("sessionStart", "session start (recorded; cannot block)", False),
        ),
        paths=_cursor_paths,
        entry=_cursor_entry,
        binaries=("cursor", "cursor-agent"),
        config_dirs=lambda p: (p.home / ".cursor",),
        skeleton={"version": 1},
        fails_open=(
            "an entry without failClosed lets the action through when the hook crashes, times "
            "out or answers invalid JSON (agbom's entries say failClosed: true)",
        ),
        open_paths=(
            "no hook event marks a skill load: skills are read as files (beforeReadFile, "
            "preToolUse Read) and cannot be approved by (skill_id, digest)",
            "permission: ask is not enforced at preToolUse: agbom answers ask there as deny",
            "beforeMCPExecution names the server only by its URL or command, not its "
            "configured name",
            "Tab completions (beforeTabFileRead) are not gated",
        ),
    ),
    "codex": Host(
        name="codex",
        title="Codex CLI",
        format="toml-groups",
        events=(
            Event("PreToolUse", "every tool call (Bash, apply_patch, MCP)", True, ".*"),
            Event("UserPromptSubmit", "prompts", True),
            Event("SessionStart", "session start (recorded; cannot block)", False),
        ),
        paths=_codex_paths,
        entry=_codex_entry,
        binaries=("codex",),
        config_dirs=lambda p: (_env_dir(p, "CODEX_HOME", p.home / ".codex"),),
        default_scope="managed",
        fails_open=(
            "every hook failure lets the call through: a crash, a timeout, an exit code other "
            "than 0 or 2, output its parser refuses (ask, a bare allow, an empty deny reason)",
        ),
        open_paths=(
            "no hook event names a skill activation: a skill is read through the shell or file "
            "tools, so it is seen only as those calls",
            "before 0.124.0, hooks do not run for apply_patch and MCP tools",
        ),
        scope_notes={
            "user": "Codex skips a user or project hook until it is trusted in /hooks (and "
            "after every change to it): review it there, or install with --scope managed",
            "project": "Codex skips a user or project hook until it is trusted in /hooks (and "
            "after every change to it), and loads project hooks only in a trusted project",
        },
    ),
    "gemini-cli": Host(
        name="gemini-cli",
        title="Gemini CLI",
        format="json-groups",
        events=(
            Event(
                "BeforeTool",
                "every tool call, MCP tools and skill loads (activate_skill) included",
                True,
                ".*",
            ),
            Event("BeforeAgent", "prompts", True),
            Event("SessionStart", "session start (recorded; cannot block)", False),
        ),
        paths=_gemini_paths,
        entry=_gemini_entry,
        binaries=("gemini",),
        config_dirs=lambda p: (p.home / ".gemini",),
        jsonc=True,
        fails_open=(
            "a hook that times out (60 s by default; agbom sets 10 s) or cannot be started "
            "lets the tool run",
            "exit code 1 is a warning: the tool runs",
        ),
        open_paths=(
            "skills shipped inside extensions are not found by the hook, so their loads are "
            "denied and cannot be approved",
            "project hooks are fingerprinted: a changed entry is reported as new and untrusted",
        ),
    ),
    "copilot": Host(
        name="copilot",
        title="GitHub Copilot CLI",
        format="json-flat",
        events=(
            Event("preToolUse", "every tool call", True),
            Event("sessionStart", "session start (recorded; cannot block)", False),
        ),
        paths=_copilot_paths,
        entry=_copilot_entry,
        binaries=("copilot",),
        config_dirs=lambda p: (_env_dir(p, "COPILOT_HOME", p.home / ".copilot"),),
        skeleton={"version": 1},
        fails_open=(
            "a command hook that times out lets the tool run (a crash or any other non-zero "
            "exit denies it)",
            "an HTTP preToolUse hook lets the tool run on a network error, timeout or non-2xx",
        ),
        open_paths=(
            "prompts cannot be blocked: userPromptSubmitted output is dropped for command and "
            "HTTP hooks",
            "no hook sees a skill being loaded: /skill-name expands without a tool call",
            "an HTTP preToolUse hook needs https:// (http only to localhost with "
            "COPILOT_HOOK_ALLOW_LOCALHOST=1)",
        ),
    ),
    "windsurf": Host(
        name="windsurf",
        title="Windsurf",
        format="json-flat",
        events=(
            Event("pre_run_command", "shell commands", True),
            Event("pre_mcp_tool_use", "MCP tool calls", True),
            Event("pre_read_code", "file reads", True),
            Event("pre_write_code", "file writes", True),
            Event("pre_user_prompt", "prompts", True),
        ),
        paths=_windsurf_paths,
        entry=_windsurf_entry,
        binaries=("windsurf",),
        config_dirs=lambda p: (p.home / ".codeium" / "windsurf",),
        fails_open=(
            "any exit code but 2 lets the action through: a hook that crashes, is missing or "
            "hangs fails open (no timeout is documented)",
        ),
        open_paths=(
            "no hook event marks a skill load",
            "there is no ask: agbom answers ask as a block",
        ),
    ),
    "opencode": Host(
        name="opencode",
        title="opencode",
        format="plugin",
        events=(
            Event(
                "tool.execute.before",
                "every tool call, MCP tools and skill loads (the skill tool) included",
                True,
            ),
        ),
        paths=_opencode_paths,
        entry=_no_entry,
        binaries=("opencode",),
        config_dirs=lambda p: (_env_dir(p, "XDG_CONFIG_HOME", p.home / ".config") / "opencode",),
        fails_open=(
            "none from the host: the plugin throws on any failure (agbom missing, a crash, no "
            "answer in 10 s), which stops the tool",
        ),
        open_paths=(
            "prompts are not gated (chat.message can change a message, not refuse it)",
            "permission.ask answers are not given by agbom: opencode's own permission rules "
            "still apply after agbom's allow",
        ),
    ),
}


def host(name: str) -> Host:
    """The row for ``name``; a one-line error naming the known hosts otherwise."""
    try:
        return HOSTS[name]
    except KeyError:
        raise HostConfigError(f"unknown host {name!r} (known: {', '.join(HOSTS)})") from None
