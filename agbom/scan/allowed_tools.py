"""The Agent Skills ``allowed-tools`` field: its grammar, and the capabilities its tools grant.

``allowed-tools`` is a string (space-separated per the spec; commas are common too) or a YAML
list. Each entry is ``Tool`` or ``Tool(pattern)``: ``Read``, ``Bash(gh issue list:*)``,
``mcp__github__create_issue``. Spaces and commas inside the parentheses belong to the pattern.

A tool is not a capability: ``Bash(gh issue list:*)`` grants ``process.execute`` (limited by its
pattern). :data:`TOOL_CAPABILITIES` maps the agent tools skills name to the capabilities the
rules reason about; a tool it does not know (MCP tools included) grants no capability it
could name, and is kept as written in ``allowed_tools``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_ENTRIES = 256  # a skill names a handful of tools; more is refused, not walked

# Agent tool -> capability (compared case-insensitively). Documented in docs/scan.md.
TOOL_CAPABILITIES: Mapping[str, str] = {
    "bash": "process.execute",
    "bashoutput": "process.execute",
    "killshell": "process.execute",
    "killbash": "process.execute",
    "powershell": "process.execute",
    "shell": "process.execute",
    "read": "fs.read",
    "glob": "fs.read",
    "grep": "fs.read",
    "ls": "fs.read",
    "notebookread": "fs.read",
    "write": "fs.write",
    "edit": "fs.write",
    "multiedit": "fs.write",
    "notebookedit": "fs.write",
    "webfetch": "net.http",
    "websearch": "net.http",
    "task": "agent.delegate",
    "agent": "agent.delegate",
}
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True, slots=True)
class AllowedTool:
    """One ``allowed-tools`` entry."""

    tool: str
    pattern: str | None = None  # the text inside the parentheses

    @property
    def capability(self) -> str | None:
        """The capability this tool grants, or ``None`` when the tool is not in the table (an
        MCP tool such as ``mcp__github__create_issue`` says nothing of what it does)."""
        return TOOL_CAPABILITIES.get(self.tool.lower())

    def to_json(self) -> dict[str, str]:
        out = {"tool": self.tool}
        if self.pattern is not None:
            out["pattern"] = self.pattern
        capability = self.capability
        if capability is not None:
            out["capability"] = capability
        return out


class AllowedToolsError(ValueError):
    """The field breaks the grammar; the message says where."""


def _split(text: str) -> list[str]:
    """Entries of the string form: separated by whitespace or commas outside parentheses."""
    entries: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                raise AllowedToolsError("a ')' closes no '('")
            depth -= 1
        if depth == 0 and (ch.isspace() or ch == ","):
            if current:
                entries.append("".join(current))
                current = []
            continue
        current.append(ch)
    if depth:
        raise AllowedToolsError("a '(' is not closed")
    if current:
        entries.append("".join(current))
    return entries


def parse_entry(entry: str) -> AllowedTool:
    """``Tool`` or ``Tool(pattern)``."""
    text = entry.strip()
    open_at = text.find("(")
    if open_at < 0:
        name, pattern = text, None
    else:
        if not text.endswith(")"):
            raise AllowedToolsError(f"entry {text!r} must be Tool or Tool(pattern)")
        name, pattern = text[:open_at].strip(), text[open_at + 1 : -1]
    if not _TOOL_NAME.match(name):
        raise AllowedToolsError(f"entry {text!r} must start with a tool name")
    return AllowedTool(name, pattern)


def parse_allowed_tools(value: Any) -> list[AllowedTool]:
    """Every entry of an ``allowed-tools`` value, in order; raises :class:`AllowedToolsError`."""
    if value is None:
        return []
    if isinstance(value, str):
        raw = _split(value)
    elif isinstance(value, list):
        raw = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise AllowedToolsError(
                    f"allowed-tools[{index}] must be a string, not {type(item).__name__}"
                )
            if item.strip():
                raw.append(item.strip())
    else:
        raise AllowedToolsError(
            f"'allowed-tools' must be a string or a list, not {type(value).__name__}"
        )
    if len(raw) > MAX_ENTRIES:
        raise AllowedToolsError(f"'allowed-tools' names more than {MAX_ENTRIES} tools")
    return [parse_entry(entry) for entry in raw]


def capabilities_of(tools: list[AllowedTool]) -> list[str]:
    """The capabilities ``tools`` grant, sorted and unique."""
    return sorted({c for c in (t.capability for t in tools) if c is not None})
