"""AgBOM diffs in the ``agbom/changed`` shape: ``added[]``, ``removed[]``, ``changed[]``.

``changed[]`` entries are whole replacement components (what :func:`compute_diff` emits), so
applying a diff gives exactly the document a fresh snapshot would. ``removed[]`` accepts ids or
objects carrying an ``id``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agbom._canonical import NotCanonicalizable
from agbom.inventory.model import (
    AgBOM,
    Component,
    ComponentType,
    InvalidAgBOM,
    Problem,
    _split_header,
    check_references,
    document_frame,
    parse_component,
)

# Types whose version or digest changing under the same id is a supply-chain signal.
_WATCHED = (ComponentType.SKILL, ComponentType.TOOL, ComponentType.MCP_SERVER)


@dataclass(frozen=True, slots=True)
class ArtifactChange:
    """A version or digest that changed under an unchanged component id (rug-pull signal)."""

    component_id: str
    component_type: ComponentType
    field: str
    old: str | None
    new: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "component_id": self.component_id,
            "type": self.component_type.value,
            "field": self.field,
            "old": self.old,
            "new": self.new,
        }


@dataclass(frozen=True, slots=True)
class AgBOMDiff:
    """The difference between two AgBOMs."""

    added: tuple[Component, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[Component, ...] = ()
    header: Mapping[str, Any] | None = None  # new header when it changed
    artifact_changes: tuple[ArtifactChange, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.header is not None)

    def to_payload(self) -> dict[str, Any]:
        """The ``agbom/changed`` payload for this diff."""
        payload: dict[str, Any] = {
            "added": [dict(c.data) for c in self.added],
            "removed": list(self.removed),
            "changed": [dict(c.data) for c in self.changed],
        }
        if self.header is not None:
            payload["header"] = dict(self.header)
        return payload

    def to_json(self) -> dict[str, Any]:
        """The payload plus the artifact-change flags (for ``agbom diff --format json``)."""
        document = self.to_payload()
        document["artifact_changes"] = [c.to_json() for c in self.artifact_changes]
        return document


def _artifact_changes(old: Component, new: Component) -> list[ArtifactChange]:
    if new.type not in _WATCHED:
        return []
    found = []
    if old.version != new.version:
        found.append(ArtifactChange(new.id, new.type, "version", old.version, new.version))
    old_digest, new_digest = old.digest, new.digest
    if old_digest != new_digest:
        as_text = [f"{d[0]}:{d[1]}" if d else None for d in (old_digest, new_digest)]
        found.append(ArtifactChange(new.id, new.type, "digest", as_text[0], as_text[1]))
    return found


def compute_diff(old: AgBOM, new: AgBOM) -> AgBOMDiff:
    """The diff that turns ``old`` into ``new``."""
    old_c, new_c = old.components, new.components
    added = tuple(c for cid, c in new_c.items() if cid not in old_c)
    removed = tuple(cid for cid in old_c if cid not in new_c)
    changed: list[Component] = []
    flags: list[ArtifactChange] = []
    for cid, component in new_c.items():
        before = old_c.get(cid)
        if before is not None and before.data != component.data:
            changed.append(component)
            flags.extend(_artifact_changes(before, component))
    header = dict(new.header) if dict(old.header) != dict(new.header) else None
    return AgBOMDiff(added, removed, tuple(changed), header, tuple(flags))


def parse_diff(payload: Mapping[str, Any], *, source: str = "agbom/changed payload") -> AgBOMDiff:
    """Validate the diff form of an ``agbom/changed`` payload."""
    problems: list[Problem] = []
    lists: dict[str, list[Component]] = {"added": [], "changed": []}
    for name in ("added", "changed"):
        raw_items = payload.get(name) or []
        if not isinstance(raw_items, list):
            problems.append(Problem(name, "must be an array of components"))
            continue
        for index, raw in enumerate(raw_items):
            try:
                lists[name].append(parse_component(raw, f"{name}[{index}]", strict=True))
            except InvalidAgBOM as exc:
                problems.extend(exc.problems)
    removed: list[str] = []
    raw_removed = payload.get("removed") or []
    if not isinstance(raw_removed, list):
        problems.append(Problem("removed", "must be an array of ids"))
        raw_removed = []
    for index, item in enumerate(raw_removed):
        item_id = item.get("id") if isinstance(item, Mapping) else item
        if isinstance(item_id, str) and item_id:
            removed.append(item_id)
        else:
            problems.append(Problem(f"removed[{index}]", "must be an id or an object with an id"))
    header = payload.get("header")
    if header is not None and not isinstance(header, Mapping):
        problems.append(Problem("header", "must be an object"))
    if problems:
        raise InvalidAgBOM(problems, source=source)
    return AgBOMDiff(tuple(lists["added"]), tuple(removed), tuple(lists["changed"]), header)


def apply_diff(base: AgBOM, diff: AgBOMDiff, *, source: str = "agbom/changed payload") -> AgBOM:
    """Apply ``diff`` to ``base``; the result is validated like a fresh snapshot.

    The cost follows the diff, not the AgBOM: only the references of the components the diff
    brings, and of the components that reference what it removes or retypes, are checked
    (the rest were checked when ``base`` was built and cannot have changed).
    """
    components = dict(base.components)
    problems: list[Problem] = []
    for cid in diff.removed:
        if components.pop(cid, None) is None:
            problems.append(Problem(f"removed {cid!r}", "no such component"))  # noqa: PERF401
    added = False
    for component in diff.added:
        if component.id in components:
            problems.append(Problem(f"added {component.id!r}", "a component with this id exists"))
        else:
            added = True
        components[component.id] = component
    for component in diff.changed:
        if component.id not in components:
            problems.append(Problem(f"changed {component.id!r}", "no such component"))
            added = True
        components[component.id] = component
    header: Mapping[str, Any] = base.header
    if diff.header is not None:
        # Same header rules as a fresh snapshot, so the result hashes identically.
        header, found = _split_header(diff.header)
        problems.extend(found)
    problems.extend(_changed_references(base, components, diff))
    if problems:
        raise InvalidAgBOM(problems, source=source)
    if added:
        components = {cid: components[cid] for cid in sorted(components)}
    result = AgBOM._in_order(components, header)
    result._derived_from(
        base, (*diff.removed, *(c.id for c in diff.added), *(c.id for c in diff.changed))
    )
    _carry_referrers(base, result, diff)
    _carry_types(base, result, diff)
    return _checked_change(result, diff, source)


def _checked_change(result: AgBOM, diff: AgBOMDiff, source: str) -> AgBOM:
    """``result`` once what ``diff`` brought has an RFC 8785 form (as ``_checked`` asks of a
    whole AgBOM). The other components were checked in ``base``; the hash itself is left to
    be computed when it is first read, from ``base``'s layout."""
    try:
        for component in (*diff.added, *diff.changed):
            component.canonical  # noqa: B018 - computing it is the check
        document_frame(result.header)
    except (NotCanonicalizable, TypeError, ValueError) as exc:
        raise InvalidAgBOM(
            [Problem("document", f"cannot be canonicalized (RFC 8785): {exc}")], source=source
        ) from exc
    return result


