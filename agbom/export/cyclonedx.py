"""CycloneDX 1.6 / 1.7 export, JSON and XML, built straight from the canonical AgBOM.

Why not cyclonedx-python-lib's model and outputters: at 10,000 components its dependency
registration and serialization are quadratic (tens of seconds, see docs/performance.md).
Here the document is a plain dict (serialized with orjson) and checked with a compiled copy
of the library's own bundled schema. The XML form is produced from that same dict, so both
carry exactly the same content. The mapping is documented in docs/cyclonedx-mapping.md.

Reproducibility: the serial number is a UUIDv5 of the AgBOM hash, components, services,
properties and dependencies are emitted in sorted order, and the timestamp comes from the
AgBOM header (``generated_at``) or an explicit argument, never from the clock.
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from agbom import __version__
from agbom.export._cdx_schema import check_spec_version, validate_cyclonedx_json
from agbom.export._iri import is_iri, scrub_url
from agbom.export._redact import KEYS_ONLY_FIELDS, redact_value
from agbom.export.interface import ExportError
from agbom.inventory import ROOT_ID, AgBOM, Component, ComponentType, normalize_algorithm

__all__ = [
    "AGENT_BOM_REF",
    "SERIAL_NAMESPACE",
    "CycloneDxJsonExporter",
    "CycloneDxXmlExporter",
    "build_cyclonedx",
    "cyclonedx_xml",
]

AGENT_BOM_REF = ROOT_ID
"""``bom-ref`` of the agent (``metadata.component``); no AgBOM component may use this id."""

SERIAL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://agbom.dev/export/cyclonedx/serial")
"""UUIDv5 namespace: ``serialNumber`` = ``urn:uuid:`` + uuid5(namespace, agbom_hash)."""

# AgBOM types that CycloneDX models as services (they are reached over an endpoint).
SERVICE_TYPES = frozenset(
    {
        ComponentType.MCP_SERVER,
        ComponentType.A2A_PEER,
        ComponentType.KNOWLEDGE_SOURCE,
        ComponentType.MEMORY_STORE,
    }
)

COMPONENT_TYPE_MAP: Mapping[ComponentType, str] = {
    ComponentType.MODEL: "machine-learning-model",
    ComponentType.TOOL: "application",
    ComponentType.AGENT_CAPABILITY: "application",
    ComponentType.SKILL: "application",
}

# normalize_algorithm() form -> (CycloneDX name, hex length); lengths from the hash-content
# pattern every CycloneDX schema enforces.
_HASH_ALGS: Mapping[str, tuple[str, int]] = {
    "md5": ("MD5", 32),
    "sha1": ("SHA-1", 40),
    "sha256": ("SHA-256", 64),
    "sha384": ("SHA-384", 96),
    "sha512": ("SHA-512", 128),
    "sha3256": ("SHA3-256", 64),
    "sha3384": ("SHA3-384", 96),
    "sha3512": ("SHA3-512", 128),
    "blake2b256": ("BLAKE2b-256", 64),
    "blake2b384": ("BLAKE2b-384", 96),
    "blake2b512": ("BLAKE2b-512", 128),
}
_HEX = frozenset("0123456789abcdef")

# Fields each type maps to a CycloneDX slot or an acs:* property; anything else on a
# component is an extension field (scan results etc.) and becomes an agbom:* property.
_COMMON_FIELDS = frozenset(
    {"id", "type", "name", "version", "description", "registration_provenance", "purl"}
)
_TYPE_FIELDS: Mapping[ComponentType, frozenset[str]] = {
    ComponentType.MODEL: frozenset({"provider", "endpoint", "context_window", "args", "digest"}),
    ComponentType.MCP_SERVER: frozenset({"endpoint", "tools", "provider"}),
    ComponentType.A2A_PEER: frozenset({"endpoint", "protocol_version", "agent_card_ref"}),
    ComponentType.TOOL: frozenset({"provider", "capability", "digest"}),
    ComponentType.KNOWLEDGE_SOURCE: frozenset({"source_type", "endpoint", "schema_ref"}),
    ComponentType.MEMORY_STORE: frozenset({"scope", "store_type", "path", "window_size"}),
    ComponentType.AGENT_CAPABILITY: frozenset({"tools", "mcp_servers", "a2a_peers"}),
    ComponentType.SKILL: frozenset(
        {
            "definition",
            "declared_capabilities",
            "tools",
            "mcp_servers",
            "a2a_peers",
            "models",
            "composed_skills",
        }
    ),
}
# Scalar ACS fields with no CycloneDX slot, exported as acs:<field>.
_ACS_SCALARS: Mapping[ComponentType, tuple[str, ...]] = {
    ComponentType.MODEL: ("context_window",),
    ComponentType.A2A_PEER: ("protocol_version",),
    ComponentType.KNOWLEDGE_SOURCE: ("source_type", "schema_ref"),
    ComponentType.MEMORY_STORE: ("scope", "store_type", "path", "window_size"),
}


# -- small value helpers --------------------------------------------------------------------


def _text(value: Any) -> str:
    """A property value: strings as-is, everything else as compact, key-sorted JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _prop(name: str, value: Any) -> dict[str, str]:
    return {"name": name, "value": _text(value)}


