"""Tool-set pins and lock files: what CI verifies did not drift.

A **tool-set pin** is the SHA-256 of the RFC 8785 form of a server's whole tool list, each
tool reduced to ``{name, description, inputSchema}`` and the list sorted by name. It pins
the set: renaming, adding or removing a tool changes it, as does any change of a
description or schema. Each tool also gets a name-free digest of its description and
schema, so that a diff can say "renamed" rather than "removed one, added another".

A **lock file** (``agbom lock``) records, per MCP server, its package (purl and version) and
its tool-set pin, and per skill its folder digest. :func:`drift` compares an AgBOM with a
lock; every difference is drift (``agbom check --locked`` fails on any).

Tool sets come from offline ``tools/list`` snapshots (``--tools-from FILE``: a JSON-RPC
response, its ``result``, or ``{"server": NAME, "tools": [...]}``) or from the tool
components a server lists in the AgBOM (bundles' ``tools[]``, a Guardian's snapshot).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agbom.errors import InputError

LOCK_VERSION = 1
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024
MAX_TOOLS = 10_000
TOOL_DEFINITIONS = "tool_definitions"
TOOLS_PIN = "tools_pin"
TOOLS_DRIFT = "tools_drift"


class LockError(InputError):
    """A lock file or tools snapshot cannot be used."""


def _jcs(value: Any) -> bytes:
    from agbom._canonical import jcs_bytes

    return jcs_bytes(value)


def canonical_tool(tool: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``{name, description, inputSchema}`` of one tool definition (absent parts are null)."""
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise LockError(f"{where}: a tool without a string 'name'")
    description = tool.get("description")
    schema = tool.get("inputSchema", tool.get("input_schema"))
    return {
        "name": name,
        "description": description if isinstance(description, str) else None,
        "inputSchema": schema if isinstance(schema, Mapping) else None,
    }


