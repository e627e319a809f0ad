"""Readers for MCP client configurations: one per client format, each bound to its globs.

Claude Desktop, Claude Code (project ``.mcp.json``, ``~/.claude.json``, ``managed-mcp.json``,
plugins), Cursor, VS Code (``mcp.json`` and ``settings.json``), Windsurf, Gemini CLI, Codex
(TOML), opencode (JSONC), Goose (YAML ``extensions``), Zed (``context_servers``), Continue
(YAML ``mcpServers`` lists) and generic ``mcp.json``. They differ only in where the server map
lives and in a few field names, so each reader is a :class:`McpConfigReader` configured with
a "sections" function and its field conventions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agbom.scan._parse import ParseFailure, load_json, load_toml, load_yaml, positions_of
from agbom.scan._positions import KeyPath, LineText, Positions
from agbom.scan.interface import FileError, ReadContext, ReadResult
from agbom.scan.mcp_server import EntryError, server_component

CONFIG_MAX_BYTES = 1024 * 1024
# ~/.claude.json also holds Claude Code's per-project history and grows large.
CLAUDE_USER_MAX_BYTES = 32 * 1024 * 1024

# A section: (label shown in errors, the server map, or a non-map to report as wrong type,
# the key path in the document of each entry by its key, for locating it).
Section = tuple[str, Any, Callable[[str], KeyPath]]
SectionsFn = Callable[[Any, ReadContext], Iterator[Section]]


class _NoServers(Exception):
    """Internal: the file parsed but configures no MCP servers (reported as skipped)."""


def _under(*base: str) -> Callable[[str], KeyPath]:
    """Entries keyed by name directly under ``base`` in the document."""
    return lambda key: (*base, key)


def _top_object(doc: Any) -> Mapping[str, Any]:
    """``doc`` itself; a config whose top level is not an object is a parse failure."""
    if not isinstance(doc, Mapping):
        raise ParseFailure(FileError(f"top level must be an object, not {type(doc).__name__}"))
    return doc


def _section(doc: Any, key: str) -> Any:
    """The value under ``key`` of a config object; a file without it has no servers."""
    value = _top_object(doc).get(key)
    if value is None:
        raise _NoServers(f"no {key!r} in this file")
    return value


def _top(key: str) -> SectionsFn:
    def sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
        doc = _top_object(doc)
        if key not in doc:
            raise _NoServers(f"no {key!r} in this file")
        yield key, doc[key], _under(key)

    return sections


def _generic_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """Generic ``mcp.json``: the ``mcpServers`` shape or VS Code's ``servers`` shape."""
    doc = _top_object(doc)
    found = False
    for key in ("mcpServers", "servers"):
        if key in doc:
            found = True
            yield key, doc[key], _under(key)
    if not found:
        raise _NoServers("no 'mcpServers' or 'servers' in this file")


def _claude_user_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """``~/.claude.json``: top-level ``mcpServers`` and ``projects.<path>.mcpServers``."""
    doc = _top_object(doc)
    found = False
    if "mcpServers" in doc:
        found = True
        yield "mcpServers", doc["mcpServers"], _under("mcpServers")
    projects = doc.get("projects")
    if isinstance(projects, Mapping):
        for project, settings in sorted(projects.items()):
            if isinstance(settings, Mapping) and "mcpServers" in settings:
                found = True
                yield (
                    f"projects.{project}.mcpServers",
                    settings["mcpServers"],
                    _under("projects", str(project), "mcpServers"),
                )
    elif projects is not None:
        yield "projects", projects, _under("projects")  # wrong type, reported by the caller
        found = True
    if not found:
        raise _NoServers("no MCP servers configured in this file")


def _vscode_settings_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """VS Code ``settings.json``: the ``mcp.json`` object nested under ``"mcp"``."""
    doc = _top_object(doc)
    mcp = doc.get("mcp")
    if mcp is None:
        raise _NoServers("no 'mcp' settings in this file")
    if not isinstance(mcp, Mapping):
        yield "mcp", mcp, _under("mcp")
        return
    if "servers" not in mcp:
        raise _NoServers("no 'mcp.servers' in this file")
    yield "mcp.servers", mcp["servers"], _under("mcp", "servers")


# Goose extension types that run inside Goose itself: not MCP servers a scan can pin.
_GOOSE_IN_PROCESS = frozenset({"builtin", "platform", "frontend", "inline_python"})


