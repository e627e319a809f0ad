"""A2A Agent Card reader: v0.2, v0.3 (``url``, ``preferredTransport``, ``additionalInterfaces``)
and v1.0 (``supportedInterfaces``).

Every interface a card offers is kept, with its protocol binding and protocol version, so a
peer's gRPC, REST or legacy 0.3 endpoints are inventoried next to the first one. The card is
checked field by field; each problem is an error located at its field, and a card that still
names an endpoint is inventoried anyway (marked ``valid: false``), because an agent may talk
to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.scan._parse import ParseFailure, load_json, positions_of
from agbom.scan._positions import KeyPath, LineText
from agbom.scan.interface import FileError, ReadContext, ReadResult, Span
from agbom.scan.redact import redact_url

CARD_MAX_BYTES = 1024 * 1024
# The file names only an Agent Card uses; any JSON there is taken as a card (and a broken one
# is an error, never "skipped"). ``agent.json`` is a common name, so it must look like a card.
_CARD_ONLY_NAMES = frozenset({"agent-card.json", "agent_card.json"})
_V03_REQUIRED = ("name", "description", "url", "version", "protocolVersion", "capabilities",
                 "defaultInputModes", "defaultOutputModes", "skills")  # fmt: skip
_V10_REQUIRED = ("name", "description", "version", "supportedInterfaces", "capabilities",
                 "defaultInputModes", "defaultOutputModes", "skills")  # fmt: skip
_V02_REQUIRED = ("name", "url")
_SKILL_REQUIRED = ("id", "name", "description", "tags")
_CARD_KEYS = frozenset({"skills", "capabilities", "protocolVersion", "defaultInputModes",
                        "defaultOutputModes", "preferredTransport"})  # fmt: skip
_DEFAULT_BINDING = "JSONRPC"  # what a card without preferredTransport speaks


def looks_like_card(doc: Any) -> bool:
    """Positive recognition: an endpoint or interfaces, and a field only cards have."""
    if not isinstance(doc, Mapping):
        return False
    if "supportedInterfaces" in doc:
        return True
    return ("url" in doc or "additionalInterfaces" in doc) and any(k in doc for k in _CARD_KEYS)


class _Card:
    """One card being read: its problems, each with the key path it is about."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.problems: list[tuple[KeyPath, str]] = []

    def problem(self, path: KeyPath, message: str) -> None:
        self.problems.append((path, message))

    def string(self, value: Any, path: KeyPath, *, required: bool = False) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            self.problem(path, f"{_name(path)!r} must be a non-empty string, not "
                               f"{_kind(value)}")  # fmt: skip
            return None
        return value

    def string_list(self, value: Any, path: KeyPath) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(path, f"{_name(path)!r} must be an array of strings, not {_kind(value)}")
            return []
        out = []
        for index, item in enumerate(value):
            if isinstance(item, str):
                out.append(item)
            else:
                self.problem((*path, index), f"{_name(path)}[{index}] must be a string, not "
                                             f"{_kind(item)}")  # fmt: skip
        return out

    def mapping(self, value: Any, path: KeyPath) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.problem(path, f"{_name(path)!r} must be an object, not {_kind(value)}")
            return None
        return value

    def array(self, value: Any, path: KeyPath) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(path, f"{_name(path)!r} must be an array, not {_kind(value)}")
            return []
        return value


