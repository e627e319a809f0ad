"""VEX: statements that a known vulnerability does or does not affect a package, read from
and written as OpenVEX (0.2.0) and CycloneDX VEX (a BOM whose ``vulnerabilities[]`` carry an
``analysis``).

Reading: :func:`read_vex` takes either format and returns :class:`VexStatement` objects;
:func:`apply_vex` puts the statement that speaks last for each OSV match of an AgBOM (same
advisory id or alias, same package) on that match as ``vex``. A ``not_affected`` statement
**with a justification** suppresses the match: the rules' ``vulnerability:`` key no longer sees
it, and reports list the finding it would have made as suppressed, naming the statement's
author (docs/vex.md). Any other statement is recorded on the match and changes nothing.

Writing: :func:`to_openvex` and :func:`cyclonedx_analysis` state each match of an AgBOM: a
match no statement speaks for is ``under_investigation`` (OpenVEX) / ``in_triage``
(CycloneDX): agbom knows the version is in an affected range, not whether the code is
reachable. Justifications map between the two vocabularies by :data:`TO_OPENVEX` and
:data:`TO_CYCLONEDX`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agbom.advisories.osv import AdvisoryError

if TYPE_CHECKING:
    from agbom.inventory import AgBOM

OPENVEX_CONTEXT = "https://openvex.dev/ns/v0.2.0"
MAX_VEX_BYTES = 16 * 1024 * 1024
MAX_STATEMENTS = 100_000
VEX_FIELD = "vex"

OPENVEX_STATUSES = ("not_affected", "affected", "fixed", "under_investigation")
OPENVEX_JUSTIFICATIONS = (
    "component_not_present",
    "vulnerable_code_not_present",
    "vulnerable_code_not_in_execute_path",
    "vulnerable_code_cannot_be_controlled_by_adversary",
    "inline_mitigations_already_exist",
)
CYCLONEDX_JUSTIFICATIONS = (
    "code_not_present",
    "code_not_reachable",
    "requires_configuration",
    "requires_dependency",
    "requires_environment",
    "protected_by_compiler",
    "protected_at_runtime",
    "protected_at_perimeter",
    "protected_by_mitigating_control",
)
# CycloneDX analysis states -> the OpenVEX status they say.
_CDX_STATE_STATUS = {
    "not_affected": "not_affected",
    "false_positive": "not_affected",
    "resolved": "fixed",
    "resolved_with_pedigree": "fixed",
    "exploitable": "affected",
    "in_triage": "under_investigation",
}
_STATUS_CDX_STATE = {
    "not_affected": "not_affected",
    "fixed": "resolved",
    "affected": "exploitable",
    "under_investigation": "in_triage",
}
# Each CycloneDX justification as the OpenVEX one that says the same, and back (the inverse
# picks the closest; a statement keeps its own wording in ``justification``).
TO_OPENVEX: Mapping[str, str] = {
    "code_not_present": "vulnerable_code_not_present",
    "code_not_reachable": "vulnerable_code_not_in_execute_path",
    "requires_configuration": "vulnerable_code_cannot_be_controlled_by_adversary",
    "requires_dependency": "component_not_present",
    "requires_environment": "vulnerable_code_cannot_be_controlled_by_adversary",
    "protected_by_compiler": "inline_mitigations_already_exist",
    "protected_at_runtime": "inline_mitigations_already_exist",
    "protected_at_perimeter": "inline_mitigations_already_exist",
    "protected_by_mitigating_control": "inline_mitigations_already_exist",
}
TO_CYCLONEDX: Mapping[str, str] = {
    "component_not_present": "requires_dependency",
    "vulnerable_code_not_present": "code_not_present",
    "vulnerable_code_not_in_execute_path": "code_not_reachable",
    "vulnerable_code_cannot_be_controlled_by_adversary": "requires_environment",
    "inline_mitigations_already_exist": "protected_by_mitigating_control",
}


class VexError(AdvisoryError):
    """A VEX document cannot be used (unreadable, too large, neither OpenVEX nor CycloneDX)."""


@dataclass(frozen=True, slots=True)
class VexStatement:
    """One statement: a vulnerability's status for some packages, and who said it."""

    vulnerability: str
    aliases: tuple[str, ...]
    products: tuple[str, ...]  # purls (a purl without a version covers every version)
    status: str  # one of OPENVEX_STATUSES
    justification: str | None  # as written (either vocabulary)
    impact: str | None
    author: str
    timestamp: str | None
    document: str  # the document's id, else its file name
    format: str  # "openvex" | "cyclonedx"

    @property
    def suppresses(self) -> bool:
        """A ``not_affected`` statement with a justification: the finding is suppressed."""
        return self.status == "not_affected" and bool(self.justification)

    def names(self) -> set[str]:
        return {n.casefold() for n in (self.vulnerability, *self.aliases) if n}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "author": self.author,
            "vulnerability": self.vulnerability,
            "document": self.document,
            "format": self.format,
            "suppresses": self.suppresses,
        }
        for key in ("justification", "impact", "timestamp"):
            value = getattr(self, key)
            if value:
                out[key] = value
        return out


