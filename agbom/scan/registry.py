"""MCP Registry ``server.json`` reader: one ``mcp_server`` per package and per remote.

Package components use the same ids as servers found in client configs
(``mcp:npm/@scope/name@1.2.3``), so a registry entry and a config running the same pinned
package are one component found in two places.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packageurl import PackageURL

from agbom.scan._parse import recognized_json
from agbom.scan.interface import FileError, ReadContext, ReadResult
from agbom.scan.launchers import Package, exact_version, image_package, npm_package, pypi_package
from agbom.scan.mcp_server import package_component, unpinned_finding
from agbom.scan.redact import redact_url

SERVER_JSON_MAX_BYTES = 1024 * 1024


def looks_like_server_json(doc: Any) -> bool:
    """Positive recognition: the registry schema URL, or a reverse-DNS name with packages."""
    if not isinstance(doc, Mapping):
        return False
    schema = doc.get("$schema")
    if isinstance(schema, str) and "server.schema.json" in schema:
        return True
    name = doc.get("name")
    return (
        isinstance(name, str) and name.count("/") == 1 and ("packages" in doc or "remotes" in doc)
    )


def _package(entry: Mapping[str, Any], server_version: str | None) -> Package | None:
    kind = str(entry.get("registryType") or entry.get("registry_type") or "").lower()
    identifier = entry.get("identifier") or entry.get("name")
    if not isinstance(identifier, str) or not identifier:
        return None
    version = entry.get("version")
    version = version if isinstance(version, str) else None
    if kind == "npm":
        return npm_package(f"{identifier}@{version}" if version else identifier, "registry")
    if kind == "pypi":
        return pypi_package(f"{identifier}=={version}" if version else identifier, "registry")
    if kind in ("oci", "docker"):
        image = identifier
        if version and ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
            image = f"{image}:{version}"
        return image_package(image, "registry")
    if kind == "nuget":
        exact = exact_version(version)
        purl = PackageURL(type="nuget", name=identifier, version=exact).to_string()
        return Package("nuget", identifier, exact, purl, "registry", None if exact else version)
    return None


class ServerJsonReader:
    """MCP Registry ``server.json``."""

    name = "mcp-registry"
    globs = ("server.json",)
    max_bytes = SERVER_JSON_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        """Emit each package and remote; an unusable one is a located error."""
        result = ReadResult()
        doc = recognized_json(
            data, result, looks_like_server_json, "not an MCP Registry server.json"
        )
        if doc is None:
            return result
        name = doc.get("name")
        if not isinstance(name, str) or not name:
            result.errors.append(FileError("'name' must be a non-empty string"))
            return result
        version = doc.get("version")
        if version == "latest":
            result.errors.append(FileError("'version' must be exact, not 'latest'"))
        common: dict[str, Any] = {"registry_name": name}
        for field in ("title", "description"):
            if isinstance(doc.get(field), str):
                common[field] = doc[field]
        packages = doc.get("packages", [])
        remotes = doc.get("remotes", [])
        if not isinstance(packages, list):
            result.errors.append(FileError("'packages' must be an array"))
            packages = []
        if not isinstance(remotes, list):
            result.errors.append(FileError("'remotes' must be an array"))
            remotes = []
        for index, entry in enumerate(packages):
            where = f"packages[{index}]"
            if not isinstance(entry, Mapping):
                result.errors.append(FileError(f"{where} must be an object"))
                continue
            package = _package(entry, version if isinstance(version, str) else None)
            if package is None:
                result.errors.append(
                    FileError(f"{where}: unsupported or missing registryType/identifier")
                )
                continue
            transport = entry.get("transport")
            transport_type = (
                str(transport.get("type")) if isinstance(transport, Mapping) else "stdio"
            )
            extra = dict(common)
            env = entry.get("environmentVariables") or entry.get("environment_variables")
            if isinstance(env, list):
                keys = sorted(str(e["name"]) for e in env if isinstance(e, Mapping) and "name" in e)
                if keys:
                    extra["env_keys"] = keys
            component = package_component(
                name=name, package=package, transport=transport_type, extra=extra
            )
            component["_key"] = where
            component["_path"] = ("packages", index)
            result.components.append(component)
            if not package.pinned:
                result.findings.append(unpinned_finding(component, ctx.display))
        for index, entry in enumerate(remotes):
            where = f"remotes[{index}]"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("url"), str):
                result.errors.append(FileError(f"{where} must be an object with a 'url' string"))
                continue
            endpoint, changed = redact_url(entry["url"])
            component = {
                "id": f"mcp:{endpoint.split('?', 1)[0]}",
                "type": "mcp_server",
                "name": name,
                "version": version if isinstance(version, str) and version != "latest" else None,
                "endpoint": endpoint,
                "tools": [],
                "transport": str(entry.get("type") or "streamable-http"),
                "remote": True,
                "_key": where,
                "_path": ("remotes", index),
                **common,
            }
            headers = entry.get("headers")
            if isinstance(headers, list):
                keys = sorted(
                    str(h["name"]) for h in headers if isinstance(h, Mapping) and "name" in h
                )
                if keys:
                    component["header_keys"] = keys
            if changed:
                component["redacted"] = ["endpoint"]
            result.components.append(component)
        if not packages and not remotes and not result.errors:
            result.skipped = "server.json declares no packages or remotes"
        return result
