"""OpenAI Agents SDK sources: MCP servers an agent is built with, read from Python code.

The SDK has no configuration file: servers are constructed in code, as
``MCPServerStdio(params={"command": …, "args": […]})``, ``MCPServerSse``,
``MCPServerStreamableHttp`` (``params={"url": …}``) and ``HostedMCPTool(tool_config={…,
"server_label", "server_url"})``. The source is parsed, never run. Only literal arguments are
read; a server whose parameters are computed at run time is reported as an error on its line
rather than guessed. Python files that mention none of these names are passed over without a
report line (:attr:`AgentsSdkReader.quiet`): a scanned tree may hold thousands of them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from agbom.scan.interface import FileError, ReadContext, ReadResult
from agbom.scan.mcp_server import EntryError, server_component

SOURCE_MAX_BYTES = 1024 * 1024
_TRANSPORT = {
    "MCPServerStdio": "stdio",
    "MCPServerSse": "sse",
    "MCPServerStreamableHttp": "streamable-http",
}
_MARKERS = (b"MCPServerStdio", b"MCPServerSse", b"MCPServerStreamableHttp", b"HostedMCPTool")


class _NotLiteral(Exception):
    """Internal: an argument is computed at run time."""


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


# Maps whose values are never kept (only their key names are), so values computed at run time
# (``os.environ["TOKEN"]``) do not make the server unreadable.
_NAMES_ONLY = frozenset({"env", "headers"})


def _first(call: ast.Call) -> ast.expr | None:
    return call.args[0] if call.args else None


def _literal(node: ast.expr | None, *, names_only: bool = False) -> Any:
    """A literal value; dicts and ``SomethingParams(k=…)`` calls are read key by key."""
    if node is None:
        return None
    if isinstance(node, ast.Call) and not node.args and all(k.arg for k in node.keywords):
        return {k.arg: _literal(k.value, names_only=k.arg in _NAMES_ONLY) for k in node.keywords}
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key_node, value in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise _NotLiteral  # a ** expansion
            key = _literal(key_node)
            if names_only:
                out[key] = None
            else:
                out[key] = _literal(value, names_only=key in _NAMES_ONLY)
        return out
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _NotLiteral from None


class AgentsSdkReader:
    """``*.py`` files that construct Agents SDK MCP servers."""

    name = "agents-sdk"
    globs = ("*.py",)
    max_bytes = SOURCE_MAX_BYTES
    quiet = True  # a Python file without any of the SDK's MCP names is not listed

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        result = ReadResult()
        if not any(marker in data for marker in _MARKERS):
            result.skipped = "no Agents SDK MCP server in this file"
            return result
        try:
            tree = ast.parse(data, filename=ctx.display)
        except SyntaxError as exc:
            result.errors.append(FileError(f"not valid Python: {exc.msg}", exc.lineno, None))
            return result
        except (ValueError, RecursionError, MemoryError) as exc:
            result.errors.append(FileError(f"cannot parse: {type(exc).__name__}"))
            return result
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self._server(node, ctx, result)
        if not result.components and not result.errors:
            result.skipped = "no Agents SDK MCP server is constructed in this file"
        return result

    def _server(self, call: ast.Call, ctx: ReadContext, result: ReadResult) -> None:
        kind = _called_name(call)
        if kind not in _TRANSPORT and kind != "HostedMCPTool":
            return
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        line = call.lineno
        try:
            if kind == "HostedMCPTool":
                config = _literal(keywords.get("tool_config") or _first(call))
                if not isinstance(config, Mapping):
                    raise EntryError("'tool_config' must be a dict")
                label = config.get("server_label")
                key = label if isinstance(label, str) and label else f"hosted-mcp@{line}"
                entry: Any = {"url": config.get("server_url"), "type": "streamable-http"}
                if isinstance(config.get("headers"), Mapping):
                    entry["headers"] = config["headers"]
            else:
                params = _literal(keywords.get("params") or _first(call))
                if not isinstance(params, Mapping):
                    raise EntryError("'params' must be a dict")
                name = _literal(keywords.get("name"))
                key = name if isinstance(name, str) and name else f"{kind}@{line}"
                entry = {**params, "type": _TRANSPORT[kind]}
            component, findings = server_component(str(key), entry, display=ctx.display)
        except _NotLiteral:
            result.errors.append(
                FileError(f"{kind}: parameters are computed at run time; not inventoried", line)
            )
            return
        except EntryError as exc:
            result.errors.append(FileError(f"{kind}: {exc}", line))
            return
        component["_key"] = f"line {line}"
        component["_line"] = line  # the scanner turns it into the span of that line
        result.components.append(component)
        result.findings.extend(findings)
