"""SPDX 3.0.1 JSON-LD export, built straight from the canonical AgBOM.

The document is a plain dict in the compact JSON-LD form of the SPDX 3.0.1 context
(``type``, ``spdxId``, ``software_*`` names), serialized with orjson. The mapping follows the
ACS SPDX text (``extend_spdx.md``) where SPDX 3.0.1 has the classes, and is documented, with
every departure, in docs/spdx-mapping.md. In short:

- model -> ``ai_AIPackage``; knowledge_source, memory_store -> ``dataset_DatasetPackage``;
  tool, agent_capability, skill, mcp_server, a2a_peer -> ``software_Package`` (3.0.1 has no
  ``Service`` class; ``software_primaryPurpose`` and a fixed ``comment`` tell them apart);
- ``agent_capability`` / skill -> tool, mcp_server, a2a_peer: ``usesTool``; mcp_server -> tool:
  ``contains``; the agent ``dependsOn`` every component; skill -> model and composed skill:
  ``dependsOn``; a skill's SPDX license: ``hasDeclaredLicense``;
- purls in ``software_packageUrl`` and an ``externalIdentifier``; digests in ``verifiedUsing``;
- every field without an SPDX slot in a CycloneDX-properties ``extension`` (3.0.1's own
  extension class), with the same ``acs:*`` / ``agbom:*`` names as the CycloneDX export.

Why a dict and not spdx-python-model's objects (the official 3.0.1 bindings), measured with
benchmarks/bench_spdx_writer.py (docs/performance.md, "SPDX writer"): building the same
2,000-component document through the bindings' objects and writing it with their serializer
took 4.08 s against 0.21 s here (19x); the bindings write the extension profile as the bare
word ``extension``, which the 3.0.1 context expands wrongly (see :data:`PROFILE_EXTENSION`);
and they are a 0.0.x package agbom would otherwise not need at run time. The tests read every
document back through the bindings, so this writer is held to their model all the same.

Reproducibility: every ``spdxId`` is derived from the ``agbom_hash`` and the component id,
the graph and every list are sorted, and the creation time is an explicit timestamp, else the
AgBOM header's ``generated_at``, else ``SOURCE_DATE_EPOCH``; only when none is given is it
the time of export.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from agbom import __version__
from agbom.export._identity import agent_version, declared_packages, hub_model_purl
from agbom.export._iri import is_iri, scrub_url
from agbom.export._properties import (
    ACS_SCALARS,
    COMMON_FIELDS,
    TYPE_FIELDS,
    common_property_pairs,
    property_text,
)
from agbom.export._redact import KEYS_ONLY_FIELDS, redact_value
from agbom.export.interface import ExportError
from agbom.inventory import ROOT_ID, AgBOM, Component, ComponentType, normalize_algorithm

__all__ = [
    "PROFILE_EXTENSION",
    "SPDX_CONTEXT",
    "SPDX_ID_BASE",
    "SPDX_VERSION",
    "SpdxJsonExporter",
    "build_spdx",
    "creation_time",
]

SPDX_VERSION = "3.0.1"
SPDX_CONTEXT = "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"
SPDX_ID_BASE = "https://agbom.dev/spdx/"
"""Every ``spdxId`` is ``SPDX_ID_BASE + <agbom_hash hex> + /<kind>/<percent-encoded key>``."""

_CREATION_INFO = "_:creationinfo"

PROFILE_EXTENSION = "https://spdx.org/rdf/3.0.1/terms/Core/ProfileIdentifierType/extension"
"""The ``extension`` profile, written as a full IRI rather than the word ``extension``.

