"""Agent Skills reader: ``SKILL.md`` frontmatter, validated per the Agent Skills rules.

Only the first :data:`FRONTMATTER_MAX_BYTES` of ``SKILL.md`` are read for the frontmatter; the
folder digest (:mod:`agbom.inventory.skill_digest`) covers the whole folder. A skill whose
frontmatter breaks a rule is still inventoried (it is on disk and an agent may load it), with
each broken rule reported as an error of the file.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from agbom.inventory.skill_digest import SkillDigestError, digest_skill_folder
from agbom.scan._parse import BOM, ParseFailure, load_yaml, load_yaml_located
from agbom.scan._positions import EMPTY, Positions
from agbom.scan.allowed_tools import AllowedToolsError, capabilities_of, parse_allowed_tools
from agbom.scan.content import check_skill
from agbom.scan.interface import FileError, Finding, ReadContext, ReadResult
from agbom.scan.skill_index import MISMATCH_FIELD, index_digest_for
from agbom.scan.skill_packages import declared_packages
from agbom.scan.skills_lock import RECORD_FIELD, STATUS_FIELD, status_for_folder

FRONTMATTER_MAX_BYTES = 256 * 1024
SPEC_RULE = "scan.skill-spec"
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl",
                    ".ps1", ".bat", ".cmd", ".php", ".lua")  # fmt: skip


class _Deviation(ParseFailure):
    """The SKILL.md has no frontmatter where the specification puts it: the file was read
    (and the skill is inventoried by its folder), so this is a finding, not an error."""


def _frontmatter(data: bytes, truncated: bool) -> tuple[str, int]:
    """Return the frontmatter text and the file line its first line is on."""
    if data.startswith(BOM):
        data = data[3:]
    if truncated:
        # Never decode half a character at the cut.
        cut = data.rfind(b"\n")
        data = data[: cut + 1] if cut >= 0 else b""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseFailure(FileError("not valid UTF-8", line, None)) from None
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.rstrip("\r \t") != "---":
        stripped = text.lstrip()
        if stripped.startswith("---"):
            line = text.count("\n", 0, len(text) - len(stripped)) + 1
            raise _Deviation(
                FileError("frontmatter must start on the first line of SKILL.md", line, 1)
            )
        if not text.strip():
            raise _Deviation(FileError("empty SKILL.md (no frontmatter)"))
        raise _Deviation(FileError("no YAML frontmatter: SKILL.md must begin with '---'", 1, 1))
    body_start = first_end + 1
    closing = _FENCE.search(text, body_start)
    if closing is None:
        where = f" within the first {FRONTMATTER_MAX_BYTES} bytes" if truncated else ""
        raise ParseFailure(FileError(f"frontmatter is not closed by a '---' line{where}", 1, 1))
    return text[body_start : closing.start()], 2


def skill_md_fields(data: bytes) -> dict[str, Any]:
    """What a ``SKILL.md``'s frontmatter says of the skill, as a scan reads it: ``name``,
    ``description``, ``allowed_tools`` (each entry as written) and the
    ``declared_capabilities`` they grant (:func:`agbom.scan.allowed_tools.capabilities_of`:
    ``Bash`` is ``process.execute``). Empty for a file whose frontmatter cannot be read;
    an ``allowed-tools`` that breaks the grammar grants nothing. Used by the hooks, so
    that a registration carries what a scan of the same folder reports."""
    truncated = len(data) > FRONTMATTER_MAX_BYTES
    try:
        text, line = _frontmatter(data[:FRONTMATTER_MAX_BYTES], truncated)
        meta = load_yaml(text, line_offset=line - 1)
    except ParseFailure:
        return {}
    if not isinstance(meta, Mapping):
        return {}
    out: dict[str, Any] = {}
    for field in ("name", "description"):
        if isinstance(meta.get(field), str):
            out[field] = meta[field]
    if "allowed-tools" in meta:
        try:
            tools = parse_allowed_tools(meta["allowed-tools"])
        except AllowedToolsError:
            tools = []
        out["allowed_tools"] = [tool.to_json() for tool in tools]
        out["declared_capabilities"] = capabilities_of(tools)
    return out


def _scripts(files: list[tuple[str, bool]]) -> list[str]:
    return sorted(
        path
        for path, executable in files
        if path.startswith("scripts/") or executable or path.endswith(_SCRIPT_SUFFIXES)
    )


def validate_frontmatter(meta: Mapping[str, Any], folder_name: str) -> list[str]:
    """The Agent Skills rules this frontmatter breaks (empty when it is valid)."""
    problems: list[str] = []
    name = meta.get("name")
    if name is None:
        problems.append("missing required field 'name'")
    elif not isinstance(name, str):
        problems.append(f"'name' must be a string, not {type(name).__name__}")
    else:
        if len(name) > NAME_MAX:
            problems.append(f"'name' is {len(name)} characters (at most {NAME_MAX})")
        if not _NAME.match(name):
            problems.append(
                "'name' may only hold lowercase letters, digits and single hyphens, "
                "and may not start or end with a hyphen"
            )
        if name != folder_name:
            problems.append(f"'name' {name!r} does not match the folder name {folder_name!r}")
    description = meta.get("description")
    if description is None:
        problems.append("missing required field 'description'")
    elif not isinstance(description, str):
        problems.append(f"'description' must be a string, not {type(description).__name__}")
    elif not description.strip():
        problems.append("'description' is empty")
    elif len(description) > DESCRIPTION_MAX:
        problems.append(
            f"'description' is {len(description)} characters (at most {DESCRIPTION_MAX})"
        )
    compatibility = meta.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > COMPATIBILITY_MAX
    ):
        problems.append(
            f"'compatibility' must be a string of at most {COMPATIBILITY_MAX} characters"
        )
    metadata = meta.get("metadata")
    # The Agent Skills specification maps strings to strings; OpenClaw (and others) keep
    # objects under their own key ("metadata": {"openclaw": {...}}), which is valid there.
    if metadata is not None and (
        not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata)
    ):
        problems.append("'metadata' must be a mapping with string keys")
    return problems


def _metadata_value(value: Any) -> str:
    """A metadata value as the inventory keeps it: a string as written, anything else (an
    OpenClaw object, a number) as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # a YAML date or another value JSON cannot hold
        return str(value)


