"""An OSV database export read from a local path, and package matching against it.

The export is OSV's per-ecosystem ``all.zip`` or a folder of OSV JSON files (walked
recursively; ``*.json`` only). Nothing is fetched: a path is all this module reads.

Every advisory is indexed by the packages it names (``affected[].package`` as ecosystem and
name, or as a purl), so matching a package costs one dictionary lookup plus the ranges of the
advisories for that package; version ranges are compiled only for packages that are asked
about. Range evaluation follows the OSV schema: ``versions`` are exact, ``SEMVER`` and
``ECOSYSTEM`` ranges are walked as sorted ``introduced``/``fixed``/``last_affected`` events,
each affected interval becomes a :mod:`univers` range (npm semver, PyPI PEP 440) and the
library decides containment. ``GIT`` ranges name commits and are not evaluated.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import orjson

from agbom.errors import InputError
from agbom.rules.matchers import parse_purl

# Bounds on hostile exports: one advisory is a few KiB; the largest real ones are ~1 MiB.
MAX_ADVISORY_BYTES = 8 * 1024 * 1024
MAX_ADVISORIES = 2_000_000
MAX_TOTAL_BYTES = 8 * 1024 * 1024 * 1024
MAX_DEPTH = 32  # folder nesting
SEVERITIES = ("critical", "high", "medium", "low", "unknown")
# OSV ecosystem -> purl type. Only these are evaluated as ranges; others match by purl and
# exact ``versions`` lists.
_ECOSYSTEM_PURL = {"npm": "npm", "pypi": "pypi"}
_PURL_ECOSYSTEM = {"npm": "npm", "pypi": "PyPI"}
_SEVERITY_WORDS = {
    "critical": "critical",
    "high": "high",
    "important": "high",
    "moderate": "medium",
    "medium": "medium",
    "low": "low",
    "negligible": "low",
}


class AdvisoryError(InputError):
    """The OSV export cannot be used (missing, unreadable, malformed, over a bound)."""


@dataclass(frozen=True, slots=True)
class Match:
    """One advisory that affects one package version."""

    id: str
    aliases: tuple[str, ...]
    severity: str  # critical | high | medium | low | unknown
    fixed: tuple[str, ...]
    package: str  # the purl asked about, version included
    summary: str
    modified: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "aliases": list(self.aliases),
            "severity": self.severity,
            "fixed": list(self.fixed),
            "package": self.package,
        }
        if self.summary:
            out["summary"] = self.summary
        if self.modified:
            out["modified"] = self.modified
        return out


@dataclass(slots=True)
class _Affected:
    """One ``affected[]`` entry, kept raw until its package is asked about."""

    advisory: int  # index into OsvDatabase._advisories
    purl_type: str | None  # npm | pypi | None (purl-only match, exact versions)
    raw: Mapping[str, Any]
    compiled: list[Any] | None = None  # univers ranges, built on first use
    fixed: tuple[str, ...] | None = None  # the "fixed" events, read on first use
    unevaluated: int = 0  # ranges that could not be read (bad version text, GIT)


@dataclass(slots=True)
class _Advisory:
    id: str
    aliases: tuple[str, ...]
    severity: str
    summary: str
    modified: str | None
    withdrawn: bool


@dataclass(slots=True)
class LoadStats:
    """What loading found: counts a user can check against the export."""

    advisories: int = 0
    withdrawn: int = 0
    affected_entries: int = 0
    unindexed_entries: int = 0  # affected entries naming no package agbom can key


@dataclass(slots=True)
class OsvDatabase:
    """Advisories indexed by package key (``type/namespace/name``, normalized)."""

    source: str
    stats: LoadStats = field(default_factory=LoadStats)
    _advisories: list[_Advisory] = field(default_factory=list)
    _index: dict[str, list[_Affected]] = field(default_factory=dict)
    unevaluated_ranges: int = 0

    def __len__(self) -> int:
        return len(self._advisories)

    def add(self, doc: Any, where: str) -> None:
        """Index one OSV record (``where`` names it in errors)."""
        if not isinstance(doc, Mapping):
            raise AdvisoryError(f"{where}: an OSV record must be a JSON object")
        advisory_id = doc.get("id")
        if not isinstance(advisory_id, str) or not advisory_id or len(advisory_id) > 256:
            raise AdvisoryError(f"{where}: OSV record without a string 'id'")
        aliases = doc.get("aliases") or []
        if not isinstance(aliases, list):
            raise AdvisoryError(f"{where}: 'aliases' of {advisory_id} must be a list")
        affected = doc.get("affected") or []
        if not isinstance(affected, list):
            raise AdvisoryError(f"{where}: 'affected' of {advisory_id} must be a list")
        summary = doc.get("summary")
        modified = doc.get("modified")
        advisory = _Advisory(
            id=advisory_id,
            aliases=tuple(a for a in aliases if isinstance(a, str))[:64],
            severity=_severity(doc),
            summary=summary[:300] if isinstance(summary, str) else "",
            modified=modified if isinstance(modified, str) else None,
            withdrawn=isinstance(doc.get("withdrawn"), str),
        )
        number = len(self._advisories)
        self._advisories.append(advisory)
        self.stats.advisories += 1
        if advisory.withdrawn:
            self.stats.withdrawn += 1
            return  # a withdrawn advisory affects nothing
        for entry in affected:
            if not isinstance(entry, Mapping):
                continue
            self.stats.affected_entries += 1
            key, purl_type = _entry_key(entry.get("package"))
            if key is None:
                self.stats.unindexed_entries += 1
                continue
            self._index.setdefault(key, []).append(_Affected(number, purl_type, entry))

    def match(self, purl: str) -> list[Match]:
        """The advisories that affect the package version ``purl`` names (none without a
        version: an unknown version is never assumed affected or safe; see docs/scan.md)."""
        parsed = parse_purl(purl)
        key = _purl_key(purl)
        if parsed is None or key is None or not parsed.version:
            return []
        entries = self._index.get(key)
        if not entries:
            return []
        found: dict[str, Match] = {}
        for entry in entries:
            fixed = _affects(self, entry, parsed.version, parsed.type)
            if fixed is None:
                continue
            advisory = self._advisories[entry.advisory]
            previous = found.get(advisory.id)
            fixed_all = tuple(sorted(set(fixed) | set(previous.fixed if previous else ())))
            found[advisory.id] = Match(
                id=advisory.id,
                aliases=advisory.aliases,
                severity=_entry_severity(entry.raw) or advisory.severity,
                fixed=fixed_all,
                package=purl,
                summary=advisory.summary,
                modified=advisory.modified,
            )
        return sorted(found.values(), key=lambda m: (SEVERITIES.index(m.severity), m.id))


def _severity(doc: Mapping[str, Any]) -> str:
    """The advisory's severity word: ``database_specific.severity`` (GHSA style), else the
    first ``affected[].ecosystem_specific.severity``, else ``unknown``. CVSS vectors are kept
    in the record but not scored here (see docs/scan.md)."""
    specific = doc.get("database_specific")
    if isinstance(specific, Mapping):
        word = _SEVERITY_WORDS.get(str(specific.get("severity", "")).strip().lower())
        if word:
            return word
    for entry in doc.get("affected") or []:
        found = _entry_severity(entry) if isinstance(entry, Mapping) else None
        if found:
            return found
    return "unknown"


def _entry_severity(entry: Mapping[str, Any]) -> str | None:
    specific = entry.get("ecosystem_specific")
    if isinstance(specific, Mapping):
        return _SEVERITY_WORDS.get(str(specific.get("severity", "")).strip().lower())
    return None


def _entry_key(package: Any) -> tuple[str | None, str | None]:
    """The index key of an ``affected[].package`` and the purl type whose ranges we read."""
    if not isinstance(package, Mapping):
        return None, None
    ecosystem = package.get("ecosystem")
    name = package.get("name")
    if isinstance(ecosystem, str) and isinstance(name, str) and name:
        # "PyPI", "npm"; an ecosystem suffix such as "Debian:12" is another ecosystem.
        purl_type = _ECOSYSTEM_PURL.get(ecosystem.strip().lower())
        if purl_type is not None:
            return _name_key(purl_type, name), purl_type
    purl = package.get("purl")
    if isinstance(purl, str):
        parsed = parse_purl(purl)
        if parsed is not None:
            return _purl_key(purl), _ECOSYSTEM_PURL.get(parsed.type)
    return None, None


def _name_key(purl_type: str, name: str) -> str | None:
    """The index key of ``pkg:TYPE/NAME`` (an OSV ecosystem and name) without building the
    purl: see :func:`_normalized`."""
    if purl_type == "npm" and name.startswith("@") and name.count("/") != 1:
        return None
    if purl_type == "pypi" and "/" in name:
        return None
    return _normalized(purl_type, name)


def _purl_key(purl: str) -> str | None:
    """The index key of a purl: its percent-decoded ``type/namespace/name`` (no version,
    qualifiers or subpath), normalized as its ecosystem compares names (:func:`_normalized`)."""
    if not purl.startswith("pkg:"):
        return None
    head = purl[4:].lstrip("/").split("#", 1)[0].split("?", 1)[0]
    slash = head.rfind("/")
    at = head.find("@", slash + 1)
    if at != -1:
        head = head[:at]
    purl_type, _, rest = head.partition("/")
    if not purl_type or not rest:
        return None
    return _normalized(purl_type.lower(), unquote(rest))


_FOLD = re.compile(r"[-_.]+")
_CASE_INSENSITIVE = frozenset(
    {
        # Package-URL type definitions whose names are not case-sensitive, and NuGet, whose
        # package ids are case-insensitive. Every other type compares exactly: npm (legacy
        # names hold capitals; socket.io, socket-io and socket_io are three packages), Go
        # module paths, Maven, crates.io, RubyGems, ...
        "alpm", "apk", "bitbucket", "bitnami", "brew", "composer", "deb", "github", "hex",
        "luarocks", "nuget", "oci", "otp",
    }
)  # fmt: skip


def _normalized(purl_type: str, rest: str) -> str:
    """``type/namespace/name`` as the ecosystem compares names: PyPI's normalized per PEP 503
    (lower case, runs of ``-_.`` folded to ``-``; the OSV schema says its PyPI names are),
    the case-insensitive types' lower-cased, every other one exactly as written."""
    if purl_type == "pypi":
        return f"pypi/{_FOLD.sub('-', rest.lower())}"
    if purl_type in _CASE_INSENSITIVE:
        return f"{purl_type}/{rest.lower()}"
    return f"{purl_type}/{rest}"