def with_replaced(agbom: AgBOM, replacements: Mapping[str, Component], *, base: AgBOM) -> AgBOM:
    """``agbom`` with the data of some of its components replaced, keeping their ids, types
    and references (annotations such as advisories), and still known to differ from ``base``
    only in the ids it did plus these: its hash then resumes from ``base``'s layout, and a
    store compares only those ids.

    ``agbom`` must have been derived from ``base`` (:func:`apply_diff`); raises
    ``ValueError`` otherwise, or when a replacement is not such a like-for-like one."""
    named = agbom.changed_since(base)
    if named is None:
        raise ValueError("the AgBOM was not derived from the given base")
    components = dict(agbom.components)
    for cid, component in replacements.items():
        current = components.get(cid)
        if (
            current is None
            or component.id != cid
            or component.type is not current.type
            or list(component.references()) != list(current.references())
        ):
            raise ValueError(f"{cid!r}: a replacement keeps the component's id, type and links")
        try:
            component.canonical  # noqa: B018 - computing it is the check
        except (NotCanonicalizable, TypeError) as exc:
            raise ValueError(f"{cid!r}: no RFC 8785 form ({exc})") from exc
        components[cid] = component
    result = AgBOM._in_order(components, agbom.header)
    result._derived_from(base, (*named, *replacements))
    result._referrers = agbom._referrers
    result._types = agbom._types
    return result


def _changed_references(
    base: AgBOM, components: Mapping[str, Component], diff: AgBOMDiff
) -> list[Problem]:
    """``check_references`` over what ``diff`` can have broken, in the same words.

    When any reference is broken the whole AgBOM is checked again, so the problems come in
    the same order as a fresh snapshot's."""
    suspects: set[str] = {c.id for c in diff.added} | {c.id for c in diff.changed}
    gone = set(diff.removed)
    for component in diff.changed:
        before = base.get(component.id)
        if before is not None and before.type is not component.type:
            gone.add(component.id)
    for cid in gone:
        suspects.update(base.referrers(cid))
    subset = {cid: components[cid] for cid in suspects if cid in components}
    for component in subset.values():
        for _, target, expected in component.references():
            found = components.get(target)
            if found is None or found.type is not expected:
                return check_references(components)
    return []