def _deviations(result: ReadResult, problems: list[FileError], skill_id: str, path: str) -> None:
    """What breaks the Agent Skills specification in a SKILL.md that was still read and
    inventoried: findings of the scanner's own rule ``scan.skill-spec`` (low), never errors
    of the file (issue 41 item 5)."""
    for problem in problems:
        where = f" (line {problem.line})" if problem.line else ""
        result.findings.append(
            Finding(
                rule_id=SPEC_RULE,
                severity="low",
                component_id=skill_id,
                message=f"skill {skill_id.split(':', 1)[-1]!r}: {problem.reason}{where}",
                path=path,
            )
        )


def _parent_skill(folder: Path, display: str, roots: tuple[Path, ...]) -> str | None:
    """The folder (as shown) of the nearest skill holding ``folder``, inside the scanned tree.

    Only real files count: a ``SKILL.md`` link above the folder is never followed. Paths are
    compared as strings (both sides absolute and normalised): ``Path.parents`` costs a
    path object per level and per root, once for each of thousands of skills."""
    inside = tuple(str(root) for root in roots)
    prefixes = tuple(root.rstrip(os.sep) + os.sep for root in inside)
    levels = 0
    candidate = str(folder)
    while levels < 64:
        parent = os.path.dirname(candidate)
        if parent == candidate:
            break
        candidate, levels = parent, levels + 1
        if candidate not in inside and not candidate.startswith(prefixes):
            return None
        try:
            if stat.S_ISREG(os.lstat(os.path.join(candidate, "SKILL.md")).st_mode):
                parts = display.split("/")
                return "/".join(parts[:-levels]) if len(parts) > levels else "."
        except OSError:
            continue
    return None