def _affects(
    database: OsvDatabase, entry: _Affected, version: str, purl_type: str
) -> tuple[str, ...] | None:
    """The fixed versions of ``entry`` when it affects ``version``, else ``None``."""
    raw = entry.raw
    if entry.fixed is None:
        entry.fixed = _fixed_versions(raw)
    fixed = entry.fixed
    listed = raw.get("versions")
    if isinstance(listed, list) and version in listed:
        return fixed
    scheme = entry.purl_type
    if scheme is None or scheme != purl_type:
        return None
    if entry.compiled is None:
        entry.compiled, entry.unevaluated = _compile(raw, scheme)
        database.unevaluated_ranges += entry.unevaluated
    if not entry.compiled:
        return None
    parsed = _version(scheme, version)
    if parsed is None:
        return None
    for interval in entry.compiled:
        try:
            if parsed in interval:
                return fixed
        except (TypeError, ValueError):
            continue
    return None


def _fixed_versions(raw: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        event["fixed"]
        for event_range in raw.get("ranges") or []
        if isinstance(event_range, Mapping)
        for event in event_range.get("events") or []
        if isinstance(event, Mapping) and isinstance(event.get("fixed"), str)
    )


@functools.lru_cache(maxsize=65536)
def _version(scheme: str, text: str) -> Any:
    from univers.versions import InvalidVersion, PypiVersion, SemverVersion

    try:
        return SemverVersion(text) if scheme == "npm" else PypiVersion(text)
    except (InvalidVersion, ValueError, TypeError):
        return None


