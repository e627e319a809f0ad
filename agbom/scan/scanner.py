"""Walk paths, dispatch each file to the reader bound to its globs, merge one AgBOM.

Pipeline: (1) collect candidate files (``os.scandir``, skipping ``.git``, ``node_modules`` and
virtual environments, never following folder links); (2) read each file once, bounded by its
reader's size limit; (3) let the reader turn the bytes into components and located errors;
(4) merge: one component per id with every place it was found (``found_in``), skills of the
same name with different content kept apart; (5) build and validate the canonical AgBOM.

No file can stop the scan: every failure, including a bug in a reader, becomes a
:class:`FileReport` with status ``error``.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import rfc8785

from agbom.inventory import AgBOM, ComponentType, InvalidAgBOM
from agbom.inventory.model import Component, check_references, parse_component
from agbom.scan._parse import ParseFailure, load_json, positions_of
from agbom.scan.a2a import AgentCardReader, looks_like_card
from agbom.scan.acs import AgBOMReader, TranscriptReader, looks_like_agbom
from agbom.scan.agents_sdk import AgentsSdkReader
from agbom.scan.clients import READERS as CLIENT_READERS
from agbom.scan.interface import (
    FileError,
    FileReport,
    FileStatus,
    Finding,
    ReadContext,
    Reader,
    ReadResult,
    ScanError,
    SourceLocation,
    Span,
)
from agbom.scan.mcpb import McpbReader, looks_like_bundle_manifest
from agbom.scan.reader_match import ReaderMatcher
from agbom.scan.registry import ServerJsonReader, looks_like_server_json
from agbom.scan.skills import SkillReader

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".cache"}
)  # fmt: skip
MAX_DEPTH = 64
MAX_FILES = 500_000
PARALLEL_MIN_FILES = 400

ProgressFn = Callable[[int, int, str], None]

SKILLS = SkillReader()
AGENT_CARDS = AgentCardReader()
SERVER_JSON = ServerJsonReader()
AGBOMS = AgBOMReader()
TRANSCRIPTS = TranscriptReader()
BUNDLES = McpbReader()
AGENTS_SDK = AgentsSdkReader()
GENERIC_MCP = next(r for r in CLIENT_READERS if r.name == "mcp-json")

ALL_READERS: tuple[Reader, ...] = (
    *CLIENT_READERS,
    SKILLS,
    AGENT_CARDS,
    SERVER_JSON,
    AGBOMS,
    TRANSCRIPTS,
    BUNDLES,
    AGENTS_SDK,
)

# Files under a home folder where each client keeps its configuration (--home).
HOME_FILES: tuple[str, ...] = (
    "Library/Application Support/Claude/claude_desktop_config.json",
    ".config/Claude/claude_desktop_config.json",
    "AppData/Roaming/Claude/claude_desktop_config.json",
    ".claude.json",
    ".mcp.json",
    ".cursor/mcp.json",
    ".config/Code/User/mcp.json",
    ".config/Code/User/settings.json",
    "Library/Application Support/Code/User/mcp.json",
    "Library/Application Support/Code/User/settings.json",
    "AppData/Roaming/Code/User/mcp.json",
    "AppData/Roaming/Code/User/settings.json",
    ".codeium/windsurf/mcp_config.json",
    ".windsurf/mcp.json",
    ".gemini/settings.json",
    ".gemini/antigravity/mcp_config.json",
    ".codex/config.toml",
    ".config/opencode/opencode.json",
    ".config/opencode/opencode.jsonc",
    ".kiro/settings/mcp.json",
    ".config/goose/config.yaml",
    "AppData/Roaming/Block/goose/config/config.yaml",
    ".config/zed/settings.json",
    ".continue/config.yaml",
)
# Folders under a home folder that are walked whole (skills and plugins).
HOME_DIRS: tuple[str, ...] = (
    ".claude/skills",
    ".claude/plugins",
    ".cursor/skills",
    ".agents/skills",
    ".codex/skills",
    ".gemini/skills",
    ".config/opencode/skills",
    ".continue/mcpServers",
)


_MATCHER = ReaderMatcher(ALL_READERS)


def reader_for(path: Path) -> Reader | None:
    """The reader bound to ``path`` by its globs, or ``None``."""
    parts = path.parts
    return _MATCHER.match(parts[-1], parts[:-1]) if parts else None


@dataclass(frozen=True, slots=True)
class _Candidate:
    path: Path
    display: str
    reader: Reader | None
    roots: tuple[Path, ...]
    note: FileReport | None = None  # already decided (a folder link, an unreadable folder)


@dataclass(slots=True)
class ScanResult:
    """The outcome of a scan: the canonical AgBOM, every input file, and findings."""

    agbom: AgBOM
    files: list[FileReport]
    findings: list[Finding] = field(default_factory=list)
    skipped_dirs: int = 0
    # Component id -> where its entries are (file and line), kept beside the AgBOM.
    locations: dict[str, tuple[SourceLocation, ...]] = field(default_factory=dict)

    @property
    def errors(self) -> list[tuple[str, FileError]]:
        """Every located error, as ``(path, error)``, in path order."""
        return [(report.path, error) for report in self.files for error in report.errors]

    @property
    def error_files(self) -> list[FileReport]:
        return [f for f in self.files if f.status is FileStatus.ERROR]

    def summary(self) -> dict[str, Any]:
        counts = {status.value: 0 for status in FileStatus}
        for report in self.files:
            counts[report.status.value] += 1
        by_type: dict[str, int] = {}
        for component in self.agbom:
            by_type[component.type.value] = by_type.get(component.type.value, 0) + 1
        return {
            "files": len(self.files),
            **counts,
            "components": len(self.agbom),
            "components_by_type": dict(sorted(by_type.items())),
            "findings": len(self.findings),
            "skipped_dirs": self.skipped_dirs,
        }

    def to_json(self, *, findings: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The JSON report: summary, every file with its status, errors, findings, the AgBOM.

        ``findings`` replaces the scan's own hygiene findings (the CLI passes rule findings
        merged with them).
        """
        summary = self.summary()
        if findings is not None:
            summary["findings"] = len(findings)
        return {
            "summary": summary,
            "files": [report.to_json() for report in self.files],
            "errors": [{"path": path, **error.to_json()} for path, error in self.errors],
            "findings": list(findings)
            if findings is not None
            else [f.to_json() for f in self.findings],
            "agbom": self.agbom.to_document(with_hash=True),
        }


