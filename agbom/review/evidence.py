"""What a reviewer reads before deciding: each file of the pending digest with its content and
its diff against the approved digest, and the rule findings for the pending digest, each on
the file and line it cites.

The files are the ones the registration carried (agbom/review/definition.py). The findings
come from the same places ``agbom scan`` and the Guardian get theirs: the content checks of
agbom/scan/content.py run over the carried texts, and the server's rule packs evaluate the
skill as the Guardian registers it (its declared capabilities and composition, inside the
registering agent's current AgBOM), so least-privilege, composition and, with ``--osv``
annotations, vulnerability rules speak here too. Nothing is fetched, and nothing here takes
part in a decision.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agbom.review.definition import Definition, DefinitionFile
from agbom.store.interface import SkillRecord

MAX_FINDINGS = 200
MAX_FILE_DIFF_LINES = 4000
_ALLOWED_TOOLS = re.compile(r"^allowed-tools\s*:", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class FindingView:
    rule_id: str
    severity: str
    action: str
    message: str
    remediation: str | None
    file: str | None  # the file it cites, None when it cites none
    line: int | None
    check: str | None = None  # the content check behind it, for content findings
    suppression: str | None = None  # a VEX statement that suppresses it, in words

    @property
    def anchor(self) -> str | None:
        if self.file is None:
            return None
        if self.line is None:
            return file_anchor(self.file)  # about the whole file (one the page cannot show)
        return f"{file_anchor(self.file)}-L{self.line}"


@dataclass(frozen=True, slots=True)
class LineView:
    number: int
    text: str
    findings: list[FindingView]

    @property
    def severity(self) -> str:
        return self.findings[0].severity if self.findings else ""


@dataclass(frozen=True, slots=True)
class FileView:
    path: str
    anchor: str
    size: int
    sha256: str
    executable: bool
    target: str | None
    kind: str  # text, binary, oversize, link, not-carried, mismatched
    text_matches: bool | None  # the shown text hashes to the listed SHA-256
    change: str | None  # added, changed, unchanged; None: no approved digest to compare
    lines: list[LineView] = field(default_factory=list)
    diff: list[str] | None = None  # a unified diff against the approved digest's text
    diff_cut: bool = False
    findings: list[FindingView] = field(default_factory=list)


def bounded_diff(old: str, new: str, fromfile: str, tofile: str) -> tuple[list[str], bool]:
    """A unified diff of two texts (3 lines of context), its first
    :data:`MAX_FILE_DIFF_LINES` lines, and whether it was cut there."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=fromfile, tofile=tofile, lineterm="", n=3
        )
    )
    return lines[:MAX_FILE_DIFF_LINES], len(lines) > MAX_FILE_DIFF_LINES


def file_anchor(path: str) -> str:
    """A stable element id for a file's block: ``file-`` and 16 hex of the path's SHA-256
    (paths may hold any character; the block also carries ``data-path``)."""
    return "file-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _kind(f: DefinitionFile) -> str:
    if f.target is not None:
        return "link"
    if f.text is not None:
        return "text"
    if f.binary:
        return "binary"
    if f.oversize:
        return "oversize"
    if f.mismatched:
        return "mismatched"
    return "not-carried"


def _same(a: DefinitionFile, b: DefinitionFile) -> bool:
    return (a.sha256, a.executable, a.target) == (b.sha256, b.executable, b.target)


