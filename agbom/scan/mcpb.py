"""MCP Bundles (MCPB, formerly DXT): a ``.mcpb`` zip, or its unpacked ``manifest.json``.

One bundle is one ``mcp_server`` component, pinned by the bundle's own name and version. A
zipped bundle is also pinned by the SHA-256 of the file, and its ``tools[]`` become ``tool``
components exposed by the server. Only ``manifest.json`` is read out of the zip, with its size
checked before it is inflated, so a crafted archive cannot make the scan unpack much.
"""

from __future__ import annotations

import hashlib
import io
import re
import shlex
import zipfile
from collections.abc import Mapping
from typing import Any

from agbom.scan._parse import ParseFailure, load_json
from agbom.scan.interface import FileError, ReadContext, ReadResult
from agbom.scan.redact import redact_args

BUNDLE_MAX_BYTES = 256 * 1024 * 1024
MANIFEST_MAX_BYTES = 1024 * 1024
_SERVER_TYPES = ("node", "python", "binary", "uv")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._@/+-]")


def looks_like_bundle_manifest(doc: Any) -> bool:
    """An MCPB (or older DXT) manifest: a version marker and a ``server`` object."""
    return (
        isinstance(doc, Mapping)
        and ("manifest_version" in doc or "dxt_version" in doc)
        and isinstance(doc.get("server"), Mapping)
    )


def _text(doc: Mapping[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) and value else None


def _manifest_from_zip(data: bytes) -> bytes:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ParseFailure(FileError("not a zip archive (an .mcpb bundle is one)")) from None
    with archive:
        try:
            info = archive.getinfo("manifest.json")
        except KeyError:
            raise ParseFailure(FileError("the bundle has no manifest.json at its root")) from None
        if info.file_size > MANIFEST_MAX_BYTES:
            raise ParseFailure(FileError(f"manifest.json is over {MANIFEST_MAX_BYTES} bytes"))
        try:
            with archive.open(info) as member:
                manifest = member.read(MANIFEST_MAX_BYTES + 1)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as exc:
            raise ParseFailure(FileError(f"cannot read manifest.json: {exc}")) from None
    if len(manifest) > MANIFEST_MAX_BYTES:
        raise ParseFailure(FileError(f"manifest.json is over {MANIFEST_MAX_BYTES} bytes"))
    return manifest


class McpbReader:
    """``*.mcpb`` bundles and unpacked bundle ``manifest.json`` files."""

    name = "mcpb"
    globs = ("*.mcpb", "*.dxt", "manifest.json")
    max_bytes = BUNDLE_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        result = ReadResult()
        zipped = ctx.path.suffix.lower() in (".mcpb", ".dxt")
        try:
            if not zipped and len(data) > MANIFEST_MAX_BYTES:
                raise ParseFailure(FileError(f"manifest.json is over {MANIFEST_MAX_BYTES} bytes"))
            doc = load_json(_manifest_from_zip(data) if zipped else data)
        except ParseFailure as exc:
            result.errors.append(exc.error)
            return result
        if not looks_like_bundle_manifest(doc):
            if zipped:
                result.errors.append(FileError("manifest.json is not an MCP bundle manifest"))
            else:
                result.skipped = "not an MCP bundle manifest"
            return result
        name = _text(doc, "name")
        if name is None:
            result.errors.append(FileError("'name' must be a non-empty string"))
            return result
        version = _text(doc, "version")
        server = doc["server"]
        server_type = server.get("type")
        if server_type not in _SERVER_TYPES:
            result.errors.append(
                FileError(f"server.type must be one of {', '.join(_SERVER_TYPES)}")
            )
            return result
        base = _ID_UNSAFE.sub("-", name)
        component: dict[str, Any] = {
            "id": f"mcp:mcpb/{base}@{version}" if version else f"mcp:mcpb/{base}",
            "type": "mcp_server",
            "name": name,
            "version": version,
            "endpoint": None,
            "tools": [],
            "transport": "stdio",
            "bundle": {"server_type": server_type},
            "_key": "server",
            "_path": ("server",),
        }
        for field in ("display_name", "description"):
            if _text(doc, field):
                component[field] = doc[field]
        author = doc.get("author")
        if isinstance(author, Mapping) and _text(author, "name"):
            component["publisher"] = author["name"]
        if zipped:
            component["digest"] = {
                "algorithm": "sha256",
                "value": hashlib.sha256(data).hexdigest(),
            }
        config = server.get("mcp_config")
        if isinstance(config, Mapping) and _text(config, "command"):
            raw_args = config.get("args")
            args = [str(a) for a in raw_args] if isinstance(raw_args, list) else []
            safe_argv, hits = redact_args([config["command"], *args])  # the command too
            safe = safe_argv[1:]
            component["command"] = shlex.join(safe_argv)
            component["args"] = safe
            env = config.get("env")
            if isinstance(env, Mapping) and env:
                component["env_keys"] = sorted(str(k) for k in env)
            redacted = ["command" if i == 0 else f"args[{i - 1}]" for i in hits]
            if redacted:
                component["redacted"] = redacted
        tools = doc.get("tools")
        if isinstance(tools, list):
            for index, tool in enumerate(tools):
                tool_name = _text(tool, "name") if isinstance(tool, Mapping) else None
                if tool_name is None:
                    result.errors.append(FileError(f"tools[{index}] has no name"))
                    continue
                tool_id = f"tool:mcpb/{base}/{_ID_UNSAFE.sub('-', tool_name)}"
                result.components.append(
                    {
                        "id": tool_id,
                        "type": "tool",
                        "name": tool_name,
                        "version": version,
                        "provider": name,
                        "capability": None,
                        "_key": f"tools[{index}]",
                        "_path": ("tools", index),
                    }
                )
                # What the bundle tells the model the tool does: part of its tool-set pin.
                described = result.components[-1]
                if isinstance(tool.get("description"), str):
                    described["description"] = tool["description"]
                if isinstance(tool.get("inputSchema"), Mapping):
                    described["inputSchema"] = tool["inputSchema"]
                component["tools"].append(tool_id)
        result.components.insert(0, component)
        return result
