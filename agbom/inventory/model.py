"""The canonical AgBOM: components of eight types, referencing each other by id.

An :class:`AgBOM` that exists is valid: :meth:`AgBOM.from_document` checks every component
against its type's shipped schema, rejects duplicate ids and dangling references, and
reports every problem with its location in one :class:`InvalidAgBOM`.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import fastjsonschema
import orjson

from agbom._canonical import NotCanonicalizable, jcs_bytes, jcs_key_order
from agbom._identifiers import identifier_problem
from agbom._schema import compiled_validator, describe_failure
from agbom.errors import AgbomError
from agbom.inventory._layout import DocumentLayout


class ComponentType(StrEnum):
    """The eight ACS v0.1.0 AgBOM component types."""

    MODEL = "model"
    MCP_SERVER = "mcp_server"
    A2A_PEER = "a2a_peer"
    TOOL = "tool"
    KNOWLEDGE_SOURCE = "knowledge_source"
    MEMORY_STORE = "memory_store"
    AGENT_CAPABILITY = "agent_capability"
    SKILL = "skill"


# Which fields of which type hold references, and the type each reference must point at.
REFERENCE_FIELDS: Mapping[ComponentType, Mapping[str, ComponentType]] = {
    ComponentType.MCP_SERVER: {"tools": ComponentType.TOOL},
    ComponentType.AGENT_CAPABILITY: {
        "tools": ComponentType.TOOL,
        "mcp_servers": ComponentType.MCP_SERVER,
        "a2a_peers": ComponentType.A2A_PEER,
    },
    ComponentType.SKILL: {
        "tools": ComponentType.TOOL,
        "mcp_servers": ComponentType.MCP_SERVER,
        "a2a_peers": ComponentType.A2A_PEER,
        "models": ComponentType.MODEL,
        "composed_skills": ComponentType.SKILL,
    },
}

ROOT_ID = "@agent"
"""Graph and export id of the agent itself; no component may use it."""

MAX_COMPONENTS = 200_000
MAX_DEPTH = 64
"""Deepest nesting of objects/arrays accepted inside one component or the header: deeper values
would exhaust the recursion limit of the RFC 8785 encoder."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One located defect in an AgBOM document."""

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class InvalidAgBOM(AgbomError):
    """The document is not a valid AgBOM; ``problems`` lists every defect found."""

    def __init__(self, problems: Iterable[Problem], *, source: str = "AgBOM") -> None:
        self.problems = tuple(problems)
        self.source = source
        super().__init__(self.diagnostics())

    def diagnostics(self) -> str:
        first = self.problems[0] if self.problems else Problem("document", "invalid")
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more != 1 else ''})" if more > 0 else ""
        return f"{self.source} is not a valid AgBOM: {first}{suffix}"


@dataclass(frozen=True, slots=True)
class Component:
    """One AgBOM component. ``data`` is the full wire object, unknown fields included.

    Treat ``data`` as read-only: components are shared between AgBOM versions, and each
    caches its RFC 8785 bytes (:attr:`canonical`), from which documents, hashes and stored
    versions are assembled without copying or re-serializing the component.
    """

    id: str
    type: ComponentType
    data: Mapping[str, Any]
    _canonical: bytes | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def canonical(self) -> bytes:
        """The RFC 8785 bytes of ``data``, computed once.

        Raises :class:`agbom._canonical.NotCanonicalizable` (a ``ValueError``) when ``data``
        has no canonical form.
        """
        found = self._canonical
        if found is None:
            found = jcs_bytes(dict(self.data) if type(self.data) is not dict else self.data)
            object.__setattr__(self, "_canonical", found)
        return found

    @property
    def content_hash(self) -> str:
        """Lowercase hex SHA-256 of :attr:`canonical`: the component's content address."""
        return hashlib.sha256(self.canonical).hexdigest()

    @property
    def name(self) -> str:
        """Human name; falls back to the id for types whose name is optional."""
        value = self.data.get("name")
        return value if isinstance(value, str) and value else self.id

    @property
    def version(self) -> str | None:
        value = self.data.get("version")
        return value if isinstance(value, str) else None

    def get(self, field: str, default: Any = None) -> Any:
        return self.data.get(field, default)

    def references(self) -> Iterator[tuple[str, str, ComponentType]]:
        """Yield ``(field, target_id, expected_type)`` for every id this component references."""
        for field, target_type in REFERENCE_FIELDS.get(self.type, {}).items():
            for target in self.data.get(field) or ():
                yield field, target, target_type

    @property
    def digest(self) -> tuple[str, str] | None:
        """``(algorithm, value)`` of a skill's definition digest, normalized; else ``None``."""
        definition = self.data.get("definition")
        if not isinstance(definition, Mapping):
            return None
        digest = definition.get("digest")
        if not isinstance(digest, Mapping):
            return None
        return normalize_algorithm(str(digest.get("algorithm", ""))), str(
            digest.get("value", "")
        ).lower()


