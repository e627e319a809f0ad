"""A session's provenance lineage and the trust derived from it (ACS §7, §7.2).

Nodes are the Provenance objects a session's steps carried; edges are their
``derived_from`` ids. Trust is derived here, never taken from the wire:

* each origin has a default trust (§7.2), which a rule pack's ``trust`` overrides may
  change for an origin and source id; every override that decided a node is named;
* a node's trust is the minimum over itself and its whole ancestry (``agent_generated``
  contributes nothing of its own, so it gets the minimum of its lineage: the monotonicity
  rule; one without ``derived_from`` is ``unknown``);
* an ancestor id the session has not (yet) delivered, or a cycle, counts as ``unknown``;
* a remote-asserted ``trust`` is a hint: it can lower a node's trust, never raise it.

The value only depends on the set of nodes, not on the order they arrived in.

Every answer is kept per node and kept current as nodes arrive, so a query costs what it
asks (the argument's parents, a path of at most 12 hops), never a walk of the lineage
(issue 39):

* a node whose ancestry is complete and acyclic is *settled* once, as the minimum of its own
  trust and its parents' (an index, not a walk), and never changes again;
* a node that waits for an ancestor (one not delivered, or on a cycle) is *open*: it holds
  the minimum of ``unknown``, its own trust and its parents' values, and the parent that gave
  it. The open nodes that counted an id are listed under it; when it arrives, settles or
  its value falls, only they are looked at again (each node's value falls at most once and
  settles once, so the work over a session is linear in its edges);
* for each ``source`` filter a flow rule asks about (:meth:`Lineage.reaches`), whether a
  settled node's ancestry holds a wanted source is worked out when it settles. An open
  node's ancestry is not known: for a filtered rule it counts as holding one (a missing
  ancestor never makes a filtered rule pass).

``work`` counts the steps taken (a parent looked at, a waiting node looked at again, a hop
of a path), for the callers' work budgets.

The lineage is bounded in bytes (an estimate of what it holds, like the session memory);
a node that does not fit is not recorded, so what derives from it is ``unknown``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from agbom.protocol.provenance import ProvenanceNode
from agbom.rules.matchers import TextMatcher


class Trust(enum.IntEnum):
    """Ordered so that ``min`` is the monotonicity rule: less trust wins."""

    UNTRUSTED = 0
    UNKNOWN = 1
    TRUSTED = 2

    def __str__(self) -> str:
        return _TRUST_NAMES[self]  # read on every finding: not the enum's name lookup


_TRUST_NAMES = {t: t.name.lower() for t in Trust}

DEFAULT_TRUST: dict[str, Trust] = {
    "user_input": Trust.TRUSTED,
    "system": Trust.TRUSTED,
    "tool_output": Trust.UNTRUSTED,
    "retrieved": Trust.UNTRUSTED,
    "a2a_inbound": Trust.UNTRUSTED,
    "external": Trust.UNTRUSTED,
}
"""§7.2; ``agent_generated`` is absent: it takes the minimum of its lineage."""

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Default bound on one session's lineage (about 50,000 Provenance objects)."""
_NODE_OVERHEAD = 320  # a node object, its dict slots, edges and the value index entry
_MAX_PATH_HOPS = 12


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustOverride:
    """A rule pack's change to the default mapping: ``origin`` (and ``source_id``) -> trust."""

    id: str  # ``<pack>:trust[<index>]``: what entries and findings name
    origin: str
    trust: Trust
    reason: str
    source_id: TextMatcher | None = None

    def applies(self, node: ProvenanceNode) -> bool:
        return node.origin == self.origin and (
            self.source_id is None or self.source_id(node.source_id)
        )


class TrustPolicy:
    """The channel-to-trust mapping with a rule pack's overrides (the first that applies)."""

    def __init__(self, overrides: Sequence[TrustOverride] = ()) -> None:
        self.overrides = tuple(overrides)

    def base(self, node: ProvenanceNode) -> tuple[Trust, TrustOverride | None]:
        """The trust ``node`` contributes by itself, and the override that set it."""
        trust: Trust
        used: TrustOverride | None = None
        if node.origin == "agent_generated":
            # Nothing of its own: the minimum of its lineage; with no lineage, unknown.
            trust = Trust.TRUSTED if node.derived_from else Trust.UNKNOWN
        else:
            trust = DEFAULT_TRUST.get(node.origin, Trust.UNKNOWN)
            for override in self.overrides:
                if override.applies(node):
                    trust, used = override.trust, override
                    break
        if node.trust_hint == "untrusted":
            trust = min(trust, Trust.UNTRUSTED)
        elif node.trust_hint == "unknown":
            trust = min(trust, Trust.UNKNOWN)
        return trust, used