def _name(path: KeyPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "card"


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _interfaces(card: _Card) -> list[tuple[str, str, str]]:
    """Every ``(url, binding, protocol version)`` the card offers, the preferred one first."""
    doc = card.doc
    found: list[tuple[str, str, str]] = []
    card_version = card.string(doc.get("protocolVersion"), ("protocolVersion",), required=True)
    supported = doc.get("supportedInterfaces")
    if supported is not None:
        items = card.array(supported, ("supportedInterfaces",))
        if isinstance(supported, list) and not supported:
            card.problem(("supportedInterfaces",), "'supportedInterfaces' must not be empty")
        for index, item in enumerate(items):
            path: KeyPath = ("supportedInterfaces", index)
            entry = card.mapping(item, path)
            if entry is None:
                continue
            url = card.string(entry.get("url"), (*path, "url"), required=True)
            binding = card.string(entry.get("protocolBinding"), (*path, "protocolBinding"),
                                  required=True)  # fmt: skip
            version = card.string(entry.get("protocolVersion"), (*path, "protocolVersion"),
                                  required=True)  # fmt: skip
            if entry.get("url") is None:
                card.problem(path, f"{_name(path)} has no 'url'")
            if entry.get("protocolBinding") is None:
                card.problem(path, f"{_name(path)} has no 'protocolBinding'")
            if url:
                found.append((url, binding or _DEFAULT_BINDING, version or card_version or "1.0"))
    # v0.2/v0.3: the main url speaks preferredTransport; additionalInterfaces list the rest
    # (a card in transition to 1.0 may carry both shapes).
    legacy_version = card_version or ("0.3" if supported is not None else "0.2")
    url = card.string(doc.get("url"), ("url",), required=True)
    preferred = card.string(doc.get("preferredTransport"), ("preferredTransport",), required=True)
    if url:
        found.append((url, preferred or _DEFAULT_BINDING, legacy_version))
    for index, item in enumerate(card.array(doc.get("additionalInterfaces"),
                                            ("additionalInterfaces",))):  # fmt: skip
        path = ("additionalInterfaces", index)
        entry = card.mapping(item, path)
        if entry is None:
            continue
        extra_url = card.string(entry.get("url"), (*path, "url"), required=True)
        transport = card.string(entry.get("transport"), (*path, "transport"), required=True)
        if entry.get("url") is None or entry.get("transport") is None:
            card.problem(path, f"{_name(path)} must have 'url' and 'transport'")
        if extra_url:
            found.append((extra_url, transport or _DEFAULT_BINDING, legacy_version))
    return list(dict.fromkeys(found))


def _skills(card: _Card) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, skill in enumerate(card.array(card.doc.get("skills"), ("skills",))):
        path: KeyPath = ("skills", index)
        entry = card.mapping(skill, path)
        if entry is None:
            continue
        missing = [k for k in _SKILL_REQUIRED if k not in entry]
        if missing:
            card.problem(path, f"{_name(path)} is missing required field(s): {', '.join(missing)}")
        item: dict[str, Any] = {}
        for key in ("id", "name"):
            value = card.string(entry.get(key), (*path, key), required=True)
            if value is not None:
                item[key] = value
        card.string(entry.get("description"), (*path, "description"))
        tags = card.string_list(entry.get("tags"), (*path, "tags"))
        if "tags" in entry and isinstance(entry["tags"], list):
            item["tags"] = tags
        if item:
            out.append(item)
    return out


def _check_rest(card: _Card) -> None:
    """The other typed fields of a card (their values are not inventoried)."""
    doc = card.doc
    card.string(doc.get("description"), ("description",))
    card.mapping(doc.get("capabilities"), ("capabilities",))
    for key in ("defaultInputModes", "defaultOutputModes"):
        card.string_list(doc.get(key), (key,))
    provider = card.mapping(doc.get("provider"), ("provider",))
    if provider is not None:
        card.string(provider.get("organization"), ("provider", "organization"), required=True)
    card.array(doc.get("signatures"), ("signatures",))
    for key in ("security", "securityRequirements"):
        card.array(doc.get(key), (key,))


def _required(doc: Mapping[str, Any]) -> tuple[str, ...]:
    if "supportedInterfaces" in doc:
        return _V10_REQUIRED
    return _V03_REQUIRED if "protocolVersion" in doc else _V02_REQUIRED


class AgentCardReader:
    """``agent-card.json`` / ``agent_card.json`` / ``agent.json``, or any JSON file in an
    ``agent_cards/`` folder -> one ``a2a_peer`` component."""

    name = "a2a-agent-card"
    globs = ("agent-card.json", "agent_card.json", "agent.json", "agent_cards/*.json",
             "agent-cards/*.json")  # fmt: skip
    max_bytes = CARD_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        """Check the card field by field and emit the peer with every interface."""
        result = ReadResult()
        try:
            doc = load_json(data)
        except ParseFailure as exc:
            result.errors.append(exc.error)
            return result
        card_file = ctx.path.name in _CARD_ONLY_NAMES
        if not looks_like_card(doc):
            if not card_file:
                result.skipped = "not an A2A Agent Card (no url or supportedInterfaces)"
            elif not isinstance(doc, Mapping):
                result.errors.append(
                    FileError(f"an Agent Card must be a JSON object, not {_kind(doc)}", 1, 1)
                )
            else:
                result.errors.append(
                    FileError(
                        "not an A2A Agent Card: it has neither 'url' nor 'supportedInterfaces'",
                        1,
                        1,
                    )  # fmt: skip
                )
            if result.errors or result.skipped:
                return result
        assert isinstance(doc, Mapping)  # looks_like_card holds
        card = _Card(doc)
        missing = [f for f in _required(doc) if f not in doc]
        if missing:
            card.problem((), f"Agent Card is missing required field(s): {', '.join(missing)}")
        name = card.string(doc.get("name"), ("name",), required=True)
        version = card.string(doc.get("version"), ("version",), required=True)
        interfaces = _interfaces(card)
        skills = _skills(card)
        _check_rest(card)
        schemes = card.mapping(doc.get("securitySchemes"), ("securitySchemes",))
        self._report(card, data, result)
        if not interfaces:
            if not any("url" in message for _, message in card.problems):
                result.errors.append(FileError("Agent Card names no endpoint", 1, 1))
            return result

        redacted: list[str] = []
        listed: list[dict[str, str]] = []
        for index, (url, binding, protocol) in enumerate(interfaces):
            safe, changed = redact_url(url)
            if changed:
                redacted.append("endpoint" if index == 0 else f"interfaces[{index}].url")
            listed.append({"url": safe, "binding": binding, "protocol_version": protocol})
        endpoint = listed[0]["url"]
        component: dict[str, Any] = {
            "id": f"a2a:{endpoint.split('?', 1)[0]}",
            "type": "a2a_peer",
            "endpoint": endpoint,
            "protocol_version": listed[0]["protocol_version"],
            "agent_card_ref": ctx.display,
            "interfaces": listed,
            "transports": sorted({i["binding"] for i in listed}),
            "skills": skills,
            # Names only; an empty list is a card that declares no way to authenticate.
            "security_schemes": sorted(str(k) for k in schemes) if schemes else [],
        }
        if name is not None:
            component["name"] = name
        if redacted:
            component["redacted"] = redacted
        if version is not None:
            component["agent_version"] = version
        if isinstance(doc.get("description"), str):
            component["description"] = doc["description"]
        provider = doc.get("provider")
        if isinstance(provider, Mapping) and isinstance(provider.get("organization"), str):
            component["provider"] = provider["organization"]
        if doc.get("signatures"):
            component["signed"] = True
        if card.problems:
            component["valid"] = False
        fields = _field_spans(data, doc)
        if fields:
            component["_fields"] = fields
        result.components.append(component)
        return result

    @staticmethod
    def _report(card: _Card, data: bytes, result: ReadResult) -> None:
        """Each problem as an error at its field (positions are only computed when needed)."""
        if not card.problems:
            return
        positions = positions_of(data)
        located = []
        for path, message in card.problems:
            at = positions.nearest(path)
            located.append(
                FileError(message, at.line, at.column) if at else FileError(message, 1, 1)
            )
        result.errors.extend(sorted(located, key=lambda e: (e.line or 0, e.column or 0)))


def _field_spans(data: bytes, doc: Mapping[str, Any]) -> dict[str, Span]:
    """Where the card says where it is served (``endpoint``: the URL as written, else its
    key) and carries its signatures (``signatures``: the key): what findings about a plain
    HTTP endpoint or a signature that does not verify point at."""
    positions = positions_of(data)
    out: dict[str, Span] = {}
    path: tuple[str | int, ...] = ("url",)
    value = doc.get("url")
    interfaces = doc.get("supportedInterfaces")
    if not isinstance(value, str) and isinstance(interfaces, list) and interfaces:
        first = interfaces[0]
        path = ("supportedInterfaces", 0, "url")
        value = first.get("url") if isinstance(first, Mapping) else None
    key = positions.get(path)
    if key is not None:
        found = LineText(data).value_after(key, value) if isinstance(value, str) else None
        out["endpoint"] = found or key
    signatures = positions.get(("signatures",))
    if signatures is not None and doc.get("signatures"):
        out["signatures"] = signatures
    return out