def _hash(algorithm: Any, value: Any) -> dict[str, str] | None:
    """A CycloneDX hash, or ``None`` when CycloneDX cannot carry this algorithm/length."""
    if not isinstance(algorithm, str) or not isinstance(value, str):
        return None
    known = _HASH_ALGS.get(normalize_algorithm(algorithm))
    content = value.lower()
    if known is None or len(content) != known[1] or not _HEX.issuperset(content):
        return None
    return {"alg": known[0], "content": content}


@functools.cache
def _purl_ok(value: str) -> bool:
    from packageurl import PackageURL

    try:
        PackageURL.from_string(value)
    except ValueError:
        return False
    return True


def _url(value: Any) -> str | None:
    """The scrubbed form of ``value`` if it is an absolute IRI CycloneDX will accept."""
    if not isinstance(value, str) or not value:
        return None
    scrubbed = scrub_url(value)
    return scrubbed if is_iri(scrubbed) else None


def _timestamp(value: Any) -> str | None:
    """RFC 3339 UTC (``...Z``) for a timezone-aware ISO 8601 string, else ``None``."""
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    utc = parsed.astimezone(dt.UTC)
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if utc.microsecond else "%Y-%m-%dT%H:%M:%SZ"
    return utc.strftime(fmt)


def _serial_number(agbom: AgBOM) -> str:
    return f"urn:uuid:{uuid.uuid5(SERIAL_NAMESPACE, agbom.agbom_hash)}"


# -- per-component mapping ------------------------------------------------------------------


def _extension_properties(component: Component, consumed: frozenset[str]) -> list[dict[str, str]]:
    """agbom:* properties for fields outside the ACS schema (scan results, runtime extras)."""
    props: list[dict[str, str]] = []
    data = component.data
    for key in sorted(k for k in data if k not in consumed):
        raw = data[key]
        if raw is None:
            continue
        if key in KEYS_ONLY_FIELDS and isinstance(raw, Mapping):
            props.extend(_prop(f"agbom:{key}.key", str(k)) for k in sorted(raw, key=str))
            continue
        if key == "purl" and isinstance(raw, str):
            props.append(_prop("agbom:purl", raw))
            continue
        value = redact_value(key, raw)
        if isinstance(value, list) and all(isinstance(v, str | int | float | bool) for v in value):
            # One property per element: CycloneDX allows repeated names for multi-values.
            props.extend(_prop(f"agbom:{key}", v) for v in value)
        else:
            props.append(_prop(f"agbom:{key}", value))
    return props


def _common_properties(component: Component) -> list[dict[str, str]]:
    props = [_prop("acs:type", component.type.value)]
    provenance = component.get("registration_provenance")
    if isinstance(provenance, Mapping):
        for field in sorted(provenance):
            value = provenance[field]
            if value is None:
                continue
            if isinstance(value, list):
                props.extend(_prop(f"acs:registration_provenance.{field}", v) for v in value)
            else:
                props.append(_prop(f"acs:registration_provenance.{field}", value))
    return props


def _endpoint_into(
    entry: dict[str, Any], props: list[dict[str, str]], endpoint: Any, *, service: bool
) -> None:
    """Services get a valid endpoint in ``endpoints``; anything else is kept as a property."""
    if endpoint is None:
        return
    url = _url(endpoint)
    if service and url is not None:
        entry["endpoints"] = [url]
    elif isinstance(endpoint, str):
        props.append(_prop("acs:endpoint", url or redact_value("command", endpoint)))
    else:
        props.append(_prop("acs:endpoint", endpoint))