def tool_set_pin(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The pin of a whole tool set (tools already canonical)."""
    ordered = sorted(tools, key=lambda t: str(t["name"]))
    names = [t["name"] for t in ordered]
    if len(set(names)) != len(names):
        raise LockError("the tool set names a tool twice: " + ", ".join(_twice(names)))
    try:
        digest = hashlib.sha256(_jcs(ordered)).hexdigest()
        per_tool = {
            t["name"]: hashlib.sha256(
                _jcs({"description": t["description"], "inputSchema": t["inputSchema"]})
            ).hexdigest()
            for t in ordered
        }
    except ValueError as exc:  # NaN, huge integers: no canonical form
        raise LockError(f"a tool definition has no canonical form ({exc})") from None
    return {"algorithm": "sha256", "value": digest, "count": len(ordered), "tools": per_tool}


def _twice(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    return sorted({n for n in names if n in seen or seen.add(n)})  # type: ignore[func-returns-value]


# -- snapshots --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolsSnapshot:
    """One offline ``tools/list`` result and the server it belongs to."""

    server: str  # a component id or name (from the file, else the file name's stem)
    tools: tuple[dict[str, Any], ...]
    source: str


def read_snapshot(path: Path) -> ToolsSnapshot:
    """Read a ``tools/list`` snapshot; a bad one is a :class:`LockError` naming the file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SNAPSHOT_BYTES + 1)
    except OSError as exc:
        raise LockError(f"--tools-from {path}: {exc.strerror or 'cannot be read'}") from None
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise LockError(f"--tools-from {path}: larger than {MAX_SNAPSHOT_BYTES} bytes")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise LockError(f"--tools-from {path}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, Mapping):
        raise LockError(f"--tools-from {path}: a tools/list snapshot must be a JSON object")
    server = doc.get("server")
    body = doc.get("result", doc)
    if isinstance(body, Mapping) and "error" in doc:
        raise LockError(f"--tools-from {path}: the snapshot is an error response")
    tools = body.get("tools") if isinstance(body, Mapping) else None
    if not isinstance(tools, list):
        raise LockError(f"--tools-from {path}: no 'tools' list (a tools/list result)")
    if len(tools) > MAX_TOOLS:
        raise LockError(f"--tools-from {path}: more than {MAX_TOOLS} tools")
    canonical = tuple(
        canonical_tool(t if isinstance(t, Mapping) else {}, f"--tools-from {path}: tools[{i}]")
        for i, t in enumerate(tools)
    )
    name = server if isinstance(server, str) and server else path.name.split(".", 1)[0]
    return ToolsSnapshot(name, canonical, str(path))


def attach_snapshots(agbom: Any, snapshots: Sequence[ToolsSnapshot]) -> Any:
    """``agbom`` with each snapshot's tools on its MCP server (``tool_definitions`` and
    ``tools_pin``). A snapshot must name exactly one server (by id, else by name)."""
    from agbom.inventory import AgBOM

    if not snapshots:
        return agbom
    document = agbom.to_document()
    servers = [c for c in document["components"] if c.get("type") == "mcp_server"]
    for snapshot in snapshots:
        wanted = snapshot.server.casefold()
        matched = [c for c in servers if str(c["id"]).casefold() == wanted] or [
            c for c in servers if str(c.get("name", "")).casefold() == wanted
        ]
        if len(matched) != 1:
            what = "no MCP server" if not matched else f"{len(matched)} MCP servers"
            raise LockError(
                f"--tools-from {snapshot.source}: {what} named {snapshot.server!r} in the "
                'inventory (give {"server": ID} in the file)'
            )
        matched[0][TOOL_DEFINITIONS] = list(snapshot.tools)
        matched[0][TOOLS_PIN] = tool_set_pin(snapshot.tools)
    return AgBOM.from_document(document, source="AgBOM with tools snapshots")


def server_tools(agbom: Any, server: Any) -> list[dict[str, Any]] | None:
    """The server's tool set: its ``tool_definitions``, else the tool components it lists
    (``None`` when it has neither: nothing to pin)."""
    defined = server.data.get(TOOL_DEFINITIONS)
    if isinstance(defined, list):
        return [canonical_tool(t, server.id) for t in defined if isinstance(t, Mapping)]
    listed = server.data.get("tools")
    if not isinstance(listed, list) or not listed:
        return None
    tools = []
    for tool_id in listed:
        component = agbom.get(tool_id) if isinstance(tool_id, str) else None
        if component is not None:
            tools.append(canonical_tool(component.data, component.id))
    return tools or None


# -- lock files -------------------------------------------------------------------------------


def server_entry(agbom: Any, server: Any) -> dict[str, Any]:
    """The lock entry of one MCP server of ``agbom``: its package and its tool set's pin."""
    entry: dict[str, Any] = {
        "name": server.name,
        "purl": server.data.get("purl"),
        "version": server.version,
    }
    tools = server_tools(agbom, server)
    if tools is not None:
        # The definitions too: a diff can then show what a changed tool now says.
        entry["tools"] = tool_set_pin(tools)
        entry["tools"]["definitions"] = sorted(tools, key=lambda t: str(t["name"]))
    return entry


def build_lock(agbom: Any) -> dict[str, Any]:
    """The lock document for ``agbom``: servers' packages and tool pins, skills' digests."""
    servers: dict[str, Any] = {}
    skills: dict[str, Any] = {}
    for component in agbom:
        if component.type.value == "mcp_server":
            servers[component.id] = server_entry(agbom, component)
        elif component.type.value == "skill" and component.digest is not None:
            algorithm, value = component.digest
            skills[component.id] = {
                "name": component.name,
                "digest": {"algorithm": algorithm, "value": value.lower()},
            }
    return {"lock_version": LOCK_VERSION, "servers": servers, "skills": skills}


def read_lock(path: Path) -> dict[str, Any]:
    """A lock file, checked for shape; a bad one is a :class:`LockError`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SNAPSHOT_BYTES + 1)
    except OSError as exc:
        raise LockError(f"lock file {path}: {exc.strerror or 'cannot be read'}") from None
    try:
        doc = orjson.loads(data[:MAX_SNAPSHOT_BYTES])
    except orjson.JSONDecodeError as exc:
        raise LockError(f"lock file {path}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, Mapping) or doc.get("lock_version") != LOCK_VERSION:
        raise LockError(f"lock file {path}: not an agbom lock file (lock_version {LOCK_VERSION})")
    for part in ("servers", "skills"):
        if not isinstance(doc.get(part), Mapping) or not all(
            isinstance(v, Mapping) for v in doc[part].values()
        ):
            raise LockError(f"lock file {path}: '{part}' must map ids to objects")
    return dict(doc)


def is_lock_file(path: Path) -> bool:
    """Whether ``path`` holds an agbom lock file (cheap: the first KiB names it)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"lock_version"' in head


@dataclass(slots=True)
class Change:
    """One difference between a lock and an inventory."""

    kind: str  # server-added | server-removed | version | package | tools | skill-added | ...
    component: str
    detail: str
    # added/removed/changed/renamed/differences (lists of names or lines); for a tool set,
    # also "class" (the widest: expansion, narrowing, cosmetic) and "classified" (each change
    # with its class and reasons; agbom/scan/expansion.py).
    tools: dict[str, Any] = field(default_factory=dict)
    previous: str | None = None  # the lock's id of the entry, when the change renamed it

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "component": self.component,
                               "detail": self.detail}  # fmt: skip
        if self.tools:
            out["tools"] = self.tools
        if self.previous is not None:
            out["previous"] = self.previous
        return out