class _EveryVersion:
    """``introduced: "0"`` with no end: every version of the package is affected."""

    def __contains__(self, version: object) -> bool:
        return True


_EVERY_VERSION = _EveryVersion()


def _compile(raw: Mapping[str, Any], scheme: str) -> tuple[list[Any], int]:
    """Each affected interval of the entry's SEMVER/ECOSYSTEM ranges as a univers range."""
    from univers.version_constraint import VersionConstraint
    from univers.version_range import NpmVersionRange, PypiVersionRange

    range_class = NpmVersionRange if scheme == "npm" else PypiVersionRange
    intervals: list[Any] = []
    unevaluated = 0
    for event_range in raw.get("ranges") or []:
        if not isinstance(event_range, Mapping):
            continue
        if event_range.get("type") not in ("SEMVER", "ECOSYSTEM"):
            unevaluated += 1  # GIT ranges name commits
            continue
        events = _sorted_events(event_range.get("events"), scheme)
        if events is None:
            unevaluated += 1
            continue
        start: Any = None
        inside = False
        for kind, version in events:
            if kind == "introduced" and not inside:
                inside, start = True, version
            elif kind in ("fixed", "last_affected") and inside:
                end = VersionConstraint("<" if kind == "fixed" else "<=", version)
                constraints = (end,) if start is None else (VersionConstraint(">=", start), end)
                intervals.append(range_class(constraints=constraints))
                inside = False
        if inside:  # introduced with no end: every later version
            if start is None:
                intervals.append(_EVERY_VERSION)
            else:
                intervals.append(range_class(constraints=(VersionConstraint(">=", start),)))
    return intervals, unevaluated


