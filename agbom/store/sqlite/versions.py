"""Content-addressed AgBOM versions (store schema 8): what a version stores, and how it is read.

A version is its document's members other than ``components`` (``header``), plus which
components it holds. Each distinct component is stored once, in ``agbom_components``, keyed
by the SHA-256 of its stored bytes: the component as JSON with sorted keys, which are its
RFC 8785 bytes whenever its JSON has no float and no non-ASCII member name, and otherwise the
bytes the store has always kept for it (``1.0`` stays ``1.0``). Which components a session's
accepted versions hold is kept as intervals in ``agbom_members``: one row per (component,
content) from the version that brought it (``since_version``) to the first accepted version
without it (``until_version``; NULL while the current version still holds it). A change of
one component therefore closes one row and adds one, whatever the size of the AgBOM; the same
rows are the fleet index (``list_components``). A refused version is its differences from
the accepted version it was refused against (``base_version``), in ``agbom_refused_members``.

A document the Guardian never sends (components out of id order, repeated ids, malformed
entries, no components list) is kept whole in ``document``, as before; its well-formed
components still index the fleet.

Reading a version assembles the same document the store kept before schema 8, member for
member and byte for byte: ``orjson.dumps(document, option=OPT_SORT_KEYS)`` is the text the
old store held. The migration (schema 8) checks exactly that for every version, and keeps
whole any document it could not take apart and put back identically.

Finding what changed needs no pass over the document: a store handle remembers the
components of the last accepted version it stored per session (:class:`Manifest`), together
with the component objects they came from. A component of the next version that *is* the
same object (an :class:`~agbom.inventory.Component` is immutable and shared between AgBOM
versions) is unchanged without being serialized or hashed. The memory is checked against the
database (the session's latest accepted version and its AgBOM hash) inside the write
transaction, and read back from ``agbom_members`` when another handle or process wrote since.
"""

from __future__ import annotations

import hashlib
import sqlite3
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import eq, is_not
from typing import Any

import orjson

from agbom.inventory.model import AgBOM, Component
from agbom.store._shared import MAX_ENTRY_BYTES, _dumps
from agbom.store.documents import AgbomDocument
from agbom.store.interface import StoreError, StoreValueError

__all__ = [
    "Manifest",
    "Member",
    "load_manifest",
    "migrate_v6_versions",
    "read_document",
    "fresh_rows",
    "chunk_rows",
    "prestore_chunk",
    "save_version",
    "stored_forms",
]

_SORTED = orjson.OPT_SORT_KEYS