def _goose_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """Goose ``config.yaml``: ``extensions`` keyed by name (``cmd``, ``args``, ``envs``,
    ``uri``); built-in and platform extensions are part of Goose and are left out."""
    extensions = _section(doc, "extensions")
    if not isinstance(extensions, Mapping):
        yield "extensions", extensions, _under("extensions")
        return
    external = {
        key: entry
        for key, entry in extensions.items()
        if not (isinstance(entry, Mapping) and entry.get("type") in _GOOSE_IN_PROCESS)
    }
    if not external:
        raise _NoServers("only Goose's built-in extensions are configured")
    yield "extensions", external, _under("extensions")


def _zed_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """Zed ``settings.json``: ``context_servers`` keyed by name. Older Zed nests the command
    as ``{"command": {"path", "args", "env"}}``; servers provided by a Zed extension carry no
    command and are left out."""
    servers = _section(doc, "context_servers")
    if not isinstance(servers, Mapping):
        yield "context_servers", servers, _under("context_servers")
        return
    flat: dict[str, Any] = {}
    for key, entry in servers.items():
        if isinstance(entry, Mapping) and isinstance(entry.get("command"), Mapping):
            nested = entry["command"]
            entry = {**entry, "command": nested.get("path"), "args": nested.get("args")}
            if nested.get("env") is not None:
                entry["env"] = nested.get("env")
        if isinstance(entry, Mapping) and "command" not in entry and "url" not in entry:
            continue  # provided by a Zed extension: nothing here says what runs
        flat[str(key)] = entry
    if not flat:
        raise _NoServers("no context server here says what it runs")
    yield "context_servers", flat, _under("context_servers")


def _continue_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """Continue ``config.yaml`` and ``.continue/mcpServers/*.yaml``: ``mcpServers`` is a list
    of entries that carry their own ``name``."""
    servers = _section(doc, "mcpServers")
    if not isinstance(servers, list):
        yield "mcpServers", servers, _under("mcpServers")
        return
    named: dict[str, Any] = {}
    index_of: dict[str, int] = {}
    for index, entry in enumerate(servers):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        key = name if isinstance(name, str) and name and name not in named else f"[{index}]"
        named[key] = entry
        index_of[key] = index
    yield "mcpServers", named, lambda key: ("mcpServers", index_of.get(key, -1))


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _plugin_sections(doc: Any, ctx: ReadContext) -> Iterator[Section]:
    """``.claude-plugin/plugin.json``: inline ``mcpServers`` or a path to a JSON file of them."""
    doc = _top_object(doc)
    value = doc.get("mcpServers")
    if value is None:
        raise _NoServers("this plugin declares no MCP servers")
    if not isinstance(value, str):
        yield "mcpServers", value, _under("mcpServers")
        return
    # A path relative to the plugin root (the folder holding .claude-plugin/).
    plugin_root = ctx.path.parent.parent
    target = (plugin_root / value).resolve()
    if not _inside(target, ctx.roots):
        raise ParseFailure(FileError(f"mcpServers file {value!r} is outside the scanned tree"))
    try:
        with open(target, "rb") as handle:
            data = handle.read(CONFIG_MAX_BYTES + 1)
    except OSError as exc:
        raise ParseFailure(
            FileError(f"cannot read mcpServers file {value!r}: {exc.strerror or exc}")
        ) from None
    if len(data) > CONFIG_MAX_BYTES:
        raise ParseFailure(FileError(f"mcpServers file {value!r} is over {CONFIG_MAX_BYTES} bytes"))
    try:
        referenced = load_json(data)
    except ParseFailure as exc:
        raise ParseFailure(FileError(f"mcpServers file {value!r}: {exc.error}")) from None
    if isinstance(referenced, Mapping) and "mcpServers" in referenced:
        referenced = referenced["mcpServers"]
    # The entries are in the other file; what this file says is where it points to them.
    yield f"mcpServers ({value})", referenced, lambda key: ("mcpServers",)


def _fold(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def _package_span(
    positions: Positions,
    path: KeyPath,
    entry: Mapping[str, Any],
    reader: McpConfigReader,
    component: Mapping[str, Any],
) -> Any:
    """The span of the argument that names the component's package (``"@x/server@latest"``,
    ``"mcp-server-fetch"``, an image reference): what a finding about the package's pin is
    about. ``None`` when no single argument names it (a command given as one string)."""
    package = component.get("package")
    name = package.get("name") if isinstance(package, Mapping) else None
    if not isinstance(name, str) or not name:
        return None
    wanted = _fold(name)
    lists: list[tuple[str, Any]] = [("args", entry.get("args"))]
    if reader.command_as_list:
        lists.insert(0, (reader.command_field, entry.get(reader.command_field)))
    for key, items in lists:
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items[:256]):  # bounded: a package comes early
            if isinstance(item, str) and wanted in _fold(item):
                return positions.get((*path, key, index))
    return None