def _sorted_events(events: Any, scheme: str) -> list[tuple[str, Any]] | None:
    """Events in version order (``introduced: "0"`` first, as ``None``); ``None`` when one
    cannot be read: a range half-read would shift the intervals."""
    if not isinstance(events, list) or not events:
        return None
    read: list[tuple[Any, int, str, Any]] = []
    for position, event in enumerate(events):
        if not isinstance(event, Mapping) or len(event) != 1:
            return None
        ((kind, text),) = event.items()
        if kind == "limit":
            continue  # limits bound GIT walks
        if kind not in ("introduced", "fixed", "last_affected") or not isinstance(text, str):
            return None
        if kind == "introduced" and text == "0":
            read.append((None, position, kind, None))
            continue
        version = _version(scheme, text)
        if version is None:
            return None
        read.append((version, position, kind, version))
    try:
        # Ties keep file order; "0" sorts first.
        read.sort(key=lambda item: (item[0] is not None, item[0] or 0, item[1]))
    except TypeError:
        return None
    return [(kind, version) for _, _, kind, version in read]


# -- loading --------------------------------------------------------------------------------


def load_osv(path: Path) -> OsvDatabase:
    """Read an OSV export (``all.zip`` or a folder of ``.json`` records) into an index.

    Fails closed with :class:`AdvisoryError`: a missing path, a record that is not JSON or
    not an OSV object, or a bound crossed is an error, never a smaller database.
    """
    database = OsvDatabase(source=str(path))
    try:
        info = os.stat(path)
    except OSError as exc:
        raise AdvisoryError(f"--osv {path}: {exc.strerror or 'cannot be read'}") from None
    records = _folder(path) if stat.S_ISDIR(info.st_mode) else _zip(path)
    for where, data in records:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise AdvisoryError(f"{where}: not valid JSON ({exc.msg})") from None
        database.add(doc, where)
        if len(database) > MAX_ADVISORIES:
            raise AdvisoryError(f"--osv {path}: more than {MAX_ADVISORIES} advisories")
    if not len(database):
        raise AdvisoryError(f"--osv {path}: no OSV records found")
    return database


def _zip(path: Path) -> Iterator[tuple[str, bytes]]:
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise AdvisoryError(f"--osv {path}: not a zip archive or a folder ({exc})") from None
    total = 0
    with archive:
        for member in archive.infolist():
            if member.is_dir() or not member.filename.endswith(".json"):
                continue
            where = f"{path}!{member.filename}"
            if member.file_size > MAX_ADVISORY_BYTES:
                raise AdvisoryError(f"{where}: larger than {MAX_ADVISORY_BYTES} bytes")
            try:
                with archive.open(member) as handle:
                    # The header's size can lie: read at most one byte past the bound.
                    data = handle.read(MAX_ADVISORY_BYTES + 1)
            except (OSError, zipfile.BadZipFile, RuntimeError, EOFError) as exc:
                raise AdvisoryError(f"{where}: cannot be read ({exc})") from None
            if len(data) > MAX_ADVISORY_BYTES:
                raise AdvisoryError(f"{where}: larger than {MAX_ADVISORY_BYTES} bytes")
            total += len(data)
            if total > MAX_TOTAL_BYTES:
                raise AdvisoryError(f"--osv {path}: more than {MAX_TOTAL_BYTES} bytes")
            yield where, data


def _folder(path: Path) -> Iterator[tuple[str, bytes]]:
    total = 0
    for file in _json_files(path, 0):
        try:
            with open(file, "rb") as handle:
                data = handle.read(MAX_ADVISORY_BYTES + 1)
        except OSError as exc:
            raise AdvisoryError(f"{file}: {exc.strerror or 'cannot be read'}") from None
        if len(data) > MAX_ADVISORY_BYTES:
            raise AdvisoryError(f"{file}: larger than {MAX_ADVISORY_BYTES} bytes")
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise AdvisoryError(f"--osv {path}: more than {MAX_TOTAL_BYTES} bytes")
        yield str(file), data


def _json_files(folder: Path, depth: int) -> Iterator[Path]:
    """Regular ``.json`` files under ``folder`` in name order; links are not followed."""
    if depth > MAX_DEPTH:
        raise AdvisoryError(f"{folder}: folders nested deeper than {MAX_DEPTH}")
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise AdvisoryError(f"{folder}: {exc.strerror or 'cannot be read'}") from None
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _json_files(Path(entry.path), depth + 1)
        elif entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


def package_purls(data: Mapping[str, Any]) -> Sequence[str]:
    """The package purls a component names: its ``purl`` and its declared ``packages``."""
    out: list[str] = []
    purl = data.get("purl")
    if isinstance(purl, str):
        out.append(purl)
    declared = data.get("packages")
    if isinstance(declared, list):
        out.extend(p for p in declared if isinstance(p, str) and p.startswith("pkg:"))
    return out
