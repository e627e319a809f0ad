"""Finding renderers shared by ``agbom check`` and ``agbom scan``: table, JSON and SARIF 2.1.0."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import quote

import orjson

from agbom import __version__
from agbom.display import table
from agbom.rules.interface import Finding, RuleError, Severity

Format = Literal["table", "json", "sarif"]
FORMATS: tuple[str, ...] = ("table", "json", "sarif")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/agbom/agbom"
RULES_DOC_URI = INFORMATION_URI + "/blob/main/docs/rules.md"
SRCROOT = "%SRCROOT%"
# What the run's ``automationDetails.id`` says when the caller names nothing: a category only
# (it ends in ``/``), the same on every run, so code scanning (GitHub, Azure DevOps) matches
# each new upload against the last one of the same category instead of opening new alerts.
DEFAULT_CATEGORY = "agbom/"
# GitHub code scanning refuses a run over 25,000 results and shows the first location only;
# descriptions over 1,024 characters are cut there.
MAX_RESULTS = 25_000
MAX_RELATED = 10
MAX_DESCRIPTION = 1024
MAX_TAGS = 20

_SARIF_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub code scanning reads ``security-severity`` (0.0-10.0) to rank security results.
_SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "0.0",
}


def render_findings(
    findings: Sequence[Finding],
    fmt: str = "table",
    *,
    source_uri: str | None = None,
    rules: Iterable[Any] | Mapping[str, RuleInfo] | None = None,
    locate: Locator | None = None,
    root: str | os.PathLike[str] | None = None,
    category: str = DEFAULT_CATEGORY,
) -> str:
    """Render ``findings`` as ``table``, ``json`` or ``sarif`` text (see :func:`to_sarif` for
    ``rules``, ``locate``, ``root`` and ``category``)."""
    if fmt == "table":
        return render_table(findings)
    if fmt == "json":
        return render_json(findings, source_uri=source_uri)
    if fmt == "sarif":
        log = to_sarif(
            findings,
            source_uri=source_uri,
            rules=rules,
            locate=locate,
            root=root,
            category=category,
        )
        return orjson.dumps(log, option=orjson.OPT_INDENT_2).decode()
    raise RuleError(f"unknown output format {fmt!r} (known: {', '.join(FORMATS)})")


def render_json(
    findings: Sequence[Finding],
    *,
    source_uri: str | None = None,
    locations: Callable[[Finding], list[dict[str, Any]]] | None = None,
) -> str:
    """The JSON report; with ``locations``, each finding's ``locations`` (path, line and
    columns, as ``agbom scan`` writes them)."""
    counts = {s.value: 0 for s in Severity}
    for finding in findings:
        if finding.suppression is None:
            counts[finding.severity.value] += 1
    suppressed = sum(1 for f in findings if f.suppression is not None)
    listed = [
        f.to_json() if locations is None else {**f.to_json(), "locations": locations(f)}
        for f in findings
    ]
    document = {
        "tool": {"name": "agbom", "version": __version__},
        "source": source_uri,
        "summary": {
            "total": len(findings) - suppressed,
            "by_severity": counts,
            **({"suppressed": suppressed} if suppressed else {}),
        },
        "findings": listed,
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def render_table(
    findings: Sequence[Finding], *, tty: bool = False, places: Sequence[str] | None = None
) -> str:
    """A table for people: one row per finding, where it is (``places``: one
    ``path:line:column`` per finding, or ``""``), its graph path and how to fix it below it;
    as wide as the terminal on one (``tty``), one line per row otherwise (see
    :func:`agbom.display.table`)."""
    if not findings:
        return "No findings."
    # Rule ids, component ids and messages may carry what an agent or a file wrote: the
    # table escapes every cell so control characters cannot forge or hide rows.
    rows = [
        (
            f.severity.value,
            f.action.value if f.suppression is None else "suppressed",
            f.rule_id,
            f.components[0] if f.components else "-",
            f.message,
        )
        for f in findings
    ]
    # Under each row: the graph path (when there is one) and how to fix it.
    at = list(places) if places is not None else [""] * len(findings)
    paths = [
        (
            "at: " + place if place else "",
            "path: " + " -> ".join(f.path) if len(f.path) > 1 else "",
            "fix: " + f.remediation if f.remediation else "",
            *([suppressed_line(f.suppression)] if f.suppression is not None else []),
        )
        for f, place in zip(findings, at, strict=True)
    ]
    headers = ("SEVERITY", "ACTION", "RULE", "COMPONENT", "MESSAGE")
    lines = [table(headers, rows, tty=tty, whole=(0, 1), fill=(4,), below=paths)]
    counts: dict[str, int] = {}
    for f in findings:
        if f.suppression is None:
            counts[f.severity.value] = counts.get(f.severity.value, 0) + 1
    summary = ", ".join(
        f"{counts[s.value]} {s.value}" for s in reversed(Severity) if s.value in counts
    )
    active = sum(counts.values())
    suppressed = len(findings) - active
    lines.append("")
    lines.append(
        f"{active} finding{'s' if active != 1 else ''}"
        + (f" ({summary})" if summary else "")
        + (f"; {suppressed} suppressed by VEX statements" if suppressed else "")
    )
    return "\n".join(lines)


def suppressed_line(suppression: Mapping[str, Any]) -> str:
    """``suppressed: not_affected (vulnerable_code_not_present) by AUTHOR in DOCUMENT``."""
    from agbom.advisories.vex import suppression_text

    return "suppressed: " + suppression_text(suppression)


# -- SARIF ----------------------------------------------------------------------------------


class SpanLike(Protocol):
    """A place on one line (1-based, end column exclusive), as the scan layer records it."""

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...

    @property
    def end_column(self) -> int: ...


class LocationLike(Protocol):
    """Where a component came from (:class:`agbom.scan.SourceLocation` is one)."""

    @property
    def path(self) -> str: ...  # as shown to the user (stable across machines)

    @property
    def file(self) -> str: ...  # the real path on disk

    @property
    def span(self) -> SpanLike: ...

    def field(self, name: str) -> SpanLike | None: ...


Locator = Callable[[Finding, str], Sequence[LocationLike]]
"""``locate(finding, component_id)``: the places of that component for that finding."""


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What a SARIF rule descriptor says: taken from the rule, never from one finding."""

    id: str
    severity: Severity
    description: str
    pack: str = ""
    kind: str = ""
    help_uri: str = ""
    # Parts of a component entry the rule is about, most telling first (a result points at
    # the first one the entry has, else at the entry).
    fields: tuple[str, ...] = ()
    # How to fix a finding of this rule, placeholders shown as <name> (never one finding's).
    remediation: str = ""


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (lower case, punctuation but ``-`` and
    ``_`` dropped, spaces to hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


# A rule about plaintext credentials points at each field holding one: the places of a
# component carry them as ``secret:FIELD`` (``secret:args[2]``, ``secret:env.KEY``).
SECRET_FIELDS = "plaintext_secrets"

# Packs whose rules have a section of their own in docs/rules.md.
DOCUMENTED_PACKS = frozenset({"default", "scan", "lock"})


def rule_help_uri(rule_id: str, pack: str) -> str:
    """The rule's section in docs/rules.md, or the section on rules of other packs."""
    if pack in DOCUMENTED_PACKS:
        return f"{RULES_DOC_URI}#{github_anchor(rule_id)}"
    return f"{RULES_DOC_URI}#rules-of-other-packs"


def _predicate_keys(predicate: Any, depth: int = 0) -> set[str]:
    keys = {str(getattr(predicate, "key", ""))}
    if depth < 8:
        for part in getattr(predicate, "parts", ()) or ():
            keys |= _predicate_keys(part, depth + 1)
        inner = getattr(predicate, "inner", None)
        if inner is not None:
            keys |= _predicate_keys(inner, depth + 1)
    return keys


def _rule_fields(rule: Any) -> tuple[str, ...]:
    kind = str(getattr(rule, "kind", ""))
    if kind in ("least_privilege", "path"):
        return ("declared_capabilities",)
    keys = _predicate_keys(getattr(rule, "predicate", None))
    fields: list[str] = []
    if "endpoint" in keys:
        fields.append("endpoint")
    if "signature" in keys:
        fields.append("signatures")  # the card's signatures member
    if keys & {"pinned", "purl", "version", "name"}:
        fields += ["package", "command"]  # the argument naming the package, else the command
    if "plaintext_secret" in keys:
        fields.append(SECRET_FIELDS)  # each field holding the credential (agbom.scan.places)
    return tuple(fields)


def describe_rules(rules: Iterable[Any]) -> dict[str, RuleInfo]:
    """:class:`RuleInfo` for each loaded rule (``rules`` is a :class:`RuleSet` or its rules)."""
    out: dict[str, RuleInfo] = {}
    for rule in rules:
        if isinstance(rule, RuleInfo):
            out[rule.id] = rule
            continue
        rule_id = str(rule.id)
        pack = str(getattr(rule, "pack", "") or "")
        description = " ".join(str(getattr(rule, "description", "") or "").split())
        if not description:
            # The message template names placeholders, not one finding's values.
            description = " ".join(str(getattr(rule, "message", "") or rule_id).split())
        out[rule_id] = RuleInfo(
            id=rule_id,
            severity=Severity.parse(rule.severity),
            description=description,
            pack=pack,
            kind=str(getattr(rule, "kind", "") or ""),
            help_uri=rule_help_uri(rule_id, pack),
            fields=_rule_fields(rule),
            remediation=_placeholders(str(getattr(rule, "remediation", "") or "")),
        )
    return out


def _md_escape(text: str) -> str:
    """Angle brackets would read as HTML in Markdown."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _placeholders(template: str) -> str:
    """A remediation template for a rule descriptor: ``{component.name}`` becomes
    ``<component.name>`` so it reads as a slot, not as a value."""
    return re.sub(r"\{([A-Za-z0-9_.]+)\}", r"<\1>", " ".join(template.split()))


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    match = re.search(r"[.!?](\s|$)", text)
    return text[: match.start() + 1] if match else text


def _descriptor(info: RuleInfo) -> dict[str, Any]:
    description = info.description or info.id
    full = _clip(description, MAX_DESCRIPTION)
    fix = f"\n\nRemediation: {info.remediation}" if info.remediation else ""
    help_text = f"{description}{fix}"
    help_markdown = description
    if fix:
        help_markdown += f"\n\n**Remediation:** {_md_escape(info.remediation)}"
    if info.help_uri:
        help_text += f"\n\nDocumentation: {info.help_uri}"
        help_markdown += f"\n\n[Documentation]({info.help_uri})"
    tags = ["security", "agbom", info.pack or "rules", *([info.kind] if info.kind else [])]
    descriptor: dict[str, Any] = {
        "id": info.id,
        "name": (re.sub(r"[^A-Za-z0-9]+", "", info.id.title()) or "Rule")[:255],
        "shortDescription": {"text": _clip(_first_sentence(description), MAX_DESCRIPTION)},
        "fullDescription": {"text": full},
        "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
        "help": {"text": help_text, "markdown": help_markdown},
        "properties": {
            "security-severity": _SECURITY_SEVERITY[info.severity],
            "tags": list(dict.fromkeys(tags))[:MAX_TAGS],
            "precision": "high",
        },
    }
    if info.help_uri:
        descriptor["helpUri"] = info.help_uri
    return descriptor


class _Artifacts:
    """Turns real file paths into SARIF artifact locations relative to ``%SRCROOT%``."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.uris: dict[tuple[str, str | None], int] = {}

    def location(self, file: str) -> tuple[dict[str, Any], str | None]:
        """The artifact location of ``file`` and, when it is under the root, its relative
        path (the machine-independent part of the result's identity)."""
        # The folder is resolved, never the file: a finding about a symbolic link names the
        # link, not what it points at.
        real = os.path.join(os.path.realpath(os.path.dirname(file) or "."), os.path.basename(file))
        try:
            inside = os.path.commonpath([self.root, real]) == self.root
        except ValueError:  # another drive on Windows
            inside = False
        if inside and real != self.root:
            relative = Path(os.path.relpath(real, self.root)).as_posix()
            key: tuple[str, str | None] = (quote(relative, safe="/"), SRCROOT)
        else:
            relative = None
            key = (Path(real).as_uri(), None)
        index = self.uris.setdefault(key, len(self.uris))
        location: dict[str, Any] = {"uri": key[0], "index": index}
        if key[1]:
            location["uriBaseId"] = key[1]
        return location, relative

    def artifacts(self) -> list[dict[str, Any]]:
        out = []
        for (uri, base), _ in sorted(self.uris.items(), key=lambda item: item[1]):
            location: dict[str, Any] = {"uri": uri}
            if base:
                location["uriBaseId"] = base
            out.append({"location": location})
        return out


def _region(span: SpanLike) -> dict[str, int]:
    line = max(int(span.line), 1)
    column = max(int(span.column), 1)
    end_line = max(int(getattr(span, "end_line", line)), line)  # a match over a line break
    end_column = int(span.end_column)
    return {
        "startLine": line,
        "startColumn": column,
        "endLine": end_line,
        "endColumn": max(end_column, column + 1) if end_line == line else max(end_column, 1),
    }


def _physical(
    artifacts: _Artifacts, place: LocationLike, fields: Sequence[str]
) -> tuple[dict[str, Any], str]:
    """A physicalLocation for ``place`` (at the first of ``fields`` it has), and the
    location's stable identity for fingerprints (relative path, else the shown path)."""
    span: SpanLike = place.span
    for name in fields:
        at = place.field(name)
        if at is not None:
            span = at
            break
    artifact, relative = artifacts.location(place.file)
    identity = relative if relative is not None else place.path
    return {"artifactLocation": artifact, "region": _region(span)}, identity


def _fingerprint(finding: Finding, where: str) -> str:
    """Rule, components and the location's machine-independent identity: never an absolute
    path, a line number (it moves when unrelated lines are edited) or a time."""
    text = "\0".join((finding.rule_id, *finding.components, "@", where))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def to_sarif(
    findings: Sequence[Finding],
    *,
    source_uri: str | None = None,
    rules: Iterable[Any] | Mapping[str, RuleInfo] | None = None,
    locate: Locator | None = None,
    root: str | os.PathLike[str] | None = None,
    category: str = DEFAULT_CATEGORY,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run, shaped for GitHub code scanning and for Azure
    DevOps' (GHAzDO: ``automationDetails`` and ``tool.driver.fullName`` are required there).

    ``rules`` (a :class:`RuleSet`, rules, or :func:`describe_rules` output) gives each rule
    descriptor its text and ``helpUri``; a rule it does not know is described by its id only.
    ``locate(finding, component_id)`` gives the places a component came from: each finding
    gets one result per place of its first component (another component's first place is a
    related location). Without places, a result points at ``source_uri`` (line 1). URIs are
    relative to ``%SRCROOT%`` (``root``, default the current folder); a file outside it keeps
    an absolute ``file://`` URI. ``category`` is the run's ``automationDetails.id`` (a
    trailing ``/`` is added: the id names a category, never one run, so it stays stable);
    inside an Azure Pipelines job (``environ``, default the process environment) it carries
    the pipeline's identity as GHAzDO asks (see :func:`automation_details`).
    """
    if isinstance(rules, Mapping):
        infos: dict[str, RuleInfo] = dict(rules)
    else:
        infos = describe_rules(rules) if rules is not None else {}
    root_dir = os.path.realpath(os.fspath(root) if root is not None else os.getcwd())
    artifacts = _Artifacts(root_dir)
    fallback_file = source_uri or "AGBOM.json"

    descriptors: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}
    for rule_id in sorted({f.rule_id for f in findings}):
        sample = next(f for f in findings if f.rule_id == rule_id)
        info = infos.get(rule_id) or RuleInfo(
            id=rule_id,
            severity=sample.severity,
            description=f"Rule {rule_id} of pack {sample.pack or 'unknown'}.",
            pack=sample.pack,
            help_uri=rule_help_uri(rule_id, sample.pack),
        )
        rule_index[rule_id] = len(descriptors)
        descriptors.append(_descriptor(info))

    results: list[dict[str, Any]] = []
    occurrences: dict[str, int] = {}
    omitted = 0
    for finding in findings:
        known = infos.get(finding.rule_id)
        fields = known.fields if known is not None else ()
        subject = finding.components[0] if finding.components else None
        places: Sequence[LocationLike] = (
            locate(finding, subject) if locate is not None and subject is not None else ()
        )
        related: list[dict[str, Any]] = []
        for other in dict.fromkeys(finding.components[1:]):
            if len(related) >= MAX_RELATED or locate is None:
                break
            other_places = locate(finding, other)
            if other_places:
                physical, _ = _physical(artifacts, other_places[0], ())
                related.append(
                    {
                        "id": len(related) + 1,
                        "physicalLocation": physical,
                        "message": {"text": f"{other}"},
                    }
                )
        flow = _code_flow(finding, artifacts, locate)
        located: list[tuple[dict[str, Any], str]]
        if places:
            located = [_physical(artifacts, place, fields) for place in places]
        else:
            artifact, relative = artifacts.location(fallback_file)
            located = [
                (
                    {"artifactLocation": artifact, "region": {"startLine": 1}},
                    relative or fallback_file,
                )
            ]
        for physical, identity in located:
            if len(results) >= MAX_RESULTS:
                omitted += 1
                continue
            digest = _fingerprint(finding, identity)
            occurrences[digest] = occurrence = occurrences.get(digest, 0) + 1
            results.append(
                _result(
                    finding,
                    rule_index[finding.rule_id],
                    physical,
                    related,
                    digest,
                    occurrence,
                    flow,
                )  # fmt: skip
            )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "agbom",
                "fullName": f"agbom {__version__} (AI-agent supply-chain scanner)",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": descriptors,
            }
        },
        "automationDetails": automation_details(category, environ),
        "originalUriBaseIds": {
            SRCROOT: {
                "uri": Path(root_dir).as_uri().rstrip("/") + "/",
                "description": {"text": "The folder result locations are relative to."},
            }
        },
        "artifacts": artifacts.artifacts(),
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if omitted:
        run["properties"] = {"omittedResults": omitted}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


# Azure Pipelines' predefined variables (as the agent exports them) -> the property GHAzDO
# reads from automationDetails (Sarif.Multitool's GHAzDO1019; phaseId must be a GUID).
_AZURE_PIPELINE = (
    ("SYSTEM_DEFINITIONID", "buildDefinitionId"),
    ("BUILD_DEFINITIONNAME", "buildDefinitionName"),
    ("SYSTEM_PHASEID", "phaseId"),
    ("SYSTEM_PHASENAME", "phaseName"),
)
_AZURE_PREFIX = "azuredevops/pipeline/build/"
_GUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def automation_details(
    category: str = DEFAULT_CATEGORY, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The run's ``automationDetails``: ``{"id": "<category>/"}``, the same on every run.

    In an Azure Pipelines job (``TF_BUILD`` set, with the build definition and phase
    variables) the id starts with ``azuredevops/pipeline/build/`` and the properties name the
    definition and phase, which GHAzDO requires of an uploaded log (rules GHAzDO1019/1020);
    the category stays the last part, so scan and check results stay apart there too."""
    env = os.environ if environ is None else environ
    tail = category.strip("/") + "/"
    values = {name: env.get(variable, "").strip() for variable, name in _AZURE_PIPELINE}
    if not values["phaseId"]:
        # Not every agent exports the phase's GUID; the job's (a GUID too) names the same job.
        values["phaseId"] = env.get("SYSTEM_JOBID", "").strip()
    in_azure = env.get("TF_BUILD", "").lower() == "true"
    if in_azure and all(values.values()) and _GUID.fullmatch(values["phaseId"]):
        return {
            "id": _AZURE_PREFIX + tail,
            "properties": {_AZURE_PREFIX + name: value for name, value in values.items()},
        }
    return {"id": tail}


def _code_flow(
    finding: Finding, artifacts: _Artifacts, locate: Locator | None
) -> list[dict[str, Any]] | None:
    """The graph path as a code flow through the files of the nodes that have one."""
    if len(finding.path) < 2 or locate is None:
        return None
    steps = []
    for node in finding.path:
        places = locate(finding, node)
        if places:
            physical, _ = _physical(artifacts, places[0], ())
            steps.append({"location": {"physicalLocation": physical, "message": {"text": node}}})
    if len(steps) < 2:
        return None
    return [{"threadFlows": [{"locations": steps}]}]


def _result(
    finding: Finding,
    index: int,
    physical: dict[str, Any],
    related: list[dict[str, Any]],
    digest: str,
    occurrence: int,
    flow: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    logical = [
        {"name": component, "kind": "module", "fullyQualifiedName": component}
        for component in finding.components
    ]
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "ruleIndex": index,
        "level": _SARIF_LEVEL[finding.severity],
        "message": {"text": f"{finding.message}. {finding.explanation}".strip()},
        "locations": [{"physicalLocation": physical, "logicalLocations": logical}],
        "partialFingerprints": {
            "agbomFinding/v2": f"{digest}:{occurrence}",
            # The one key GitHub matches on; ours is stable where a line hash is not.
            "primaryLocationLineHash": f"{digest[:16]}:{occurrence}",
        },
        "properties": {
            "severity": finding.severity.value,
            "action": finding.action.value,
            "components": list(finding.components),
            "path": list(finding.path),
            "pack": finding.pack,
            **({"remediation": finding.remediation} if finding.remediation else {}),
        },
    }
    if related:
        result["relatedLocations"] = related
    if flow:
        result["codeFlows"] = flow
    if finding.suppression is not None:
        # SARIF's own form: an accepted external suppression, with who stated it and why.
        result["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": suppressed_line(finding.suppression),
                "properties": dict(finding.suppression),
            }
        ]
    return result