def _text(value: Any, limit: int = 2048) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _purl_key(purl: str) -> tuple[str, str | None] | None:
    """``(type/namespace/name, version)`` of a purl, qualifiers and subpath aside."""
    from packageurl import PackageURL

    try:
        parsed = PackageURL.from_string(purl)
    except ValueError:
        return None
    name = "/".join(p for p in (parsed.type, parsed.namespace, parsed.name) if p)
    return name.casefold(), parsed.version


def _covers(product: str, purl: str) -> bool:
    """Whether a statement's product names the package ``purl`` (a product without a
    version names every version)."""
    want, have = _purl_key(product), _purl_key(purl)
    if want is None or have is None:
        return product == purl
    return want[0] == have[0] and (want[1] is None or want[1] == have[1])


# -- reading ------------------------------------------------------------------------------------


def _openvex(doc: Mapping[str, Any], where: str) -> list[VexStatement]:
    author = _text(doc.get("author"), 256)
    if author is None:
        raise VexError(f"{where}: an OpenVEX document must name its 'author'")
    statements = doc.get("statements")
    if not isinstance(statements, list):
        raise VexError(f"{where}: an OpenVEX document must hold a 'statements' list")
    document = _text(doc.get("@id")) or Path(where).name
    default_time = _text(doc.get("timestamp"), 64)
    out = []
    for i, raw in enumerate(statements):
        if not isinstance(raw, Mapping):
            raise VexError(f"{where}: statements[{i}] must be an object")
        vulnerability = raw.get("vulnerability")
        if not isinstance(vulnerability, Mapping) or not _text(vulnerability.get("name")):
            raise VexError(f"{where}: statements[{i}] has no vulnerability.name")
        status = raw.get("status")
        if status not in OPENVEX_STATUSES:
            raise VexError(f"{where}: statements[{i}] has an unknown status {status!r}")
        products: list[str] = []
        for product in raw.get("products") or []:
            if not isinstance(product, Mapping):
                continue
            for item in (product, *[s for s in product.get("subcomponents") or []
                                    if isinstance(s, Mapping)]):  # fmt: skip
                identifiers = item.get("identifiers")
                ids = identifiers if isinstance(identifiers, Mapping) else {}
                products.extend(p for p in (_text(item.get("@id")), _text(ids.get("purl"))) if p)
        aliases = vulnerability.get("aliases")
        out.append(
            VexStatement(
                vulnerability=str(vulnerability["name"])[:256],
                aliases=tuple(a[:256] for a in aliases if isinstance(a, str))[:64]
                if isinstance(aliases, list)
                else (),
                products=tuple(products),
                status=status,
                justification=_text(raw.get("justification"), 128),
                impact=_text(raw.get("impact_statement")),
                author=author,
                timestamp=_text(raw.get("timestamp"), 64) or default_time,
                document=document,
                format="openvex",
            )
        )
    return out


def _cdx_author(metadata: Any) -> str | None:
    if not isinstance(metadata, Mapping):
        return None
    for key in ("authors",):
        people = metadata.get(key)
        if isinstance(people, list):
            names = [_text(p.get("name"), 256) for p in people if isinstance(p, Mapping)]
            if any(names):
                return ", ".join(n for n in names if n)
    for key in ("manufacturer", "supplier", "manufacture"):
        org = metadata.get(key)
        if isinstance(org, Mapping) and _text(org.get("name"), 256):
            return str(org["name"])[:256]
    return None