_HEAD_SQL = (
    "SELECT version, agbom_hash, agent_id, created_at FROM agbom_versions "
    "WHERE session_id = ? AND accepted = 1 ORDER BY version DESC LIMIT 1"
)
_OPEN_MEMBERS_SQL = (
    "SELECT component_id, key, type, name, version_str, first_seen FROM agbom_members "
    "WHERE session_id = ? AND until_version IS NULL"
)
_MEMBERS_AT_SQL = (
    "SELECT m.component_id, c.body FROM agbom_members m "
    "JOIN agbom_components c ON c.key = m.key "
    "WHERE m.session_id = ?1 AND m.since_version <= ?2 "
    "AND (m.until_version IS NULL OR m.until_version > ?2) ORDER BY m.component_id"
)
_DELTA_SQL = (
    "SELECT d.component_id, c.body FROM agbom_refused_members d "
    "LEFT JOIN agbom_components c ON c.key = d.key "
    "WHERE d.session_id = ? AND d.version = ?"
)
# The statements that touch one row per changed component take the rows as one JSON array
# parameter (json_each): one statement, one sqlite3_step, instead of one per row. Each step
# releases and takes back the GIL, and while the bulk thread prepares a big snapshot, taking
# it back waits for the switch interval: thousands of steps per version made small requests
# of other sessions wait seconds (docs/performance.md, "Big snapshots and memory").
_FIRST_SEEN_SQL = (
    "SELECT json_group_array((SELECT MIN(m.first_seen) FROM agbom_members m "
    "WHERE m.session_id = ?1 AND m.component_id = json_extract(j.value, '$[0]') "
    "AND m.type = json_extract(j.value, '$[1]') AND m.name = json_extract(j.value, '$[2]') "
    "AND m.version_str IS json_extract(j.value, '$[3]'))) FROM json_each(?2) j"
)
_ANY_MEMBER_SQL = "SELECT 1 FROM agbom_members WHERE session_id = ? LIMIT 1"
_CLOSE_SQL = (
    "UPDATE agbom_members SET until_version = ?1, last_seen = ?2 "
    "WHERE session_id = ?3 AND until_version IS NULL "
    "AND component_id IN (SELECT value FROM json_each(?4))"
)
_CLOSE_ALL_SQL = (
    "UPDATE agbom_members SET until_version = ?, last_seen = ? "
    "WHERE session_id = ? AND until_version IS NULL"
)
# rowid: NULL picks the next one; the migration keeps each version's old rowid, the
# tie-breaker of latest_agbom_for_agent.
_INSERT_VERSION_SQL = (
    "INSERT INTO agbom_versions (rowid, session_id, version, agent_id, header, document, "
    "base_version, agbom_hash, change, created_at, accepted) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_COMPONENT_SQL = (
    "INSERT OR IGNORE INTO agbom_components (key, body) "
    "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)"
)
_INSERT_MEMBER_SQL = (
    "INSERT INTO agbom_members (session_id, component_id, since_version, until_version, key, "
    "agent_id, type, name, version_str, first_seen, last_seen) "
    "SELECT ?1, json_extract(value, '$[0]'), ?2, NULL, json_extract(value, '$[1]'), ?3, "
    "json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), "
    "json_extract(value, '$[5]'), NULL FROM json_each(?4)"
)
_INSERT_FRESH_SQL = (
    "INSERT INTO agbom_members (session_id, component_id, since_version, until_version, key, "
    "agent_id, type, name, version_str, first_seen, last_seen) "
    "SELECT ?1, json_extract(value, '$[0]'), ?2, NULL, json_extract(value, '$[1]'), ?3, "
    "json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), "
    "?4, NULL FROM json_each(?5)"
)
_INSERT_DELTA_SQL = (
    "INSERT INTO agbom_refused_members (session_id, version, component_id, key) "
    "SELECT ?1, ?2, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?3)"
)


@dataclass(slots=True)
class Member:
    """One component of a session's latest accepted version, as ``agbom_members`` holds it."""

    key: str
    type: str
    name: str
    version_str: str | None
    first_seen: str


@dataclass(slots=True)
class Manifest:
    """The components of a session's latest accepted version (see the module docstring)."""

    version: int
    agbom_hash: str
    agent_id: str
    created_at: str
    members: dict[str, Member]
    # The AgBOM of the AgbomDocument stored as that version, held weakly: its components
    # are the objects the next version's are compared with (by identity), for as long as
    # the Guardian holds it. None for another document, or once it is gone.
    agbom: weakref.ref[AgBOM] | None = field(default=None)

    def components(self) -> Mapping[str, Component] | None:
        held = None if self.agbom is None else self.agbom()
        return None if held is None else held.components


@dataclass(slots=True)
class _Change:
    """A component a new version holds that its base does not (or holds differently)."""

    component_id: str
    source: object
    key: str
    body: str
    type: str
    name: str
    version_str: str | None
    old: Member | None


# -- taking a document apart ------------------------------------------------------------------


def _split(document: Mapping[str, Any]) -> tuple[dict[str, Any], Mapping[str, Any], bool]:
    """``(header, components by id, whole)``: ``whole`` when the document is exactly its
    header plus these components in id order, so it can be stored as pieces.

    Components by id map to an :class:`~agbom.inventory.Component` (an :class:`AgbomDocument`)
    or to the raw component object; only well-formed ones (a string ``id`` and ``type``) are
    listed, the first of each id.
    """
    if isinstance(document, AgbomDocument):
        agbom = document.agbom
        header = {k: v for k, v in agbom.header.items() if k != "components"}
        return header, agbom.components, True
    header = {k: v for k, v in document.items() if k != "components"}
    raw = document.get("components")
    if not isinstance(raw, list):
        return header, {}, False
    by_id: dict[str, Any] = {}
    whole = True
    last: str | None = None
    for component in raw:
        if not isinstance(component, Mapping):
            whole = False
            continue
        cid, ctype = component.get("id"), component.get("type")
        if not isinstance(cid, str) or not isinstance(ctype, str) or cid in by_id:
            whole = False
            continue
        if last is not None and cid <= last:
            whole = False
        last = cid
        by_id[cid] = component
    return header, by_id, whole


