"""One name for each tool, whatever host calls it.

Every host names its built-in tools its own way (Claude Code ``Bash``, Cursor ``Shell``,
Gemini CLI ``run_shell_command``, Copilot ``bash``, opencode ``bash``, Windsurf's
``pre_run_command`` event) and spells MCP tools differently (``mcp__srv__tool``,
``mcp_srv_tool``, ``srv_tool``, separate fields). A rule that bans ``Bash``, a lock that pins
``tool:crm/lookup`` and an approval of ``mcp_server:crm`` must apply to all of them, so every
host adapter passes its names through here: built-in tools become Claude Code's names (the
vocabulary the shipped packs, ``allowed-tools`` and Copilot's own Claude-compatible mapping
already use), MCP tools become ``(server, tool)``, and a shell tool's command line always
arrives in the ``command`` argument. A name this module does not know is kept as the host
sent it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SHELL = "Bash"
READ = "Read"
WRITE = "Write"
EDIT = "Edit"

# host name -> canonical name, per host (names compared as the host sends them).
_BUILTINS: dict[str, dict[str, str]] = {
    "cursor": {
        "Shell": SHELL,
        "Terminal": SHELL,
        "Read": READ,
        "ReadFile": READ,
        "Write": WRITE,
        "Edit": EDIT,
        "StrReplace": EDIT,
        "MultiEdit": EDIT,
        "Delete": "Delete",
        "Grep": "Grep",
        "Glob": "Glob",
        "LS": "LS",
        "Task": "Agent",
        "WebSearch": "WebSearch",
        "WebFetch": "WebFetch",
    },
    "codex": {
        "Bash": SHELL,
        "shell": SHELL,
        "local_shell": SHELL,
        "exec_command": SHELL,
        "apply_patch": EDIT,
        "web_search": "WebSearch",
    },
    "gemini-cli": {
        "run_shell_command": SHELL,
        "read_file": READ,
        "read_many_files": READ,
        "write_file": WRITE,
        "replace": EDIT,
        "glob": "Glob",
        "grep_search": "Grep",
        "search_file_content": "Grep",
        "list_directory": "LS",
        "web_fetch": "WebFetch",
        "google_web_search": "WebSearch",
        "write_todos": "TodoWrite",
        "invoke_agent": "Agent",
    },
    # Copilot's own table for its Claude-compatible payloads (github/docs hooks-reference).
    "copilot": {
        "bash": SHELL,
        "powershell": SHELL,
        "view": READ,
        "create": WRITE,
        "edit": EDIT,
        "str_replace_editor": EDIT,
        "apply_patch": EDIT,
        "grep": "Grep",
        "rg": "Grep",
        "glob": "Glob",
        "web_fetch": "WebFetch",
        "web_search": "WebSearch",
        "ask_user": "AskUserQuestion",
        "update_todo": "TodoWrite",
        "task": "Agent",
        "Task": "Agent",
    },
    "opencode": {
        "bash": SHELL,
        "read": READ,
        "write": WRITE,
        "edit": EDIT,
        "multiedit": EDIT,
        "patch": EDIT,
        "apply_patch": EDIT,
        "glob": "Glob",
        "grep": "Grep",
        "list": "LS",
        "webfetch": "WebFetch",
        "websearch": "WebSearch",
        "task": "Agent",
        "todowrite": "TodoWrite",
        "todoread": "TodoRead",
    },
    "windsurf": {},
}
# The argument holding a shell tool's command line, when a host uses another key.
_COMMAND_KEYS = ("command", "command_line", "commandLine", "cmd")
MAX_NAME = 256
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool as agbom names it: ``name`` in the shared vocabulary (for an MCP tool, the
    server's own name for it), ``server`` for an MCP tool, and what the host called it."""

    name: str
    server: str | None = None
    host_name: str = ""

    @property
    def subject(self) -> str:
        """How a deny message names it: ``server/tool``, or ``Bash (run_shell_command)``."""
        if self.server:
            return f"{self.server}/{self.name}"
        if self.host_name and self.host_name != self.name:
            return f"{self.name} ({self.host_name})"
        return self.name


def clean(name: str) -> str:
    """A name bounded in length and without control characters (they are the host's words)."""
    return _UNSAFE.sub("?", name)[:MAX_NAME]


def builtin(host: str, name: str) -> Tool:
    """A host's built-in tool under its shared name (the host's own name when unknown)."""
    name = clean(name)
    return Tool(name=_BUILTINS.get(host, {}).get(name, name), host_name=name)


def mcp(server: str, tool: str, *, host_name: str = "") -> Tool:
    """An MCP tool: ``(server, tool)``."""
    return Tool(name=clean(tool), server=clean(server), host_name=clean(host_name or tool))


def split_double_underscore(name: str) -> tuple[str, str] | None:
    """``mcp__<server>__<tool>`` (Claude Code, Codex) -> ``(server, tool)``; None otherwise.

    A plugin's server (``mcp__plugin_<plugin>_<server>__<tool>``) keeps its whole prefix as
    the server name: where the plugin name ends is not marked.
    """
    if not name.startswith("mcp__"):
        return None
    server, sep, tool = name[5:].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


def split_single_underscore(
    name: str, prefix: str = "", servers: Iterable[str] = ()
) -> tuple[str, str] | None:
    """``<prefix><server>_<tool>`` (Gemini CLI ``mcp_``, opencode no prefix) -> ``(server,
    tool)``: the longest of the known ``servers`` that fits, else the first ``_``.

    The split is ambiguous when a server's name holds ``_``: hosts that say which server
    it is (Gemini's ``mcp_context``) are read that way instead.
    """
    if prefix and not name.startswith(prefix):
        return None
    rest = name[len(prefix) :]
    for server in sorted((s for s in servers if s), key=len, reverse=True):
        if rest.startswith(server + "_") and len(rest) > len(server) + 1:
            return server, rest[len(server) + 1 :]
    server, sep, tool = rest.partition("_")
    if not sep or not server or not tool:
        return None
    return server, tool


def shell_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A shell tool's arguments with the command line under ``command`` (the key the runtime
    pack and every rule read), whatever key the host used; other arguments kept."""
    out = dict(arguments)
    if not isinstance(out.get("command"), str):
        for key in _COMMAND_KEYS[1:]:
            if isinstance(out.get(key), str):
                out["command"] = out.pop(key)
                break
    command = out.get("command")
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        out["command"] = shlex.join(command)  # an argv, as the shell would be given it
    return out