def _field_spans(
    positions: Positions,
    path: KeyPath,
    entry: Any,
    reader: McpConfigReader,
    component: Mapping[str, Any],
    lines: LineText,
) -> dict[str, Any]:
    """Where the entry says what runs (``command``), which package (``package``: the
    argument naming it) and where it connects (``endpoint``)."""
    if not isinstance(entry, Mapping) or len(path) < 1 or path[-1] == -1:
        return {}
    out: dict[str, Any] = {}
    package = _package_span(positions, path, entry, reader, component)
    if package is not None:
        out["package"] = package
    for name, _ in reader.url_fields:
        if name in entry:
            span = positions.get((*path, name))
            if span is not None:
                value = entry[name]
                found = lines.value_after(span, value) if isinstance(value, str) else None
                out["endpoint"] = found or span  # the URL itself, else its key
            break
    span = positions.get((*path, reader.command_field))
    if span is not None:
        out["command"] = span
    out.update(_secret_spans(positions, path, entry, component, lines))
    return out


_INDEXED = re.compile(r"(.+)\[(\d+)\]")


def _secret_spans(
    positions: Positions,
    path: KeyPath,
    entry: Mapping[str, Any],
    component: Mapping[str, Any],
    lines: LineText,
) -> dict[str, Any]:
    """``secret:FIELD`` for each field holding a plaintext credential (``args[2]``,
    ``env.GITHUB_TOKEN``, ``headers.Authorization``, ``url``): the span of its value as
    written, where AGB-SEC-001 points (never the value itself: only lines and columns)."""
    out: dict[str, Any] = {}
    secrets = component.get("plaintext_secrets")
    for item in secrets if isinstance(secrets, list) else ():
        field = item.get("field") if isinstance(item, Mapping) else None
        if not isinstance(field, str) or f"secret:{field}" in out:
            continue
        indexed = _INDEXED.fullmatch(field)
        if indexed is not None:  # args[2], command[1]: the item's token is the value
            span = positions.get((*path, indexed.group(1), int(indexed.group(2))))
            value = None
        elif "." in field:  # env.KEY, headers.KEY: the key, then its value after it
            section, key = field.split(".", 1)
            span = positions.get((*path, section, key))
            values = entry.get(section)
            value = values.get(key) if isinstance(values, Mapping) else None
        else:  # command, url: the key, then its value
            span = positions.get((*path, field))
            value = entry.get(field)
        if span is not None:
            found = lines.value_after(span, value) if isinstance(value, str) else None
            out[f"secret:{field}"] = found or span
    return out


# Configs larger than this are read without indexing where each value sits: the positions of
# a 5 MB ~/.claude.json cost 2.6 s to index and no finding may need them (issue 41).
DEFER_POSITIONS_BYTES = 256 * 1024