def _facts(component_id: str, source: object) -> tuple[Mapping[str, Any], str, str, str | None]:
    """``(data, type, name, version)`` of a component, as the fleet index lists it."""
    if isinstance(source, Component):
        data = source.data
    elif isinstance(source, Mapping):
        data = source
    else:  # pragma: no cover - _split lists only these two
        raise StoreValueError(f"AgBOM component {component_id!r} is not an object")
    ctype = data.get("type")
    if not isinstance(ctype, str):
        ctype = str(source.type) if isinstance(source, Component) else ""
    name = data.get("name")
    version = data.get("version")
    return (
        data,
        ctype,
        name if isinstance(name, str) and name else component_id,
        None if version is None else str(version),
    )


def _body(data: Mapping[str, Any]) -> bytes:
    try:
        body = orjson.dumps(data if type(data) is dict else dict(data), option=_SORTED)
    except TypeError as exc:
        raise StoreValueError(f"AgBOM component is not JSON-serializable: {exc}") from None
    if len(body) > MAX_ENTRY_BYTES:
        raise StoreValueError(f"an AgBOM component is larger than {MAX_ENTRY_BYTES} bytes")
    return body


_Form = tuple[str, str, str, str, str | None]
"""A component as stored: ``(key, body, type, name, version)``."""


def _form(component_id: str, source: object) -> _Form:
    data, ctype, name, version_str = _facts(component_id, source)
    body = _body(data)
    return hashlib.sha256(body).hexdigest(), body.decode(), ctype, name, version_str


PRESTORE_CHUNK = 64
"""Component bodies written per transaction ahead of a version: a short hold of the write
lock each, so that the decisions committed meanwhile wait for one chunk, not the lot."""


def stored_forms(document: AgbomDocument) -> dict[str, _Form]:
    """The stored form of each of ``document``'s components, by id (what
    :func:`save_version` would compute; kept on the document as ``forms``)."""
    return {cid: _form(cid, component) for cid, component in document.agbom.components.items()}


def chunk_rows(forms: list[_Form]) -> str:
    """The parameter of :func:`prestore_chunk` for ``forms``, built ahead of the write lock."""
    return _rows([[form[0], form[1]] for form in forms])


def prestore_chunk(conn: sqlite3.Connection, rows: str) -> None:
    """Write the content-addressed bodies of a :func:`chunk_rows` parameter (inside the
    caller's transaction).

    Bodies are keyed by their hash and never deleted, so writing them ahead of a version
    changes nothing a reader can see, whether or not the version is ever stored."""
    conn.execute(_INSERT_COMPONENT_SQL, (rows,))


def _write_bodies(conn: sqlite3.Connection, bodies: list[list[str]]) -> None:
    """Write ``[key, body]`` pairs into the content-addressed table, in one statement."""
    if bodies:
        conn.execute(_INSERT_COMPONENT_SQL, (_rows(bodies),))