# -- (1) collecting candidates -------------------------------------------------------------------


def _join(display_root: str, rel: str) -> str:
    if display_root in ("", "."):
        return rel
    return display_root.rstrip("/") + "/" + rel


def _unreadable(path: str, display: str, roots: tuple[Path, ...], reason: str) -> _Candidate:
    """An entry the walk could not look at: a per-file error, never the end of the scan."""
    report = FileReport(display, None, FileStatus.ERROR, (FileError(reason),))
    return _Candidate(Path(path), display, None, roots, report)


def _walk(
    root: Path, display_root: str, roots: tuple[Path, ...], counters: dict[str, int]
) -> Iterator[_Candidate]:
    stack: list[tuple[str, tuple[str, ...]]] = [(os.fspath(root), ())]
    while stack:
        folder, parts = stack.pop()
        rel_folder = "/".join(parts)
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            yield _Candidate(
                Path(folder), _join(display_root, rel_folder or "."), None, roots,
                FileReport(_join(display_root, rel_folder or "."), None, FileStatus.ERROR,
                           (FileError(f"cannot list folder: {exc.strerror or exc}"),)),
            )  # fmt: skip
            continue
        if parts and any(e.name == "pyvenv.cfg" for e in entries):
            counters["skipped_dirs"] += 1  # a virtual environment
            continue
        subdirs: list[tuple[str, tuple[str, ...]]] = []
        # Globs may reach above the walk root (`agbom scan ~/.codex` finds .codex/config.toml).
        match_parts = (*root.parts, *parts)
        for entry in entries:
            name = entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                yield _unreadable(entry.path, _join(display_root, "/".join((*parts, name))),
                                  roots, f"cannot read: {exc.strerror or exc}")  # fmt: skip
                continue
            if is_dir:
                if name in SKIP_DIRS:
                    counters["skipped_dirs"] += 1
                elif len(parts) < MAX_DEPTH:
                    subdirs.append((entry.path, (*parts, name)))
                continue
            reader = _MATCHER.match(name, match_parts)
            if reader is None:
                if is_link:
                    # A link that loops or cannot be followed may hide a folder of manifests:
                    # say so for this entry and go on. A dangling link is simply nothing.
                    try:
                        if stat.S_ISDIR(os.stat(entry.path).st_mode):
                            counters["skipped_dirs"] += 1  # folder links are never followed
                    except FileNotFoundError:
                        pass
                    except OSError as exc:
                        yield _unreadable(
                            entry.path,
                            _join(display_root, "/".join((*parts, name))),
                            roots,
                            f"cannot follow symbolic link: {exc.strerror or exc}",
                        )
                continue
            counters["files"] += 1
            if counters["files"] > MAX_FILES:
                raise ScanError(f"more than {MAX_FILES} manifest files under {display_root}")
            rel = "/".join((*parts, name))
            yield _Candidate(Path(entry.path), _join(display_root, rel), reader, roots)
        stack.extend(reversed(subdirs))


