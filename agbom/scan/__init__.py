"""Scan layer: read agent manifests on disk into one canonical AgBOM.

One reader per manifest kind, each bound to file globs (:mod:`agbom.scan.clients` for MCP
client configs, :mod:`agbom.scan.skills`, :mod:`agbom.scan.a2a`, :mod:`agbom.scan.registry`,
:mod:`agbom.scan.acs`); :func:`scan_paths` walks, dispatches and merges. Depends on
:mod:`agbom.inventory` only.
"""

from __future__ import annotations

from agbom.scan.acs import agbom_component_locations
from agbom.scan.interface import (
    SCANNER_REMEDIATIONS,
    SCANNER_RULES,
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
from agbom.scan.launchers import Package, package_from_command
from agbom.scan.redact import REDACTED, redact_args, redact_url
from agbom.scan.scanner import ALL_READERS, ScanResult, reader_for, scan_paths

__all__ = [
    "ALL_READERS",
    "REDACTED",
    "SCANNER_REMEDIATIONS",
    "SCANNER_RULES",
    "FileError",
    "FileReport",
    "FileStatus",
    "Finding",
    "Package",
    "ReadContext",
    "ReadResult",
    "Reader",
    "ScanError",
    "ScanResult",
    "SourceLocation",
    "Span",
    "agbom_component_locations",
    "package_from_command",
    "reader_for",
    "redact_args",
    "redact_url",
    "scan_paths",
]