``profileConformance`` values are vocabulary terms resolved against the 3.0.1 context, and
that context also defines ``extension`` as a term (the ``Core/extension`` property). JSON-LD
resolves a defined term before the property's scoped ``@vocab``, so the bare word expands to
``Core/extension`` and SHACL rejects it (2 violations: not a ``ProfileIdentifierType``, not
in the allowed list). The other profile names are not terms of the context, so they stay
short; the full IRI is what the bare word was meant to mean.
"""

# SPDX 3.0.1 class of each AgBOM type.
SPDX_CLASS: Mapping[ComponentType, str] = {
    ComponentType.MODEL: "ai_AIPackage",
    ComponentType.KNOWLEDGE_SOURCE: "dataset_DatasetPackage",
    ComponentType.MEMORY_STORE: "dataset_DatasetPackage",
    ComponentType.TOOL: "software_Package",
    ComponentType.AGENT_CAPABILITY: "software_Package",
    ComponentType.SKILL: "software_Package",
    ComponentType.MCP_SERVER: "software_Package",
    ComponentType.A2A_PEER: "software_Package",
}

# Why each type reads as it does; a consumer sees the ACS type without knowing agbom.
_COMMENTS: Mapping[ComponentType, str] = {
    ComponentType.MODEL: "ACS model",
    ComponentType.KNOWLEDGE_SOURCE: "ACS knowledge_source (a dataset the agent retrieves from)",
    ComponentType.MEMORY_STORE: "ACS memory_store (a dataset the agent reads and writes)",
    ComponentType.TOOL: "ACS tool (a function the agent can call)",
    ComponentType.AGENT_CAPABILITY: "ACS agent_capability (a named group of tools and peers)",
    ComponentType.SKILL: "ACS skill (a folder of instructions and scripts the agent loads)",
    ComponentType.MCP_SERVER: "ACS mcp_server (a service: SPDX 3.0.1 has no Service class)",
    ComponentType.A2A_PEER: "ACS a2a_peer (a service: SPDX 3.0.1 has no Service class)",
}

# normalize_algorithm() form -> (SPDX HashAlgorithm, hex length)
_HASH_ALGS: Mapping[str, tuple[str, int]] = {
    "md5": ("md5", 32),
    "sha1": ("sha1", 40),
    "sha224": ("sha224", 56),
    "sha256": ("sha256", 64),
    "sha384": ("sha384", 96),
    "sha512": ("sha512", 128),
    "sha3224": ("sha3_224", 56),
    "sha3256": ("sha3_256", 64),
    "sha3384": ("sha3_384", 96),
    "sha3512": ("sha3_512", 128),
    "blake2b256": ("blake2b256", 64),
    "blake2b384": ("blake2b384", 96),
    "blake2b512": ("blake2b512", 128),
    "blake3": ("blake3", 64),
}
_HEX = frozenset("0123456789abcdef")

# Fields each type maps to an SPDX slot, an acs:* property or a relationship; any other
# field is an extension field (what the scanner records) and becomes an agbom:* property.
# An A2A card's provider organization has no SPDX slot of its own beside the supplier.
_TYPE_FIELDS: Mapping[ComponentType, frozenset[str]] = {
    **TYPE_FIELDS,
    ComponentType.A2A_PEER: TYPE_FIELDS[ComponentType.A2A_PEER] | {"provider"},
}

# Reference field -> SPDX relationship type, per source type. ACS says "USES"; the nearest
# 3.0.1 type is usesTool (scoped to run time). Composition and models are dependencies.
_EDGE_TYPES: Mapping[ComponentType, Mapping[str, str]] = {
    ComponentType.MCP_SERVER: {"tools": "contains"},
    ComponentType.AGENT_CAPABILITY: {
        "tools": "usesTool",
        "mcp_servers": "usesTool",
        "a2a_peers": "usesTool",
    },
    ComponentType.SKILL: {
        "tools": "usesTool",
        "mcp_servers": "usesTool",
        "a2a_peers": "usesTool",
        "models": "dependsOn",
        "composed_skills": "dependsOn",
    },
}
_SKILL_DIGEST_COMMENT = (
    "agbom-skill-digest/2: one digest over every file the skill folder reaches "
    "(see agbom's docs/skills.md), not over a single file"
)


# -- small value helpers --------------------------------------------------------------------


def _prop(name: str, value: Any) -> dict[str, str]:
    return {
        "type": "extension_CdxPropertyEntry",
        "extension_cdxPropName": name,
        "extension_cdxPropValue": property_text(value),
    }


def _quote(key: str) -> str:
    """``key`` as one IRI path segment: percent-encoded UTF-8, so distinct keys stay distinct."""
    try:
        return urllib.parse.quote(key, safe="")
    except UnicodeEncodeError as exc:  # a lone surrogate cannot be UTF-8 encoded
        raise ExportError(f"cannot make an SPDX id from {key!r}: {exc}") from exc


def _hash(algorithm: Any, value: Any, comment: str | None = None) -> dict[str, str] | None:
    """An SPDX ``Hash``, or ``None`` when SPDX has no such algorithm or the length is wrong."""
    if not isinstance(algorithm, str) or not isinstance(value, str):
        return None
    known = _HASH_ALGS.get(normalize_algorithm(algorithm))
    content = value.lower()
    if known is None or len(content) != known[1] or not _HEX.issuperset(content):
        return None
    entry = {"type": "Hash", "algorithm": known[0], "hashValue": content}
    if comment is not None:
        entry["comment"] = comment
    return entry


@functools.cache
def _purl_ok(value: str) -> bool:
    from packageurl import PackageURL

    try:
        PackageURL.from_string(value)
    except ValueError:
        return False
    return True


def _url(value: Any) -> str | None:
    """The scrubbed form of ``value`` (credentials removed) if it is an absolute IRI."""
    if not isinstance(value, str) or not value:
        return None
    scrubbed = scrub_url(value)
    return scrubbed if is_iri(scrubbed) else None


_LICENSE_TOKENS = re.compile(r"(\s+|[()])")


@functools.cache
def _license_expression(value: str) -> str | None:
    """``value`` as an SPDX license expression with canonical ids and operators, or ``None``.

    cyclonedx-python-lib's public checks decide validity; ids are written as SPDX spells them
    (``apache-2.0`` -> ``Apache-2.0``) and operators in capitals, then checked once more.
    """
    from cyclonedx.spdx import fixup_id, is_expression  # loads the license list on first use

    text = " ".join(value.split())
    if not text or not is_expression(text):
        return None
    words = []
    for token in _LICENSE_TOKENS.split(text):
        if token.upper() in ("AND", "OR", "WITH"):
            words.append(token.upper())
        elif token and not token.isspace() and token not in "()":
            words.append(fixup_id(token) or token)
        else:
            words.append(token)
    expression = "".join(words)
    return expression if is_expression(expression) else None


def _utc_seconds(moment: dt.datetime) -> str:
    """SPDX's DateTimestamp form: UTC, whole seconds, ``Z``."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def creation_time(
    agbom: AgBOM, timestamp: str | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """The document's ``created`` time, in SPDX form (``2025-03-04T03:06:07Z``).

    In order: ``timestamp`` (ISO 8601 with a timezone), the AgBOM header's ``generated_at``,
    ``SOURCE_DATE_EPOCH`` (seconds since 1970, the reproducible-builds convention), and only
    then the clock. SPDX requires a creation time, so it is never omitted.
    """
    if timestamp is not None:
        parsed = _parse_time(timestamp)
        if parsed is None:
            raise ExportError(f"timestamp {timestamp!r} is not an ISO 8601 time with a timezone")
        return _utc_seconds(parsed)
    generated = _parse_time(agbom.header.get("generated_at"))
    if generated is not None:
        return _utc_seconds(generated)
    epoch = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        text = epoch.strip()
        if not text.isdigit() or len(text) > 12:
            raise ExportError(
                f"SOURCE_DATE_EPOCH {epoch!r} is not a number of seconds since 1970-01-01"
            )
        return _utc_seconds(dt.datetime.fromtimestamp(int(text), dt.UTC))
    return _utc_seconds(dt.datetime.now(dt.UTC))


