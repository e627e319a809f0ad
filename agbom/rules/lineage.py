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

The value only depends on the set of nodes, not on the order they arrived in. It is
computed once per node when its ancestry is complete (all ancestors present), as the
minimum of its own trust and its parents' (an index, not a walk); a node waiting for a
missing ancestor is settled when that ancestor arrives. Until then a query walks what is
known of its ancestry.

The lineage is bounded in bytes (an estimate of what it holds, like the session memory);
a node that does not fit is not recorded, so what derives from it is ``unknown``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
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
        # Settled nodes: id -> (trust, the parent the minimum came from or None, override id)
        self._value: dict[str, tuple[Trust, str | None, str | None]] = {}
        # id (missing or unsettled) -> nodes that wait for it to settle
        self._waiting: dict[str, list[str]] = {}
        self._flags: dict[int, dict[str, str | None]] = {}  # per source filter, see reaches()

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, provenance_id: object) -> bool:
        return provenance_id in self.nodes

    # -- building --------------------------------------------------------------------------

    def add(self, node: ProvenanceNode) -> bool:
        """Record ``node``; False when it was not (a known id, or over the byte bound)."""
        known = self.nodes.get(node.provenance_id)
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
        self.nodes[node.provenance_id] = node
        self.bytes += cost
        self._settle(node.provenance_id)
        return True

    def add_all(self, nodes: Iterable[ProvenanceNode]) -> int:
        """Record several nodes; the number recorded."""
        return sum(self.add(n) for n in nodes)

    def with_policy(self, policy: TrustPolicy) -> Lineage:
        """The same nodes under other overrides (rules were reloaded): values recomputed."""
        fresh = Lineage(policy, max_bytes=self.max_bytes)
        fresh.add_all(self.nodes.values())
        return fresh

    def _settle(self, first: str) -> None:
        # Worklist: settle ``first`` if its parents are settled, then whoever waited on it.
        work = [first]
        value, waiting, nodes = self._value, self._waiting, self.nodes
        while work:
            pid = work.pop()
            if pid in value:
                continue
            node = nodes[pid]
            unsettled = [p for p in node.derived_from if p not in value]
            if unsettled:
                for parent in unsettled:
                    waiting.setdefault(parent, []).append(pid)
                continue
            trust, override = self.policy.base(node)
            via = None
            for parent in node.derived_from:
                if value[parent][0] < trust:
                    trust, via = value[parent][0], parent
            value[pid] = (trust, via, override.id if override else None)
            work.extend(waiting.pop(pid, ()))

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
        missing: str | None = None
        for parent in node.derived_from:
            parent_trust, parent_missing = self._trust(parent)
            if parent_trust < best[0]:
                best, missing = (parent_trust, parent), parent_missing
        path = [node.provenance_id]
        overrides = [override.id] if override else []
        if best[1] is not None:
            tail, more, missing2 = self._path(best[1], best[0])
            path += tail
            overrides += more
            missing = missing2 or missing
        return Verdict(best[0], tuple(path), missing, tuple(dict.fromkeys(overrides)))

    def _trust(self, pid: str) -> tuple[Trust, str | None]:
        settled = self._value.get(pid)
        if settled is not None:
            return settled[0], None
        if pid not in self.nodes:
            return Trust.UNKNOWN, pid
        return self._walk(pid)

    def _walk(self, start: str) -> tuple[Trust, str | None]:
        # An unsettled node: the minimum over what is known of its ancestry; a missing
        # ancestor or a cycle (which keeps nodes unsettled) is unknown.
        seen = {start}
        stack = [start]
        trust = Trust.TRUSTED
        missing: str | None = None
        while stack:
            pid = stack.pop()
            settled = self._value.get(pid)
            if settled is not None:
                trust = min(trust, settled[0])
                continue
            node = self.nodes.get(pid)
            if node is None:
                missing = missing or pid
                trust = min(trust, Trust.UNKNOWN)
                continue
            trust = min(trust, self.policy.base(node)[0], Trust.UNKNOWN)
            for parent in node.derived_from:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return trust, missing

    def _path(self, pid: str, trust: Trust) -> tuple[list[str], list[str], str | None]:
        """Ids from ``pid`` to the ancestor that gave it ``trust``, overrides on the way."""
        path: list[str] = []
        overrides: list[str] = []
        current: str | None = pid
        while current is not None and len(path) < _MAX_PATH_HOPS and current not in path:
            path.append(current)
            settled = self._value.get(current)
            if settled is not None:
                if settled[2]:
                    overrides.append(settled[2])
                current = settled[1]
                continue
            node = self.nodes.get(current)
            if node is None:
                return path, overrides, current
            nxt = None
            for parent in node.derived_from:
                if self._trust(parent)[0] <= trust:
                    nxt = parent
                    break
            current = nxt
        return path, overrides, None

    def reaches(
        self, node: ProvenanceNode, key: int, wanted: Callable[[ProvenanceNode], bool]
    ) -> tuple[str, ...] | None:
        """A path from ``node`` to an ancestor that is not trusted by itself and for which
        ``wanted`` holds (a flow rule's ``source`` filter), or None. ``key`` names the filter:
        the answer for each settled node is kept under it."""
        flags = self._flags.setdefault(key, {})

        def own(n: ProvenanceNode) -> bool:
            return self.policy.base(n)[0] < Trust.TRUSTED and wanted(n)

        if own(node):
            return (node.provenance_id,)
        for parent in node.derived_from:
            tail = self._reaches_from(parent, flags, own)
            if tail is not None:
                return (node.provenance_id, *tail)
        return None

    def _reaches_from(
        self,
        start: str,
        flags: dict[str, str | None],
        own: Callable[[ProvenanceNode], bool],
    ) -> tuple[str, ...] | None:
        # flags[id]: "" = the node itself is a wanted source, a parent id = through it,
        # None = no wanted source in its ancestry. Only settled nodes are kept in ``flags``
        # (their ancestry is complete and acyclic, so the answer never changes).
        local: dict[str, str | None] = {}
        if start not in flags:
            self._fill(start, flags, local, own)
        if flags.get(start, local.get(start)) is None:
            return None
        path = [start]
        current = start
        while len(path) < _MAX_PATH_HOPS:
            step = flags[current] if current in flags else local.get(current)
            if not step:
                break
            current = step
            path.append(current)
        return tuple(path)

    def _fill(
        self,
        start: str,
        flags: dict[str, str | None],
        local: dict[str, str | None],
        own: Callable[[ProvenanceNode], bool],
    ) -> None:
        # Iterative post-order DFS over the ancestry; a node on the stack (a cycle) counts as
        # no wanted source on that edge.
        nodes, settled = self.nodes, self._value
        stack: list[tuple[str, int]] = []
        on_stack: set[str] = set()

        def known(pid: str) -> bool:
            return pid in flags or pid in local

        def result(pid: str) -> str | None:
            return flags[pid] if pid in flags else local.get(pid)

        def resolve(pid: str, value: str | None) -> None:
            local[pid] = value
            if pid in settled:
                flags[pid] = value

        def push(pid: str) -> None:
            node = nodes.get(pid)
            if node is None:
                resolve(pid, None)  # missing: unknown (trust says so), not a wanted source
            elif own(node):
                resolve(pid, "")
            else:
                stack.append((pid, 0))
                on_stack.add(pid)

        push(start)
        while stack:
            pid, index = stack[-1]
            parents = nodes[pid].derived_from
            if index and known(parents[index - 1]) and result(parents[index - 1]) is not None:
                resolve(pid, parents[index - 1])
            elif index < len(parents):
                stack[-1] = (pid, index + 1)
                parent = parents[index]
                if not known(parent) and parent not in on_stack:
                    push(parent)
                continue
            else:
                resolve(pid, None)
            stack.pop()
            on_stack.discard(pid)

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
        + sum(len(p) + 8 for p in node.derived_from)
        + len(node.step_id)
        + len(node.field)
    )
