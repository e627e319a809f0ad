"""What the review pages show, read from any :class:`~agbom.store.interface.Store`.

Only the store protocol's public methods are used, so the pages work on every backend.
Lists are bounded (a page shows at most :data:`MAX_ROWS` rows and says when it cut).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agbom.review.definition import Definition, DefinitionFile, Verification, parse_body, verify
from agbom.review.evidence import (
    FileView,
    FindingView,
    Unshown,
    bounded_diff,
    file_views,
    ranked,
    removed_files,
    rule_findings,
    unshown,
    unshown_findings,
)
from agbom.review.svg import Node, render
from agbom.store.interface import Digest, SkillRecord, SkillStatus, Store, format_timestamp

MAX_ROWS = 500
MAX_SESSIONS_SCANNED = 200
MAX_ENTRIES_SCANNED = 50_000  # chain entries read for one decision log page, at most
COMPOSITION_KINDS = ("tools", "mcp_servers", "a2a_peers", "models", "composed_skills")
QUEUE_SORTS = ("first_seen", "last_seen", "skill_id", "agent")
QUEUE_STATUSES = ("pending", "approved", "denied", "revoked", "all")
# What the page offers from each status (the server refuses any other): a pending pair is
# approved or denied, an approved one revoked, a denied or revoked one approved after all.
TRANSITIONS: dict[SkillStatus, tuple[str, ...]] = {
    SkillStatus.PENDING: ("approve", "deny"),
    SkillStatus.APPROVED: ("revoke",),
    SkillStatus.DENIED: ("approve",),
    SkillStatus.REVOKED: ("approve",),
}


def _stamp(value: datetime | None) -> str:
    return format_timestamp(value) or ""


def _composed(record: SkillRecord) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for kind in COMPOSITION_KINDS:
        items = record.composition.get(kind)
        if isinstance(items, list):
            out[kind] = [str(i) for i in items][:MAX_ROWS]
    return out


# -- the queue -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueRow:
    record: SkillRecord
    composed: dict[str, list[str]]
    replaces_approved: bool

    @property
    def digest(self) -> str:
        return str(self.record.digest)


@dataclass(frozen=True, slots=True)
class Queue:
    rows: list[QueueRow]
    total: int  # matching rows before the cut


def queue(store: Store, *, status: str, text: str, sort: str, descending: bool) -> Queue:
    records = store.list_skills(None if status == "all" else SkillStatus(status))
    needle = text.casefold()
    if needle:
        records = [
            r
            for r in records
            if needle in r.skill_id.casefold()
            or needle in (r.registered_by_agent or "").casefold()
            or any(needle in c.casefold() for c in r.declared_capabilities)
        ]
    keys = {
        "first_seen": lambda r: (r.first_seen is None, _stamp(r.first_seen), r.skill_id),
        "last_seen": lambda r: (r.last_seen is None, _stamp(r.last_seen), r.skill_id),
        "skill_id": lambda r: (r.skill_id, str(r.digest)),
        "agent": lambda r: (r.registered_by_agent or "", r.skill_id),
    }
    records.sort(key=keys[sort], reverse=descending)
    approved: dict[str, set[Digest]] = {}
    rows = []
    for r in records[:MAX_ROWS]:
        if r.skill_id not in approved:
            approved[r.skill_id] = set(store.approved_digests(r.skill_id))
        others = approved[r.skill_id] - {r.digest}
        rows.append(QueueRow(r, _composed(r), bool(others)))
    return Queue(rows, len(records))


# -- one skill -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    change: str  # added, removed, changed
    detail: str


@dataclass(frozen=True, slots=True)
class Changes:
    baseline: SkillRecord
    files: list[FileChange] | None  # None: a side carried no file list its digest covers
    skill_md_diff: list[str] | None  # None: a side's digest covers no SKILL.md text
    diff_cut: bool
    capabilities_added: list[str]
    capabilities_removed: list[str]
    composition_added: list[str]
    composition_removed: list[str]


@dataclass(frozen=True, slots=True)
class CapabilityRow:
    capability: str
    declared: bool
    exposed_by: list[str]


@dataclass
class SkillPage:
    record: SkillRecord
    others: list[SkillRecord]
    definition: Definition | None
    verification: Verification | None
    composed: dict[str, list[str]]
    capabilities: list[CapabilityRow]
    unknown_tools: list[str]
    graph: Any
    history: list[dict[str, Any]]
    changes: Changes | None
    baseline_missing_definition: bool = False
    description: str | None = None  # the skill's description in the registering agent's AgBOM
    files: list[FileView] | None = None  # each file of this digest, with content and diff
    removed: list[DefinitionFile] = field(default_factory=list)
    findings: list[FindingView] = field(default_factory=list)
    rules_loaded: bool = False
    # What of this digest the page cannot show; SKILL.md or a script among them means
    # Approve needs the approver's word that it was reviewed elsewhere.
    unshown: list[Unshown] = field(default_factory=list)
    # The registration sent a SKILL.md text its digest does not cover (not shown or checked).
    skill_md_uncovered: bool = False

    @property
    def must_confirm(self) -> list[str]:
        """The files an approval must confirm were reviewed elsewhere."""
        return [u.path for u in self.unshown if u.blocking]

    @property
    def actions(self) -> tuple[str, ...]:
        return TRANSITIONS.get(self.record.status, ())

    @property
    def form(self) -> DecisionForm:
        return DecisionForm.of(self.record.skill_id, self.record.digest)


@dataclass(frozen=True, slots=True)
class DecisionForm:
    """How the decision form names its pair: the id as hex of its UTF-8 bytes (ASCII, which
    no form encoding rewrites) and a key over the exact pair, which the server recomputes."""

    skill_id_hex: str
    pair_key: str

    @classmethod
    def of(cls, skill_id: str, digest: Digest) -> DecisionForm:
        return cls(skill_id.encode("utf-8", "surrogatepass").hex(), pair_key(skill_id, digest))


def pair_key(skill_id: str, digest: Digest) -> str:
    """SHA-256 over the pair's exact bytes: the id, a NUL (ids hold none), the digest."""
    material = skill_id.encode("utf-8", "surrogatepass") + b"\0" + str(digest).encode()
    return hashlib.sha256(material).hexdigest()