@dataclass(frozen=True, slots=True)
class LockRule:
    """What a kind of drift is as a finding of ``agbom check --locked`` (pack ``lock``)."""

    id: str
    severity: str
    title: str
    remediation: str
    action: str = "deny"


# Each kind of change, as the finding it becomes (docs/rules.md, "Lock drift"). A tool set
# that drifted is AGB-LOCK-001, the default pack's rule; the others have no rule to match
# on (a removed entry is in no inventory), so the check reports them itself.
LOCK_RULES: Mapping[str, LockRule] = {
    "tools": LockRule(
        "AGB-LOCK-001",
        "high",
        "An MCP server's tool set drifted from the one the lock file pins.",
        "Review the changed tool definitions, then update the lock (`agbom lock`) if they are "
        "expected; otherwise pin the previous version",
    ),
    # A tool set that changed without widening what the server can do (cosmetic, narrowing):
    # recorded and shown, allowed under the pin; it fails no check (docs/scan.md).
    "tools-unexpanded": LockRule(
        "AGB-LOCK-009",
        "low",
        "An MCP server's tool set changed without expanding: wording, removals, fewer values.",
        "Nothing to do before use: the change is recorded; update the lock (`agbom lock`) to "
        "stop seeing it",
        action="warn",
    ),
    "added": LockRule(
        "AGB-LOCK-002",
        "high",
        "An MCP server or skill is in the inventory but not in the lock file.",
        "Review it, then update the lock (`agbom lock`) if it belongs; otherwise remove it "
        "from the configuration",
    ),
    "removed": LockRule(
        "AGB-LOCK-003",
        "medium",
        "An MCP server or skill of the lock file is no longer in the inventory.",
        "Update the lock (`agbom lock`) if the removal is intended; otherwise restore it",
    ),
    "version": LockRule(
        "AGB-LOCK-004",
        "high",
        "An MCP server's package or version differs from the one the lock file pins.",
        "Review what the new version changes (release notes, tool definitions), then update "
        "the lock (`agbom lock`); otherwise pin the locked version again",
    ),
    # The skills installer's lock files (agbom check --locked skills-lock.json): the same
    # rules as the default pack's checks of a scanned skill against them.
    "skills-lock-mismatch": LockRule(
        "AGB-LOCK-006",
        "high",
        "An installed skill no longer matches the hash its skills lock file records.",
        "Compare the skill with its source (`npx skills update`, or reinstall it) and review "
        "the difference; if the change is wanted, reinstall so the lock records it",
    ),
    "skills-lock-unlocked": LockRule(
        "AGB-LOCK-007",
        "medium",
        "A skill is installed where a skills lock file governs, but the lock does not list it.",
        "Install the skill with the skills installer so the lock records it, or remove it",
    ),
    "skills-lock-unverifiable": LockRule(
        "AGB-LOCK-008",
        "medium",
        "A skills lock entry records no hash agbom can recompute, or its folder cannot be read.",
        "Reinstall the skill so the lock records a hash of it, or fix the lock file",
    ),
    "skill-digest": LockRule(
        "AGB-LOCK-005",
        "high",
        "A skill's folder digest differs from the one the lock file pins: its files changed.",
        "Review the changed files (`agbom skills diff`, or the review page), then update the "
        "lock (`agbom lock`); otherwise restore the locked files",
    ),
}


def unexpanded(change: Change) -> bool:
    """A tool-set drift that widens nothing (cosmetic or narrowing): it fails no check."""
    return change.kind == "tools" and change.tools.get("class") in ("cosmetic", "narrowing")