def _diff(
    by_id: Mapping[str, Any],
    previous: Mapping[str, Member],
    objects: Mapping[str, object] | None,
    touched: frozenset[str] | None = None,
    forms: Mapping[str, _Form] | None = None,
) -> tuple[list[_Change], list[str]]:
    """``(changes, ids no longer there)`` against ``previous``.

    The hot path of an ``agbom/changed``: ``objects`` are the components the previous version
    was stored from; one that is the very object of the new version is unchanged, and is not
    serialized, nor hashed, nor even looked up when the ids are the previous version's: the
    objects are compared in one pass at C speed.
    """
    if objects is not None and touched is not None:
        # The new AgBOM was derived from the one ``objects`` came from by a diff naming
        # ``touched``: nothing else can differ, so nothing else is looked at.
        candidates = [cid for cid in sorted(touched) if cid in by_id]
    elif objects is not None and len(objects) == len(by_id) and all(map(eq, objects, by_id)):
        candidates = list(compress(by_id, map(is_not, objects.values(), by_id.values())))
    else:
        candidates = list(by_id)
    same_object = objects.get if objects is not None else None
    changes: list[_Change] = []
    get = previous.get
    form_of = forms.get if forms is not None else None
    for cid in candidates:
        source = by_id[cid]
        old = get(cid)
        if old is not None and same_object is not None and same_object(cid) is source:
            continue
        form = form_of(cid) if form_of is not None else None
        if form is None:
            form = _form(cid, source)
        key, body, ctype, name, version_str = form
        if old is not None and old.key == key:
            continue
        changes.append(_Change(cid, source, key, body, ctype, name, version_str, old))
    added = sum(1 for change in changes if change.old is None)
    removed: list[str] = []
    if len(by_id) - added != len(previous) and objects is not None and touched is not None:
        removed = [cid for cid in sorted(touched) if cid in previous and cid not in by_id]
    if len(by_id) - added + len(removed) != len(previous):
        removed = [cid for cid in previous if cid not in by_id]
    return changes, removed


def _touched(document: Mapping[str, Any], base: Manifest | None) -> frozenset[str] | None:
    """The ids that can differ from the base version's AgBOM, when the document's AgBOM was
    derived from that very AgBOM (still held) by a diff; else ``None``."""
    if not isinstance(document, AgbomDocument) or base is None or base.agbom is None:
        return None
    held = base.agbom()
    return None if held is None else document.agbom.changed_since(held)


def _rows(rows: list[Any]) -> str:
    """Rows as the one JSON array parameter of a json_each statement."""
    return orjson.dumps(rows).decode()


def fresh_rows(forms: Mapping[str, _Form]) -> tuple[str, dict[str, Member]]:
    """What a session's first version adds to the fleet index, computed ahead: the rows as
    the JSON parameter of :data:`_INSERT_FRESH_SQL`, and the members its manifest holds
    (their ``first_seen`` set when stored)."""
    rows = [[cid, form[0], form[2], form[3], form[4]] for cid, form in forms.items()]
    members = {cid: Member(form[0], form[2], form[3], form[4], "") for cid, form in forms.items()}
    return _rows(rows), members


def _fresh(
    conn: sqlite3.Connection, document: Mapping[str, Any], where: str, session_id: str
) -> tuple[str, dict[str, Member]] | None:
    """The first-version rows prepared for ``document`` in this database, if the session
    has never had an index row (else the general path looks for earlier first-seen dates)."""
    if not isinstance(document, AgbomDocument) or document.prestored_in != where:
        return None
    fresh = document.fresh
    if fresh is None or conn.execute(_ANY_MEMBER_SQL, (session_id,)).fetchone() is not None:
        return None
    document.fresh = None  # the members now belong to the manifest returned
    return fresh


def _forms(document: Mapping[str, Any]) -> Mapping[str, _Form] | None:
    return document.forms if isinstance(document, AgbomDocument) else None


def _insert_components(
    conn: sqlite3.Connection, changes: list[_Change], document: Mapping[str, Any], where: str
) -> None:
    if isinstance(document, AgbomDocument) and document.prestored_in == where:
        return  # every body is there already (prestore_chunk)
    _write_bodies(conn, [[c.key, c.body] for c in changes])


# -- storing a version ------------------------------------------------------------------------


def load_manifest(conn: sqlite3.Connection, session_id: str) -> Manifest | None:
    """The session's latest accepted version as the database has it (``None``: none yet)."""
    head = conn.execute(_HEAD_SQL, (session_id,)).fetchone()
    if head is None:
        return None
    members = {
        row[0]: Member(row[1], row[2], row[3], row[4], row[5])
        for row in conn.execute(_OPEN_MEMBERS_SQL, (session_id,))
    }
    return Manifest(int(head[0]), head[1], head[2], head[3], members)


def _current(
    conn: sqlite3.Connection, session_id: str, remembered: Manifest | None
) -> Manifest | None:
    """``remembered`` if it still describes the session's latest accepted version, else that
    version read from the database."""
    head = conn.execute(_HEAD_SQL, (session_id,)).fetchone()
    if head is None:
        return None
    if (
        remembered is not None
        and remembered.version == head[0]
        and remembered.agbom_hash == head[1]
        and remembered.agent_id == head[2]
    ):
        return remembered
    return load_manifest(conn, session_id)