def normalize_algorithm(name: str) -> str:
    """``SHA-256``, ``sha-256`` and ``sha256`` all name the same algorithm: ``sha256``."""
    return name.strip().lower().replace("-", "").replace("_", "")


def _identifier_problems(raw: Any, location: str) -> list[Problem]:
    """An id or name holding invisible characters renders like another one, which would let
    a reviewer approve, or an operator ban, the wrong component. Checked on what agents send
    (``strict``); a scan of files on disk inventories such components, escaped on output."""
    if not isinstance(raw, Mapping):
        return []
    problems = []
    for field in ("id", "name"):
        problem = identifier_problem(raw.get(field))
        if problem is not None:
            problems.append(Problem(f"{location}.{field}", problem))
    return problems


def _validate_component(raw: Any, location: str) -> tuple[Component | None, list[Problem]]:
    if not isinstance(raw, Mapping):
        return None, [Problem(location, f"must be an object, not {type(raw).__name__}")]
    type_name = raw.get("type")
    comp_id = raw.get("id")
    if isinstance(comp_id, str) and comp_id:
        location = f"{location} (id {comp_id!r})"
    try:
        ctype = ComponentType(str(type_name))
    except ValueError:
        known = ", ".join(t.value for t in ComponentType)
        return None, [Problem(location, f"unknown component type {type_name!r} (known: {known})")]
    if _too_deep(raw):
        return None, [Problem(location, f"nested deeper than {MAX_DEPTH} levels")]
    validator = compiled_validator(f"component-{ctype.value}.json")
    try:
        validator(raw)
    except fastjsonschema.JsonSchemaValueException as exc:
        return None, [Problem(location, describe_failure(exc))]
    if comp_id == ROOT_ID:
        return None, [Problem(location, f"the id {ROOT_ID!r} is reserved for the agent itself")]
    return Component(id=str(comp_id), type=ctype, data=dict(raw)), []


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests objects/arrays deeper than MAX_DEPTH (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _split_header(document: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """The header of a document (everything but components and agbom_hash), and its defects."""
    header = {k: v for k, v in document.items() if k not in ("components", "agbom_hash")}
    problems: list[Problem] = []
    agent = header.get("agent")
    if agent is not None and not isinstance(agent, Mapping):
        problems.append(Problem("agent", "must be an object"))
    if _too_deep(header):
        problems.append(Problem("document", f"header nested deeper than {MAX_DEPTH} levels"))
    return header, problems


def _checked(agbom: AgBOM, source: str) -> AgBOM:
    """Return ``agbom`` once its hash is computable: RFC 8785 rejects NaN, ±Infinity and
    integers beyond ±2^53, which a schema check lets through in free-form fields."""
    try:
        agbom.agbom_hash  # noqa: B018 - computing it is the check
    except (NotCanonicalizable, TypeError, ValueError) as exc:
        raise InvalidAgBOM(
            [Problem("document", f"cannot be canonicalized (RFC 8785): {exc}")], source=source
        ) from exc
    return agbom


def parse_component(raw: Any, location: str = "component", *, strict: bool = False) -> Component:
    """Validate one wire component; raise :class:`InvalidAgBOM` when it is not valid.
    ``strict``: also refuse an id or name holding invisible characters (what agents send)."""
    component, problems = _validate_component(raw, location)
    if component is not None and strict:
        problems = _identifier_problems(raw, location)
        if problems:
            component = None
    if component is None:
        raise InvalidAgBOM(problems, source=location)
    return component


class AgBOM:
    """A validated AgBOM document: a header (agent, version, extra fields) and components."""

    # __weakref__: a store remembers the AgBOM it last stored for a session only while the
    # Guardian still holds it (agbom/store/sqlite/versions.py).
    __slots__ = (
        "__weakref__",
        "_components",
        "_hash",
        "_layout",
        "_origin",
        "_parent",
        "_referrers",
        "_types",
        "header",
    )

    def __init__(self, components: Mapping[str, Component], header: Mapping[str, Any]) -> None:
        # Callers outside this module go through from_document/from_components, which validate.
        self._components = dict(sorted(components.items()))
        self.header = dict(header)
        self._hash: str | None = None
        self._referrers: dict[str, frozenset[str]] | None = None
        self._types: dict[ComponentType, list[str]] | None = None  # ids by type, in id order
        # The canonical document in hashed chunks (agbom/inventory/_layout.py), and for an
        # AgBOM derived from another, that one's layout and the ids that differ.
        self._layout: DocumentLayout | None = None
        self._origin: tuple[DocumentLayout, frozenset[str]] | None = None
        self._parent: tuple[weakref.ref[AgBOM], frozenset[str]] | None = None

    @classmethod
    def _in_order(cls, components: dict[str, Component], header: Mapping[str, Any]) -> AgBOM:
        """Wrap ``components`` that are already in id order (no copy, no sort)."""
        agbom = cls.__new__(cls)
        agbom._components = components
        agbom.header = dict(header)
        agbom._hash = None
        agbom._referrers = None
        agbom._types = None
        agbom._layout = None
        agbom._origin = None
        agbom._parent = None
        return agbom

    def _derived_from(self, base: AgBOM, touched: Iterable[str]) -> None:
        """Note that this AgBOM differs from ``base`` at most in the ids ``touched`` (and the
        header), so its hash resumes from ``base``'s layout instead of the whole document."""
        ids = frozenset(touched)
        # Weakly: a chain of versions must not keep every earlier AgBOM alive.
        self._parent = (weakref.ref(base), ids)
        if self._hash is None and base._layout is not None:
            self._origin = (base._layout, ids)

    def changed_since(self, other: AgBOM) -> frozenset[str] | None:
        """The ids that can differ between ``other`` and this AgBOM (added, removed or
        changed) when this one was derived from ``other`` by a diff, else ``None``: then
        any may. Lets a store compare only these instead of every component."""
        parent = self._parent
        if parent is None or parent[0]() is not other:
            return None
        return parent[1]

    def referrers(self, component_id: str) -> frozenset[str]:
        """Ids of the components that reference ``component_id`` (index built once)."""
        if self._referrers is None:
            index: dict[str, set[str]] = {}
            for component in self._components.values():
                for _, target, _ in component.references():
                    index.setdefault(target, set()).add(component.id)
            self._referrers = {k: frozenset(v) for k, v in index.items()}
        return self._referrers.get(component_id, frozenset())

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_document(cls, document: Any, *, source: str = "AgBOM", strict: bool = False) -> AgBOM:
        """Validate a wire document ``{"components": [...], ...}`` and build the AgBOM.
        ``strict`` (what agents send): ids and names holding invisible characters are
        problems too."""
        if not isinstance(document, Mapping):
            raise InvalidAgBOM(
                [Problem("document", f"must be an object, not {type(document).__name__}")],
                source=source,
            )
        raw_components = document.get("components")
        if not isinstance(raw_components, list):
            raise InvalidAgBOM(
                [Problem("components", "required, and must be an array of components")],
                source=source,
            )
        if len(raw_components) > MAX_COMPONENTS:
            raise InvalidAgBOM(
                [Problem("components", f"more than {MAX_COMPONENTS} components")], source=source
            )
        header, problems = _split_header(document)
        if strict:
            problems.extend(_identifier_problems(header.get("agent"), "agent"))
        components: dict[str, Component] = {}
        for index, raw in enumerate(raw_components):
            component, found = _validate_component(raw, f"components[{index}]")
            if strict and component is not None:
                found = _identifier_problems(raw, f"components[{index}]")
                if found:
                    component = None
            problems.extend(found)
            if component is None:
                continue
            if component.id in components:
                problems.append(
                    Problem(f"components[{index}]", f"duplicate component id {component.id!r}")
                )
                continue
            components[component.id] = component
        problems.extend(check_references(components))
        if problems:
            raise InvalidAgBOM(problems, source=source)
        return _checked(cls(components, header), source)

    @classmethod
    def from_payload(cls, payload: Any, *, source: str = "agbom/snapshot payload") -> AgBOM:
        """Accept an ``agbom/snapshot`` payload: ``{"agbom": DOC}`` or the document itself.
        What an agent sends is checked strictly (see :meth:`from_document`)."""
        if isinstance(payload, Mapping) and "components" not in payload and "agbom" in payload:
            return cls.from_document(payload["agbom"], source=source, strict=True)
        return cls.from_document(payload, source=source, strict=True)

    @classmethod
    def from_components(
        cls, components: Iterable[Component], header: Mapping[str, Any] | None = None
    ) -> AgBOM:
        """Build from already-validated components, re-checking ids and references."""
        by_id: dict[str, Component] = {}
        problems: list[Problem] = []
        for component in components:
            if component.id in by_id:
                problems.append(Problem(component.id, "duplicate component id"))
            by_id[component.id] = component
        problems.extend(check_references(by_id))
        if problems:
            raise InvalidAgBOM(problems)
        return cls(by_id, header or {})

    # -- access --------------------------------------------------------------------------------

    @property
    def components(self) -> Mapping[str, Component]:
        """Components by id, in id order."""
        return self._components

    def __len__(self) -> int:
        return len(self._components)

    def __iter__(self) -> Iterator[Component]:
        return iter(self._components.values())

    def __contains__(self, component_id: object) -> bool:
        return component_id in self._components

    def get(self, component_id: str) -> Component | None:
        return self._components.get(component_id)

    def of_type(self, ctype: ComponentType) -> list[Component]:
        """The components of ``ctype``, in id order. The index by type is built once and
        carried across diffs (``apply_diff``), so asking for an AgBOM's few servers does not
        walk its many tools on every change."""
        index = self._types
        if index is None:
            index = {}
            for cid, component in self._components.items():
                index.setdefault(component.type, []).append(cid)
            self._types = index
        components = self._components
        return [components[cid] for cid in index.get(ctype, ())]

    @property
    def agent(self) -> Mapping[str, Any]:
        agent = self.header.get("agent")
        return agent if isinstance(agent, Mapping) else {}

    @property
    def agent_id(self) -> str:
        value = self.agent.get("id") or self.agent.get("name")
        return value if isinstance(value, str) and value else "agent"

    # -- canonical form ------------------------------------------------------------------------

    def to_document(self, *, with_hash: bool = False) -> dict[str, Any]:
        """The canonical wire document: header fields, then components sorted by id.

        A fresh structure the caller may change without touching the shared components,
        with every value as given (``1.0`` stays a float); built by one orjson round trip,
        not ``copy.deepcopy``. Stored versions are built from :meth:`canonical_document`."""
        document = dict(self.header)
        document["components"] = [c.data for c in self._components.values()]
        try:
            document = orjson.loads(orjson.dumps(document))
        except orjson.JSONEncodeError:  # pragma: no cover - a valid AgBOM is always JSON
            document = copy.deepcopy(document)
        if with_hash:
            document["agbom_hash"] = self.agbom_hash
        return document

    def canonical_document(self) -> bytes:
        """The RFC 8785 bytes of the canonical document, assembled from each component's
        cached bytes: header members and ``components`` in JCS key order (UTF-16 code units),
        the components in id order as in :meth:`to_document`."""
        return document_bytes(self.header, [c.canonical for c in self._components.values()])

    @property
    def agbom_hash(self) -> str:
        """``sha256:HEX`` over the RFC 8785 form of the canonical document (order-independent).

        Kept as a layout of hashed chunks, so an AgBOM derived from another by a small diff
        hashes from the first changed chunk on, not the whole document again."""
        if self._hash is None:
            prefix, suffix = document_frame(self.header)
            origin = self._origin
            if origin is not None:
                layout = origin[0].derive(prefix, suffix, self._components, origin[1])
            else:
                layout = DocumentLayout.build(prefix, suffix, self._components)
            self._origin = None
            self._layout = layout
            self._hash = layout.digest
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgBOM):
            return NotImplemented
        return self.agbom_hash == other.agbom_hash

    def __hash__(self) -> int:
        return hash(self.agbom_hash)

    def __repr__(self) -> str:
        return f"AgBOM(agent={self.agent_id!r}, components={len(self)}, {self.agbom_hash[:19]}…)"


def document_pieces(header: Mapping[str, Any], components: list[bytes]) -> list[bytes]:
    """The RFC 8785 bytes of ``{**header, "components": [...]}`` as pieces to concatenate.

    ``components`` are the canonical bytes of each component, in document order (JCS keeps
    array order). Members are sorted by their names' UTF-16 code units, as JCS requires.
    """
    names = sorted({*header, "components"}, key=jcs_key_order)
    pieces: list[bytes] = []
    for index, name in enumerate(names):
        pieces.append(b"{" if index == 0 else b",")
        pieces.append(jcs_bytes(name))
        if name == "components":
            pieces.append(b":[")
            pieces.append(b",".join(components))
            pieces.append(b"]")
        else:
            pieces.append(b":")
            pieces.append(jcs_bytes(header[name]))
    pieces.append(b"}")
    return pieces


def document_frame(header: Mapping[str, Any]) -> tuple[bytes, bytes]:
    """The RFC 8785 bytes of ``{**header, "components": [...]}`` before the first component
    and after the last (see :func:`document_pieces`)."""
    pieces = document_pieces(header, [])
    # A member name is a JSON string and a member value a JSON value: neither is b":[".
    at = pieces.index(b":[") + 1  # the (empty) joined components
    return b"".join(pieces[:at]), b"".join(pieces[at + 1 :])


def document_bytes(header: Mapping[str, Any], components: list[bytes]) -> bytes:
    """The RFC 8785 bytes of ``{**header, "components": [...]}`` (see :func:`document_pieces`)."""
    return b"".join(document_pieces(header, components))


def check_references(components: Mapping[str, Component]) -> list[Problem]:
    """Every reference must name an existing component of the expected type."""
    problems: list[Problem] = []
    for component in components.values():
        for field, target, expected in component.references():
            found = components.get(target)
            where = f"component {component.id!r} field {field!r}"
            if found is None:
                problems.append(Problem(where, f"dangling reference to unknown id {target!r}"))
            elif found.type is not expected:
                problems.append(
                    Problem(
                        where,
                        f"reference {target!r} is a {found.type.value}, expected {expected.value}",
                    )
                )
    return problems
