"""MCP Bundles (MCPB, formerly DXT): a ``.mcpb`` zip, or its unpacked ``manifest.json``.

One bundle is one ``mcp_server`` component, pinned by the bundle's own name and version. A
zipped bundle is also pinned by the SHA-256 of the file, and its ``tools[]`` become ``tool``
components exposed by the server. Out of the zip, ``manifest.json`` is read with its size
checked before it is inflated, and the bundled dependencies are collected as exact purls on the
server's ``packages`` list (what ``--osv`` matches, as for a skill's pins): the ``name`` and
``version`` of every ``node_modules/[@scope/]NAME/package.json`` and the names of
``NAME-VERSION.dist-info`` folders (no read needed). Entry count, bytes per file and bytes in
all are bounded before anything is inflated, so a crafted archive cannot make the scan unpack
much; nothing in the bundle is ever run.
"""

from __future__ import annotations

import hashlib
import io
import re
import shlex
import zipfile
from collections.abc import Mapping
from typing import Any

import orjson
from packageurl import PackageURL

from agbom.scan import plaintext
from agbom.scan._parse import ParseFailure, load_json
from agbom.scan.interface import FileError, ReadContext, ReadResult
from agbom.scan.redact import redact_args
from agbom.scan.skill_packages import _NPM_EXACT, _NPM_NAME

BUNDLE_MAX_BYTES = 256 * 1024 * 1024
MANIFEST_MAX_BYTES = 1024 * 1024
# Bounds on the bundled-dependency walk; each is checked before a member is inflated.
# Real Node bundles ship tens of thousands of files and a few thousand packages, so the
# bounds sit well above that: crossing one is a file error (what could not be checked is
# never passed as checked), and that must stay rare on honest bundles. Names cost no reads
# (zipfile holds the central directory); package.json reads are what the byte bounds limit.
DEPENDENCY_MAX_ENTRIES = 100_000  # zip entry names looked at
DEPENDENCY_MAX_PACKAGES = 10_000
PACKAGE_JSON_MAX_BYTES = 64 * 1024
DEPENDENCY_MAX_INFLATED = 32 * 1024 * 1024  # package.json bytes inflated in all
_DIST_INFO = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([0-9][A-Za-z0-9.+!]*)$")
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


def _safe_segments(name: str) -> list[str] | None:
    """The ``/``-separated parts of a zip entry name, or None for a name that could point
    outside the bundle (absolute, drive letter, backslash, ``..``, empty or NUL parts)."""
    if not name or name.startswith("/") or "\\" in name or "\x00" in name or ":" in name:
        return None
    parts = name.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def _npm_package(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """The exact purl a bundled ``package.json`` names (its own ``name`` and ``version``)."""
    try:
        with archive.open(info) as member:
            raw = member.read(PACKAGE_JSON_MAX_BYTES + 1)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError):
        return None
    if len(raw) > PACKAGE_JSON_MAX_BYTES:  # the header lied about the size
        return None
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, Mapping):
        return None
    name, version = doc.get("name"), doc.get("version")
    if not isinstance(name, str) or not isinstance(version, str) or not _NPM_NAME.match(name):
        return None
    exact = _NPM_EXACT.match(version)
    if exact is None:
        return None
    scope, _, bare = name.rpartition("/")
    purl = PackageURL(type="npm", namespace=scope or None, name=bare, version=exact.group(1))
    return purl.to_string()


def _is_package_json(parts: list[str]) -> bool:
    """``node_modules/NAME/package.json`` or ``node_modules/@scope/NAME/package.json``, at any
    depth of nested ``node_modules``; not a package's own inner files."""
    if len(parts) < 3 or parts[-1] != "package.json":
        return False
    if parts[-3] == "node_modules":
        return not parts[-2].startswith("@")
    return len(parts) >= 4 and parts[-3].startswith("@") and parts[-4] == "node_modules"