def _carry_referrers(base: AgBOM, result: AgBOM, diff: AgBOMDiff) -> None:
    """Give ``result`` the referrer index of ``base`` patched by ``diff`` (when ``base`` had
    one), so a chain of diffs never rebuilds it."""
    index = base._referrers
    if index is None:
        return
    patched = dict(index)
    delta: dict[str, set[str]] = {}
    for cid in (*diff.removed, *(c.id for c in diff.changed)):
        before = base.get(cid)
        if before is None:
            continue
        for _, target, _ in before.references():
            delta.setdefault(target, set(patched.get(target, ()))).discard(cid)
    for component in (*diff.added, *diff.changed):
        for _, target, _ in component.references():
            delta.setdefault(target, set(patched.get(target, ()))).add(component.id)
    for target, referrers in delta.items():
        if referrers:
            patched[target] = frozenset(referrers)
        else:
            patched.pop(target, None)
    result._referrers = patched


def _carry_types(base: AgBOM, result: AgBOM, diff: AgBOMDiff) -> None:
    """Give ``result`` the index by type of ``base`` patched by ``diff`` (when ``base`` had
    one): only the lists of the types the diff adds to or takes from are copied."""
    index = base._types
    if index is None:
        return
    patched = dict(index)
    copied: set[ComponentType] = set()

    def ids_of(ctype: ComponentType) -> list[str]:
        if ctype not in copied:
            copied.add(ctype)
            patched[ctype] = list(patched.get(ctype, ()))
        return patched[ctype]

    leaving = [(cid, base.get(cid)) for cid in diff.removed]
    arriving = list(diff.added)
    for component in diff.changed:
        before = base.get(component.id)
        if before is not None and before.type is not component.type:
            leaving.append((component.id, before))
            arriving.append(component)
    for cid, before in leaving:
        if before is not None:
            ids = ids_of(before.type)
            at = bisect.bisect_left(ids, cid)
            if at < len(ids) and ids[at] == cid:
                del ids[at]
    for component in arriving:
        bisect.insort(ids_of(component.type), component.id)
    result._types = {ctype: ids for ctype, ids in patched.items() if ids}


def apply_changed_payload(
    base: AgBOM | None, payload: Mapping[str, Any]
) -> tuple[AgBOM, AgBOMDiff]:
    """Apply an ``agbom/changed`` payload in either form; return the new AgBOM and the diff."""
    if not isinstance(payload, Mapping):
        raise InvalidAgBOM(
            [Problem("payload", f"must be an object, not {type(payload).__name__}")],
            source="agbom/changed payload",
        )
    if "agbom" in payload:
        new = AgBOM.from_document(payload["agbom"], source="agbom/changed payload")
        old = base if base is not None else AgBOM({}, {})
        return new, compute_diff(old, new)
    if base is None:
        raise InvalidAgBOM(
            [Problem("payload", "a diff needs a prior agbom/snapshot in this session")],
            source="agbom/changed payload",
        )
    diff = parse_diff(payload)
    new = apply_diff(base, diff)
    # Recompute so the flags compare against what this session actually had; only the ids
    # the diff names can differ, so only they are compared.
    named = {*(c.id for c in diff.added), *diff.removed, *(c.id for c in diff.changed)}
    return new, _diff_over(base, new, named)


def _diff_over(old: AgBOM, new: AgBOM, ids: set[str]) -> AgBOMDiff:
    """:func:`compute_diff` of two AgBOMs that differ at most in ``ids`` and the header."""
    added: list[Component] = []
    removed: list[str] = []
    changed: list[Component] = []
    flags: list[ArtifactChange] = []
    for cid in sorted(ids):
        before, after = old.get(cid), new.get(cid)
        if before is None and after is not None:
            added.append(after)
        elif before is not None and after is None:
            removed.append(cid)
        elif before is not None and after is not None and before.data != after.data:
            changed.append(after)
            flags.extend(_artifact_changes(before, after))
    header = dict(new.header) if dict(old.header) != dict(new.header) else None
    return AgBOMDiff(tuple(added), tuple(removed), tuple(changed), header, tuple(flags))