def lock_rule(change: Change) -> LockRule:
    """The rule a change is reported under."""
    kind = change.kind
    if unexpanded(change):
        kind = "tools-unexpanded"
    elif kind.endswith("-added"):
        kind = "added"
    elif kind.endswith("-removed"):
        kind = "removed"
    elif kind == "package":
        kind = "version"
    return LOCK_RULES[kind]


def lock_locations(
    data: bytes, display: str, file: str, *, skill_prefix: str = ""
) -> dict[str, tuple[Any, ...]]:
    """Where each entry of a lock file is: the key of its id under ``servers`` or
    ``skills`` (servers win when both name one id). ``skill_prefix`` turns a skill's key
    into its component id (``skill:`` for the skills installer's locks, keyed by name)."""
    from agbom.scan._parse import ParseFailure, load_json, positions_of
    from agbom.scan.interface import SourceLocation

    try:
        doc = load_json(data)
    except ParseFailure:
        return {}
    positions = positions_of(data)
    out: dict[str, tuple[Any, ...]] = {}
    for part in ("skills", "servers"):
        entries = doc.get(part) if isinstance(doc, Mapping) else None
        for cid in entries if isinstance(entries, Mapping) else ():
            span = positions.nearest((part, cid))
            if span is not None:
                key = skill_prefix + cid if part == "skills" else cid
                out[key] = (SourceLocation(display, file, span),)
    return out


def _tools_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[str]]:
    before = old.get("tools") if isinstance(old.get("tools"), Mapping) else {}
    after = new.get("tools") if isinstance(new.get("tools"), Mapping) else {}
    assert isinstance(before, Mapping) and isinstance(after, Mapping)
    removed = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    changed = sorted(n for n in set(before) & set(after) if before[n] != after[n])
    renamed = []
    for name in list(removed):
        twin = next((a for a in added if after[a] == before[name]), None)
        if twin is not None:  # same description and schema under a new name
            renamed.append(f"{name} -> {twin}")
            removed.remove(name)
            added.remove(twin)
    out = {"added": added, "removed": removed, "changed": changed, "renamed": renamed}
    return {k: v for k, v in out.items() if v}