def file_views(
    new: Definition, old: Definition | None, findings: list[FindingView]
) -> list[FileView] | None:
    """One view per file of ``new`` (None when it carried no file list), with its findings
    on their lines; against ``old`` (the approved digest's definition) when there is one."""
    if new.files is None:
        return None
    before = {f.path: f for f in (old.files or ())} if old is not None else None
    by_file: dict[str, list[FindingView]] = {}
    for finding in findings:
        if finding.file is not None:
            by_file.setdefault(finding.file, []).append(finding)
    out = []
    for f in new.files:
        cited = by_file.get(f.path, [])
        change: str | None = None
        diff: list[str] | None = None
        cut = False
        if before is not None:
            prior = before.get(f.path)
            if prior is None:
                change = "added"
            elif _same(prior, f):
                change = "unchanged"
            else:
                change = "changed"
                if prior.text is not None and f.text is not None:
                    diff, cut = bounded_diff(
                        prior.text, f.text, f"{f.path} (approved)", f"{f.path} (pending)"
                    )
        rows = []
        if f.text is not None:
            for number, text in enumerate(f.text.splitlines() or [""], start=1):
                here = [c for c in cited if (c.line or 1) == number]
                rows.append(LineView(number, text, here))
        out.append(
            FileView(
                path=f.path,
                anchor=file_anchor(f.path),
                size=f.size,
                sha256=f.sha256,
                executable=f.executable,
                target=f.target,
                kind=_kind(f),
                text_matches=f.text_matches,
                change=change,
                lines=rows,
                diff=diff,
                diff_cut=cut,
                findings=cited,
            )
        )
    return out


def removed_files(new: Definition, old: Definition | None) -> list[DefinitionFile]:
    if old is None or old.files is None or new.files is None:
        return []
    kept = {f.path for f in new.files}
    return [f for f in old.files if f.path not in kept]


# -- what the page cannot show ----------------------------------------------------------------

NOT_SHOWN = "not-shown"
"""The page's own finding for content it cannot show (it names no rule of a pack)."""


@dataclass(frozen=True, slots=True)
class Unshown:
    """A file of the digest whose content the page cannot show, and why. ``blocking``: it
    is SKILL.md or a script, so Approve is offered only to an approver who confirms having
    reviewed it elsewhere."""

    path: str
    why: str
    blocking: bool
    listed: bool = True  # False: no verified file list names it (the whole folder is unseen)


def unshown(covered: Definition) -> list[Unshown]:
    """What of the digest ``covered`` (:meth:`Definition.covered`) the page cannot show."""
    from agbom.inventory.skill_digest import is_script

    if covered.files is None:
        why = "the registration carried no file list that matches the digest, so no file of it"
        return [Unshown("SKILL.md", f"{why} can be shown", True, listed=False)]
    out = []
    for f in covered.files:
        if f.target is not None or f.text is not None:
            continue
        if f.mismatched:
            why = "the text carried for it does not match its SHA-256"
        elif f.binary:
            why = "the registration marked it binary"
        elif f.oversize:
            why = "it was too large to carry or keep"
        else:
            why = "the registration did not carry its content"
        blocking = f.path == "SKILL.md" or is_script(f.path, f.executable)
        out.append(Unshown(f.path, why, blocking))
    return out


def unshown_findings(items: list[Unshown]) -> list[FindingView]:
    """One finding per file the page cannot show: high for SKILL.md and scripts (what the
    agent reads and runs), low for the rest."""
    out = []
    for item in items:
        kind = "SKILL.md" if item.path == "SKILL.md" else "script" if item.blocking else "file"
        out.append(
            FindingView(
                rule_id=NOT_SHOWN,
                severity="high" if item.blocking else "low",
                action="confirm" if item.blocking else "warn",
                message=f"{item.path} ({kind}) cannot be shown here: {item.why}",
                remediation=(
                    "Read it in the skill's folder before approving, and confirm so on the form"
                    if item.blocking
                    else "Read it in the skill's folder if it matters to the skill"
                ),
                file=item.path if item.listed else None,
                line=None,
                check=NOT_SHOWN,
            )
        )
    return out


def ranked(findings: list[FindingView]) -> list[FindingView]:
    """Most severe first, then by file and line; at most :data:`MAX_FINDINGS`."""
    rank = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
    findings.sort(
        key=lambda v: (rank.get(v.severity, 5), v.file or "\uffff", v.line or 0, v.rule_id)
    )
    return findings[:MAX_FINDINGS]