def _dist_info_package(parts: list[str]) -> str | None:
    """The PyPI purl of a ``NAME-VERSION.dist-info`` folder on the path, name per PEP 503."""
    for part in parts:
        if part.endswith(".dist-info"):
            found = _DIST_INFO.match(part[: -len(".dist-info")])
            if found is None:
                return None
            name = re.sub(r"[-_.]+", "-", found.group(1)).lower()
            return PackageURL(type="pypi", name=name, version=found.group(2)).to_string()
    return None


def _bundled_packages(archive: zipfile.ZipFile) -> tuple[list[str], list[FileError]]:
    """Exact purls of the bundle's ``node_modules`` packages and ``*.dist-info`` folders,
    sorted and without duplicates, and one warning per bound that cut the walk short."""
    found: set[str] = set()
    warnings: list[FileError] = []
    inflated = oversized = 0
    budget_spent = False
    entries = archive.infolist()
    if len(entries) > DEPENDENCY_MAX_ENTRIES:
        warnings.append(
            FileError(
                f"bundled dependencies: only the first {DEPENDENCY_MAX_ENTRIES} of "
                f"{len(entries)} zip entries were looked at"
            )
        )
    for info in entries[:DEPENDENCY_MAX_ENTRIES]:
        parts = _safe_segments(info.filename)
        if parts is None:
            continue  # a traversal name: never followed, never reported as a package
        purl: str | None = None
        if _is_package_json(parts) and not info.is_dir():
            if info.file_size > PACKAGE_JSON_MAX_BYTES:
                oversized += 1
                continue
            if inflated + info.file_size > DEPENDENCY_MAX_INFLATED:
                budget_spent = True
                continue
            inflated += info.file_size
            purl = _npm_package(archive, info)
        elif "node_modules" not in parts:
            purl = _dist_info_package(parts)
        if purl is None or purl in found:
            continue
        if len(found) >= DEPENDENCY_MAX_PACKAGES:
            warnings.append(
                FileError(
                    f"bundled dependencies: more than {DEPENDENCY_MAX_PACKAGES}; the rest skipped"
                )
            )
            break
        found.add(purl)
    if oversized:
        warnings.append(
            FileError(
                f"bundled dependencies: {oversized} package.json over "
                f"{PACKAGE_JSON_MAX_BYTES} bytes skipped"
            )
        )
    if budget_spent:
        warnings.append(
            FileError(
                f"bundled dependencies: package.json files past {DEPENDENCY_MAX_INFLATED} bytes "
                "in all skipped"
            )
        )
    return sorted(found), warnings


def _read_zip(data: bytes) -> tuple[bytes, list[str], list[FileError]]:
    """``manifest.json``, the bundled dependencies' purls and the warnings of that walk."""
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
        packages, warnings = _bundled_packages(archive)
    return manifest, packages, warnings


class McpbReader:
    """``*.mcpb`` bundles and unpacked bundle ``manifest.json`` files."""

    name = "mcpb"
    globs = ("*.mcpb", "*.dxt", "manifest.json")
    max_bytes = BUNDLE_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        result = ReadResult()
        zipped = ctx.path.suffix.lower() in (".mcpb", ".dxt")
        packages: list[str] = []
        try:
            if zipped:
                manifest, packages, warnings = _read_zip(data)
                result.errors.extend(warnings)
            elif len(data) > MANIFEST_MAX_BYTES:
                raise ParseFailure(FileError(f"manifest.json is over {MANIFEST_MAX_BYTES} bytes"))
            else:
                manifest = data
            doc = load_json(manifest)
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
        if packages:
            component["packages"] = packages  # matched by --osv like a skill's pins
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
            # A bundle ships its config to every user: a credential in it is everyone's.
            secrets = [(f"mcp_config.env.{k}", kind) for k, kind in plaintext.in_mapping(env)]
            secrets += [
                ("mcp_config.command" if i == 0 else f"mcp_config.args[{i - 1}]", kind)
                for i, kind in plaintext.in_args([config["command"], *args], safe_argv, hits)
            ]
            if secrets:
                component["plaintext_secrets"] = plaintext.entries(secrets, ctx.display)
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