@dataclass(frozen=True)
class McpConfigReader:
    """An MCP client configuration format."""

    name: str
    globs: tuple[str, ...]
    sections: SectionsFn
    max_bytes: int = CONFIG_MAX_BYTES
    toml: bool = False
    yaml: bool = False
    jsonc: bool = False
    command_as_list: bool = False
    url_fields: tuple[tuple[str, str | None], ...] = (("url", None),)
    env_field: str = "env"
    command_field: str = "command"

    @property
    def syntax(self) -> str:
        return "toml" if self.toml else "yaml" if self.yaml else "json"

    def parse(self, data: bytes) -> Any:
        if self.toml:
            return load_toml(data)
        if self.yaml:
            try:
                return load_yaml(data.decode("utf-8"))
            except UnicodeDecodeError:
                raise ParseFailure(FileError("not UTF-8 text")) from None
        return load_json(data, jsonc=self.jsonc)

    def read(self, data: bytes, ctx: ReadContext, *, place: bool | None = None) -> ReadResult:
        """Every server entry becomes a component or a located error.

        ``place``: index positions to place each entry (``None``: only for files up to
        :data:`DEFER_POSITIONS_BYTES`; a larger file's entries are placed when a finding asks,
        by reading the file again: the scanner's ``_deferred``)."""
        result = ReadResult()
        if place is None:
            place = len(data) <= DEFER_POSITIONS_BYTES
        entries = 0
        try:
            doc = self.parse(data)
            sections = list(self.sections(doc, ctx))
        except ParseFailure as exc:
            result.errors.append(exc.error)
            return result
        except _NoServers as exc:
            result.skipped = str(exc)
            return result
        positions: Positions | None = None
        lines = LineText(data)
        for label, servers, entry_path in sections:
            if not isinstance(servers, Mapping):
                result.errors.append(
                    FileError(f"{label!r} must be an object, not {type(servers).__name__}")
                )
                continue
            for key, entry in servers.items():
                if positions is None and place:
                    positions = positions_of(data, self.syntax)  # once, and only when needed
                path = entry_path(str(key))
                at = positions.nearest(path) if positions is not None else None
                entries += 1
                try:
                    component, findings = server_component(
                        str(key),
                        entry,
                        display=ctx.display,
                        command_as_list=self.command_as_list,
                        url_fields=self.url_fields,
                        env_field=self.env_field,
                        command_field=self.command_field,
                    )
                except EntryError as exc:
                    if positions is None:  # an error is placed now: it is reported anyway
                        positions = positions_of(data, self.syntax)
                    at = positions.nearest(path)
                    for field, problem in exc.problems:  # every problem, at its field
                        spot = (positions.get((*path, field)) if field else None) or at
                        result.errors.append(
                            FileError(
                                f"{label}.{key}: {problem}",
                                spot.line if spot else None,
                                spot.column if spot else None,
                            )
                        )
                    continue
                component["_key"] = f"{label}.{key}"
                if not place:
                    component["_deferred"] = (self.name, entries)
                elif at is not None and positions is not None:
                    component["_at"] = at
                    fields = _field_spans(positions, path, entry, self, component, lines)
                    if fields:
                        component["_fields"] = fields
                result.components.append(component)
                result.findings.extend(findings)
        return result


READERS: tuple[McpConfigReader, ...] = (
    McpConfigReader(
        "claude-desktop",
        ("claude_desktop_config.json",),
        _top("mcpServers"),
    ),
    McpConfigReader(
        "claude-code",
        (".mcp.json", "managed-mcp.json"),
        _top("mcpServers"),
    ),
    McpConfigReader(
        "claude-code-user",
        (".claude.json",),
        _claude_user_sections,
        max_bytes=CLAUDE_USER_MAX_BYTES,
    ),
    McpConfigReader("claude-plugin", (".claude-plugin/plugin.json",), _plugin_sections),
    McpConfigReader("cursor", (".cursor/mcp.json",), _top("mcpServers")),
    McpConfigReader(
        "vscode",
        (".vscode/mcp.json", "User/mcp.json"),
        _top("servers"),
        jsonc=True,
    ),
    McpConfigReader(
        "vscode-settings",
        (".vscode/settings.json", "User/settings.json"),
        _vscode_settings_sections,
        jsonc=True,
    ),
    McpConfigReader(
        "windsurf",
        ("mcp_config.json", ".windsurf/mcp.json"),
        _top("mcpServers"),
        url_fields=(("serverUrl", None), ("url", None)),
    ),
    McpConfigReader(
        "gemini",
        (".gemini/settings.json",),
        _top("mcpServers"),
        jsonc=True,
        url_fields=(("httpUrl", "streamable-http"), ("url", "sse")),
    ),
    McpConfigReader(
        "codex",
        (".codex/config.toml",),
        _top("mcp_servers"),
        toml=True,
    ),
    McpConfigReader(
        "opencode",
        ("opencode.json", "opencode.jsonc"),
        _top("mcp"),
        jsonc=True,
        command_as_list=True,
        env_field="environment",
    ),
    McpConfigReader(
        "antigravity",
        ("antigravity/mcp_config.json",),
        _top("mcpServers"),
        url_fields=(("serverUrl", None), ("url", None)),
    ),
    McpConfigReader("kiro", (".kiro/settings/mcp.json",), _top("mcpServers")),
    McpConfigReader(
        "goose",
        ("goose/config.yaml", "goose/config/config.yaml"),
        _goose_sections,
        yaml=True,
        command_field="cmd",
        env_field="envs",
        url_fields=(("uri", None), ("url", None)),
    ),
    McpConfigReader("zed", ("zed/settings.json", ".zed/settings.json"), _zed_sections, jsonc=True),
    McpConfigReader(
        "continue",
        (".continue/config.yaml", ".continue/mcpServers/*.yaml", ".continue/mcpServers/*.yml"),
        _continue_sections,
        yaml=True,
    ),
    McpConfigReader("mcp-json", ("mcp.json",), _generic_sections, jsonc=True),
)

__all__ = ["CONFIG_MAX_BYTES", "READERS", "McpConfigReader"]