def _cyclonedx(doc: Mapping[str, Any], where: str) -> list[VexStatement]:
    vulnerabilities = doc.get("vulnerabilities")
    if not isinstance(vulnerabilities, list):
        raise VexError(f"{where}: a CycloneDX VEX document must hold 'vulnerabilities'")
    author = _cdx_author(doc.get("metadata"))
    if author is None:
        raise VexError(
            f"{where}: a CycloneDX VEX document must name who says it (metadata.authors, "
            "manufacturer or supplier)"
        )
    serial = _text(doc.get("serialNumber")) or Path(where).name
    # Refs inside the document resolve to its components' purls; a BOM-Link
    # (urn:cdx:SERIAL/VERSION#REF) to another BOM is matched by its fragment.
    purls: dict[str, str] = {}
    stack = list(doc.get("components") or [])
    while stack:
        component = stack.pop()
        if not isinstance(component, Mapping):
            continue
        ref, purl = component.get("bom-ref"), component.get("purl")
        if isinstance(ref, str) and isinstance(purl, str):
            purls[ref] = purl
        stack.extend(component.get("components") or [])
    out = []
    for i, raw in enumerate(vulnerabilities):
        if not isinstance(raw, Mapping) or not _text(raw.get("id")):
            raise VexError(f"{where}: vulnerabilities[{i}] has no 'id'")
        analysis = raw.get("analysis")
        if not isinstance(analysis, Mapping) or analysis.get("state") not in _CDX_STATE_STATUS:
            continue  # no analysis: a vulnerability listed, nothing stated about it
        products = []
        for affect in raw.get("affects") or []:
            ref = affect.get("ref") if isinstance(affect, Mapping) else None
            if not isinstance(ref, str):
                continue
            fragment = ref.split("#", 1)[1] if ref.startswith("urn:cdx:") and "#" in ref else ref
            products.append(purls.get(fragment, fragment.removeprefix("package:")))
        references = raw.get("references")
        aliases = tuple(
            str(r["id"])[:256]
            for r in references if isinstance(r, Mapping) and isinstance(r.get("id"), str)
        )[:64] if isinstance(references, list) else ()  # fmt: skip
        out.append(
            VexStatement(
                vulnerability=str(raw["id"])[:256],
                aliases=aliases,
                products=tuple(products),
                status=_CDX_STATE_STATUS[str(analysis["state"])],
                justification=_text(analysis.get("justification"), 128),
                impact=_text(analysis.get("detail")),
                author=author,
                timestamp=_text(analysis.get("lastUpdated"), 64)
                or _text(analysis.get("firstIssued"), 64),
                document=serial,
                format="cyclonedx",
            )
        )
    return out


def parse_vex(data: bytes, where: str) -> list[VexStatement]:
    """The statements of one OpenVEX or CycloneDX VEX document (``where`` names it)."""
    if len(data) > MAX_VEX_BYTES:
        raise VexError(f"{where}: larger than {MAX_VEX_BYTES} bytes")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise VexError(f"{where}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, Mapping):
        raise VexError(f"{where}: a VEX document must be a JSON object")
    context = doc.get("@context")
    if isinstance(context, str) and context.startswith("https://openvex.dev/ns"):
        statements = _openvex(doc, where)
    elif doc.get("bomFormat") == "CycloneDX":
        statements = _cyclonedx(doc, where)
    else:
        raise VexError(f"{where}: neither OpenVEX (@context) nor CycloneDX (bomFormat)")
    if len(statements) > MAX_STATEMENTS:
        raise VexError(f"{where}: more than {MAX_STATEMENTS} statements")
    return statements


def read_vex(paths: Iterable[Path]) -> list[VexStatement]:
    """Every statement of every document, in the order given (a later one speaks last)."""
    out: list[VexStatement] = []
    for path in paths:
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_VEX_BYTES + 1)
        except OSError as exc:
            raise VexError(f"{path}: {exc.strerror or 'cannot be read'}") from None
        out.extend(parse_vex(data, str(path)))
    return out