# -- findings --------------------------------------------------------------------------------


def _remediation(finding: Any) -> str | None:
    value = getattr(finding, "remediation", None)
    if value is None and isinstance(finding, Mapping):
        value = finding.get("remediation")
    return value if isinstance(value, str) and value else None


def _suppressed(rules: Any, agbom: Any, component: Any, found: list[Any]) -> list[Any]:
    """The findings VEX statements suppress for ``component``, marked (as ``scan --vex``
    lists them)."""
    from agbom.advisories.vex import mark_suppressed
    from agbom.inventory import ComponentGraph

    def evaluate(bare: Any) -> Any:
        return rules.evaluate_component(bare.get(component.id), ComponentGraph(bare))

    return mark_suppressed(agbom, found, evaluate)


def _view(finding: Any, file: str | None, line: int | None, check: str | None) -> FindingView:
    from agbom.advisories.vex import suppression_text

    said = getattr(finding, "suppression", None)
    return FindingView(
        rule_id=finding.rule_id,
        severity=finding.severity.value,
        action=finding.action.value,
        message=finding.message,
        remediation=_remediation(finding),
        file=file,
        line=line,
        check=check,
        suppression=suppression_text(said) if said is not None else None,
    )


def content_findings(definition: Definition) -> list[dict[str, Any]]:
    """The content checks over the carried texts, as ``agbom scan`` records them."""
    from agbom.scan.content import MAX_FINDINGS as CAP
    from agbom.scan.content import ContentFinding, check_text, shown

    found: list[ContentFinding] = []
    for f in definition.files or ():
        if f.target is not None:
            found.append(ContentFinding("symlink", f.path, 1, shown(f"{f.path} -> {f.target}")))
            continue
        own = f.path.rsplit("/scripts/", 1)[-1] if "/scripts/" in f.path else f.path
        if f.executable and not (own.startswith("scripts/") or "/scripts/" in f.path):
            found.append(ContentFinding("executable-outside-scripts", f.path, 1, shown(f.path)))
        if f.text is not None:
            found.extend(check_text(f.text, f.path))
    if definition.files is None and definition.skill_md is not None:
        found.extend(check_text(definition.skill_md, "SKILL.md"))
    return [c.to_json() for c in found[:CAP]]


def _skill_component(record: SkillRecord, base: Mapping[str, Any] | None) -> dict[str, Any]:
    """The skill as the Guardian registers it (agbom/guardian/policies.py)."""
    data: dict[str, Any] = dict(base or {})
    data.update(
        id=record.skill_id,
        type="skill",
        name=data.get("name") or record.skill_id,
        description=data.get("description") or "",
        definition={"ref": record.ref or "", "digest": record.digest.to_wire()},
        declared_capabilities=list(record.declared_capabilities),
    )
    for key in ("tools", "mcp_servers", "a2a_peers", "models", "composed_skills"):
        items = record.composition.get(key)
        if isinstance(items, list) and items:
            data[key] = [str(x) for x in items]
    data.pop("content_findings", None)
    return data


def package_pins(definition: Definition | None) -> dict[str, tuple[str, int]]:
    """The exact pins the carried ``requirements*.txt`` and ``package.json`` texts declare
    (as ``agbom scan`` reads them, agbom/scan/skill_packages.py), each with its file and
    line: purl -> (path, line)."""
    import orjson

    from agbom.scan import skill_packages

    found: dict[str, tuple[str, int]] = {}
    for f in (definition.files or ()) if definition is not None else ():
        rel, text = f.path, f.text
        if text is None or rel.count("/") > 1 or ("/" in rel and not rel.startswith("scripts/")):
            continue
        name = rel.rsplit("/", 1)[-1]
        lines = text.splitlines()
        if name.startswith("requirements") and name.endswith(".txt"):
            for number, line in enumerate(lines, start=1):
                for purl in skill_packages._pypi([line]):
                    found.setdefault(purl, (rel, number))
        elif name == "package.json":
            try:
                purls = skill_packages._npm(orjson.loads(text))
            except orjson.JSONDecodeError:
                continue
            for purl in purls:
                bare = purl.split("@")[0].rsplit("/", 1)[-1]
                number = next((i for i, x in enumerate(lines, 1) if f'"{bare}"' in x), 1)
                found.setdefault(purl, (rel, number))
        if len(found) >= 200:
            break
    return found