class SkillReader:
    """``SKILL.md`` -> one ``skill`` component with its folder digest."""

    name = "agent-skill"
    globs = ("SKILL.md",)
    max_bytes = FRONTMATTER_MAX_BYTES
    truncate = True  # read only the frontmatter region of a larger file

    def read(self, data: bytes, ctx: ReadContext, *, truncated: bool = False) -> ReadResult:
        """Parse the frontmatter, validate it, digest the folder."""
        result = ReadResult()
        deviations: list[FileError] = []  # spec deviations: findings once inventoried
        folder: Path = ctx.path.parent
        folder_name = folder.name
        meta: Mapping[str, Any] = {}
        positions: Positions = EMPTY
        try:
            text, line = _frontmatter(data, truncated)
            loaded, positions = load_yaml_located(text, line_offset=line - 1)
            if loaded is None:
                raise _Deviation(FileError("frontmatter is empty", line, 1))
            if not isinstance(loaded, Mapping):
                raise _Deviation(
                    FileError(
                        f"frontmatter must be a mapping, not {type(loaded).__name__}", line, 1
                    )
                )
            meta = loaded
            deviations.extend(FileError(p) for p in validate_frontmatter(meta, folder_name))
        except _Deviation as exc:
            deviations.append(exc.error)
        except ParseFailure as exc:  # not readable as YAML (or UTF-8): an error of the file
            result.errors.append(exc.error)

        try:
            digest = digest_skill_folder(folder)
        except SkillDigestError as exc:
            result.errors.extend(deviations)  # nothing was inventoried: errors after all
            result.errors.append(FileError(f"skill folder refused: {exc}"))
            return result

        name = meta.get("name")
        if not isinstance(name, str) or not name.strip():
            name = folder_name
        description = meta.get("description")
        folder_display = ctx.display.rsplit("/", 1)[0] if "/" in ctx.display else "."
        component: dict[str, Any] = {
            "id": f"skill:{name}",
            "type": "skill",
            "name": name,
            "description": description if isinstance(description, str) else "",
            "definition": {
                "ref": folder_display,
                "digest": {"algorithm": digest.algorithm, "value": digest.value},
            },
            "scripts": _scripts([(f.path, f.executable) for f in digest.files]),
            "files": len(digest.files),
            "size": sum(f.size for f in digest.files),
        }
        if "allowed-tools" in meta:
            try:
                tools = parse_allowed_tools(meta["allowed-tools"])
            except AllowedToolsError as exc:
                deviations.append(FileError(f"'allowed-tools': {exc}"))
                tools = []
            # The tools as written, and the capabilities they grant (Bash -> process.execute).
            component["allowed_tools"] = [tool.to_json() for tool in tools]
            component["declared_capabilities"] = capabilities_of(tools)
            declared_at = positions.get(("allowed-tools",))
            if declared_at is not None:  # where a least-privilege finding points
                component["_fields"] = {"declared_capabilities": declared_at}
        for field in ("license", "compatibility", "model"):
            if isinstance(meta.get(field), str):
                component[field] = meta[field]
        parent = _parent_skill(folder, folder_display, ctx.roots)
        if parent is not None:
            component["parent_skill_ref"] = parent  # a skill folder inside another one
        metadata = meta.get("metadata")
        if isinstance(metadata, Mapping):
            component["metadata"] = {str(k): _metadata_value(v) for k, v in metadata.items()}
        packages = declared_packages(folder, (f.path for f in digest.files if not f.symlink))
        if packages:  # exact pins the skill's scripts install (matched by --osv)
            component["packages"] = packages
        published = index_digest_for(folder, name)
        if published is not None:
            # The index's digest (of SKILL.md or an archive) beside the folder digest.
            component["index_digest"] = published
            if published.get("matches") is False:
                component[MISMATCH_FIELD] = True
        locked = status_for_folder(folder, name, ctx.roots)
        if locked is not None:  # a skills-lock.json or ~/.agents/.skill-lock.json covers it
            component[RECORD_FIELD] = locked
            component[STATUS_FIELD] = locked["status"]
        content = check_skill(folder, digest.files)
        if content.findings:
            component["content_findings"] = [f.to_json() for f in content.findings]
        if content.omitted:
            component["content_findings_omitted"] = content.omitted
        if content.unchecked:  # what the content checks did not read (binary, too large)
            component["content_unchecked"] = content.unchecked[:100]
        if digest.skipped:
            component["digest_skipped"] = list(digest.skipped)
        if digest.hardlinked:
            component["digest_hardlinked"] = list(digest.hardlinked)
        if digest.v1_value is not None:
            # The folder holds links: approvals of this older value pinned link text only.
            component["digest_v1"] = {"algorithm": digest.algorithm, "value": digest.v1_value}
        if deviations or result.errors:
            component["valid"] = False
        _deviations(result, deviations, component["id"], ctx.display)
        result.components.append(component)
        return result
