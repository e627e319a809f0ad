"""Export layer: serializations of the canonical AgBOM, looked up by name and version.

``get_exporter("cyclonedx-json@1.7")`` or ``get_exporter("cyclonedx-json", spec_version="1.7")``
returns an :class:`Exporter`; :data:`FORMATS` lists the names for ``--help``. Depends on the
inventory layer only.
"""

from __future__ import annotations

from collections.abc import Callable

from agbom.export._cdx_schema import SPEC_VERSIONS, validate_cyclonedx_json
from agbom.export.canonical import CanonicalJsonExporter
from agbom.export.cyclonedx import (
    CycloneDxJsonExporter,
    CycloneDxXmlExporter,
    build_cyclonedx,
    cyclonedx_xml,
)
from agbom.export.graph import GRAPH_FORMATS, render_graph
from agbom.export.interface import Exporter, ExportError
from agbom.export.spdx import SpdxJsonExporter, build_spdx
from agbom.inventory import AgBOM

__all__ = [
    "FORMATS",
    "GRAPH_FORMATS",
    "SPEC_VERSIONS",
    "CanonicalJsonExporter",
    "CycloneDxJsonExporter",
    "CycloneDxXmlExporter",
    "ExportError",
    "Exporter",
    "SpdxJsonExporter",
    "build_cyclonedx",
    "build_spdx",
    "cyclonedx_xml",
    "export",
    "get_exporter",
    "render_graph",
    "validate_cyclonedx_json",
]

DEFAULT_SPEC_VERSION = "1.6"

# name -> (factory taking a spec version and an explicit timestamp (ISO 8601, or None for the
# exporter's default), versions it accepts; empty = unversioned)
_REGISTRY: dict[str, tuple[Callable[[str, str | None], Exporter], tuple[str, ...]]] = {
    "cyclonedx-json": (lambda v, t: CycloneDxJsonExporter(v, timestamp=t), SPEC_VERSIONS),
    "cyclonedx-xml": (lambda v, t: CycloneDxXmlExporter(v, timestamp=t), SPEC_VERSIONS),
    "agbom-json": (lambda _v, _t: CanonicalJsonExporter(), ()),
    "spdx-json": (lambda _v, t: SpdxJsonExporter(timestamp=t), ()),  # SPDX 3.0.1 only
}

FORMATS: tuple[str, ...] = tuple(_REGISTRY)
"""Known format names (without version), in the order ``--help`` shows them."""


def _known() -> str:
    names: list[str] = []
    for name, (_, versions) in _REGISTRY.items():
        names.extend(f"{name}@{v}" for v in versions) if versions else names.append(name)
    return ", ".join(names)


def get_exporter(
    name: str, spec_version: str | None = None, *, timestamp: str | None = None
) -> Exporter:
    """The exporter for ``name`` (``"cyclonedx-json"`` or ``"cyclonedx-json@1.7"``).

    A version in the name and ``spec_version`` must agree. Unknown names and versions raise
    :class:`ExportError` listing what is known. ``timestamp`` (ISO 8601 with a timezone) is the
    document's creation time for formats that record one; ``None`` leaves each exporter's
    default (the AgBOM's ``generated_at``, else ``SOURCE_DATE_EPOCH``, else the clock).
    """
    base, sep, in_name = name.strip().lower().partition("@")
    if sep and not in_name:
        raise ExportError(f"format {name!r} has an empty version (known: {_known()})")
    entry = _REGISTRY.get(base)
    if entry is None:
        raise ExportError(f"unknown export format {name!r} (known: {_known()})")
    factory, versions = entry
    if sep and spec_version is not None and in_name != spec_version:
        raise ExportError(
            f"format {name!r} names version {in_name} but version {spec_version} was asked for"
        )
    version = in_name if sep else spec_version
    if not versions:
        if sep:
            raise ExportError(f"format {base!r} has no versions (known: {_known()})")
        return factory("", timestamp)
    version = version or DEFAULT_SPEC_VERSION
    if version not in versions:
        raise ExportError(
            f"format {base!r} has no version {version!r} (known: {', '.join(versions)})"
        )
    return factory(version, timestamp)


def export(
    agbom: AgBOM,
    fmt: str,
    spec_version: str = DEFAULT_SPEC_VERSION,
    *,
    timestamp: str | None = None,
) -> bytes:
    """Export ``agbom`` in format ``fmt`` (a version in ``fmt`` wins over ``spec_version``)."""
    exporter = get_exporter(fmt, None if "@" in fmt else spec_version, timestamp=timestamp)
    return exporter.export(agbom)