def skill_id_from_hex(text: str) -> str | None:
    """The id a form's ``skill_id_hex`` names, or ``None`` when it is not hex of UTF-8."""
    if not text or len(text) > 4 * 2 * 512:
        return None
    try:
        return bytes.fromhex(text).decode("utf-8")
    except ValueError:
        return None


def definition_of(store: Store, record: SkillRecord) -> Definition | None:
    stored = store.skill_definition(record.skill_id, record.digest)
    return None if stored is None else parse_body(stored)


def covered_of(store: Store, record: SkillRecord) -> Definition:
    """What the page may show, compare and check of a registration: the part of its body its
    digest covers (:meth:`Definition.covered`); empty when it sent none."""
    definition = definition_of(store, record)
    if definition is None:
        return Definition(None, None)
    return definition.covered(record.digest.algorithm, record.digest.value)


def cannot_show(store: Store, record: SkillRecord) -> list[Unshown]:
    """What of ``record``'s digest the page cannot show (the decision form checks it too)."""
    return unshown(covered_of(store, record))


def _components_of_agent(store: Store, agent_id: str | None) -> dict[str, Mapping[str, Any]]:
    if not agent_id:
        return {}
    latest = store.latest_agbom_for_agent(agent_id)
    if latest is None:
        return {}
    components = latest["document"].get("components") or []
    return {str(c.get("id")): c for c in components if isinstance(c, Mapping)}


def _capabilities(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(c) for c in value]
    return []


def _covers(declared: str, exposed: str) -> bool:
    stem = declared.rstrip("*").rstrip(".")
    return exposed == declared or exposed.startswith(stem + ".")