def save_version(
    conn: sqlite3.Connection,
    *,
    session_id: str,
    version: int,
    agent_id: str,
    document: Mapping[str, Any],
    agbom_hash: str,
    change_text: str | None,
    created_at: str,
    accepted: bool,
    remembered: Manifest | None,
    keep_whole: bool = False,
    rowid: int | None = None,
    where: str = "",
) -> Manifest | None:
    """Store version ``version`` of the session inside the caller's write transaction;
    return the session's latest accepted version afterwards (for the handle to remember).

    ``remembered`` is what the handle remembers of the session (checked here); it may be
    updated in place, so the caller must forget it if the transaction does not commit.
    ``keep_whole`` stores the document whole (the migration, for a document it could not
    take apart and put back identically). ``where`` names the database, as the document's
    ``prestored_in`` would (see :func:`prestore_chunk`).
    """
    base = _current(conn, session_id, remembered)
    header, by_id, whole = _split(document)
    whole = whole and not keep_whole
    if whole:
        header_text: str | None = _dumps(header, "AgBOM document", MAX_ENTRY_BYTES)
        document_text = None
    else:
        header_text = None
        document_text = _dumps(dict(document), "AgBOM document", MAX_ENTRY_BYTES)
    previous: Mapping[str, Member] = base.members if base is not None else {}
    same_agent = base is None or base.agent_id == agent_id
    if not accepted:
        conn.execute(
            _INSERT_VERSION_SQL,
            (
                rowid,
                session_id,
                version,
                agent_id,
                header_text,
                document_text,
                None if base is None else base.version,
                agbom_hash,
                change_text,
                created_at,
                0,
            ),
        )
        if whole:
            changes, removed = _diff(
                by_id,
                previous,
                base.components() if base else None,
                _touched(document, base),
                _forms(document),
            )
            _insert_components(conn, changes, document, where)
            deltas = [[c.component_id, c.key] for c in changes] + [[cid, None] for cid in removed]
            if deltas:
                conn.execute(_INSERT_DELTA_SQL, (session_id, version, _rows(deltas)))
        return base
    conn.execute(
        _INSERT_VERSION_SQL,
        (
            rowid,
            session_id,
            version,
            agent_id,
            header_text,
            document_text,
            None,
            agbom_hash,
            change_text,
            created_at,
            1,
        ),
    )
    if not same_agent:
        # Index rows carry the agent: a session that changes agent starts every row again.
        assert base is not None
        conn.execute(_CLOSE_ALL_SQL, (version, base.created_at, session_id))
        previous = {}
    fresh = _fresh(conn, document, where, session_id) if base is None else None
    if fresh is not None:
        # The session's first version, prepared ahead: every component is new to it.
        rows_text, members = fresh
        conn.execute(_INSERT_FRESH_SQL, (session_id, version, agent_id, created_at, rows_text))
        for member in members.values():
            member.first_seen = created_at
        held = weakref.ref(document.agbom) if isinstance(document, AgbomDocument) else None
        return Manifest(version, agbom_hash, agent_id, created_at, members, held)
    objects = base.components() if base is not None and same_agent else None
    changes, removed = _diff(by_id, previous, objects, _touched(document, base), _forms(document))
    closed = [c.component_id for c in changes if c.old is not None] + removed
    if base is not None and closed:
        conn.execute(_CLOSE_SQL, (version, base.created_at, session_id, _rows(closed)))
    _insert_components(conn, changes, document, where)
    # A component whose identity changed (or a new one) may have been shown by the session
    # before (same id, type, name and version): the fleet index dates it from then, as it
    # always has.
    renamed = [
        c
        for c in changes
        if c.old is None
        or (c.old.type, c.old.name, c.old.version_str) != (c.type, c.name, c.version_str)
    ]
    earlier: list[str | None] = [None] * len(renamed)
    if renamed and conn.execute(_ANY_MEMBER_SQL, (session_id,)).fetchone() is not None:
        found = conn.execute(
            _FIRST_SEEN_SQL,
            (session_id, _rows([[c.component_id, c.type, c.name, c.version_str] for c in renamed])),
        ).fetchone()[0]
        earlier = orjson.loads(found)
    first_seen_of = {id(c): seen or created_at for c, seen in zip(renamed, earlier, strict=True)}
    rows = []
    for c in changes:
        old = c.old
        first_seen = first_seen_of.get(id(c)) or (old.first_seen if old is not None else created_at)
        rows.append([c.component_id, c.key, c.type, c.name, c.version_str, first_seen])
        c.old = Member(c.key, c.type, c.name, c.version_str, first_seen)
    if rows:
        conn.execute(_INSERT_MEMBER_SQL, (session_id, version, agent_id, _rows(rows)))
    members = base.members if base is not None and same_agent else {}
    for cid in removed:
        del members[cid]
    for c in changes:
        assert c.old is not None
        members[c.component_id] = c.old
    # Only an AgBOM's components are immutable objects worth remembering by identity.
    held = weakref.ref(document.agbom) if isinstance(document, AgbomDocument) else None
    return Manifest(version, agbom_hash, agent_id, created_at, members, held)