# -- per-component mapping ------------------------------------------------------------------


class _Ids:
    """The document's spdxIds, all below one base derived from the ``agbom_hash``."""

    def __init__(self, agbom: AgBOM) -> None:
        digest = agbom.agbom_hash.partition(":")[2]
        self.base = f"{SPDX_ID_BASE}{digest}"

    def of(self, kind: str, key: str | None = None) -> str:
        return f"{self.base}/{kind}" if key is None else f"{self.base}/{kind}/{_quote(key)}"

    def component(self, component_id: str) -> str:
        return self.of("agent") if component_id == ROOT_ID else self.of("component", component_id)


def _extension(props: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [{"type": "extension_CdxPropertiesExtension", "extension_cdxProperty": props}]


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
        value = redact_value(key, raw)
        if isinstance(value, list) and all(isinstance(v, str | int | float | bool) for v in value):
            props.extend(_prop(f"agbom:{key}", v) for v in value)
        else:
            props.append(_prop(f"agbom:{key}", value))
    return props


def _common_properties(component: Component) -> list[dict[str, str]]:
    return [_prop(name, value) for name, value in common_property_pairs(component)]


def _external_ref(url: str, comment: str) -> dict[str, Any]:
    return {"type": "ExternalRef", "externalRefType": "other", "locator": [url], "comment": comment}


class _Builder:
    """Accumulates the elements of one document; ``graph()`` returns them in a fixed order."""

    def __init__(self, agbom: AgBOM) -> None:
        self.agbom = agbom
        self.ids = _Ids(agbom)
        self.components: list[dict[str, Any]] = []
        self.organizations: dict[str, dict[str, Any]] = {}
        self.licenses: dict[str, dict[str, Any]] = {}
        self.packages: dict[str, dict[str, Any]] = {}
        # (from spdxId, relationship type) -> target spdxIds
        self.edges: dict[tuple[str, str], set[str]] = {}

    def element(self, cls: str, spdx_id: str) -> dict[str, Any]:
        return {"type": cls, "spdxId": spdx_id, "creationInfo": _CREATION_INFO}

    def organization(self, name: str) -> str:
        spdx_id = self.ids.of("organization", name)
        if spdx_id not in self.organizations:
            org = self.element("Organization", spdx_id)
            org["name"] = name
            self.organizations[spdx_id] = org
        return spdx_id

    def license(self, expression: str) -> str:
        spdx_id = self.ids.of("license", expression)
        if spdx_id not in self.licenses:
            entry = self.element("simplelicensing_LicenseExpression", spdx_id)
            entry["simplelicensing_licenseExpression"] = expression
            self.licenses[spdx_id] = entry
        return spdx_id

    def package(self, purl: Any) -> str:
        """The element of a declared package (a skill's pin, a bundle's dependency)."""
        text = purl.to_string()
        spdx_id = self.ids.of("package", text)
        if spdx_id not in self.packages:
            entry = self.element("software_Package", spdx_id)
            entry["name"] = f"{purl.namespace}/{purl.name}" if purl.namespace else purl.name
            entry["comment"] = "A package a component declares (a skill's pin, a bundled file)"
            entry["software_packageVersion"] = purl.version
            entry["software_primaryPurpose"] = "library"
            _set_purl(entry, text)
            self.packages[spdx_id] = entry
        return spdx_id

    def edge(self, source: str, kind: str, target: str) -> None:
        self.edges.setdefault((source, kind), set()).add(target)

    def add_component(self, component: Component) -> None:
        ctype = component.type
        data = component.data
        spdx_id = self.ids.component(component.id)
        entry = self.element(SPDX_CLASS[ctype], spdx_id)
        entry["name"] = component.name
        entry["comment"] = _COMMENTS[ctype]
        description = data.get("description")
        if isinstance(description, str) and description:
            entry["description"] = description
        consumed = COMMON_FIELDS | _TYPE_FIELDS[ctype]
        props = _common_properties(component)
        refs: list[dict[str, Any]] = []
        hashes: list[dict[str, str]] = []

        version = component.version
        card_version = data.get("agent_version")
        if ctype is ComponentType.A2A_PEER and version is None and isinstance(card_version, str):
            version = card_version or None
            consumed = consumed | {"agent_version"}
        if ctype is ComponentType.SKILL and version is None:
            metadata = data.get("metadata")
            declared = metadata.get("version") if isinstance(metadata, Mapping) else None
            if isinstance(declared, str | int | float) and not isinstance(declared, bool):
                version = str(declared)
        if version is not None:
            entry["software_packageVersion"] = version

        provider = data.get("provider")
        if isinstance(provider, Mapping):  # an A2A card's {organization, url}: keep it all
            props.append(_prop("acs:provider", redact_value("provider", provider)))
            provider = provider.get("organization")
        elif provider is not None and not isinstance(provider, str):
            props.append(_prop("acs:provider", provider))
        if isinstance(provider, str) and provider:
            entry["suppliedBy"] = self.organization(provider)

        purpose = _purpose(component)
        entry["software_primaryPurpose"] = purpose
        if SPDX_CLASS[ctype] == "dataset_DatasetPackage":
            # agbom knows the kind of store, not the kind of data in it.
            entry["dataset_datasetType"] = ["noAssertion"]

        endpoint = data.get("endpoint")
        if endpoint is not None:
            url = _url(endpoint)
            if url is not None:
                refs.append(_external_ref(url, f"{ctype.value} endpoint"))
            elif isinstance(endpoint, str):
                props.append(_prop("acs:endpoint", redact_value("command", endpoint)))
            else:
                props.append(_prop("acs:endpoint", redact_value("endpoint", endpoint)))
        for field in ACS_SCALARS.get(ctype, ()):
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
                refs.append(_external_ref(card, "A2A agent card"))
            else:
                props.append(_prop("acs:agent_card_ref", data["agent_card_ref"]))
        if ctype is ComponentType.SKILL:
            self._skill_fields(component, entry, props, hashes)
            consumed = consumed | {"license"}
        digest = data.get("digest")
        if ctype in (ComponentType.MODEL, ComponentType.TOOL) and isinstance(digest, Mapping):
            mapped = _hash(digest.get("algorithm"), digest.get("value"))
            if mapped is not None:
                hashes.append(mapped)
            else:
                props.append(
                    _prop("acs:digest", f"{digest.get('algorithm')}:{digest.get('value')}")
                )

        purl = data.get("purl")
        if isinstance(purl, str) and _purl_ok(purl):
            _set_purl(entry, purl)
        elif purl is not None:
            consumed = consumed - {"purl"}  # kept as an agbom:purl property instead
        if "software_packageUrl" not in entry:
            derived = hub_model_purl(component)
            if derived is not None:
                _set_purl(entry, derived[0])
                props.append(_prop("agbom:purl.derived_from", derived[1]))
        packages, omitted = declared_packages(data)
        for package in packages:
            self.edge(spdx_id, "dependsOn", self.package(package))
        if omitted:
            props.append(_prop("agbom:packages.omitted", omitted))
        props.extend(_extension_properties(component, consumed))

        if refs:
            entry["externalRef"] = sorted(refs, key=lambda r: (r["comment"], r["locator"]))
        if hashes:
            entry["verifiedUsing"] = hashes
        entry["extension"] = _extension(props)
        self.components.append(entry)

        kinds = _EDGE_TYPES.get(ctype, {})
        for field, target, _ in component.references():
            self.edge(spdx_id, kinds.get(field, "dependsOn"), self.ids.component(target))

    def _skill_fields(
        self,
        component: Component,
        entry: dict[str, Any],
        props: list[dict[str, str]],
        hashes: list[dict[str, str]],
    ) -> None:
        data = component.data
        definition = data.get("definition") or {}
        digest = definition.get("digest") or {}
        mapped = _hash(digest.get("algorithm"), digest.get("value"), _SKILL_DIGEST_COMMENT)
        if mapped is not None:
            hashes.append(mapped)
        else:
            props.append(
                _prop("acs:definition.digest", f"{digest.get('algorithm')}:{digest.get('value')}")
            )
        ref = definition.get("ref")
        ref_url = _url(ref)
        if ref_url is not None:
            entry["software_downloadLocation"] = ref_url
        elif ref is not None:
            props.append(_prop("acs:definition.ref", ref))
        props.extend(
            _prop("acs:declared_capability", v) for v in data.get("declared_capabilities") or ()
        )
        declared = data.get("license")
        expression = _license_expression(declared) if isinstance(declared, str) else None
        if expression is not None:
            self.edge(entry["spdxId"], "hasDeclaredLicense", self.license(expression))
        elif declared is not None:
            props.append(_prop("agbom:license", declared))

    def relationships(self) -> Iterator[dict[str, Any]]:
        for (source, kind), targets in sorted(self.edges.items()):
            rel_key = f"{source[len(self.ids.base) + 1 :]}/{kind}"
            entry = self.element(
                "LifecycleScopedRelationship" if kind != "hasDeclaredLicense" else "Relationship",
                f"{self.ids.base}/relationship/{rel_key}",
            )
            entry["from"] = source
            entry["relationshipType"] = kind
            entry["to"] = sorted(targets)
            if kind != "hasDeclaredLicense":
                entry["scope"] = "runtime"
            yield entry


def _set_purl(entry: dict[str, Any], purl: str) -> None:
    entry["software_packageUrl"] = purl
    entry["externalIdentifier"] = [
        {"type": "ExternalIdentifier", "externalIdentifierType": "packageUrl", "identifier": purl}
    ]


def _purpose(component: Component) -> str:
    """``software_primaryPurpose`` for a component (see docs/spdx-mapping.md, "Purposes")."""
    ctype = component.type
    if ctype is ComponentType.MODEL:
        return "model"
    if ctype in (ComponentType.KNOWLEDGE_SOURCE, ComponentType.MEMORY_STORE):
        return "data"
    if ctype is ComponentType.SKILL:
        return "module"
    if ctype is ComponentType.AGENT_CAPABILITY:
        return "other"
    if ctype is ComponentType.MCP_SERVER:
        data = component.data
        launched = data.get("purl") is not None or data.get("command") is not None
        return "application" if launched or data.get("endpoint") is None else "other"
    if ctype is ComponentType.A2A_PEER:
        return "other"
    return "application"  # tool


def _agent_element(builder: _Builder) -> dict[str, Any]:
    agbom = builder.agbom
    agent = agbom.agent
    entry = builder.element("software_Package", builder.ids.of("agent"))
    name = agent.get("name")
    entry["name"] = name if isinstance(name, str) and name else agbom.agent_id
    entry["comment"] = "The agent this AgBOM describes"
    if isinstance(agent.get("description"), str) and agent["description"]:
        entry["description"] = agent["description"]
    version, declared = agent_version(agbom)
    entry["software_packageVersion"] = version
    entry["software_primaryPurpose"] = "application"
    props = [_prop("acs:agent.id", agbom.agent_id), _prop("acs:agbom_hash", agbom.agbom_hash)]
    if not declared:  # say where the version came from (docs/spdx-mapping.md)
        props.append(_prop("agbom:version.derived_from", "agbom_hash"))
    for key in sorted(k for k in agent if k not in ("id", "name", "version", "description")):
        value = redact_value(key, agent[key])
        if value is not None:
            props.append(_prop(f"acs:agent.{key}", value))
    for key in sorted(k for k in agbom.header if k not in ("agent", "generated_at")):
        value = redact_value(key, agbom.header[key])
        if value is not None:
            props.append(_prop(f"acs:{key}", value))
    entry["extension"] = _extension(props)
    return entry


def build_spdx(agbom: AgBOM, *, timestamp: str | None = None) -> dict[str, Any]:
    """The SPDX 3.0.1 JSON-LD document (as a dict) for ``agbom``.

    ``timestamp`` (ISO 8601 with a timezone) is the creation time; see :func:`creation_time`
    for what is used without it.
    """
    created = creation_time(agbom, timestamp)
    builder = _Builder(agbom)
    ids = builder.ids
    agent = _agent_element(builder)
    for component in agbom:  # already in id order
        builder.add_component(component)
        # ACS: the agent DEPENDS_ON every component (not only the top-level ones).
        builder.edge(agent["spdxId"], "dependsOn", ids.component(component.id))
    relationships = list(builder.relationships())

    creator = builder.element("SoftwareAgent", ids.of("creator", "agbom"))
    creator["name"] = "agbom"
    tool = builder.element("Tool", ids.of("tool", f"agbom@{__version__}"))
    tool["name"] = f"agbom {__version__}"
    creation_info = {
        "type": "CreationInfo",
        "@id": _CREATION_INFO,
        "specVersion": SPDX_VERSION,
        "created": created,
        "createdBy": [creator["spdxId"]],
        "createdUsing": [tool["spdxId"]],
    }

    described = [
        agent,
        *builder.components,
        *sorted(builder.packages.values(), key=lambda e: e["spdxId"]),
        *sorted(builder.organizations.values(), key=lambda e: e["spdxId"]),
        *sorted(builder.licenses.values(), key=lambda e: e["spdxId"]),
        *relationships,
    ]
    sbom = builder.element("software_Sbom", ids.of("sbom"))
    sbom["name"] = f"AgBOM of {agent['name']}"
    sbom["rootElement"] = [agent["spdxId"]]
    sbom["element"] = [e["spdxId"] for e in described]
    sbom["software_sbomType"] = ["deployed"]

    profiles = ["core", "software", PROFILE_EXTENSION]
    if builder.licenses:
        profiles.append("simpleLicensing")
    document = builder.element("SpdxDocument", ids.of("document"))
    document["name"] = f"AgBOM of {agent['name']}"
    document["comment"] = f"Exported by agbom from the AgBOM {agbom.agbom_hash}"
    document["profileConformance"] = profiles
    document["rootElement"] = [sbom["spdxId"]]
    document["element"] = [creator["spdxId"], tool["spdxId"], sbom["spdxId"]] + sbom["element"]

    return {
        "@context": SPDX_CONTEXT,
        "@graph": [creation_info, creator, tool, document, sbom, *described],
    }


class SpdxJsonExporter:
    """SPDX 3.0.1 JSON-LD (the ``spdx-json`` format)."""

    name = "spdx-json@3.0.1"
    media_type = "application/spdx+json"

    def __init__(self, *, timestamp: str | None = None) -> None:
        self.timestamp = timestamp

    def export(self, agbom: AgBOM) -> bytes:
        """Indented UTF-8 JSON with a trailing newline."""
        doc = build_spdx(agbom, timestamp=self.timestamp)
        try:
            body = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
        except TypeError as exc:  # e.g. a lone surrogate in a string
            raise ExportError(f"cannot serialize the SPDX document: {exc}") from exc
        return body + b"\n"