def _baseline(store: Store, record: SkillRecord, others: list[SkillRecord]) -> SkillRecord | None:
    """The approved digest a reviewer compares against: the most recently approved other
    digest still approved, else the one approved last in the history."""
    approved = [o for o in others if o.status is SkillStatus.APPROVED]
    if approved:
        return max(approved, key=lambda o: _stamp(o.decided_at))
    by_digest = {str(o.digest): o for o in others}
    for entry in reversed(store.history(record.skill_id)):
        if entry["to_status"] == "approved" and entry["digest"] in by_digest:
            return by_digest[entry["digest"]]
    return None


def _file_changes(old: Definition, new: Definition) -> list[FileChange] | None:
    if old.files is None or new.files is None:
        return None
    before = {f.path: f for f in old.files}
    after = {f.path: f for f in new.files}
    out = []
    for path in sorted(before.keys() | after.keys(), key=str.encode):
        a, b = before.get(path), after.get(path)
        if a is None and b is not None:
            out.append(FileChange(path, "added", f"{b.size} bytes"))
        elif b is None and a is not None:
            out.append(FileChange(path, "removed", f"{a.size} bytes"))
        elif (
            a is not None
            and b is not None
            and (a.sha256, a.executable, a.target)
            != (
                b.sha256,
                b.executable,
                b.target,
            )
        ):
            what = []
            if a.sha256 != b.sha256:
                what.append(f"content {a.size} -> {b.size} bytes")
            if a.executable != b.executable:
                what.append("now executable" if b.executable else "no longer executable")
            if a.target != b.target:
                what.append(f"link target {a.target or '-'} -> {b.target or '-'}")
            out.append(FileChange(path, "changed", "; ".join(what)))
    return out


def _composition_items(record: SkillRecord) -> set[str]:
    return {f"{kind}: {item}" for kind, items in _composed(record).items() for item in items}


def changes(store: Store, record: SkillRecord, baseline: SkillRecord) -> tuple[Changes, bool]:
    # Only what each digest covers: a SKILL.md text sent beside the files, or a file's text
    # that is not the listed file's, is the agent's word and is never diffed.
    old = covered_of(store, baseline)
    new = covered_of(store, record)
    diff: list[str] | None = None
    cut = False
    if old.skill_md is not None and new.skill_md is not None:
        diff, cut = bounded_diff(
            old.skill_md,
            new.skill_md,
            f"SKILL.md ({baseline.digest})",
            f"SKILL.md ({record.digest})",
        )
    old_caps, new_caps = set(baseline.declared_capabilities), set(record.declared_capabilities)
    old_comp, new_comp = _composition_items(baseline), _composition_items(record)
    result = Changes(
        baseline=baseline,
        files=_file_changes(old, new),
        skill_md_diff=diff,
        diff_cut=cut,
        capabilities_added=sorted(new_caps - old_caps),
        capabilities_removed=sorted(old_caps - new_caps),
        composition_added=sorted(new_comp - old_comp),
        composition_removed=sorted(old_comp - new_comp),
    )
    return result, old.empty