# -- applying -----------------------------------------------------------------------------------


def statement_for(match: Mapping[str, Any], statements: Sequence[VexStatement]
                  ) -> VexStatement | None:  # fmt: skip
    """The statement that speaks last for one OSV match (its id or an alias, its package)."""
    names = {str(n).casefold() for n in (match.get("id"), *(match.get("aliases") or ())) if n}
    purl = match.get("package")
    found = None
    for statement in statements:
        if not names & statement.names():
            continue
        if isinstance(purl, str) and any(_covers(p, purl) for p in statement.products):
            found = statement
    return found


def is_suppressed(entry: Mapping[str, Any]) -> bool:
    """Whether an OSV match carries a statement that suppresses it."""
    vex = entry.get(VEX_FIELD)
    return isinstance(vex, Mapping) and vex.get("suppresses") is True


def apply_vex(agbom: AgBOM, statements: Sequence[VexStatement]) -> AgBOM:
    """``agbom`` with each OSV match's ``vex`` set from the statement that speaks for it
    (and any earlier ``vex`` removed: only the documents given here speak)."""
    from agbom.inventory import AgBOM

    document = agbom.to_document()
    changed = False
    for component in document["components"]:
        found = component.get("vulnerabilities")
        if not isinstance(found, list):
            continue
        for entry in found:
            if not isinstance(entry, dict):
                continue
            statement = statement_for(entry, statements)
            if statement is not None:
                entry[VEX_FIELD] = statement.to_json()
                changed = True
            elif VEX_FIELD in entry:
                del entry[VEX_FIELD]
                changed = True
    if not changed:
        return agbom
    return AgBOM.from_document(document, source="AgBOM with VEX statements")


def without_suppression(agbom: AgBOM) -> AgBOM:
    """``agbom`` with every match's ``vex`` removed: what the rules would report without the
    statements (the findings a report lists as suppressed)."""
    from agbom.inventory import AgBOM

    document = agbom.to_document()
    for component in document["components"]:
        for entry in component.get("vulnerabilities") or []:
            if isinstance(entry, dict):
                entry.pop(VEX_FIELD, None)
    return AgBOM.from_document(document, source="AgBOM without VEX statements")


class StatedAdvisories:
    """An advisory source (``annotate(agbom)``) whose matches then get the statements."""

    def __init__(self, advisories: Any, statements: Sequence[VexStatement]) -> None:
        self.advisories = advisories
        self.statements = tuple(statements)

    def annotate(self, agbom: AgBOM) -> AgBOM:
        return apply_vex(self.advisories.annotate(agbom), self.statements)


def suppression_text(said: Mapping[str, Any]) -> str:
    """``not_affected (JUSTIFICATION) by AUTHOR in DOCUMENT``: a suppression in words."""
    why = said.get("justification") or "no justification"
    return f"{said.get('status')} ({why}) by {said.get('author')} in {said.get('document')}"


def mark_suppressed(
    agbom: AgBOM, found: Sequence[Any], evaluate: Callable[[AgBOM], Iterable[Any]]
) -> list[Any]:
    """The findings ``evaluate`` makes of ``agbom`` without its statements and not with
    them (``found``), each with ``suppression`` set to the statement that suppresses it.
    Findings are taken by shape (``rule_id``, ``components``, ``message``, a dataclass)."""
    import dataclasses

    stated: dict[str, list[Mapping[str, Any]]] = {}
    for component in agbom:
        entries = component.data.get("vulnerabilities")
        kept = [e for e in entries or () if isinstance(e, Mapping) and is_suppressed(e)]
        if kept:
            stated[component.id] = kept
    if not stated:
        return []
    active = {(f.rule_id, tuple(f.components), f.message) for f in found}
    out = []
    for finding in evaluate(without_suppression(agbom)):
        if (finding.rule_id, tuple(finding.components), finding.message) in active:
            continue
        entries = stated.get(finding.components[0] if finding.components else "", [])
        if not entries:
            continue
        entry = next((e for e in entries if str(e.get("id")) in finding.message), entries[0])
        said = {**entry[VEX_FIELD], "vulnerability": entry.get("id")}
        out.append(dataclasses.replace(finding, suppression=said))
    return out