def _sniff(path: Path, data: bytes) -> Reader | None:
    """For a file named explicitly that no glob claims: recognize JSON content positively."""
    if not path.name.endswith((".json", ".jsonc")):
        return None
    try:
        doc = load_json(data, jsonc=True)
    except ParseFailure:
        return None
    if isinstance(doc, Mapping) and ("mcpServers" in doc or "servers" in doc):
        return GENERIC_MCP
    for check, reader in (
        (looks_like_bundle_manifest, BUNDLES),
        (looks_like_server_json, SERVER_JSON),
        (looks_like_card, AGENT_CARDS),
        (looks_like_agbom, AGBOMS),
    ):
        if check(doc):
            return reader
    return None


# -- (2)+(3) reading one file --------------------------------------------------------------------


def _inside(real: Path, roots: tuple[Path, ...]) -> bool:
    return any(real == root or root in real.parents for root in roots)


def _read_file(
    candidate: _Candidate, explicit: bool
) -> tuple[FileReport | None, ReadResult | None]:
    display = candidate.display
    reader = candidate.reader
    name = reader.name if reader else None

    def error(reason: str, line: int | None = None, column: int | None = None) -> FileReport:
        return FileReport(display, name, FileStatus.ERROR, (FileError(reason, line, column),))

    path = candidate.path
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            real = Path(os.path.realpath(path))
            if not explicit and not _inside(real, candidate.roots):
                return error("symbolic link leaves the scanned tree; not followed"), None
            st = os.stat(real)
            path = real
        if not stat.S_ISREG(st.st_mode):
            return error("not a regular file"), None
    except OSError as exc:
        return error(f"cannot read: {exc.strerror or exc}"), None

    limit = reader.max_bytes if reader else 1024 * 1024
    truncate = bool(getattr(reader, "truncate", False))
    if st.st_size > limit and not truncate:
        return error(f"file is {st.st_size} bytes, over the {limit} byte limit for {name}"), None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            chunks: list[bytes] = []
            remaining = limit + 1
            while remaining > 0 and (chunk := os.read(fd, min(remaining, 1 << 20))):
                chunks.append(chunk)
                remaining -= len(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        return error(f"cannot read: {exc.strerror or exc}"), None
    data = b"".join(chunks)
    truncated = len(data) > limit
    if truncated:
        if not truncate:
            return error(f"file grew over the {limit} byte limit for {name}"), None
        data = data[:limit]

    if reader is None:
        reader = _sniff(path, data) if explicit else None
        if reader is None:
            return FileReport(display, None, FileStatus.SKIPPED,
                              skip_reason="no reader recognizes this file"), None  # fmt: skip
        name = reader.name
    ctx = ReadContext(path=candidate.path, display=display, roots=candidate.roots)
    try:
        if truncate:
            result = reader.read(data, ctx, truncated=truncated)  # type: ignore[call-arg]
        else:
            result = reader.read(data, ctx)
    except Exception as exc:  # noqa: BLE001 - a reader bug must not stop the scan
        return error(f"internal error in reader {name}: {type(exc).__name__}: {exc}"), None
    if result.skipped is not None and not result.components and not result.errors:
        if getattr(reader, "quiet", False) and not explicit:
            return None, None  # a reader of common files (*.py): nothing to say about this one
        return FileReport(display, name, FileStatus.SKIPPED, skip_reason=result.skipped), result
    status = FileStatus.ERROR if result.errors else FileStatus.OK
    report = FileReport(display, name, status, tuple(result.errors), len(result.components))
    _place(result.components, data)
    return report, result


def _place(components: list[dict[str, Any]], data: bytes) -> None:
    """Give every component a span: the reader's ``_at``; else the whole line it named in
    ``_line``; else the JSON key path it named in ``_path`` (resolved here, once per file);
    else line 1."""
    positions = None
    first: Span | None = None
    starts: list[int] | None = None
    for component in components:
        path = component.pop("_path", None)
        line = component.pop("_line", None)
        if "_at" in component or "_deferred" in component:
            continue
        if isinstance(line, int) and line >= 1:
            if starts is None:
                starts = [0, *(m.end() for m in re.finditer(b"\n", data))]
            if line <= len(starts):
                component["_at"] = _line_span(data, starts[line - 1], line)
                continue
        if isinstance(path, tuple):
            if positions is None:
                positions = positions_of(data)
            span = positions.nearest(path)
            if span is not None:
                component["_at"] = span
                continue
        if first is None:
            first = _first_line(data)
        component["_at"] = first


def _first_line(data: bytes) -> Span:
    """Line 1 of a file, for a component the reader could not place more precisely."""
    return _line_span(data, 3 if data.startswith(b"\xef\xbb\xbf") else 0, 1)


def _line_span(data: bytes, start: int, line: int) -> Span:
    """The whole of one line (its first 4 KiB), in code points."""
    end = data.find(b"\n", start, start + 4096)
    text = data[start : end if end >= 0 else start + 4096].rstrip(b"\r")
    return Span(line, 1, max(len(text.decode("utf-8", "replace")), 1) + 1)


def _take_location(component: dict[str, Any], display: str, file: str) -> SourceLocation:
    """Move the reader's span marks out of the wire component into a location (a deferred
    one when the reader left the file unindexed: see :func:`_deferred_place`)."""
    deferred = component.pop("_deferred", None)
    if deferred is not None:
        component.pop("_at", None)
        component.pop("_fields", None)
        reader, order = deferred
        key = str(component.get("_key", ""))
        return SourceLocation(
            display, file, resolve=partial(_deferred_place, file, reader, key), entry=key,
            order=int(order),
        )  # fmt: skip
    span = component.pop("_at", None)
    fields = component.pop("_fields", None) or {}
    if not isinstance(span, Span):
        span = Span(1, 1, 2)
    return SourceLocation(
        path=display,
        file=file,
        span=span,
        fields=tuple(sorted((k, v) for k, v in fields.items() if isinstance(v, Span))),
    )


def _deferred_place(
    file: str, reader_name: str, key: str
) -> tuple[Span, tuple[tuple[str, Span], ...]]:
    """The span and fields of entry ``key`` of a config read without positions: the file is
    read again, this time indexed (once per file, however many findings ask). A file that
    changed since, or lost the entry, places it at line 1."""
    placed = _placed_entries(file, reader_name)
    return placed.get(key, (Span(1, 1, 2), ()))


@functools.lru_cache(maxsize=8)
def _placed_entries(
    file: str, reader_name: str
) -> dict[str, tuple[Span, tuple[tuple[str, Span], ...]]]:
    reader = next((r for r in ALL_READERS if r.name == reader_name), None)
    out: dict[str, tuple[Span, tuple[tuple[str, Span], ...]]] = {}
    if reader is None:
        return out
    try:
        with open(file, "rb") as handle:
            data = handle.read(reader.max_bytes + 1)[: reader.max_bytes]
        path = Path(file)
        result = reader.read(data, ReadContext(path, file, (path.parent,)), place=True)  # type: ignore[call-arg]
    except Exception:  # noqa: BLE001 - gone or changed: its places fall back to line 1
        return out
    for component in result.components:
        span = component.get("_at")
        fields = component.get("_fields") or {}
        if isinstance(span, Span):
            out[str(component.get("_key", ""))] = (
                span,
                tuple(sorted((k, v) for k, v in fields.items() if isinstance(v, Span))),
            )
    return out


# -- (4) merging ---------------------------------------------------------------------------------


def _merge(
    found: list[tuple[str, str, dict[str, Any]]],
) -> tuple[dict[str, dict[str, Any]], dict[str, list[FileError]]]:
    """One component per id; ``found_in`` lists every (path, reader, entry)."""
    # Skills: one name with different content is several skills, told apart by digest.
    skill_digests: dict[str, set[str]] = {}
    for _, _, comp in found:
        if comp.get("type") == "skill":
            digest = comp["definition"]["digest"]["value"].lower()
            skill_digests.setdefault(comp["id"], set()).add(digest)
    merged: dict[str, dict[str, Any]] = {}
    disabled_everywhere: dict[str, bool] = {}
    errors: dict[str, list[FileError]] = {}
    for display, reader, comp in found:
        key = comp.pop("_key", None)
        if comp.get("type") == "skill" and len(skill_digests.get(comp["id"], ())) > 1:
            comp["id"] = f"{comp['id']}@{comp['definition']['digest']['value'].lower()[:12]}"
        location: dict[str, Any] = {"path": display, "reader": reader}
        if key:
            location["entry"] = key
        if comp.get("disabled"):
            location["disabled"] = True
        if "registration_provenance" not in comp and not reader.startswith("acs-"):
            # Found in a file on disk: where it came from is the file, not a trusted party.
            comp["registration_provenance"] = {"origin": "external", "source_id": display}
        cid = comp["id"]
        existing = merged.get(cid)
        if existing is None:
            comp["found_in"] = [location]
            merged[cid] = comp
            disabled_everywhere[cid] = bool(comp.get("disabled"))
            continue
        if location not in existing["found_in"]:
            existing["found_in"].append(location)
        disabled_everywhere[cid] = disabled_everywhere[cid] and bool(comp.get("disabled"))
        for names in ("env_keys", "header_keys"):
            if comp.get(names):
                existing[names] = sorted(set(existing.get(names, [])) | set(comp[names]))
        # A credential written in one of the places is a finding wherever else it is found.
        for entry in comp.get("plaintext_secrets", []):
            if entry not in existing.setdefault("plaintext_secrets", []):
                existing["plaintext_secrets"].append(entry)
    for cid, component in merged.items():
        if component.get("disabled") and not disabled_everywhere[cid]:
            del component["disabled"]
    return merged, errors


def _drop_dangling(merged: dict[str, dict[str, Any]], errors: dict[str, list[FileError]]) -> None:
    """A reference to a component the scan did not find is removed and reported."""
    as_components = {cid: Component(cid, ComponentType(c["type"]), c) for cid, c in merged.items()}
    for problem in check_references(as_components):
        # location: component 'ID' field 'FIELD'
        match = re.match(r"component '(.*)' field '(.*)'$", problem.location)
        if not match:
            continue
        cid, ref_field = match.group(1), match.group(2)
        component = merged.get(cid)
        if component is None:
            continue
        target = re.search(r"'([^']*)'", problem.message)
        bad = target.group(1) if target else None
        component[ref_field] = [r for r in component.get(ref_field, []) if r != bad]
        path = component["found_in"][0]["path"]
        errors.setdefault(path, []).append(FileError(f"{problem.location}: {problem.message}"))


# -- entry point --------------------------------------------------------------------------------


def _candidates(
    paths: Sequence[Path], home: Path | None, counters: dict[str, int]
) -> Iterator[tuple[_Candidate, bool]]:
    for path in paths:
        given = os.fspath(path)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise ScanError(f"{given}: {exc.strerror or 'cannot access'}") from exc
        except OSError as exc:
            # It exists but cannot be followed (a link loop, no permission): that path's
            # error, while every other path is still scanned.
            yield _unreadable(given, given, (), f"cannot read: {exc.strerror or exc}"), True
            continue
        if stat.S_ISDIR(st.st_mode):
            root = Path(os.path.realpath(path))
            display_root = "" if given in (".", "./") else given.rstrip("/")
            for candidate in _walk(root, display_root, (root,), counters):
                yield candidate, False
        else:
            real = Path(os.path.realpath(path))
            reader = reader_for(Path(os.path.abspath(path)))
            yield _Candidate(path, given, reader, (real.parent,)), True
    if home is not None:
        if not _is_dir(home):
            raise ScanError(f"--home {home}: not a folder")
        root = Path(os.path.realpath(home))
        for rel in HOME_FILES:
            full = root / rel
            if os.path.lexists(full):
                reader = reader_for(Path(rel))
                yield _Candidate(full, f"~/{rel}", reader, (root,)), False
        for rel in HOME_DIRS:
            full = root / rel
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                yield _unreadable(os.fspath(full), f"~/{rel}", (root,),
                                  f"cannot read: {exc.strerror or exc}"), False  # fmt: skip
                continue
            if stat.S_ISDIR(st.st_mode):  # lstat: a folder link is never followed
                for candidate in _walk(full, f"~/{rel}", (root,), counters):
                    yield candidate, False


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


_Outcome = tuple[FileReport | None, list[dict[str, Any]], list[Finding]]
# Set just before forking workers, so children inherit the candidates instead of receiving
# pickled readers (some hold closures).
_FORK_CANDIDATES: list[tuple[_Candidate, bool]] = []


def _outcome(pair: tuple[_Candidate, bool]) -> _Outcome:
    candidate, explicit = pair
    if candidate.note is not None:
        return candidate.note, [], []
    report, result = _read_file(candidate, explicit)
    if result is None:
        return report, [], []
    return report, result.components, result.findings


def _read_range(bounds: tuple[int, int]) -> list[_Outcome]:
    return [_outcome(pair) for pair in _FORK_CANDIDATES[bounds[0] : bounds[1]]]


def _read_all(
    ordered: list[tuple[_Candidate, bool]],
    workers: int | None,
    background: Callable[[], object] | None,
) -> list[_Outcome]:
    """Read every candidate, in order; in forked worker processes when it pays off."""
    global _FORK_CANDIDATES
    count = workers if workers is not None else min(os.cpu_count() or 1, 4)
    context = None
    if count > 1 and len(ordered) >= PARALLEL_MIN_FILES:
        try:
            context = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform: read in this process
            context = None
    if context is None:
        outcomes = [_outcome(pair) for pair in ordered]
        if background is not None:
            background()
        return outcomes
    chunk = max(16, len(ordered) // (count * 8))
    ranges = [(i, min(i + chunk, len(ordered))) for i in range(0, len(ordered), chunk)]
    _FORK_CANDIDATES = ordered
    try:
        with context.Pool(count) as pool:
            pending = pool.map_async(_read_range, ranges)
            if background is not None:
                background()
            parts = pending.get()
    finally:
        _FORK_CANDIDATES = []
    return [outcome for part in parts for outcome in part]


def scan_paths(
    paths: Sequence[Path],
    *,
    home: Path | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = None,
    background: Callable[[], object] | None = None,
) -> ScanResult:
    """Scan files and folders (and a home folder's client locations) into one AgBOM.

    Large trees (at least :data:`PARALLEL_MIN_FILES` files) are read by ``workers`` forked
    processes (default: the CPU count, at most 4; ``1`` reads in this process). While they
    read, ``background`` (for example warming an exporter) runs here, so both cores work.

    Raises :class:`ScanError` only for unusable arguments (a path that does not exist);
    every problem inside a file is reported in :attr:`ScanResult.files`.
    """
    if not paths and home is None:
        raise ScanError("nothing to scan: give at least one PATH or --home")
    counters = {"files": 0, "skipped_dirs": 0}
    candidates = list(_candidates(paths, home, counters))
    # The same file reached twice (a PATH inside another, or --home inside a PATH) counts once.
    unique: dict[str, tuple[_Candidate, bool]] = {}
    for candidate, explicit in candidates:
        if candidate.note is not None:
            key = candidate.display
        elif explicit:
            key = os.path.realpath(candidate.path)
        else:
            key = os.fspath(candidate.path)  # walked under a resolved root: already canonical
        unique.setdefault(key, (candidate, explicit))
    ordered = sorted(unique.values(), key=lambda pair: pair[0].display)

    reports: list[FileReport] = []
    found: list[tuple[str, str, dict[str, Any]]] = []
    placed: list[tuple[dict[str, Any], SourceLocation]] = []
    findings: list[Finding] = []
    total = len(ordered)
    outcomes = _read_all(ordered, workers, background)
    for done, ((candidate, _), (report, components, file_findings)) in enumerate(
        zip(ordered, outcomes, strict=True), start=1
    ):
        if progress is not None:
            progress(done, total, candidate.display)
        if report is None:
            continue
        reports.append(report)
        if report.reader is not None:
            found.extend((report.path, report.reader, c) for c in components)
            findings.extend(file_findings)
            if components:
                file = os.path.realpath(candidate.path)  # links resolved, as code scanning wants
                placed.extend((c, _take_location(c, report.path, file)) for c in components)

    merged, merge_errors = _merge(found)
    _drop_dangling(merged, merge_errors)
    document: dict[str, Any] = {
        "agent": {"id": "agbom-scan", "name": "agbom scan"},
        "components": [merged[cid] for cid in sorted(merged)],
    }
    try:
        agbom = AgBOM.from_document(document, source="scan result")
    except InvalidAgBOM:
        # Rare (an id over 512 characters from a very long URL or command, a number RFC 8785
        # cannot represent in an AgBOM read from disk): find the offending components, report
        # them against their file, build without them.
        keep: dict[str, dict[str, Any]] = {}
        for component in document["components"]:
            problem = _component_problem(component)
            if problem is not None:
                cid = str(component["id"])
                shown = cid if len(cid) <= 80 else cid[:80] + "..."
                error = FileError(f"component {shown!r} left out of the AgBOM: {problem}")
                for path in dict.fromkeys(place["path"] for place in component["found_in"]):
                    merge_errors.setdefault(path, []).append(error)  # every file it came from
                continue
            keep[component["id"]] = component
        _drop_dangling(keep, merge_errors)  # a reference to a component left out
        document["components"] = [keep[cid] for cid in sorted(keep)]
        agbom = AgBOM.from_document(document, source="scan result")
    if merge_errors:
        reports = [
            FileReport(
                r.path,
                r.reader,
                FileStatus.ERROR,
                r.errors + tuple(merge_errors[r.path]),
                r.components,
                r.skip_reason,
            )  # fmt: skip
            if r.path in merge_errors
            else r
            for r in reports
        ]
    findings.sort(key=lambda f: (f.path, f.component_id, f.rule_id))
    return ScanResult(agbom=agbom, files=reports, findings=findings,
                      skipped_dirs=counters["skipped_dirs"],
                      locations=_locations(placed, agbom))  # fmt: skip


def _locations(
    placed: list[tuple[dict[str, Any], SourceLocation]], agbom: AgBOM
) -> dict[str, tuple[SourceLocation, ...]]:
    """Component id (after merging renamed it) -> its distinct locations, in path order."""
    by_id: dict[str, dict[SourceLocation, None]] = {}
    for component, location in placed:
        cid = str(component.get("id"))
        if cid in agbom:
            by_id.setdefault(cid, {})[location] = None
    return {
        cid: tuple(sorted(places, key=SourceLocation.sort_key))
        for cid, places in sorted(by_id.items())
    }


def _component_problem(component: dict[str, Any]) -> str | None:
    """Why ``component`` cannot be part of an AgBOM on its own, or ``None``."""
    try:
        parse_component(component)
        rfc8785.dumps(component)
    except InvalidAgBOM as exc:
        return "; ".join(problem.message for problem in exc.problems)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        return f"cannot be canonicalized: {exc}"
    return None


def report_json_bytes(result: ScanResult, findings: Sequence[Mapping[str, Any]] | None) -> bytes:
    """The JSON report as indented bytes."""
    return orjson.dumps(result.to_json(findings=findings), option=orjson.OPT_INDENT_2)
