"""Scan layer interface: the reader contract, per-file reports and the layer's error.

A :class:`Reader` handles one manifest kind and is bound to file globs. It gets the bytes of
one file (read once, bounded) and returns a :class:`ReadResult`: the components it found and
the problems it met. A problem never stops the scan; it is shown to the user in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from agbom.errors import AgbomError


class ScanError(AgbomError):
    """Base error of the scan layer (raised only for unusable arguments, never for a file)."""


class FileStatus(StrEnum):
    """What happened to one input file."""

    OK = "ok"
    ERROR = "error"  # unreadable or partly invalid; valid entries are still kept
    SKIPPED = "skipped"  # nothing agbom can read in it; the reason says why


@dataclass(frozen=True, slots=True)
class FileError:
    """One located problem in an input file. ``line``/``column`` are 1-based when known."""

    reason: str
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "line": self.line, "column": self.column}

    def __str__(self) -> str:
        where = ""
        if self.line is not None:
            where = f"line {self.line}" + (f" column {self.column}" if self.column else "") + ": "
        return where + self.reason


# The findings the scanner makes itself while reading (rule id -> severity, description).
SCANNER_RULES: Mapping[str, tuple[str, str]] = {
    "scan.unpinned-package": (
        "medium",
        "A locally launched MCP server runs a registry package without an exact version, so "
        "it runs whatever the registry serves next; pin an exact version.",
    ),
    "scan.skill-spec": (
        "low",
        "A SKILL.md breaks a rule of the Agent Skills specification (a description over "
        "1,024 characters, a name that does not match its folder, no frontmatter, ...); the "
        "skill was still read and inventoried.",
    ),
    "scan.skill-load-digest-mismatch": (
        "high",
        "A recorded ACS session loaded a skill whose digest differs from the digest it was "
        "registered with: the skill changed between registration and load.",
    ),
}


# How to fix each of them (shown as `fix:` in tables, `remediation` in JSON, SARIF `help`).
SCANNER_REMEDIATIONS: Mapping[str, str] = {
    "scan.unpinned-package": (
        "Pin the package to an exact version in the server's command (for example "
        "`npx -y @scope/server@1.2.3`, `uvx server==1.2.3`, an image digest), then run "
        "`agbom lock` so CI catches the next change."
    ),
    "scan.skill-spec": (
        "Fix the SKILL.md frontmatter as the message says (agentskills.io/specification); "
        "hosts that validate skills may refuse or truncate it."
    ),
    "scan.skill-load-digest-mismatch": (
        "Find out why the skill changed between registration and load; register it again "
        "and have the new digest reviewed (`agbom skills approve SKILL_ID --digest ...`) "
        "before it loads."
    ),
}


@dataclass(frozen=True, slots=True)
class Span:
    """A place in a file: 1-based line and columns (Unicode code points), the end column
    exclusive. Most spans are on one line; a content match may run over line breaks, to
    ``end_line`` (0: the start line)."""

    line: int
    column: int
    end_column: int
    end_line: int = 0


class SourceLocation:
    """Where a component came from: the file (as shown, and its real path on disk) and the
    span of its entry; ``fields`` locates parts of the entry (``endpoint``, ``command``,
    ``declared_capabilities``) where the reader knows them.

    Carried beside the AgBOM (:attr:`agbom.scan.ScanResult.locations`), never inside it: lines
    move when a file is edited, and the AgBOM is a wire format whose hash must not.

    A location may be *deferred* (``resolve``): for a large file the reader does not index
    positions while reading, and the span and fields are computed the first time a finding
    asks for them (``resolve()`` gives ``(span, fields)``). Until then the location is known by
    its ``entry`` (the entry's key in the file) and ``order`` (its place among the file's
    entries), which is also how it sorts.
    """

    __slots__ = ("_fields", "_resolve", "_span", "entry", "file", "order", "path")

    def __init__(
        self,
        path: str,
        file: str,
        span: Span | None = None,
        fields: tuple[tuple[str, Span], ...] = (),
        *,
        resolve: Callable[[], tuple[Span, tuple[tuple[str, Span], ...]]] | None = None,
        entry: str = "",
        order: int = 0,
    ) -> None:
        self.path = path
        self.file = file
        self._span = span if span is not None or resolve is not None else Span(1, 1, 2)
        self._fields = fields
        self._resolve = resolve if span is None else None
        self.entry = entry
        self.order = order

    def _resolved(self) -> None:
        if self._resolve is not None:
            self._span, self._fields = self._resolve()
            self._resolve = None

    @property
    def span(self) -> Span:
        self._resolved()
        assert self._span is not None
        return self._span

    @property
    def fields(self) -> tuple[tuple[str, Span], ...]:
        self._resolved()
        return self._fields

    @property
    def deferred(self) -> bool:
        """The span is not computed yet."""
        return self._resolve is not None

    def sort_key(self) -> tuple[str, int, int]:
        """File, then place in it, without computing a deferred span."""
        if self._resolve is not None:
            return (self.path, self.order, 0)
        span = self.span
        return (self.path, span.line, span.column)

    def _identity(self) -> tuple[Any, ...]:
        if self._resolve is not None:
            return (self.path, self.file, "entry", self.entry, self.order)
        return (self.path, self.file, self.span, self.fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceLocation):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        where = f"entry {self.entry!r}" if self._resolve is not None else repr(self._span)
        return f"SourceLocation({self.path!r}, {where})"

    @property
    def line(self) -> int:
        return self.span.line

    def field(self, name: str) -> Span | None:
        """The span of part ``name`` of the entry, or ``None``."""
        for key, span in self.fields:
            if key == name:
                return span
        return None

    def to_json(self) -> dict[str, Any]:
        """Display path and line only: the real path is machine-specific."""
        out: dict[str, Any] = {"path": self.path, "line": self.span.line}
        if self.fields:
            out["fields"] = {key: span.line for key, span in self.fields}
        return out


@dataclass(frozen=True, slots=True)
class Finding:
    """A hygiene observation made while reading (for example an unpinned package)."""

    rule_id: str
    severity: str  # info | low | medium | high | critical
    component_id: str
    message: str
    path: str

    @property
    def remediation(self) -> str:
        return SCANNER_REMEDIATIONS.get(self.rule_id, "")

    def to_json(self) -> dict[str, Any]:
        out = {
            "rule_id": self.rule_id,
            "severity": self.severity,
            "component_id": self.component_id,
            "message": self.message,
            "path": self.path,
        }
        if self.remediation:
            out["remediation"] = self.remediation
        return out


@dataclass(slots=True)
class ReadResult:
    """What a reader got out of one file.

    ``components`` are wire dicts without ``found_in`` (the scanner adds it); a reader may put
    the :class:`Span` of the entry under ``_at`` and of its parts under ``_fields`` (the
    scanner takes them out into :class:`SourceLocation`; line 1 when absent). ``skipped`` is
    a reason when the file holds nothing this reader handles (for example a ``.jsonl`` file
    with no ACS messages); it is then reported as skipped rather than ok.
    """

    components: list[dict[str, Any]] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader may know besides the bytes: where the file is and how it is shown."""

    path: Path  # the file on disk
    display: str  # the path as shown in reports (relative to the scan root when possible)
    roots: tuple[Path, ...]  # resolved scan roots; nothing outside them is followed


class Reader(Protocol):
    """One manifest kind. ``globs`` are matched against the trailing path components."""

    @property
    def name(self) -> str: ...

    @property
    def globs(self) -> tuple[str, ...]: ...

    @property
    def max_bytes(self) -> int: ...

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        """Parse ``data`` (the whole file, already size-checked) into components."""
        ...


@dataclass(frozen=True, slots=True)
class FileReport:
    """The outcome for one input file, as listed in the JSON report."""

    path: str
    reader: str | None
    status: FileStatus
    errors: tuple[FileError, ...] = ()
    components: int = 0
    skip_reason: str | None = None

    @property
    def error(self) -> FileError | None:
        """The first problem, or ``None``."""
        return self.errors[0] if self.errors else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "reader": self.reader,
            "status": self.status.value,
            "components": self.components,
            "error": self.error.to_json() if self.error else None,
        }
        if len(self.errors) > 1:
            out["errors"] = [e.to_json() for e in self.errors]
        if self.skip_reason:
            out["reason"] = self.skip_reason
        return out


Json = Mapping[str, Any]
