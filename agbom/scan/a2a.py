"""A2A Agent Card reader (v0.2/v0.3 ``url`` + ``protocolVersion``; v1.0 ``supportedInterfaces``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.scan._parse import recognized_json
from agbom.scan.interface import FileError, ReadContext, ReadResult
from agbom.scan.redact import redact_url

CARD_MAX_BYTES = 1024 * 1024
_V03_REQUIRED = ("name", "description", "url", "version", "protocolVersion", "capabilities",
                 "defaultInputModes", "defaultOutputModes", "skills")  # fmt: skip
_V10_REQUIRED = ("name", "description", "version", "supportedInterfaces", "capabilities",
                 "defaultInputModes", "defaultOutputModes", "skills")  # fmt: skip


def looks_like_card(doc: Any) -> bool:
    """Positive recognition: a name plus an endpoint or interfaces, and skills or capabilities."""
    return (
        isinstance(doc, Mapping)
        and isinstance(doc.get("name"), str)
        and ("url" in doc or "supportedInterfaces" in doc)
        and ("skills" in doc or "capabilities" in doc or "protocolVersion" in doc)
    )


def _skills(value: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not isinstance(value, list):
        return out
    for skill in value:
        if not isinstance(skill, Mapping):
            continue
        item = {k: skill[k] for k in ("id", "name") if isinstance(skill.get(k), str)}
        tags = skill.get("tags")
        if isinstance(tags, list):
            item["tags"] = [str(t) for t in tags if isinstance(t, str)]
        if item:
            out.append(item)
    return out


class AgentCardReader:
    """``agent-card.json`` / ``agent.json`` -> one ``a2a_peer`` component."""

    name = "a2a-agent-card"
    globs = ("agent-card.json", "agent.json")
    max_bytes = CARD_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        """Recognize the card version, check its required fields, emit the peer."""
        result = ReadResult()
        doc = recognized_json(
            data,
            result,
            looks_like_card,
            "not an A2A Agent Card (no name with url or supportedInterfaces)",
        )
        if doc is None:
            return result
        interfaces = doc.get("supportedInterfaces")
        v1 = interfaces is not None
        transports: list[str] = []
        required: tuple[str, ...]
        if v1:
            if not isinstance(interfaces, list) or not interfaces:
                result.errors.append(FileError("'supportedInterfaces' must be a non-empty array"))
                return result
            first = interfaces[0]
            if not isinstance(first, Mapping) or not isinstance(first.get("url"), str):
                result.errors.append(FileError("supportedInterfaces[0] has no 'url' string"))
                return result
            url = first["url"]
            protocol_version = str(first.get("protocolVersion") or "1.0")
            transports = [
                str(i.get("protocolBinding"))
                for i in interfaces
                if isinstance(i, Mapping) and i.get("protocolBinding")
            ]
            required = _V10_REQUIRED
        else:
            url = doc.get("url")
            if not isinstance(url, str) or not url:
                result.errors.append(FileError("'url' must be a non-empty string"))
                return result
            # v0.2 cards predate protocolVersion.
            protocol_version = str(doc.get("protocolVersion") or "0.2")
            if doc.get("preferredTransport"):
                transports.append(str(doc["preferredTransport"]))
            extra = doc.get("additionalInterfaces")
            if isinstance(extra, list):
                transports += [
                    str(i["transport"])
                    for i in extra
                    if isinstance(i, Mapping) and i.get("transport")
                ]
            required = _V03_REQUIRED if "protocolVersion" in doc else ()
        missing = [f for f in required if f not in doc]
        if missing:
            result.errors.append(
                FileError(f"Agent Card is missing required field(s): {', '.join(missing)}")
            )
        endpoint, changed = redact_url(url)
        component: dict[str, Any] = {
            "id": f"a2a:{endpoint.split('?', 1)[0]}",
            "type": "a2a_peer",
            "name": doc["name"],
            "endpoint": endpoint,
            "protocol_version": protocol_version,
            "agent_card_ref": ctx.display,
            "skills": _skills(doc.get("skills")),
        }
        if changed:
            component["redacted"] = ["endpoint"]
        if isinstance(doc.get("version"), str):
            component["agent_version"] = doc["version"]
        if isinstance(doc.get("description"), str):
            component["description"] = doc["description"]
        provider = doc.get("provider")
        if isinstance(provider, Mapping) and isinstance(provider.get("organization"), str):
            component["provider"] = provider["organization"]
        if transports:
            component["transports"] = sorted(set(transports))
        schemes = doc.get("securitySchemes")
        if isinstance(schemes, Mapping):
            component["security_schemes"] = sorted(str(k) for k in schemes)
        if doc.get("signatures"):
            component["signed"] = True
        result.components.append(component)
        return result
