"""Packages a skill declares: exact pins in its ``requirements.txt`` and ``package.json``.

Only exact versions are taken (``name==1.2.3`` for PyPI; ``"name": "1.2.3"`` in
``dependencies`` for npm), as purls on the skill's ``packages`` list; this is what OSV
matching (``--osv``) checks. A range, a URL or a git dependency names no version and is
left out (see docs/scan.md, "What it cannot see").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
from packageurl import PackageURL

MAX_MANIFEST_BYTES = 1024 * 1024
MAX_PACKAGES = 500
_REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([0-9][A-Za-z0-9.+!_-]*)\s*(?:[;#].*)?$"
)
_NPM_EXACT = re.compile(r"^=?v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$")
_NPM_NAME = re.compile(r"^(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*$", re.IGNORECASE)


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_MANIFEST_BYTES else None


def _pypi(lines: Iterable[str]) -> list[str]:
    out = []
    for line in lines:
        found = _REQUIREMENT.match(line)
        if found:
            name = re.sub(r"[-_.]+", "-", found.group(1)).lower()
            out.append(PackageURL(type="pypi", name=name, version=found.group(2)).to_string())
    return out


def _npm(doc: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(doc, Mapping):
        return out
    for section in ("dependencies", "optionalDependencies"):
        deps = doc.get(section)
        if not isinstance(deps, Mapping):
            continue
        for name, spec in deps.items():
            found = _NPM_EXACT.match(spec) if isinstance(spec, str) else None
            if found is None or not isinstance(name, str) or not _NPM_NAME.match(name):
                continue
            scope, _, bare = name.rpartition("/")
            purl = PackageURL(type="npm", namespace=scope or None, name=bare,
                              version=found.group(1))  # fmt: skip
            out.append(purl.to_string())
    return out


def declared_packages(folder: Path, files: Iterable[str]) -> list[str]:
    """Purls of the exact pins in the folder's ``requirements*.txt`` and ``package.json``
    (at the top level or under ``scripts/``), sorted and without duplicates."""
    found: set[str] = set()
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        if rel.count("/") > 1 or (rel.count("/") == 1 and not rel.startswith("scripts/")):
            continue
        if name.startswith("requirements") and name.endswith(".txt"):
            data = _read(folder / rel)
            if data is not None:
                found.update(_pypi(data.decode("utf-8", errors="replace").splitlines()))
        elif name == "package.json":
            data = _read(folder / rel)
            try:
                found.update(_npm(orjson.loads(data)) if data is not None else [])
            except orjson.JSONDecodeError:
                continue
    return sorted(found)[:MAX_PACKAGES]