def _definitions(pin: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    listed = pin.get("definitions")
    if not isinstance(listed, list):
        return {}
    return {str(t.get("name")): t for t in listed if isinstance(t, Mapping)}


def _cut(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def describe_changes(
    old: Mapping[str, Any], new: Mapping[str, Any], names: Sequence[str]
) -> list[str]:
    """For each changed tool, which parts changed and what they say before and after (when
    the lock kept the definitions)."""
    before, after = _definitions(old), _definitions(new)
    lines = []
    for name in names:
        was, now = before.get(name), after.get(name)
        if was is None or now is None:
            lines.append(f"{name}: changed")
            continue
        lines.extend(
            f"{name}.{part}: {_cut(was.get(part))} -> {_cut(now.get(part))}"
            for part in ("description", "inputSchema")
            if was.get(part) != now.get(part)
        )
    return lines


def _unversioned(cid: str, entry: Mapping[str, Any]) -> str:
    """A server's id without its version (``mcp:npm/pkg@1.2.0`` -> ``mcp:npm/pkg``)."""
    version = entry.get("version")
    if isinstance(version, str) and version and cid.endswith("@" + version):
        return cid[: -len(version) - 1]
    return cid


def _version_pairs(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """Servers whose id changed only by its version: new id -> the lock's id. Several
    versions of one package may run side by side, so a removed and an added id pair up by
    their server's name first, and otherwise only when each is the package's only one."""
    removed = [cid for cid in old if cid not in new]
    added = [cid for cid in new if cid not in old]
    pairs: dict[str, str] = {}
    by_key: dict[str, tuple[list[str], list[str]]] = {}
    for cid in removed:
        by_key.setdefault(_unversioned(cid, old[cid]), ([], []))[0].append(cid)
    for cid in added:
        by_key.setdefault(_unversioned(cid, new[cid]), ([], []))[1].append(cid)
    for was, now in by_key.values():
        for cid in sorted(now):
            twin = [w for w in was if old[w].get("name") == new[cid].get("name")]
            if len(twin) == 1:
                pairs[cid] = twin[0]
                was.remove(twin[0])
                now.remove(cid)
        if len(was) == 1 and len(now) == 1:
            pairs[now[0]] = was[0]
    return pairs


def drift(lock: Mapping[str, Any], agbom: Any) -> list[Change]:
    """Every difference between ``lock`` and ``agbom``, in component order. A server whose
    version changed is one change (``version``), not one server removed and another added."""
    current = build_lock(agbom)
    changes: list[Change] = []
    for part, noun in (("servers", "server"), ("skills", "skill")):
        old, new = lock[part], current[part]
        renamed = _version_pairs(old, new) if part == "servers" else {}
        was_renamed = set(renamed.values())
        for cid in sorted(set(old) | set(new)):
            if cid in renamed:
                changes.extend(server_changes(cid, old[renamed[cid]], new[cid], renamed[cid]))
                continue
            if cid in was_renamed:
                continue
            if cid not in new:
                gone = f"{noun} {cid} is not in the inventory"
                changes.append(Change(f"{noun}-removed", cid, gone))
                continue
            if cid not in old:
                changes.append(Change(f"{noun}-added", cid, f"{noun} {cid} is not in the lock"))
                continue
            before, after = old[cid], new[cid]
            if part == "skills":
                if before.get("digest") != after["digest"]:
                    was, now = _short(before.get("digest")), _short(after["digest"])
                    changes.append(Change("skill-digest", cid, f"skill digest {was} -> {now}"))
                continue
            changes.extend(server_changes(cid, before, after))
    return changes


def server_changes(
    cid: str, before: Mapping[str, Any], after: Mapping[str, Any], previous: str | None = None
) -> list[Change]:
    """How one server's entry ``after`` (from :func:`server_entry`) differs from the lock's
    ``before`` (the lock's id ``previous`` when the version in the id changed): its package
    or version, then its tool set."""
    changes: list[Change] = []
    if before.get("version") != after["version"]:
        was, now = before.get("version") or "none", after["version"] or "none"
        name = after.get("name") or cid
        changes.append(Change("version", cid, f"server {name} version {was} -> {now}",
                              previous=previous))  # fmt: skip
    elif before.get("purl") != after["purl"]:
        changes.append(Change("package", cid, f"package {before.get('purl')} -> "
                              f"{after['purl']}", previous=previous))  # fmt: skip
    old_tools, new_tools = before.get("tools"), after.get("tools")
    if old_tools is None and new_tools is None:
        return changes
    if not isinstance(old_tools, Mapping) or not isinstance(new_tools, Mapping):
        state = "no tool set now" if new_tools is None else "no tool set in the lock"
        changes.append(Change("tools", cid, f"tool set: {state}"))
        return changes
    if old_tools.get("value") != new_tools.get("value"):
        detail: dict[str, Any] = dict(_tools_change(old_tools, new_tools))
        text = "; ".join(f"{k} {', '.join(v)}" for k, v in detail.items()) or "reordered"
        classified = classify_drift(old_tools, new_tools)
        cls = overall(classified)
        change = Change("tools", cid, f"tool set changed ({cls}): {text}", detail)
        change.tools["differences"] = describe_changes(
            old_tools, new_tools, detail.get("changed", [])
        )
        if not change.tools["differences"]:
            del change.tools["differences"]
        change.tools["class"] = cls
        change.tools["classified"] = [c.to_json() for c in classified]
        changes.append(change)
    return changes


def classify_drift(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Any]:
    """Each change between two tool-set pins, classified (cosmetic, narrowing, expansion);
    a pin without its definitions cannot be compared: every tool is then an expansion."""
    from agbom.scan.expansion import classify_tools

    before, after = old.get("definitions"), new.get("definitions")
    return classify_tools(
        before if isinstance(before, list) else None,
        after if isinstance(after, list) else [{"name": n} for n in new.get("tools") or {}],
    )


def overall(classified: Sequence[Any]) -> str:
    from agbom.scan.expansion import overall as widest

    return widest(classified)


def _short(digest: Any) -> str:
    if isinstance(digest, Mapping) and isinstance(digest.get("value"), str):
        return f"{digest.get('algorithm')}:{digest['value'][:12]}"
    return "none"


def mark_drift(agbom: Any, changes: Sequence[Change]) -> Any:
    """``agbom`` with ``tools_drift`` on each server whose tool set drifted (for rules)."""
    from agbom.inventory import AgBOM

    drifted = {c.component: c for c in changes if c.kind == "tools"}
    if not drifted:
        return agbom
    document = agbom.to_document()
    for component in document["components"]:
        change = drifted.get(component["id"])
        if change is not None:
            component[TOOLS_DRIFT] = {"detail": change.detail, **change.tools}
    return AgBOM.from_document(document, source="AgBOM with tool drift")