# -- reading a version ------------------------------------------------------------------------


def read_document(
    conn: sqlite3.Connection,
    session_id: str,
    version: int,
    header: str | None,
    document: str | None,
    base_version: int | None,
    accepted: bool,
) -> dict[str, Any]:
    """The document of one stored version, as it was given (see the module docstring)."""
    if document is not None:
        whole: dict[str, Any] = orjson.loads(document)
        return whole
    if header is None:  # pragma: no cover - the table's CHECK makes one of them set
        raise StoreError(f"AgBOM version {version} of session {session_id!r} is damaged")
    if accepted:
        bodies = [body for _, body in conn.execute(_MEMBERS_AT_SQL, (session_id, version))]
    else:
        held: dict[str, str] = {}
        if base_version is not None:
            held = dict(conn.execute(_MEMBERS_AT_SQL, (session_id, base_version)).fetchall())
        for cid, body in conn.execute(_DELTA_SQL, (session_id, version)):
            if body is None:
                held.pop(cid, None)
            else:
                held[cid] = body
        bodies = [held[cid] for cid in sorted(held)]
    out: dict[str, Any] = orjson.loads(header)
    out["components"] = orjson.loads("[" + ",".join(bodies) + "]")
    # Members in the order the old store's sorted JSON text gave them.
    return dict(sorted(out.items()))


# -- the migration to schema 8 ---------------------------------------------------------------


def migrate_v6_versions(conn: sqlite3.Connection) -> None:
    """Migration 8's data step: re-store every version stored whole (``agbom_versions_v6``, one
    whole document each, and one ``components`` index row per component per version) as
    pieces, session by session in version order, exactly as :func:`save_version` would have
    stored them then. A document whose sorted JSON is not exactly the text stored is kept
    whole, so that every version reads back identically.
    """
    remembered: Manifest | None = None
    session: str | None = None
    # One document in memory at a time: an older store holds every version whole.
    keys = conn.execute(
        "SELECT rowid, session_id, version FROM agbom_versions_v6 ORDER BY session_id, version"
    ).fetchall()
    for rowid, session_id, version in keys:
        agent_id, text, agbom_hash, change, created_at, accepted = conn.execute(
            "SELECT agent_id, document, agbom_hash, change, created_at, accepted "
            "FROM agbom_versions_v6 WHERE rowid = ?",
            (rowid,),
        ).fetchone()
        if session_id != session:
            session, remembered = session_id, None
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise StoreError(
                f"AgBOM version {version} of session {session_id!r} is not valid JSON"
            ) from None
        if not isinstance(document, dict):
            raise StoreError(f"AgBOM version {version} of session {session_id!r} is not an object")
        exact = orjson.dumps(document, option=_SORTED) == text.encode("utf-8")
        remembered = save_version(
            conn,
            session_id=session_id,
            version=int(version),
            agent_id=agent_id,
            document=document,
            agbom_hash=agbom_hash,
            change_text=change,
            created_at=created_at,
            accepted=bool(accepted),
            remembered=remembered,
            keep_whole=not exact,
            rowid=int(rowid),
        )