def _map_component(component: Component) -> dict[str, Any]:
    ctype = component.type
    data = component.data
    is_service = ctype in SERVICE_TYPES
    entry: dict[str, Any] = {} if is_service else {"type": COMPONENT_TYPE_MAP[ctype]}
    entry["bom-ref"] = component.id
    props = _common_properties(component)
    hashes: list[dict[str, str]] = []
    refs: list[dict[str, str]] = []

    provider = data.get("provider")
    if isinstance(provider, str) and provider:
        entry["provider" if is_service else "supplier"] = {"name": provider}
    entry["name"] = component.name
    if component.version is not None:
        entry["version"] = component.version
    description = data.get("description")
    if isinstance(description, str) and description:
        entry["description"] = description

    if "endpoint" in data:
        _endpoint_into(entry, props, data.get("endpoint"), service=is_service)
    for field in _ACS_SCALARS.get(ctype, ()):
        if data.get(field) is not None:
            props.append(_prop(f"acs:{field}", data[field]))

    if ctype is ComponentType.MODEL and isinstance(data.get("args"), Mapping):
        props.append(_prop("acs:args", redact_value("args", data["args"])))
    if ctype is ComponentType.TOOL:
        capability = data.get("capability")
        values = capability if isinstance(capability, list) else [capability]
        props.extend(_prop("acs:capability", v) for v in values if v is not None)
    if ctype is ComponentType.A2A_PEER and data.get("agent_card_ref") is not None:
        card = _url(data["agent_card_ref"])
        if card is not None:
            refs.append({"url": card, "comment": "A2A agent card", "type": "other"})
        else:
            props.append(_prop("acs:agent_card_ref", data["agent_card_ref"]))
    if ctype is ComponentType.SKILL:
        definition = data.get("definition") or {}
        digest = definition.get("digest") or {}
        mapped = _hash(digest.get("algorithm"), digest.get("value"))
        if mapped is not None:
            hashes.append(mapped)
        else:
            props.append(
                _prop("acs:definition.digest", f"{digest.get('algorithm')}:{digest.get('value')}")
            )
        ref_url = _url(definition.get("ref"))
        if ref_url is not None:
            refs.append({"url": ref_url, "comment": "skill definition", "type": "distribution"})
        elif definition.get("ref") is not None:
            props.append(_prop("acs:definition.ref", definition["ref"]))
        props.extend(
            _prop("acs:declared_capability", v) for v in data.get("declared_capabilities") or ()
        )
    digest = data.get("digest")
    if ctype in (ComponentType.MODEL, ComponentType.TOOL) and isinstance(digest, Mapping):
        mapped = _hash(digest.get("algorithm"), digest.get("value"))
        if mapped is not None:
            hashes.append(mapped)
        else:
            props.append(_prop("acs:digest", f"{digest.get('algorithm')}:{digest.get('value')}"))

    purl = data.get("purl")
    consumed = _COMMON_FIELDS | _TYPE_FIELDS[ctype]
    if isinstance(purl, str) and not is_service and _purl_ok(purl):
        entry["purl"] = purl
    elif purl is not None:
        consumed = consumed - {"purl"}  # kept as an agbom:purl property instead
    props.extend(_extension_properties(component, consumed))

    if hashes and not is_service:
        entry["hashes"] = hashes
    if refs:
        entry["externalReferences"] = refs
    entry["properties"] = props
    return entry


def _agent_component(agbom: AgBOM) -> dict[str, Any]:
    agent = agbom.agent
    name = agent.get("name") if isinstance(agent.get("name"), str) else None
    entry: dict[str, Any] = {
        "type": "application",
        "bom-ref": AGENT_BOM_REF,
        "name": name or agbom.agent_id,
    }
    if isinstance(agent.get("version"), str):
        entry["version"] = agent["version"]
    if isinstance(agent.get("description"), str) and agent["description"]:
        entry["description"] = agent["description"]
    props = [_prop("acs:agent.id", agbom.agent_id)]
    for key in sorted(k for k in agent if k not in ("id", "name", "version", "description")):
        value = redact_value(key, agent[key])
        if value is not None:
            props.append(_prop(f"acs:agent.{key}", value))
    entry["properties"] = props
    return entry