def _allowed_tools_line(definition: Definition | None) -> int | None:
    text = definition.skill_md if definition is not None else None
    if text is None:
        return None
    match = _ALLOWED_TOOLS.search(text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


def rule_findings(
    record: SkillRecord,
    definition: Definition | None,
    document: Mapping[str, Any] | None,
    rules: Any,
    advisories: Any = None,
) -> list[FindingView]:
    """The rule findings for the pending digest, each with the file and line it cites:
    a content finding's own line, a capability finding at SKILL.md's ``allowed-tools``, a
    vulnerability at the pin of the package it names. ``advisories`` (the ``--osv``
    database, :class:`agbom.advisories.live.LiveAdvisories`) annotates the components."""
    if rules is None:
        return []
    from agbom.inventory import AgBOM, Component, ComponentGraph, ComponentType

    components = [c for c in (document or {}).get("components") or [] if isinstance(c, Mapping)]
    base = next((c for c in components if c.get("id") == record.skill_id), None)
    skill = _skill_component(record, base)
    pins = package_pins(definition)
    if pins:
        skill["packages"] = sorted(pins)
    doc = dict(document or {"agent": {"id": record.registered_by_agent or "review"}})
    doc["components"] = [c for c in components if c.get("id") != record.skill_id] + [skill]
    plain = Component(id=record.skill_id, type=ComponentType.SKILL, data=skill)
    try:
        agbom = AgBOM.from_document(doc, source="review page")
        if advisories is not None:
            agbom = advisories.annotate(agbom)
        plain = agbom.get(record.skill_id) or plain
        skill = dict(plain.data)
        found = rules.evaluate_component(plain, ComponentGraph(agbom))
        found = [*found, *_suppressed(rules, agbom, plain, found)]
    except Exception:  # noqa: BLE001 - an AgBOM that no longer loads: the skill on its own
        try:
            found = rules.evaluate_component(plain)
        except Exception:  # noqa: BLE001 - rules that cannot run: no findings, said on the page
            return []
    out: list[FindingView] = []
    declared_at = _allowed_tools_line(definition)
    skill_md = "SKILL.md" if definition is not None and definition.files is not None else None
    privilege = {
        str(r.id) for r in rules if str(getattr(r, "kind", "")).endswith("least_privilege")
    }
    for f in found:
        if f.rule_id in privilege and declared_at is not None:
            out.append(_view(f, skill_md, declared_at, None))
            continue
        said = f"{f.message} {f.explanation}"
        pin = next((where for purl, where in pins.items() if purl in said), None)
        if pin is None:
            pin = next(
                (w for p, w in pins.items() if p.split("@")[0].rsplit("/", 1)[-1] in said), None
            )
        out.append(_view(f, pin[0] if pin else None, pin[1] if pin else None, None))
    seen = {(v.rule_id, v.message) for v in out}
    for entry in content_findings(definition) if definition is not None else []:
        one = Component(
            id=record.skill_id,
            type=ComponentType.SKILL,
            data={**skill, "content_findings": [entry]},
        )
        try:
            extra = rules.evaluate_component(one)
        except Exception:  # noqa: BLE001
            continue
        for f in extra:
            if (f.rule_id, f.message) in seen and not f.rule_id.startswith("AGB-CONTENT"):
                continue
            out.append(_view(f, str(entry["file"]), int(entry["line"]), str(entry["check"])))
        if len(out) >= MAX_FINDINGS:
            break
    return ranked(out)
