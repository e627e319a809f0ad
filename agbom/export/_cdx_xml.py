"""CycloneDX XML from the dict :func:`agbom.export.cyclonedx.build_cyclonedx` builds.

Same content as the JSON form, in the namespace ``http://cyclonedx.org/schema/bom/<v>``, with
child elements in the order the XSD sequences require (docs/cyclonedx-mapping.md, "XML").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["cyclonedx_xml"]

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


def _ack(choice: Mapping[str, Any]) -> dict[str, str]:
    return {"acknowledgement": choice["acknowledgement"]} if "acknowledgement" in choice else {}


def _xml_entity(parent: Any, tag: str, entity: Mapping[str, Any]) -> None:
    attrs = {"bom_ref": entity["bom-ref"]} if "bom-ref" in entity else {}
    if tag == "component":
        attrs = {"type": entity["type"], **attrs}
    el = _sub(parent, tag, **attrs)
    # Child order is fixed by the XSD sequence of component / service.
    for org in ("supplier", "provider"):
        if org in entity:
            _sub(_sub(el, org), "name", entity[org]["name"])
    if "publisher" in entity:
        _sub(el, "publisher", entity["publisher"])
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
    if "licenses" in entity:
        holder = _sub(el, "licenses")
        for choice in entity["licenses"]:
            if "expression" in choice:
                _sub(holder, "expression", choice["expression"], **_ack(choice))
            else:
                lic = choice["license"]
                lic_el = _sub(holder, "license", **_ack(lic))
                _sub(lic_el, "id" if "id" in lic else "name", lic.get("id") or lic["name"])
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
    if doc.get("vulnerabilities"):
        _xml_vulnerabilities(_sub(root, "vulnerabilities"), doc["vulnerabilities"])
    # Unqualified tags inherit the default namespace only when created inside it.
    for el in root.iter():
        if isinstance(el.tag, str) and not el.tag.startswith("{"):
            el.tag = f"{{{nsmap[None]}}}{el.tag}"
    result: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return result


def _xml_vulnerabilities(holder: Any, vulnerabilities: Iterable[Mapping[str, Any]]) -> None:
    """``vulnerabilities[]`` in the XML schema's element order (id, source, references,
    ratings, description, recommendation, affects)."""
    for entry in vulnerabilities:
        el = _sub(holder, "vulnerability", bom_ref=entry["bom-ref"])
        _sub(el, "id", entry["id"])
        _sub(_sub(el, "source"), "name", entry["source"]["name"])
        if entry.get("references"):
            refs = _sub(el, "references")
            for ref in entry["references"]:
                ref_el = _sub(refs, "reference")
                _sub(ref_el, "id", ref["id"])
                _sub(_sub(ref_el, "source"), "name", ref["source"]["name"])
        ratings = _sub(el, "ratings")
        for rating in entry["ratings"]:
            rating_el = _sub(ratings, "rating")
            _sub(_sub(rating_el, "source"), "name", rating["source"]["name"])
            _sub(rating_el, "severity", rating["severity"])
        if entry.get("description"):
            _sub(el, "description", entry["description"])
        if entry.get("recommendation"):
            _sub(el, "recommendation", entry["recommendation"])
        affects = _sub(el, "affects")
        for affect in entry["affects"]:
            target = _sub(affects, "target")
            _sub(target, "ref", affect["ref"])
            if affect.get("versions"):
                versions = _sub(target, "versions")
                for version in affect["versions"]:
                    version_el = _sub(versions, "version")
                    _sub(version_el, "version", version["version"])
                    _sub(version_el, "status", version["status"])
