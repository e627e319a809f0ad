"""Supply-chain signals at run time: ``agbom serve --osv PATH`` and ``--lock FILE``.

A :class:`GuardianSignals` annotates each AgBOM the Guardian accepts for evaluation, right
after it is parsed: components get the ``vulnerabilities`` the OSV export names for their
exact package versions, and MCP servers whose tool set differs from the lock file's pin get
``tools_drift``. The rules (AGB-VULN-*, AGB-LOCK-001 in the default pack) then decide, as
``agbom check --osv/--locked`` does in CI. A wrapped ``tools/list`` result is compared with
the lock too, and the drift it shows is remembered for the session's later tool calls.

MCP servers approved with ``agbom servers approve`` are pinned the same way, from the store:
the approved pins of an AgBOM's servers are read at each evaluation (no cache, one lookup of
the AgBOM's server names; none without MCP servers) and compared with :func:`drift` as the
lock's are; a wrapped ``tools/list`` for an approved server likewise. A revoked approval pins
nothing: drift judged against it is dropped at the next decision that reads it.

Loaded once; :meth:`GuardianSignals.reload` (SIGHUP) reads both files again and keeps the
previous ones when a new one cannot be used (fail closed: never an empty database).
"""

from __future__ import annotations

import signal
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from agbom.advisories import VULNERABILITIES_FIELD, vulnerabilities_of
from agbom.advisories.live import LiveAdvisories
from agbom.advisories.vex import (
    VEX_FIELD,
    VexError,
    VexStatement,
    apply_vex,
    read_vex,
    statement_for,
)
from agbom.scan.lock import (
    LOCK_VERSION,
    TOOLS_DRIFT,
    Change,
    LockError,
    canonical_tool,
    drift,
    mark_drift,
    read_lock,
    server_changes,
    server_entry,
    tool_set_pin,
)

if TYPE_CHECKING:
    from agbom.advisories import OsvDatabase
    from agbom.inventory import AgBOM, Component
    from agbom.store import ServerPin, Store

SignalState = tuple[int, int, tuple[tuple[Any, ...], ...] | None]
"""What an annotation depended on besides the AgBOM: the export's generation, the lock's, and
the approval rows of the AgBOM's servers (``None``: no store was asked)."""