def skill_page(
    store: Store, skill_id: str, digest: Digest | None, rules: Any = None, advisories: Any = None
) -> SkillPage | None:
    records = store.skill_records(skill_id)
    if not records:
        return None
    if digest is None:
        record = max(records, key=lambda r: (_stamp(r.last_seen), _stamp(r.decided_at)))
    else:
        found = [r for r in records if r.digest == digest]
        if not found:
            return None
        record = found[0]
    others = [r for r in records if r.digest != record.digest]
    definition = definition_of(store, record)
    verification = (
        None
        if definition is None
        else verify(definition, record.digest.algorithm, record.digest.value)
    )
    composed = _composed(record)
    components = _components_of_agent(store, record.registered_by_agent)
    exposed: dict[str, list[str]] = {}
    unknown: list[str] = []
    for tool in composed.get("tools", []):
        component = components.get(tool)
        if component is None:
            unknown.append(tool)
            continue
        for capability in _capabilities(component.get("capability")):
            exposed.setdefault(capability, []).append(tool)
    rows = []
    for capability in record.declared_capabilities:
        tools = sorted({t for e, ts in exposed.items() if _covers(capability, e) for t in ts})
        rows.append(CapabilityRow(capability, True, tools))
    for capability, tools in sorted(exposed.items()):
        if not any(_covers(d, capability) for d in record.declared_capabilities):
            rows.append(CapabilityRow(capability, False, sorted(tools)))
    nodes = [Node(record.skill_id, record.skill_id, "skill")]
    edges: list[tuple[str, str]] = []
    for kind, items in composed.items():
        for item in items:
            component = components.get(item)
            label = str(component.get("name") or item) if component else item
            node_kind = str(component.get("type")) if component else kind.rstrip("s")
            nodes.append(Node(item, label, node_kind))
            edges.append((record.skill_id, item))
            for tool in (component or {}).get("tools") or []:
                tool_component = components.get(str(tool))
                name = str(tool_component.get("name") or tool) if tool_component else str(tool)
                nodes.append(Node(str(tool), name, "tool"))
                edges.append((item, str(tool)))
    graph = render(nodes, edges, title=f"what skill {record.skill_id} composes")
    page = SkillPage(
        record=record,
        others=others,
        definition=definition,
        verification=verification,
        composed=composed,
        capabilities=rows,
        unknown_tools=unknown,
        graph=graph,
        history=store.history(skill_id)[-MAX_ROWS:],
        changes=None,
    )
    description = (components.get(record.skill_id) or {}).get("description")
    page.description = description if isinstance(description, str) else None
    covered = (
        Definition(None, None)
        if definition is None
        else definition.covered(record.digest.algorithm, record.digest.value)
    )
    page.skill_md_uncovered = definition is not None and (
        definition.skill_md is not None and definition.skill_md != covered.skill_md
    )
    baseline = _baseline(store, record, others)
    old: Definition | None = None
    if baseline is not None:
        page.changes, page.baseline_missing_definition = changes(store, record, baseline)
        old = covered_of(store, baseline)
    latest = (
        store.latest_agbom_for_agent(record.registered_by_agent)
        if record.registered_by_agent
        else None
    )
    page.rules_loaded = rules is not None
    page.unshown = unshown(covered)
    page.findings = ranked(
        rule_findings(record, covered, latest["document"] if latest else None, rules, advisories)
        + unshown_findings(page.unshown)
    )
    page.files = file_views(covered, old, page.findings)
    page.removed = removed_files(covered, old)
    return page


def next_pending(store: Store, after: tuple[str, Digest] | None = None) -> SkillRecord | None:
    """The oldest pending registration other than ``after`` (the pair just decided)."""
    waiting = [
        r
        for r in store.list_skills(SkillStatus.PENDING)
        if after is None or (r.skill_id, r.digest) != after
    ]
    if not waiting:
        return None
    return min(waiting, key=lambda r: (r.first_seen is None, _stamp(r.first_seen), r.skill_id))


# -- the fleet -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgentPage:
    agent_id: str
    sessions: list[dict[str, Any]]
    components: list[Mapping[str, Any]]
    version: dict[str, Any] | None
    graph: Any


def agent_page(store: Store, agent_id: str) -> AgentPage | None:
    sessions = store.list_sessions(agent_id)
    # the latest received: a refused one is shown as refused, with its findings (agent.html)
    latest = store.latest_agbom_for_agent(agent_id, include_refused=True)
    if not sessions and latest is None:
        return None
    components: list[Mapping[str, Any]] = []
    graph = None
    if latest is not None:
        raw = latest["document"].get("components") or []
        components = [c for c in raw if isinstance(c, Mapping)][:MAX_ROWS]
        graph = agbom_graph(latest["document"], agent_id)
    version = None if latest is None else {k: v for k, v in latest.items() if k != "document"}
    return AgentPage(agent_id, sessions[-MAX_ROWS:][::-1], components, version, graph)