def _dependencies(agbom: AgBOM) -> list[dict[str, Any]]:
    """Every node with its sorted dependsOn; the agent depends on every top-level node.

    Same edges as :class:`~agbom.inventory.ComponentGraph` (a component is top-level when no
    other component references it), computed without building a networkx graph.
    """
    depends: dict[str, set[str]] = {c.id: set() for c in agbom}
    referenced: set[str] = set()
    for component in agbom:
        targets = depends[component.id]
        for _, target, _ in component.references():
            targets.add(target)
            if target != component.id:
                referenced.add(target)
    depends[AGENT_BOM_REF] = {cid for cid in depends if cid not in referenced}
    out: list[dict[str, Any]] = []
    for ref in sorted(depends):
        entry: dict[str, Any] = {"ref": ref}
        if depends[ref]:
            entry["dependsOn"] = sorted(depends[ref])
        out.append(entry)
    return out


def build_cyclonedx(
    agbom: AgBOM, spec_version: str = "1.6", *, timestamp: str | None = None
) -> dict[str, Any]:
    """The CycloneDX document (as a dict) for ``agbom``; not yet validated.

    ``timestamp`` (ISO 8601 with a timezone) overrides the header's ``generated_at``; with
    neither, ``metadata.timestamp`` is omitted so that the output stays reproducible.
    """
    check_spec_version(spec_version)
    when = _timestamp(timestamp) if timestamp is not None else None
    if timestamp is not None and when is None:
        raise ExportError(f"timestamp {timestamp!r} is not an ISO 8601 time with a timezone")
    if when is None:
        when = _timestamp(agbom.header.get("generated_at"))

    metadata: dict[str, Any] = {}
    if when is not None:
        metadata["timestamp"] = when
    metadata["tools"] = {
        "components": [
            {"type": "application", "group": "agbom.dev", "name": "agbom", "version": __version__}
        ]
    }
    metadata["component"] = _agent_component(agbom)
    header_props = [_prop("acs:agbom_hash", agbom.agbom_hash)]
    for key in sorted(k for k in agbom.header if k not in ("agent", "generated_at")):
        value = redact_value(key, agbom.header[key])
        if value is not None:
            header_props.append(_prop(f"acs:{key}", value))
    metadata["properties"] = header_props

    components: list[dict[str, Any]] = []
    services: list[dict[str, Any]] = []
    for component in agbom:  # already in id order
        mapped = _map_component(component)
        (services if component.type in SERVICE_TYPES else components).append(mapped)

    doc: dict[str, Any] = {
        "$schema": f"http://cyclonedx.org/schema/bom-{spec_version}.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": spec_version,
        "serialNumber": _serial_number(agbom),
        "version": 1,
        "metadata": metadata,
    }
    if components:
        doc["components"] = components
    if services:
        doc["services"] = services
    doc["dependencies"] = _dependencies(agbom)
    return doc


# -- XML ------------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all; replaced so that the document stays well formed.
_XML_BAD = str.maketrans(dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32), 65534, 65535], "�"))


def _x(value: str) -> str:
    text = value.translate(_XML_BAD)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        text = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    return text


def _sub(parent: Any, tag: str, text: str | None = None, **attrs: str) -> Any:
    from lxml import etree

    el = etree.SubElement(parent, tag, {k.replace("_", "-"): _x(v) for k, v in attrs.items()})
    if text is not None:
        el.text = _x(text)
    return el


def _xml_properties(parent: Any, props: Iterable[Mapping[str, str]]) -> None:
    props = list(props)
    if not props:
        return
    holder = _sub(parent, "properties")
    for prop in props:
        _sub(holder, "property", prop.get("value", ""), name=prop["name"])


def _xml_entity(parent: Any, tag: str, entity: Mapping[str, Any]) -> None:
    attrs = {"bom_ref": entity["bom-ref"]} if "bom-ref" in entity else {}
    if tag == "component":
        attrs = {"type": entity["type"], **attrs}
    el = _sub(parent, tag, **attrs)
    # Child order is fixed by the XSD sequence of component / service.
    for org in ("supplier", "provider"):
        if org in entity:
            _sub(_sub(el, org), "name", entity[org]["name"])
    if "group" in entity:
        _sub(el, "group", entity["group"])
    _sub(el, "name", entity["name"])
    for field in ("version", "description"):
        if field in entity:
            _sub(el, field, entity[field])
    if "hashes" in entity:
        hashes = _sub(el, "hashes")
        for h in entity["hashes"]:
            _sub(hashes, "hash", h["content"], alg=h["alg"])
    if "purl" in entity:
        _sub(el, "purl", entity["purl"])
    if "endpoints" in entity:
        endpoints = _sub(el, "endpoints")
        for url in entity["endpoints"]:
            _sub(endpoints, "endpoint", url)
    if "externalReferences" in entity:
        holder = _sub(el, "externalReferences")
        for ref in entity["externalReferences"]:
            ref_el = _sub(holder, "reference", type=ref["type"])
            _sub(ref_el, "url", ref["url"])
            if "comment" in ref:
                _sub(ref_el, "comment", ref["comment"])
    _xml_properties(el, entity.get("properties", ()))


