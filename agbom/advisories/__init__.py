"""Known vulnerabilities, offline: match an AgBOM's packages against a local OSV export.

:func:`load_osv` reads an OSV ``all.zip`` or a folder of OSV JSON records; :func:`annotate`
returns the AgBOM with a ``vulnerabilities`` list on every component whose package version an
advisory affects. Rules condition on that list (``vulnerability:`` match key), CycloneDX
exports it as ``vulnerabilities[]`` and SARIF carries the rule findings. No network, ever.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agbom.advisories.osv import (
    SEVERITIES,
    AdvisoryError,
    LoadStats,
    Match,
    OsvDatabase,
    load_osv,
    package_purls,
)

if TYPE_CHECKING:
    from agbom.inventory import AgBOM

VULNERABILITIES_FIELD = "vulnerabilities"

__all__ = [
    "SEVERITIES",
    "VULNERABILITIES_FIELD",
    "AdvisoryError",
    "LoadStats",
    "Match",
    "OsvDatabase",
    "annotate",
    "load_osv",
    "package_purls",
    "vulnerabilities_of",
]


def annotate(agbom: AgBOM, database: OsvDatabase) -> AgBOM:
    """``agbom`` with each affected component's ``vulnerabilities`` set from ``database``.

    A ``vulnerabilities`` list already in the input (from an earlier run, or sent by a
    client) is replaced, never merged: only the database given here speaks.
    """
    from agbom.inventory import AgBOM

    document = agbom.to_document()
    changed = False
    for component in document["components"]:
        matches = vulnerabilities_of(component, database)
        if matches:
            component[VULNERABILITIES_FIELD] = matches
            changed = True
        elif VULNERABILITIES_FIELD in component:
            del component[VULNERABILITIES_FIELD]
            changed = True
    if not changed:
        return agbom
    return AgBOM.from_document(document, source="AgBOM with advisories")


def vulnerabilities_of(data: Mapping[str, Any], database: OsvDatabase) -> list[dict[str, Any]]:
    """The ``vulnerabilities`` list ``database`` gives a component's wire object ``data``
    (empty when no advisory affects its packages)."""
    matches: list[dict[str, Any]] = []
    for purl in package_purls(data):
        matches.extend(m.to_json() for m in database.match(purl))
    return matches