@dataclass(frozen=True, slots=True)
class Verdict:
    """The trust of a node, and the lineage path that decided it (node first)."""

    trust: Trust
    path: tuple[str, ...]  # provenance ids from the node to the weakest ancestor
    missing: str | None = None  # an ancestor id not in the lineage, if that decided it
    overrides: tuple[str, ...] = ()  # override ids that set a trust on the path


class Lineage:
    """One session's provenance graph (see the module docstring)."""

    def __init__(self, policy: TrustPolicy | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES):
        self.policy = policy or TrustPolicy()
        self.max_bytes = max_bytes
        self.nodes: dict[str, ProvenanceNode] = {}
        self.bytes = 0
        self.dropped = 0  # nodes refused by the bound
        self.conflicts = 0  # ids delivered again with other facts (the first is kept)
        self.work = 0  # steps taken so far (see the module docstring)
        # Settled nodes: id -> (trust, the parent the minimum came from or None, override id)
        self._value: dict[str, tuple[Trust, str | None, str | None]] = {}
        # Open nodes: id -> (trust, at most unknown; the parent it came from or None)
        self._open: dict[str, tuple[Trust, str | None]] = {}
        self._pending: dict[str, int] = {}  # open node -> its parents not settled
        # id not settled (missing or open) -> the open nodes that counted it, once each
        self._waiting: dict[str, list[str]] = {}
        self._order: list[str] = []  # settled ids, in the order they settled (topological)
        # per source filter: (wanted, settled id -> "" the node itself is a wanted source, a
        # parent id = through it, None = no wanted source in its ancestry)
        self._reach: dict[int, tuple[Callable[[ProvenanceNode], bool], dict[str, str | None]]] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, provenance_id: object) -> bool:
        return provenance_id in self.nodes

    # -- building --------------------------------------------------------------------------

    def add(self, node: ProvenanceNode) -> bool:
        """Record ``node``; False when it was not (a known id, or over the byte bound)."""
        pid = node.provenance_id
        known = self.nodes.get(pid)
        if known is not None:
            if (known.origin, known.source_id, known.derived_from) != (
                node.origin,
                node.source_id,
                node.derived_from,
            ):
                self.conflicts += 1  # never rewritten: a later step cannot launder an id
            return False
        cost = _NODE_OVERHEAD + _text_bytes(node)
        if self.bytes + cost > self.max_bytes:
            self.dropped += 1
            return False
        self.nodes[pid] = node
        self.bytes += cost
        value = self._value
        parents = node.derived_from
        self.work += len(parents) + 1
        unsettled = [p for p in parents if p not in value]
        if not unsettled:
            self._settle(pid, node)
        else:
            if len(unsettled) > 1:
                unsettled = list(dict.fromkeys(unsettled))  # an id named twice counts once
            self._pending[pid] = len(unsettled)
            waiting, opened = self._waiting, self._open
            for parent in unsettled:
                waiting.setdefault(parent, []).append(pid)
            trust, via = self.policy.base(node)[0], None
            for parent in parents:
                settled = value.get(parent)
                if settled is not None:
                    got = settled[0]
                else:
                    held = opened.get(parent)
                    got = held[0] if held is not None else Trust.UNKNOWN
                if got < trust:
                    trust, via = got, parent
            opened[pid] = (min(trust, Trust.UNKNOWN), via)
        if pid in self._waiting:
            self._propagate(pid)
        return True

    def add_all(self, nodes: Iterable[ProvenanceNode]) -> int:
        """Record several nodes; the number recorded."""
        return sum(self.add(n) for n in nodes)

    def with_policy(self, policy: TrustPolicy) -> Lineage:
        """The same nodes under other overrides (rules were reloaded): values recomputed."""
        fresh = Lineage(policy, max_bytes=self.max_bytes)
        fresh._reach = {key: (wanted, {}) for key, (wanted, _) in self._reach.items()}
        fresh.add_all(self.nodes.values())
        return fresh

    def _settle(self, pid: str, node: ProvenanceNode) -> None:
        """``pid``'s parents are all settled: its value, once and for good."""
        value = self._value
        trust, override = self.policy.base(node)
        via = None
        for parent in node.derived_from:
            if value[parent][0] < trust:
                trust, via = value[parent][0], parent
        value[pid] = (trust, via, override.id if override else None)
        self._order.append(pid)
        for wanted, table in self._reach.values():
            table[pid] = self._reach_of(node, wanted, table)

    def _reach_of(
        self,
        node: ProvenanceNode,
        wanted: Callable[[ProvenanceNode], bool],
        table: dict[str, str | None],
    ) -> str | None:
        if self.policy.base(node)[0] < Trust.TRUSTED and wanted(node):
            return ""
        for parent in node.derived_from:
            if table.get(parent) is not None:
                return parent
        return None

    def _propagate(self, first: str) -> None:
        """``first`` arrived, settled or its value fell: look again at the open nodes that
        counted it, and on at theirs, as far as something changes."""
        work = [first]
        value, opened, pending, waiting, nodes = (
            self._value,
            self._open,
            self._pending,
            self._waiting,
            self.nodes,
        )
        while work:
            pid = work.pop()
            settled = value.get(pid)
            if settled is not None:
                trust = settled[0]
                children = waiting.pop(pid, ())
            else:
                trust = opened[pid][0]
                children = waiting.get(pid, ())
            self.work += len(children)
            for child in children:
                if child in value:
                    continue
                if settled is not None:
                    pending[child] -= 1
                    if not pending[child]:
                        del pending[child], opened[child]
                        self._settle(child, nodes[child])
                        work.append(child)
                        continue
                if trust < opened[child][0]:
                    opened[child] = (trust, pid)
                    work.append(child)

    # -- reading ---------------------------------------------------------------------------

    def verdict(self, node: ProvenanceNode) -> Verdict:
        """The trust of ``node`` (recorded or not, e.g. a tool argument's provenance) under
        this lineage, with the path to its weakest ancestor."""
        known = self.nodes.get(node.provenance_id)
        own = self._verdict_of(node)
        if known is not None and known is not node:
            # The id was delivered before with other facts: the weaker of the two stands.
            stored = self._verdict_of(known)
            if stored.trust < own.trust:
                return stored
        return own

    def _verdict_of(self, node: ProvenanceNode) -> Verdict:
        trust, override = self.policy.base(node)
        best: tuple[Trust, str | None] = (trust, None)
        self.work += len(node.derived_from) + 1
        for parent in node.derived_from:
            parent_trust = self._trust_of(parent)
            if parent_trust < best[0]:
                best = (parent_trust, parent)
        path = [node.provenance_id]
        overrides = [override.id] if override else []
        missing = None
        if best[1] is not None:
            tail, more, missing = self._path(best[1])
            path += tail
            overrides += more
        return Verdict(best[0], tuple(path), missing, tuple(dict.fromkeys(overrides)))

    def trust(self, provenance_id: str) -> Trust:
        """The trust of a delivered id as it stands (``unknown`` for one never delivered)."""
        self.work += 1
        return self._trust_of(provenance_id)

    def _trust_of(self, pid: str) -> Trust:
        settled = self._value.get(pid)
        if settled is not None:
            return settled[0]
        opened = self._open.get(pid)
        return opened[0] if opened is not None else Trust.UNKNOWN

    def _path(self, pid: str) -> tuple[list[str], list[str], str | None]:
        """Ids from ``pid`` along the parents each value came from, overrides on the way, and
        the id not delivered it ends at (if it does)."""
        path: list[str] = []
        overrides: list[str] = []
        current: str | None = pid
        while current is not None and len(path) < _MAX_PATH_HOPS and current not in path:
            self.work += 1
            path.append(current)
            settled = self._value.get(current)
            if settled is not None:
                if settled[2]:
                    overrides.append(settled[2])
                current = settled[1]
                continue
            opened = self._open.get(current)
            if opened is None:
                return path, overrides, current
            # Untrusted came from that parent for good; unknown may have come from one that
            # settled since, so the path goes on to a parent still waited for.
            current = opened[1] if opened[0] < Trust.UNKNOWN else self._waited_parent(current)
        return path, overrides, None

    def _waited_parent(self, pid: str) -> str | None:
        """A parent of the open node ``pid`` that is not settled (one always is)."""
        value = self._value
        for parent in self.nodes[pid].derived_from:
            self.work += 1
            if parent not in value:
                return parent
        return None

    def _open_path(self, pid: str) -> list[str]:
        """Ids from the unsettled ``pid`` through parents not settled: to an id not delivered,
        round a cycle, or 12 hops."""
        path: list[str] = []
        current: str | None = pid
        while current is not None and len(path) < _MAX_PATH_HOPS and current not in path:
            self.work += 1
            path.append(current)
            current = self._waited_parent(current) if current in self.nodes else None
        return path

    def settled(self, provenance_id: str) -> bool:
        """Whether the node's ancestry is complete and acyclic (its value is final)."""
        return provenance_id in self._value

    def watch(self, key: int, wanted: Callable[[ProvenanceNode], bool]) -> None:
        """Keep, from now on, which settled nodes have a ``wanted`` source in their ancestry
        (the ``source`` filter of a flow rule, named by ``key``): worked out for the nodes
        settled so far in one pass, then for each as it settles."""
        if key in self._reach:
            return
        table: dict[str, str | None] = {}
        nodes = self.nodes
        for pid in self._order:
            table[pid] = self._reach_of(nodes[pid], wanted, table)
        self.work += len(self._order)
        self._reach[key] = (wanted, table)

    def watch_only(self, filters: Mapping[int, Callable[[ProvenanceNode], bool]]) -> None:
        """Keep answers for exactly ``filters`` (key -> wanted), see :meth:`watch`."""
        for key in [k for k in self._reach if k not in filters]:
            del self._reach[key]
        for key, wanted in filters.items():
            self.watch(key, wanted)

    def reaches(
        self, node: ProvenanceNode, key: int, wanted: Callable[[ProvenanceNode], bool]
    ) -> tuple[str, ...] | None:
        """A path from ``node`` to an ancestor that is not trusted by itself and for which
        ``wanted`` holds (a flow rule's ``source`` filter), or None. ``key`` names the filter
        (see :meth:`watch`). An ancestry that is not complete (an id not delivered, a cycle)
        may hold such a source: the path to what is missing is the answer then."""
        self.watch(key, wanted)
        table = self._reach[key][1]
        known = self.nodes.get(node.provenance_id)
        # An id delivered before with other facts: the recorded one's ancestry counts too.
        for candidate in (node,) if known is None or known is node else (node, known):
            if self.policy.base(candidate)[0] < Trust.TRUSTED and wanted(candidate):
                return (node.provenance_id,)
            self.work += len(candidate.derived_from)
            for parent in candidate.derived_from:
                if parent not in self._value:
                    return (node.provenance_id, *self._open_path(parent))
                if table.get(parent) is not None:
                    return (node.provenance_id, *self._reach_path(parent, table))
        return None

    def _reach_path(self, start: str, table: dict[str, str | None]) -> list[str]:
        path = [start]
        current = start
        while len(path) < _MAX_PATH_HOPS:
            step = table.get(current)
            if not step:
                break
            current = step
            path.append(current)
        self.work += len(path)
        return path

    def describe(self, path: Sequence[str], first: ProvenanceNode | None = None) -> list[str]:
        """``agent_generated p7``, ``tool_output p3 (web_fetch)``… for each id of a path;
        ``first`` is the path's first node when the lineage does not hold it (an argument's)."""
        out = []
        for i, pid in enumerate(path):
            node = first if i == 0 and first is not None else self.nodes.get(pid)
            out.append(node.describe() if node is not None else f"unknown {pid} (not delivered)")
        return out


def _text_bytes(node: ProvenanceNode) -> int:
    return (
        len(node.provenance_id)
        + len(node.source_id or "")
        + sum(map(len, node.derived_from))
        + 8 * len(node.derived_from)
        + len(node.step_id)
        + len(node.field)
    )