SIGNAL_FIELDS = (VULNERABILITIES_FIELD, TOOLS_DRIFT)
"""The component fields the signals set (and the Guardian compares across versions)."""
APPROVAL = "approval"
"""The key of ``tools_drift`` that says an approval (not the lock) judged it: ``[server, pin
value]`` of the approval, checked again before a tool call is judged by it."""
MAX_DRIFTED = 4096
"""(session, server) pairs whose live ``tools/list`` drifted, remembered at most (oldest go)."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _stderr(message: str) -> None:
    print(f"agbom: {_one_line(message)}", file=sys.stderr, flush=True)


class GuardianSignals:
    """The OSV database and the lock file one Guardian decides with."""

    def __init__(
        self,
        osv: Path | None,
        lock: Path | None,
        *,
        vex: Sequence[Path] = (),
        report: Callable[[str], None] = _stderr,
    ) -> None:
        self._report = report
        # Each load raises AdvisoryError/LockError/VexError (InputError): a usage error.
        self.advisories = LiveAdvisories(osv, report=report) if osv is not None else None
        self.lock_path = lock
        self.lock: Mapping[str, Any] | None = read_lock(lock) if lock is not None else None
        self.vex_paths = tuple(vex)
        self.statements: Sequence[VexStatement] = read_vex(self.vex_paths) if vex else ()
        # Counts reloads of the lock file and of the VEX statements (either changes what an
        # annotation says; both only grow, so their sum changes exactly when one does).
        self.lock_generation = 1
        self._drifted: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._reload_lock = threading.Lock()
        self._annotated = _AnnotatedStates()

    # -- reloading ---------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the export and the lock file again; keep the old one of each that fails."""
        with self._reload_lock:
            if self.advisories is not None:
                self.advisories.reload()  # reports either way, keeps the old one on failure
            if self.lock_path is not None:
                try:
                    lock = read_lock(self.lock_path)
                except LockError as exc:
                    self._report(f"lock reload failed, keeping the loaded lock: {exc}")
                else:
                    # The lock before its generation: a reader takes the generation first, so
                    # at worst it pairs the new lock with the old generation and, next time,
                    # annotates a whole AgBOM again (annotate_change), never the reverse.
                    self.lock = lock
                    self.lock_generation += 1
                    self._report(f"lock file reloaded from {self.lock_path}")
            if self.vex_paths:
                try:
                    statements = read_vex(self.vex_paths)
                except VexError as exc:
                    self._report(f"VEX reload failed, keeping the loaded statements: {exc}")
                else:
                    self.statements = statements
                    self.lock_generation += 1
                    self._report(f"{len(statements)} VEX statement(s) reloaded")

    def install_sighup(self) -> None:
        """Reload on SIGHUP, in a thread (a large export takes seconds to load)."""

        def handler(_signum: int, _frame: FrameType | None) -> None:
            threading.Thread(target=self.reload, name="agbom-signals-reload", daemon=True).start()

        signal.signal(signal.SIGHUP, handler)

    # -- annotation --------------------------------------------------------------------------

    def annotate(self, agbom: AgBOM, store: Store | None = None) -> AgBOM:
        """``agbom`` with advisories on its components and tool drift on its servers: against
        the lock file, and against the approved pins in ``store`` (read now)."""
        from agbom.advisories import annotate
        from agbom.inventory import ComponentType

        generations, database, lock = self._current()
        # Looked up before the advisories: they change neither the servers nor what an
        # approval entry reads of them (name, purl, version).
        servers = agbom.of_type(ComponentType.MCP_SERVER)
        rows = _approval_rows(store, servers) if store is not None else None
        if database is not None:
            agbom = annotate(agbom, database)
            if self.statements:
                agbom = apply_vex(agbom, self.statements)
        changes = self.tool_drift(lock, agbom) if lock is not None else []
        pinned = lock is not None or bool(rows)
        if rows:
            approved = _approved_entries(rows, servers)
            if approved:
                document = {"lock_version": LOCK_VERSION, "servers": approved, "skills": {}}
                changes.extend(_approval_drift(document, agbom))
        if pinned:
            agbom = _exact_drift(agbom, changes)
        self._annotated.remember(agbom, (*generations, _fingerprint(rows)))
        return agbom

    def annotate_change(
        self, before: AgBOM, agbom: AgBOM, store: Store
    ) -> tuple[AgBOM, frozenset[str]] | None:
        """What :meth:`annotate` makes of ``agbom``, worked out from the change alone, and the
        ids of the components whose signals that set or cleared.

        ``agbom`` is ``before`` (an AgBOM this object annotated) with a diff applied
        (:func:`~agbom.inventory.apply_diff`). Only what the diff can have moved is judged
        again: the advisories of the components it brought, and the drift of the servers it
        names or whose tools it names; every other component keeps the signals it had.
        ``None`` when that would not be what :meth:`annotate` makes: ``agbom`` is not derived
        from ``before``, ``before`` was not annotated here, or the export, the lock or the
        approvals of the servers changed since (then annotate the whole AgBOM)."""
        from agbom.inventory import Component, ComponentType, with_replaced

        named = agbom.changed_since(before)
        remembered = self._annotated.state_of(before)
        if named is None or remembered is None:
            return None
        server_type = ComponentType.MCP_SERVER
        generations, database, lock = self._current()
        rows = _approval_rows(store, agbom.of_type(server_type))
        state = (*generations, _fingerprint(rows))
        if state != remembered:
            return None
        pinned = lock is not None or bool(rows)
        replacements: dict[str, Component] = {}
        touched: set[str] = set()
        for cid in named:
            component = agbom.get(cid)
            # Only the new AgBOM's referrers: a server that listed ``cid`` before and does not
            # now was changed itself, so the diff names it.
            for referrer in agbom.referrers(cid):
                found = agbom.get(referrer)
                if found is not None and found.type is server_type:
                    touched.add(referrer)
            if component is None:
                continue
            if component.type is server_type:
                touched.add(cid)
            fresh = dict(component.data)
            if database is not None:
                matches = vulnerabilities_of(fresh, database)
                for match in matches:  # as apply_vex states them
                    statement = statement_for(match, self.statements)
                    if statement is not None:
                        match[VEX_FIELD] = statement.to_json()
                if matches:
                    fresh[VULNERABILITIES_FIELD] = matches
                else:
                    fresh.pop(VULNERABILITIES_FIELD, None)
            if pinned:
                fresh.pop(TOOLS_DRIFT, None)  # only the lock and the approvals say (below)
            if fresh != component.data:
                replacements[cid] = Component(id=cid, type=component.type, data=fresh)
        if pinned and touched:
            servers = [s for s in (agbom.get(sid) for sid in sorted(touched)) if s is not None]
            approved = _approved_entries(rows, servers)
            for server in servers:
                current = replacements.get(server.id) or server
                drifted = _server_drift(agbom, server, lock, approved.get(server.id))
                if drifted != current.data.get(TOOLS_DRIFT):
                    fresh = dict(current.data)
                    if drifted is None:
                        fresh.pop(TOOLS_DRIFT, None)
                    else:
                        fresh[TOOLS_DRIFT] = drifted
                    replacements[server.id] = Component(id=server.id, type=server_type, data=fresh)
        result = with_replaced(agbom, replacements, base=before) if replacements else agbom
        self._annotated.remember(result, state)
        return result, frozenset(replacements)

    def _current(self) -> tuple[tuple[int, int], OsvDatabase | None, Mapping[str, Any] | None]:
        """The generations of the export and the lock, then the two themselves: read in that
        order, so that a reload in between pairs a new one with an old generation (which
        only makes the next change annotate the whole AgBOM), never the other way round."""
        advisories = self.advisories
        generations = (advisories.generation if advisories is not None else 0,
                       self.lock_generation)  # fmt: skip
        database = advisories.database if advisories is not None else None
        return generations, database, self.lock

    @staticmethod
    def tool_drift(lock: Mapping[str, Any], agbom: AgBOM) -> list[Change]:
        """The tool-set drifts of ``agbom``'s servers that the lock pins (a server the lock
        does not name, or a package change, is not a tool drift; ``agbom check --locked``
        reports those in CI)."""
        return [c for c in drift(lock, agbom) if c.kind == "tools"]

    # -- live tools/list results --------------------------------------------------------------

    def tools_list_drift(
        self,
        session_id: str,
        server: str | None,
        result: Any,
        *,
        store: Store | None = None,
        agbom: AgBOM | None = None,
    ) -> list[tuple[str, dict[str, Any]]]:
        """The drift a wrapped ``tools/list`` result shows against the lock, as ``(server id,
        tools_drift)`` pairs; empty when it matches, or names no locked server.

        ``server`` is the step's ``metadata.mcp_server``: a lock server id, else a lock
        server's name, matched exactly (case-sensitive). Without it a lock of exactly one
        pinned server is that server. A result the lock cannot attribute (no label under a
        lock of several pinned servers, a label that matches a lock server's id or name only
        up to case, a name several servers share) is drift for each server it could be: the
        near matches, else every pinned one. A result that cannot be read as a tool list (no
        ``tools``, a tool without a name) is drift: it is not the set that was pinned.

        A server the lock does not name at all is looked up in ``store``'s approvals (by that
        name, and by the id and name of the session ``agbom``'s server it names; without a
        name, the session's only MCP server): an approved pin is compared exactly as the
        lock's.
        """
        lock = self.lock
        server_id: str | None = None
        if lock is not None:
            attributed = _locked_server(lock, server)
            if isinstance(attributed, _Unattributed):
                reason: dict[str, Any] = {"detail": attributed.reason}
                return [(sid, self._remember(session_id, sid, dict(reason)))
                        for sid in attributed.candidates]  # fmt: skip
            server_id = attributed
        if server_id is None and store is not None:
            lock, server_id = _approved_server(store, agbom, server)
        if lock is None or server_id is None:
            return []
        entry = lock["servers"][server_id]
        pinned = entry.get("tools")
        if not isinstance(pinned, Mapping):
            return []
        tools = result.get("tools") if isinstance(result, Mapping) else None
        try:
            if not isinstance(tools, list):
                raise LockError("the result has no 'tools' list")
            current = [canonical_tool(t if isinstance(t, Mapping) else {}, "tools/list")
                       for t in tools]  # fmt: skip
            pin = tool_set_pin(current)
        except LockError as exc:
            found: dict[str, Any] = {"detail": f"tool set unreadable: {exc}"}
        else:
            if pin["value"] == pinned.get("value"):
                self._drifted.pop((session_id, server_id), None)  # back to the pinned set
                return []
            pin["definitions"] = sorted(current, key=lambda t: str(t["name"]))
            changes = _pin_drift(server_id, lock, pin)
            found = {"detail": changes.detail, **changes.tools}
        if isinstance(entry.get(APPROVAL), list):
            found[APPROVAL] = list(entry[APPROVAL])
        return [(server_id, self._remember(session_id, server_id, found))]

    def _remember(self, session_id: str, server_id: str, found: dict[str, Any]) -> dict[str, Any]:
        key = (session_id, server_id)
        self._drifted[key] = found
        self._drifted.move_to_end(key)
        while len(self._drifted) > MAX_DRIFTED:
            self._drifted.popitem(last=False)
        return found

    def drifted(
        self, session_id: str, server_id: str, store: Store | None = None
    ) -> dict[str, Any] | None:
        """The drift this session's live ``tools/list`` showed for ``server_id``, if any (one
        an approval judged counts only while that approval stands in ``store``)."""
        found = self._drifted.get((session_id, server_id))
        if found is not None and not approval_stands(store, found):
            self._drifted.pop((session_id, server_id), None)
            return None
        return found


