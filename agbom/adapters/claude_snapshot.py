"""The session's AgBOM from the inventory a Claude Code hook read at ``SessionStart``.

The hook process lists what the session can load (agbom/adapters/claude_inventory.py); this
module, in the deciding process, turns that report into an ``agbom/snapshot`` payload with the
scanner's own readers, so a session's inventory and ``agbom scan`` of the same machine agree:

- a skill's ``SKILL.md`` frontmatter is read by :func:`agbom.scan.skills.skill_md_fields`
  (``allowed-tools: Bash, Read`` declares ``process.execute`` and ``fs.read``);
- an MCP server entry by :func:`agbom.scan.mcp_server.server_component` (arguments and URLs
  redacted, package pins read), under the id the hook's tool calls are recorded with
  (``mcp_server:NAME``; a plugin's server ``mcp_server:plugin_PLUGIN_NAME``, as Claude Code
  names its tools ``mcp__plugin_PLUGIN_NAME__TOOL``).

The report is the hook's word, as every hook event is: it is bounded and checked for shape
here, and what does not fit is left out and counted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base

UNKNOWN_DIGEST = "0" * 64
_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_COMPONENTS = 1000
MAX_PLUGINS_KEPT = 100


def skill_ref(runtime: str, scope: str, name: str, plugin: str | None = None) -> str:
    """The definition ``ref`` of a Claude Code skill (no user's path in it)."""
    if plugin is not None:
        return f"{runtime}:plugin:{plugin}/skills/{name.partition(':')[2] or name}"
    return f"{runtime}:{scope}:.claude/skills/{name}"


def skill_fields(skill_md: Any) -> dict[str, Any]:
    """What the frontmatter in ``skill_md`` (text) declares, as ``agbom scan`` reads it."""
    if not isinstance(skill_md, str) or not skill_md:
        return {}
    from agbom.scan.skills import skill_md_fields

    return skill_md_fields(skill_md.encode("utf-8", "replace"))


def _skill(runtime: str, item: Mapping[str, Any]) -> dict[str, Any] | None:
    name = item.get("name")
    if not isinstance(name, str) or not name or len(name) > 255:
        return None
    scope = item.get("scope") if item.get("scope") in ("managed", "user", "project") else "plugin"
    plugin = item.get("plugin") if isinstance(item.get("plugin"), str) else None
    digest = item.get("digest")
    fields = skill_fields(item.get("skill_md"))
    component: dict[str, Any] = {
        "id": f"skill:{name}",
        "type": "skill",
        "name": name,
        "description": str(fields.get("description") or "")[:1024],
        "definition": {
            "ref": skill_ref(runtime, str(scope), name, plugin),
            "digest": {
                "algorithm": "sha256",
                "value": digest
                if isinstance(digest, str) and _HEX64.fullmatch(digest)
                else UNKNOWN_DIGEST,
            },
        },
        "declared_capabilities": list(fields.get("declared_capabilities") or []),
        "scope": scope,
        "registration_provenance": {"origin": "system", "source_id": "agbom-hook"},
    }
    if fields.get("allowed_tools"):
        component["allowed_tools"] = fields["allowed_tools"]
    if plugin is not None:
        component["plugin"] = plugin[:255]
    if isinstance(item.get("error"), str):
        component["digest_error"] = item["error"][:512]
    return component


def _server(item: Mapping[str, Any]) -> dict[str, Any] | None:
    from agbom.scan.mcp_server import EntryError, server_component

    name = item.get("name")
    if not isinstance(name, str) or not name or len(name) > 255:
        return None
    plugin = item.get("plugin") if isinstance(item.get("plugin"), str) else None
    observed = f"plugin_{plugin.partition('@')[0]}_{name}" if plugin else name
    source = str(item.get("source") or "")[:512]
    try:
        component, _ = server_component(name, item.get("entry"), display=source)
    except EntryError as exc:
        component = {
            "type": "mcp_server",
            "version": None,
            "endpoint": None,
            "tools": [],
            "config_error": str(exc)[:512],
        }
    component.update(
        {
            "id": f"mcp_server:{observed}",
            "name": observed,
            "scope": str(item.get("scope") or "")[:32],
            "registration_provenance": {"origin": "system", "source_id": "agbom-hook"},
        }
    )
    if plugin is not None:
        component["plugin"] = plugin[:255]
    return component


def snapshot(runtime: str, report: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(agbom/snapshot payload, summary for the session's platform_context)``; the payload
    is None when the report is not one (the session then starts without an inventory)."""
    if not isinstance(report, Mapping):
        return None, {}
    components: list[dict[str, Any]] = []
    seen: set[str] = set()
    dropped = 0
    for kind, build in (("skills", lambda i: _skill(runtime, i)), ("mcp_servers", _server)):
        items = report.get(kind)
        for item in items if isinstance(items, list) else []:
            component = build(item) if isinstance(item, Mapping) else None
            if component is None or component["id"] in seen:
                dropped += 1
                continue
            if len(components) >= MAX_COMPONENTS:
                dropped += 1
                continue
            seen.add(component["id"])
            components.append(component)
    plugins = [
        {k: p.get(k) for k in ("key", "scope", "version", "enabled") if p.get(k) is not None}
        for p in report.get("plugins") or []
        if isinstance(p, Mapping) and isinstance(p.get("key"), str)
    ][:MAX_PLUGINS_KEPT]
    summary: dict[str, Any] = {
        "skills": sum(1 for c in components if c["type"] == "skill"),
        "mcp_servers": sum(1 for c in components if c["type"] == "mcp_server"),
        "plugins": plugins,
        "truncated": bool(report.get("truncated")) or dropped > 0,
    }
    problems = [_base.text(p, limit=512) for p in report.get("problems") or []][:20]
    if problems:
        summary["problems"] = problems
    payload = {"agbom": {"agent": {"name": "Claude Code"}, "components": components}}
    return payload, summary