def cyclonedx_xml(doc: Mapping[str, Any]) -> bytes:
    """Serialize a document made by :func:`build_cyclonedx` as CycloneDX XML (same content)."""
    from lxml import etree

    spec_version = doc["specVersion"]
    nsmap = {None: f"http://cyclonedx.org/schema/bom/{spec_version}"}
    root = etree.Element(
        "bom", {"serialNumber": doc["serialNumber"], "version": str(doc["version"])}, nsmap=nsmap
    )
    meta = doc["metadata"]
    meta_el = _sub(root, "metadata")
    if "timestamp" in meta:
        _sub(meta_el, "timestamp", meta["timestamp"])
    tools = _sub(_sub(meta_el, "tools"), "components")
    for tool in meta["tools"]["components"]:
        _xml_entity(tools, "component", tool)
    _xml_entity(meta_el, "component", meta["component"])
    _xml_properties(meta_el, meta.get("properties", ()))
    for plural, singular in (("components", "component"), ("services", "service")):
        if doc.get(plural):
            holder = _sub(root, plural)
            for entity in doc[plural]:
                _xml_entity(holder, singular, entity)
    deps = _sub(root, "dependencies")
    for dep in doc["dependencies"]:
        dep_el = _sub(deps, "dependency", ref=dep["ref"])
        for target in dep.get("dependsOn", ()):
            _sub(dep_el, "dependency", ref=target)
    # Unqualified tags inherit the default namespace only when created inside it.
    for el in root.iter():
        if isinstance(el.tag, str) and not el.tag.startswith("{"):
            el.tag = f"{{{nsmap[None]}}}{el.tag}"
    result: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return result


# -- exporters ------------------------------------------------------------------------------


class CycloneDxJsonExporter:
    """CycloneDX JSON, validated against the bundled schema before it is returned."""

    def __init__(
        self, spec_version: str = "1.6", *, validate: bool = True, timestamp: str | None = None
    ) -> None:
        self.spec_version = check_spec_version(spec_version)
        self.validate = validate
        self.timestamp = timestamp

    @property
    def name(self) -> str:
        return f"cyclonedx-json@{self.spec_version}"

    @property
    def media_type(self) -> str:
        return f"application/vnd.cyclonedx+json; version={self.spec_version}"

    def build(self, agbom: AgBOM) -> dict[str, Any]:
        """The validated CycloneDX dict."""
        doc = build_cyclonedx(agbom, self.spec_version, timestamp=self.timestamp)
        if self.validate:
            validate_cyclonedx_json(doc, self.spec_version)
        return doc

    def export(self, agbom: AgBOM) -> bytes:
        """Indented UTF-8 JSON with a trailing newline."""
        try:
            body = orjson.dumps(self.build(agbom), option=orjson.OPT_INDENT_2)
        except TypeError as exc:  # e.g. a lone surrogate in a string
            raise ExportError(f"cannot serialize the CycloneDX document: {exc}") from exc
        return body + b"\n"


class CycloneDxXmlExporter:
    """CycloneDX XML: the JSON document's content (validated the same way) in XML form."""

    def __init__(
        self, spec_version: str = "1.6", *, validate: bool = True, timestamp: str | None = None
    ) -> None:
        self._json = CycloneDxJsonExporter(spec_version, validate=validate, timestamp=timestamp)
        self.spec_version = self._json.spec_version

    @property
    def name(self) -> str:
        return f"cyclonedx-xml@{self.spec_version}"

    @property
    def media_type(self) -> str:
        return f"application/vnd.cyclonedx+xml; version={self.spec_version}"

    def export(self, agbom: AgBOM) -> bytes:
        return cyclonedx_xml(self._json.build(agbom))
