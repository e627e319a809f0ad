"""Where a finding is in the files a scan read: one answer for SARIF, the JSON report and
the table, so the three never disagree.

A finding names components; each component has the places its entries came from
(:attr:`agbom.scan.ScanResult.locations`). What a finding points at within a place:

- a content finding of a skill (``AGB-CONTENT-*``): the match each content finding it cites
  (``SKILL.md:27 download-to-shell: ...`` in its message) holds, in that file of the skill's
  folder, from its first to its last character;
- a finding about a part of the entry (the package argument of an unpinned server, the
  ``url`` of an endpoint, a skill's ``allowed-tools``): that part, the first of the rule's
  ``fields`` the place records;
- otherwise the entry itself (its key, or the line it is on).

Findings are taken by shape (``rule_id``, ``components``, ``message``, ``pack``): the scan
layer does not depend on the rules layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agbom.scan.interface import SourceLocation, Span

# The field name rule descriptors give a rule about plaintext credentials
# (agbom.rules.report.SECRET_FIELDS; neither layer imports the other).
SECRET_FIELDS = "plaintext_secrets"


class FindingLike(Protocol):
    @property
    def rule_id(self) -> str: ...

    @property
    def components(self) -> Sequence[str]: ...

    @property
    def message(self) -> str: ...

    @property
    def pack(self) -> str: ...


class Locator:
    """Places of findings in one :class:`~agbom.scan.ScanResult`. ``fields`` maps a rule id
    to the parts of an entry its findings are about, most telling first."""

    def __init__(self, result: Any, fields: Mapping[str, Sequence[str]] | None = None) -> None:
        self.result = result
        self.fields = dict(fields or {})
        # The scanner's own findings are about one file each: only that file's entries.
        self._scanner_files: dict[tuple[str, str, str], set[str]] = {}
        for own in result.findings:
            key = (own.rule_id, own.component_id, own.message)
            self._scanner_files.setdefault(key, set()).add(own.path)

    def __call__(self, finding: FindingLike, component_id: str) -> tuple[SourceLocation, ...]:
        """The places of ``component_id`` for ``finding``, each narrowed to what the finding
        is about (``fields`` of the result are then empty: the span is the answer)."""
        places: tuple[SourceLocation, ...] = tuple(self.result.locations.get(component_id, ()))
        files = self._scanner_files.get((finding.rule_id, component_id, finding.message))
        if finding.pack == "scan" and files:
            places = tuple(p for p in places if p.path in files) or places
        content = _content_places(self.result, finding, component_id, places)
        if content:
            return tuple(content)
        wanted = self.fields.get(finding.rule_id, ())
        if SECRET_FIELDS in wanted:
            secrets = [s for place in places for s in _secret_places(place, finding.message)]
            if secrets:
                return tuple(secrets)
        return tuple(_narrowed(place, wanted) for place in places)

    def places(self, finding: FindingLike) -> tuple[SourceLocation, ...]:
        """Where ``finding`` is: the places of its first component."""
        if not finding.components:
            return ()
        return self(finding, finding.components[0])

    def to_json(self, finding: FindingLike) -> list[dict[str, Any]]:
        """``locations`` of a finding in the JSON report: the shown path, and 1-based line
        and columns of the start and end (exclusive) in Unicode code points."""
        return [place_json(place) for place in self.places(finding)]

    def shown(self, finding: FindingLike) -> str:
        """The first place as ``path:line:column`` (for the table), or ``""``."""
        places = self.places(finding)
        if not places:
            return ""
        span = places[0].span
        more = f" (+{len(places) - 1} more)" if len(places) > 1 else ""
        return f"{places[0].path}:{span.line}:{span.column}{more}"


def place_json(place: SourceLocation) -> dict[str, Any]:
    span = place.span
    return {
        "path": place.path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line or span.line,
        "end_column": span.end_column,
    }


def _secret_places(place: SourceLocation, message: str) -> list[SourceLocation]:
    """The value of each field of ``place`` holding a plaintext credential that ``message``
    names (``args[2] (a password in a URL)``), else of every such field."""
    held = [(name[len("secret:") :], span) for name, span in place.fields if name[:7] == "secret:"]
    named = [(field, span) for field, span in held if f"{field} (" in message] or held
    return [SourceLocation(place.path, place.file, span) for _, span in named]


def _narrowed(place: SourceLocation, wanted: Sequence[str]) -> SourceLocation:
    for name in wanted:
        span = place.field(name)
        if span is not None:
            return SourceLocation(place.path, place.file, span)
    return SourceLocation(place.path, place.file, place.span)


def _content_places(
    result: Any, finding: FindingLike, component_id: str, places: Sequence[SourceLocation]
) -> list[SourceLocation]:
    """For a finding about a skill's content checks: the match of each content finding its
    message cites (``file:line check:``), as a place in that file of the skill's folder."""
    component = result.agbom.get(component_id)
    entries = component.get("content_findings") if component is not None else None
    if not entries or not places or not places[0].path.endswith("SKILL.md"):
        return []
    shown_dir = places[0].path[: -len("SKILL.md")]
    real_dir = places[0].file[: -len("SKILL.md")]
    out = []
    for entry in entries:
        if f"{entry.get('file')}:{entry.get('line')} {entry.get('check')}:" not in finding.message:
            continue
        line = int(entry.get("line") or 1)
        column = int(entry.get("column") or 1)
        end_line = max(int(entry.get("end_line") or line), line)
        end_column = int(entry.get("end_column") or column + 1)
        if end_line == line:
            end_column = max(end_column, column + 1)
        span = Span(line, column, end_column, end_line)
        file = str(entry.get("file"))
        out.append(SourceLocation(shown_dir + file, real_dir + file, span))
    return out
