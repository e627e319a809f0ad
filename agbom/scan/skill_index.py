"""Agent Skills discovery indexes: ``/.well-known/agent-skills/index.json``.

An index lists published skills as ``{name, type, description, url, digest}``, where
``digest`` is ``sha256:HEX`` of the artifact ``url`` names: the ``SKILL.md`` bytes for
``type: skill-md``, the archive bytes for ``type: archive``. That is not agbom's folder
digest (which covers every file of the folder, their paths and executable bits), so both are
kept: the skill component gets ``index_digest`` beside ``definition.digest``.

Only local files are read. A skill folder is matched to an index when the index sits in the
folder's parent (``.../agent-skills/index.json`` next to ``.../agent-skills/NAME/SKILL.md``);
the artifact is the local file the entry's ``url`` names under that tree, and it is hashed
here: ``matches`` says whether the published digest is the digest of the bytes on disk.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from agbom.inventory.skill_digest import open_skill_file

INDEX_NAME = "index.json"
MAX_INDEX_BYTES = 4 * 1024 * 1024
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
_DIGEST = re.compile(r"^sha256:([0-9a-fA-F]{64})$")
MISMATCH_FIELD = "index_digest_mismatch"


@functools.lru_cache(maxsize=64)
def _read_index(path: str, mtime_ns: int, size: int) -> Mapping[str, Any] | str:
    """Entries by name, or the reason the index cannot be used."""
    del mtime_ns, size  # part of the cache key only
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INDEX_BYTES + 1)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if len(data) > MAX_INDEX_BYTES:
        return f"larger than {MAX_INDEX_BYTES} bytes"
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})"
    skills = doc.get("skills") if isinstance(doc, Mapping) else None
    if not isinstance(skills, list):
        return "has no 'skills' list"
    by_name: dict[str, Any] = {}
    for entry in skills:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            by_name.setdefault(entry["name"], entry)
    return by_name


def _sha256_file(path: Path) -> str | None:
    try:
        opened = open_skill_file(path)
    except OSError:
        return None
    if opened is None:
        return None  # a FIFO, device or folder: nothing to hash
    fd = opened[0]
    digest = hashlib.sha256()
    total = 0
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 20):
            total += len(chunk)
            if total > MAX_ARTIFACT_BYTES:
                return None
            digest.update(chunk)
    return digest.hexdigest()


def _local_artifact(index: Path, url: str) -> Path | None:
    """The local file ``url`` names, resolved against the index's place, kept inside the
    folder that holds ``.well-known`` (or the index's folder); never a remote host."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        # An absolute URL: only its path can be mapped, and only under the same tree.
        if parts.scheme not in ("http", "https"):
            return None
    path = unquote(parts.path)
    base = index.parent  # .../.well-known/agent-skills
    site = base.parent.parent if base.parent.name == ".well-known" else base
    if path.startswith("/"):
        candidate = site / PurePosixPath(path.lstrip("/"))
    else:
        candidate = base / PurePosixPath(path)
    try:
        resolved = candidate.resolve(strict=True)
        site_real = site.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if site_real != resolved and site_real not in resolved.parents:
        return None
    return resolved


def index_digest_for(folder: Path, name: str) -> dict[str, Any] | None:
    """``index_digest`` for the skill in ``folder`` (published as ``name``), or ``None``
    when no discovery index sits beside the folder."""
    index = folder.parent / INDEX_NAME
    try:
        info = os.stat(index)
    except OSError:
        return None
    if folder.parent.name != "agent-skills":
        return None
    entries = _read_index(str(index), info.st_mtime_ns, info.st_size)
    where = str(index)
    if isinstance(entries, str):
        return {"index": where, "problem": f"discovery index {entries}"}
    entry = entries.get(name) or entries.get(folder.name)
    if entry is None:
        return {"index": where, "problem": "skill not listed in the discovery index"}
    out: dict[str, Any] = {"index": where, "type": str(entry.get("type", ""))[:40]}
    url = entry.get("url")
    if isinstance(url, str):
        out["url"] = url[:2048]
    found = _DIGEST.match(str(entry.get("digest", "")))
    if found is None:
        out["problem"] = "index entry has no sha256:HEX digest"
        return out
    out["algorithm"] = "sha256"
    out["value"] = found.group(1).lower()
    artifact = _local_artifact(index, url) if isinstance(url, str) else None
    if artifact is None and out["type"] == "skill-md":
        artifact = folder / "SKILL.md"  # the published copy is the one in this folder
    actual = _sha256_file(artifact) if artifact is not None else None
    out["matches"] = None if actual is None else actual == out["value"]
    if actual is None:
        out["problem"] = "the artifact the index names is not here to hash"
    return out