# -- approved pins (agbom servers approve) ----------------------------------------------------


def _approval_rows(store: Store, servers: Sequence[Component]) -> list[ServerPin]:
    """The store's approval rows (approved or revoked) for ``servers``: one lookup of their
    ids and names, none without servers."""
    if not servers:
        return []
    names = [s.id for s in servers] + [s.name for s in servers if s.name]
    return list(store.server_pins_for(names))


def _approved_entries(
    rows: Sequence[ServerPin], servers: Sequence[Component]
) -> dict[str, dict[str, Any]]:
    """Lock entries, by server id, of the ``servers`` an approved row among ``rows`` pins."""
    by_key = {row.server.strip().casefold(): row for row in rows}
    locked: dict[str, Any] = {}
    for server in servers:
        row = by_key.get(server.id.casefold()) or by_key.get((server.name or "").casefold())
        if row is not None and row.approved:
            locked[server.id] = _lock_entry(row, server.name, server.data)
    return locked


def _fingerprint(rows: Sequence[ServerPin] | None) -> tuple[tuple[Any, ...], ...] | None:
    """What an annotation depended on in ``rows``: each row's server, status and pin."""
    if rows is None:
        return None
    return tuple(sorted((r.server, r.status, r.value, r.decided_at) for r in rows))


def _server_drift(
    agbom: AgBOM,
    server: Component,
    lock: Mapping[str, Any] | None,
    approved: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """The ``tools_drift`` :func:`_exact_drift` puts on ``server``: against the lock's entry,
    then against its approved pin (which wins, as in :meth:`GuardianSignals.annotate`)."""
    pinned = lock["servers"].get(server.id) if lock is not None else None
    if pinned is None and approved is None:
        return None
    entry = server_entry(agbom, server)
    found: Change | None = None
    for pin, judged in ((pinned, None), (approved, approved)):
        if pin is None:
            continue
        for change in server_changes(server.id, pin, entry):
            if change.kind == "tools":
                if judged is not None:
                    change.tools[APPROVAL] = list(judged[APPROVAL])
                found = change
    return None if found is None else {"detail": found.detail, **found.tools}


class _AnnotatedStates:
    """The :data:`SignalState` each live AgBOM was annotated under, by identity: an entry
    goes with its AgBOM (a weak reference's callback), so a session's versions never pile
    up here. A new object at a reused address was never remembered: the entry of the old
    one is gone by then."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref[AgBOM], SignalState]] = {}

    def remember(self, agbom: AgBOM, state: SignalState) -> None:
        key = id(agbom)
        by_id = self._by_id

        def forget(_gone: object, key: int = key) -> None:
            by_id.pop(key, None)

        by_id[key] = (weakref.ref(agbom, forget), state)

    def state_of(self, agbom: AgBOM) -> SignalState | None:
        found = self._by_id.get(id(agbom))
        if found is None or found[0]() is not agbom:
            return None
        return found[1]


def _lock_entry(row: ServerPin, name: str | None, data: Mapping[str, Any]) -> dict[str, Any]:
    # The package is the inventory's own: an approval pins the tool set, not the version
    # (a package change is `agbom check --locked`'s to report), so drift() sees none.
    return {
        "name": name or row.server,
        "purl": data.get("purl"),
        "version": data.get("version"),
        "tools": dict(row.pin),
        APPROVAL: [row.server, row.value],
    }


def _approval_drift(approved: Mapping[str, Any], agbom: AgBOM) -> list[Change]:
    """The tool drifts against approved pins, each saying which approval judged it."""
    changes = GuardianSignals.tool_drift(approved, agbom)
    for change in changes:
        entry = approved["servers"].get(change.component)
        if entry is not None:
            change.tools[APPROVAL] = list(entry[APPROVAL])
    return changes


def _approved_server(
    store: Store, agbom: AgBOM | None, server: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """A one-server lock of the approved pin a ``tools/list`` result is to match, and the
    server's id (the session AgBOM's component when it names one, else the name given)."""
    from agbom.inventory import ComponentType

    servers = agbom.of_type(ComponentType.MCP_SERVER) if agbom is not None else []
    component: Component | None = None
    if server is None:
        if len(servers) != 1:
            return None, None
        component = servers[0]
    else:
        wanted = server.casefold()
        component = next((s for s in servers if s.id.casefold() == wanted), None) or next(
            (s for s in servers if (s.name or "").casefold() == wanted), None
        )
    names = [server] if server is not None else []
    if component is not None:
        names += [component.id] + ([component.name] if component.name else [])
    rows = [row for row in store.server_pins_for(names) if row.approved]
    if not rows:
        return None, None
    row = rows[0]
    server_id = component.id if component is not None else row.server
    data = component.data if component is not None else {}
    name = component.name if component is not None else row.server
    entry = _lock_entry(row, name, data)
    return {"lock_version": LOCK_VERSION, "servers": {server_id: entry}, "skills": {}}, server_id


def approval_stands(store: Store | None, found: Mapping[str, Any]) -> bool:
    """Whether the approval that judged ``found`` (a ``tools_drift``) still stands with the
    same pin; drift judged by the lock, or without a store to ask, stands."""
    from agbom.store._server_logic import lookup_keys

    judged = found.get(APPROVAL)
    if not isinstance(judged, list) or len(judged) != 2 or store is None:
        return True
    if not isinstance(judged[0], str) or not lookup_keys([judged[0]]):
        return False  # no approval can have that name (a client's claim): nothing stands
    row = store.server_pin(judged[0])
    return row is not None and row.approved and row.value == judged[1]


def _exact_drift(agbom: AgBOM, changes: Sequence[Change]) -> AgBOM:
    """``agbom`` with ``tools_drift`` on exactly the servers in ``changes``: one sent by the
    client, or carried over from an earlier version of the session's AgBOM, is dropped (only
    the lock decides)."""
    from agbom.inventory import AgBOM

    if any(TOOLS_DRIFT in c.data for c in agbom):
        document = agbom.to_document()
        for component in document["components"]:
            component.pop(TOOLS_DRIFT, None)
        agbom = AgBOM.from_document(document, source="AgBOM")
    marked: AgBOM = mark_drift(agbom, changes)
    return marked


class _Unattributed:
    """A ``tools/list`` result the lock cannot attribute to one server: why, and the lock
    servers it could belong to (each then judged as drifted)."""

    __slots__ = ("candidates", "reason")

    def __init__(self, reason: str, candidates: Sequence[str]) -> None:
        self.reason = reason
        self.candidates = tuple(candidates)


MAX_NAMED = 5
"""Lock servers a reason names at most (a lock may pin hundreds)."""


def _listed_ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:MAX_NAMED])
    return shown + (f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else "")


def _locked_server(lock: Mapping[str, Any], server: str | None) -> str | _Unattributed | None:
    """The lock server id ``server`` (a ``metadata.mcp_server``) names, exactly and
    case-sensitively, as an id or else as the name of one server; ``None`` when the lock
    does not know it; :class:`_Unattributed` when it cannot tell which pinned server it is."""
    servers: Mapping[str, Any] = lock["servers"]
    pinned = [sid for sid, entry in servers.items() if isinstance(entry.get("tools"), Mapping)]
    shown = repr(server[:80]) if server is not None else ""
    if server is None:
        if len(pinned) <= 1:
            return pinned[0] if pinned else None
        return _Unattributed(
            f"a tools/list result that names no server (metadata.mcp_server), under a lock "
            f"pinning {len(pinned)} servers ({_listed_ids(pinned)}): it cannot be attributed "
            "to one pin",
            pinned,
        )
    if server in servers:
        return server
    named = [sid for sid, entry in servers.items() if entry.get("name") == server]
    if len(named) == 1:
        return named[0]
    if named:
        return _Unattributed(
            f"a tools/list result for {shown}, the name of {len(named)} lock servers "
            f"({_listed_ids(named)}): it cannot be attributed to one pin; name the server id",
            named,
        )
    wanted = server.casefold()
    near = [
        sid
        for sid, entry in servers.items()
        if sid.casefold() == wanted or str(entry.get("name", "")).casefold() == wanted
    ]
    if near:
        return _Unattributed(
            f"a tools/list result for {shown}, which is no lock server: it differs only in "
            f"case from {_listed_ids(near)} (server names match exactly), so it cannot be "
            "attributed to a pin",
            near,
        )
    return None


def _pin_drift(server_id: str, lock: Mapping[str, Any], pin: Mapping[str, Any]) -> Change:
    """The ``tools`` change between the lock's pin of ``server_id`` and ``pin``."""
    from agbom.inventory import AgBOM

    entry = lock["servers"][server_id]
    # A one-server AgBOM carrying the live definitions: drift() then compares exactly as
    # `agbom check --locked` does, renames and per-part differences included.
    document = {
        "agbom_version": "0.1.0",
        "agent": {"id": "tools-list"},
        "components": [
            {
                "id": server_id,
                "type": "mcp_server",
                "name": entry.get("name") or server_id,
                "version": entry.get("version"),
                "purl": entry.get("purl"),
                "endpoint": None,
                "tools": [],
                "tool_definitions": list(pin["definitions"]),
            }
        ],
    }
    one = {"lock_version": lock["lock_version"], "servers": {server_id: entry}, "skills": {}}
    changes = drift(one, AgBOM.from_document(document, source="tools/list result"))
    tools = [c for c in changes if c.kind == "tools"]
    return tools[0] if tools else Change("tools", server_id, "tool set changed")


def with_drift(component_data: Mapping[str, Any], found: Mapping[str, Any]) -> dict[str, Any]:
    """A server's data with the live ``tools_drift`` (for the rules at a tool call)."""
    return {**component_data, TOOLS_DRIFT: dict(found)}


__all__: Sequence[str] = (
    "APPROVAL",
    "MAX_DRIFTED",
    "SIGNAL_FIELDS",
    "GuardianSignals",
    "approval_stands",
    "with_drift",
)