def agbom_graph(document: Mapping[str, Any], agent_id: str) -> Any:
    from agbom.inventory import AgBOM, ComponentGraph

    try:
        graph = ComponentGraph(AgBOM.from_document(dict(document), source="stored AgBOM"))
    except Exception:  # noqa: BLE001 - a stored document that no longer loads: no picture
        return None
    nodes = [Node(f"agent:{agent_id}", agent_id, "agent")]
    edges: list[tuple[str, str]] = []
    nodes.extend(Node(c.id, str(c.get("name") or c.id), c.type) for c in graph.components())
    root = nodes[0].id
    known = {n.id for n in nodes}
    # The graph's own root (the agent) is no component: its edges start at the agent's box.
    edges.extend((s if s in known else root, d) for s, d, _ in graph.edges())
    pointed = {d for _, d in edges}
    edges.extend((root, n.id) for n in nodes[1:] if n.id not in pointed)
    return render(nodes, edges, title=f"the AgBOM of agent {agent_id}")


@dataclass(frozen=True, slots=True)
class DecisionRow:
    session_id: str
    agent_id: str
    entry: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DecisionLog:
    rows: list[DecisionRow]
    reason_codes: list[str]
    sessions_scanned: int
    cut: bool


def decision_log(store: Store, *, decision: str, reason: str, agent: str) -> DecisionLog:
    """Chain entries of the most recent sessions, newest first, filtered."""
    sessions = store.list_sessions(agent or None)[-MAX_SESSIONS_SCANNED:][::-1]
    rows: list[DecisionRow] = []
    codes: set[str] = set()
    cut = False
    scanned = 0
    for session in sessions:
        if scanned >= MAX_ENTRIES_SCANNED:
            cut = True
            break
        entries = store.chain_entries(session["session_id"])
        scanned += len(entries)
        for entry in reversed(entries):
            entry_codes = [str(c) for c in entry.get("reason_codes") or []]
            codes.update(entry_codes)
            if decision and entry.get("decision") != decision:
                continue
            if reason and reason not in entry_codes:
                continue
            if len(rows) >= MAX_ROWS:
                cut = True
                continue
            rows.append(DecisionRow(session["session_id"], session["agent_id"], entry))
    return DecisionLog(rows, sorted(codes), len(sessions), cut)


@dataclass(frozen=True, slots=True)
class Explained:
    session: dict[str, Any] | None
    entry: dict[str, Any]
    explanations: list[Any]
    agbom_stored: bool


def explain(store: Store, session_id: str, entry_id: str, rules: Any) -> Explained | None:
    """A recorded decision and the rules it names, as ``agbom explain --session`` shows it."""
    from agbom.inventory import AgBOM, ComponentGraph

    entries = store.chain_entries(session_id)
    found = [i for i, e in enumerate(entries) if str(e.get("entry_id")) == entry_id]
    if not found:
        return None
    index = found[0]
    entry = entries[index]
    hashes = [e["agbom_hash"] for e in entries[: index + 1] if e.get("agbom_hash")]
    document = None
    if hashes:
        version = 1
        while version <= 10_000 and (record := store.agbom_version(session_id, version)):
            if record.get("agbom_hash") == hashes[-1]:
                document = record["document"]
            version += 1
    if document is None:
        latest = store.agbom_version(session_id)
        document = latest["document"] if latest else None
    explanations: list[Any] = []
    if document is not None and rules is not None:
        codes = {str(c).removeprefix("warn:") for c in entry.get("reason_codes") or []}
        named = codes & set(rules.rule_ids)
        try:
            graph = ComponentGraph(AgBOM.from_document(document, source="stored AgBOM"))
        except Exception:  # noqa: BLE001 - a stored document that no longer loads
            graph = None
        if graph is not None and named:
            explanations = [e for e in rules.explain(graph) if e.rule_id in named]
    return Explained(store.get_session(session_id), entry, explanations, document is not None)


def distinct(values: Iterable[str]) -> list[str]:
    return sorted(set(values))