# -- writing ------------------------------------------------------------------------------------


def _matches(agbom: AgBOM) -> list[tuple[Any, Mapping[str, Any]]]:
    out: list[tuple[Any, Mapping[str, Any]]] = []
    for component in agbom:
        found = component.data.get("vulnerabilities")
        out.extend(
            (component, entry)
            for entry in (found if isinstance(found, list) else ())
            if isinstance(entry, Mapping) and isinstance(entry.get("id"), str)
        )
    return out


def _statement_of(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    vex = entry.get(VEX_FIELD)
    return vex if isinstance(vex, Mapping) else {}


def to_openvex(agbom: AgBOM, *, author: str, timestamp: str) -> dict[str, Any]:
    """An OpenVEX 0.2.0 document stating every OSV match of ``agbom``: one statement per
    advisory and package, ``under_investigation`` unless a statement read with ``--vex``
    says otherwise (its status, justification and impact carried over)."""
    statements: dict[tuple[str, str], dict[str, Any]] = {}
    for component, entry in _matches(agbom):
        purl = str(entry.get("package") or component.id)
        key = (str(entry["id"]), purl)
        if key in statements:
            continue
        said = _statement_of(entry)
        status = str(said.get("status") or "under_investigation")
        statement: dict[str, Any] = {
            "vulnerability": {
                "name": entry["id"],
                **({"aliases": list(entry["aliases"])} if entry.get("aliases") else {}),
            },
            "products": [
                {"@id": purl, "identifiers": {"purl": purl}}
                if purl.startswith("pkg:")
                else {"@id": purl}
            ],  # fmt: skip
            "status": status,
        }
        justification = said.get("justification")
        if status == "not_affected":
            statement["justification"] = TO_OPENVEX.get(str(justification), justification)
            if said.get("impact"):
                statement["impact_statement"] = said["impact"]
            if statement["justification"] not in OPENVEX_JUSTIFICATIONS:
                del statement["justification"]
                statement.setdefault("impact_statement", f"justification: {justification}")
        elif status == "affected":
            fixed = ", ".join(str(f) for f in entry.get("fixed") or [])
            statement["action_statement"] = (
                f"Upgrade to a fixed version: {fixed}" if fixed else "No fixed version is known"
            )
        if said.get("author"):
            statement["status_notes"] = f"stated by {said['author']} ({said.get('document')})"
        statements[key] = statement
    body = [statements[key] for key in sorted(statements)]
    digest = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return {
        "@context": OPENVEX_CONTEXT,
        "@id": f"urn:agbom:vex:sha256:{digest}",
        "author": author,
        "timestamp": timestamp,
        "version": 1,
        "tooling": "agbom",
        "statements": body,
    }


def cyclonedx_analysis(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The CycloneDX ``analysis`` of one OSV match: ``in_triage`` unless a statement read
    with ``--vex`` says otherwise."""
    said = _statement_of(entry)
    status = str(said.get("status") or "under_investigation")
    analysis: dict[str, Any] = {"state": _STATUS_CDX_STATE.get(status, "in_triage")}
    justification = said.get("justification")
    if status == "not_affected" and justification:
        mapped = TO_CYCLONEDX.get(str(justification), str(justification))
        if mapped in CYCLONEDX_JUSTIFICATIONS:
            analysis["justification"] = mapped
    detail = [str(said[k]) for k in ("impact",) if said.get(k)]
    if said.get("author"):
        detail.append(f"Stated by {said['author']} ({said.get('document')}).")
    if detail:
        analysis["detail"] = " ".join(detail)
    return analysis


__all__ = [
    "CYCLONEDX_JUSTIFICATIONS",
    "OPENVEX_CONTEXT",
    "OPENVEX_JUSTIFICATIONS",
    "OPENVEX_STATUSES",
    "StatedAdvisories",
    "TO_CYCLONEDX",
    "TO_OPENVEX",
    "VEX_FIELD",
    "VexError",
    "VexStatement",
    "apply_vex",
    "cyclonedx_analysis",
    "is_suppressed",
    "mark_suppressed",
    "parse_vex",
    "read_vex",
    "statement_for",
    "suppression_text",
    "to_openvex",
    "without_suppression",
]
