"""Per-session state the Guardian keeps in memory (and restores from the store on restart)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agbom.inventory import AgBOM, ComponentGraph

RECENT_REQUEST_IDS = 4096
"""Request ids of decided steps each in-memory session remembers, the latest at least this many
and at most twice as many (older ones are caught by the store's unique index when their entry
is appended); as many toolCallRequest ids, which a toolCallResult must name."""
REFUSED_REQUEST_IDS = 1024
"""Request ids of refused requests each in-memory session remembers, so that a replay of a
refused request is answered -32005 rather than refused again for its first reason."""

SESSION_BASE_BYTES = 8 * 1024
COMPONENT_BYTES = 2 * 1024
"""Memory one inventory component costs in a session (its model object, its graph node and
edges): measured at 1.0–1.7 KiB with tracemalloc, rounded up."""
REMEMBERED_ID_BYTES = 160
"""One remembered request id, nonce or pair (the string and its dict slot)."""

LEGACY_ORIGIN = "legacy"
"""Sessions stored before origins were recorded: either entry point may continue them."""

SkillPair = tuple[str, str, str]
"""(skill_id, digest algorithm, digest value)."""


def _remember(memory: dict[Any, Any], key: Any, value: Any, bound: int) -> None:
    """Put ``key`` last in ``memory``; past twice ``bound`` keys, keep the last ``bound``.

    Plain dicts (insertion-ordered) trimmed in one go rather than OrderedDicts trimmed key by
    key: a restore copies these (``dict.copy`` of 4,096 keys takes about 20 us, an
    OrderedDict's about 400), and the trim costs O(1) a key over time."""
    memory.pop(key, None)
    memory[key] = value
    if len(memory) > 2 * bound:
        kept = list(memory.items())[-bound:]
        memory.clear()
        memory.update(kept)


@dataclass(slots=True)
class ChainFold:
    """What a session's chain says of it, folded entry by entry in chain order: the part of a
    restored session that comes from its entries (head, ended, deferrals, the turn, the
    remembered request ids, tool calls and skill registrations).

    A fold is a function of the stored entries alone, so the fold of a chain equals the fold
    of its first ``seq`` entries extended by the rest. That is what lets a replica whose
    session went stale (another replica appended to it) read only the entries appended since
    it last restored the session, instead of the whole chain again (docs/deploying.md).
    """

    seq: int = 0
    head: str | None = None
    ended: bool = False
    deferrals: int = 0
    turn_id: str | None = None
    request_ids: dict[str, None] = field(default_factory=dict)
    tool_calls: dict[str, None] = field(default_factory=dict)
    # Pairs whose latest skillRegister was denied: every one, without a count bound, so that
    # no number of other registrations lifts a ``registration_denied`` (issue 39).
    denied: set[SkillPair] = field(default_factory=set)
    # Whether an entry carries the acs-provenance marker (sessions stored before the profile
    # was on the session's record are held to it by this).
    provenance_marked: bool = False

    @classmethod
    def of(cls, entries: Sequence[Mapping[str, Any]]) -> ChainFold:
        """The fold of a whole chain, ``entries`` in order."""
        fold = cls()
        for entry in entries:
            fold._apply(entry)
        return fold

    def extended(self, entries: Sequence[Mapping[str, Any]]) -> ChainFold | None:
        """A new fold: this one followed by ``entries``, the entries with a greater seq in
        order; ``None`` when they do not continue this chain (a seq skipped, or a first
        ``previous_hash`` that is not this head), and the caller folds the chain afresh."""
        fold = replace(
            self,
            request_ids=self.request_ids.copy(),
            tool_calls=self.tool_calls.copy(),
            denied=self.denied.copy(),
        )
        for entry in entries:
            if entry.get("seq") != fold.seq + 1 or entry.get("previous_hash") != fold.head:
                return None
            fold._apply(entry)
        return fold

    def _apply(self, entry: Mapping[str, Any]) -> None:
        """Fold the next entry in."""
        step_type = entry.get("step_type")
        self.seq += 1
        self.head = entry.get("entry_hash")
        if step_type == "steps/sessionEnd":
            self.ended = True
        if entry.get("decision") == "defer":
            self.deferrals += 1
        step_id = entry.get("step_id")
        if isinstance(step_id, str):
            _remember(self.request_ids, step_id, None, RECENT_REQUEST_IDS)
        if step_type == "steps/toolCallRequest":
            _remember(self.tool_calls, str(step_id), None, RECENT_REQUEST_IDS)
        skill = entry.get("skill") if step_type == "steps/skillRegister" else None
        if isinstance(skill, Mapping):
            pair = (str(skill["skill_id"]), str(skill["algorithm"]), str(skill["value"]))
            allowed = entry.get("decision") != "deny"
            if allowed:
                self.denied.discard(pair)
            else:
                self.denied.add(pair)
        if entry.get("acs_provenance") is True:
            self.provenance_marked = True
        if entry.get("turn_id"):
            self.turn_id = entry["turn_id"]
        if step_type == "steps/turnEnd":
            self.turn_id = None

    def remembered(self) -> int:
        """How many ids and pairs it holds (for the memory bound)."""
        return len(self.request_ids) + len(self.tool_calls) + len(self.denied)


@dataclass(frozen=True, slots=True)
class HeldInventory:
    """A session's AgBOM as a Guardian held it in memory: the version it is, its graph (as
    patched by the session's steps, if built) and its rule findings (``None``: not evaluated
    since the AgBOM was restored)."""

    agbom: AgBOM
    version: int
    graph: ComponentGraph | None
    findings: Sequence[Any] | None
    tools_by_name: dict[str, Any] | None = None  # its tools by name, if indexed


@dataclass(slots=True)
class SessionState:
    """What the Guardian knows about one ACS session."""

    session_id: str
    agent_id: str
    tenant_id: str | None = None
    negotiated: frozenset[str] | None = None  # methods_evaluated; None = no handshake yet
    started: bool = False
    closed: bool = False
    head: str | None = None
    seq: int = 0
    turn_id: str | None = None
    parent_session_id: str | None = None
    agbom: AgBOM | None = None
    graph: ComponentGraph | None = None
    agbom_version: int = 0
    # The last AgBOM received when it was refused (None once one is accepted): the base a later
    # incremental agbom/changed applies to. Never the session's inventory: an AgBOM built on
    # it is evaluated on its own, every finding counting (Policies._changed).
    refused_agbom: AgBOM | None = None
    findings: list[Any] = field(default_factory=list)
    # False for an AgBOM restored from the store: its findings are evaluated again when first
    # needed (Policies.findings_of), not taken as none.
    findings_known: bool = True
    recent_request_ids: dict[str, None] = field(default_factory=dict)
    nonces: OrderedDict[str, float] = field(default_factory=OrderedDict)
    deferrals: int = 0
    # "acs": opened by handshake/hello; "hook": opened by a runtime hook (Guardian.decide).
    # The two never mix: /acs cannot drive a hook session, nor a hook an ACS session.
    origin: str = "acs"
    implicit_start: bool = False  # opened by its first step, without steps/sessionStart
    # Key id of a signed handshake: every later request must be signed, every answer is.
    signed_key: str | None = None
    # What the client can apply (operator declaration, narrowed by the ClientHello).
    can_modify: bool = True
    can_ask: bool = True
    refused_request_ids: OrderedDict[str, None] = field(default_factory=OrderedDict)
    # Every pair whose latest skillRegister in this session was denied (no count bound).
    denied_registrations: set[SkillPair] = field(default_factory=set)
    # Whether the session is held to acs-provenance (the ClientHello claimed it as a
    # deterministic producer): on the session's record; None for a session stored before it
    # was (its chain entries say, see guardian/flow.py).
    provenance_profile: bool | None = False
    # request_ids of this session's toolCallRequests, which a toolCallResult's request_id_ref
    # must name.
    tool_calls: dict[str, None] = field(default_factory=dict)
    weight: int = 0  # the bytes this session is counted for in the Guardian's memory bound
    # Tools of ``agbom`` by name (see Policies._find_tool); rebuilt when agbom is replaced.
    tools_by_name: dict[str, Any] = field(default_factory=dict)
    tools_by_name_of: AgBOM | None = None
    # The fold of the chain as of this session's restore (empty for a session created here):
    # where the next restore starts from. None only for a state built by hand.
    chain: ChainFold | None = None

    def estimated_bytes(self) -> int:
        """What this session's state costs in memory, estimated from the sizes that grow."""
        components = len(self.agbom) if self.agbom is not None else 0
        if self.refused_agbom is not None:
            components += len(self.refused_agbom)
        if self.graph is not None and self.agbom is None:
            components = len(self.graph)
        remembered = (
            len(self.recent_request_ids)
            + len(self.refused_request_ids)
            + len(self.tool_calls)
            + len(self.nonces)
            + len(self.denied_registrations)
            + (self.chain.remembered() if self.chain is not None else 0)
        )
        return SESSION_BASE_BYTES + COMPONENT_BYTES * components + REMEMBERED_ID_BYTES * remembered

    @classmethod
    def restored(
        cls,
        session_id: str,
        stored: Mapping[str, Any],
        chain: ChainFold,
        latest_agbom: Mapping[str, Any] | None,
        held: HeldInventory | None = None,
    ) -> SessionState:
        """A session as its stored row, its chain (folded) and its latest accepted AgBOM
        version say it was (what a Guardian holds in memory, rebuilt after a restart or an
        eviction). ``chain`` is kept beside the session, unchanged, so that a later restore
        can start from it (:meth:`ChainFold.extended`); the session works on copies.

        ``latest_agbom`` is the stored version (a mapping with ``document`` and ``version``);
        its rule findings are then unknown until evaluated again (``findings_known``).
        ``held`` instead is that version as a replica held it in memory, graph and findings
        included."""
        negotiated = stored.get("negotiated")
        session = cls(
            session_id=session_id,
            agent_id=stored.get("agent_id") or "unknown",
            tenant_id=stored.get("tenant_id"),
            negotiated=frozenset(negotiated.get("methods", []))
            if isinstance(negotiated, Mapping)
            else None,
            parent_session_id=stored.get("parent_session_id"),
        )
        if isinstance(negotiated, Mapping):
            session.origin = str(negotiated.get("origin") or LEGACY_ORIGIN)
            signed_key = negotiated.get("signed_key")
            session.signed_key = signed_key if isinstance(signed_key, str) else None
            profile = negotiated.get("acs_provenance")
            session.provenance_profile = profile if isinstance(profile, bool) else None
            client = negotiated.get("client")
            if isinstance(client, Mapping):
                session.can_modify = client.get("modify") is not False
                session.can_ask = client.get("ask") is not False
        status = stored.get("status")
        # The chain is the serialized record (one writer per entry, across replicas); the
        # session row is written beside it. A chain with entries has started, and one with its
        # sessionEnd is sealed, whatever the row says (a crash between the two writes).
        session.started = status in ("open", "closed") or chain.seq > 0
        session.closed = status == "closed" or chain.ended
        session.deferrals = chain.deferrals
        session.head = chain.head
        session.seq = chain.seq
        session.turn_id = chain.turn_id
        session.recent_request_ids = chain.request_ids.copy()
        session.tool_calls = chain.tool_calls.copy()
        session.denied_registrations = chain.denied.copy()
        if held is not None:
            session.agbom, session.agbom_version = held.agbom, held.version
            session.graph = held.graph
            session.findings = list(held.findings or ())
            session.findings_known = held.findings is not None
            if held.tools_by_name is not None:
                session.tools_by_name, session.tools_by_name_of = held.tools_by_name, held.agbom
        elif latest_agbom is not None:
            session.agbom = AgBOM.from_document(latest_agbom["document"], source="stored AgBOM")
            session.agbom_version = int(latest_agbom.get("version", 0))
            session.findings_known = False
        session.chain = chain
        return session

    def remember_request(self, request_id: str) -> None:
        _remember(self.recent_request_ids, request_id, None, RECENT_REQUEST_IDS)

    def remember_refused(self, request_id: str) -> None:
        self.refused_request_ids[request_id] = None
        if len(self.refused_request_ids) > REFUSED_REQUEST_IDS:
            self.refused_request_ids.popitem(last=False)

    def seen_request(self, request_id: str) -> bool:
        return request_id in self.recent_request_ids or request_id in self.refused_request_ids

    def remember_registration(self, pair: SkillPair, allowed: bool) -> None:
        if allowed:
            self.denied_registrations.discard(pair)
        else:
            self.denied_registrations.add(pair)

    def registration_denied(self, pair: SkillPair) -> bool:
        """Whether the latest registration of ``pair`` in this session was denied."""
        return pair in self.denied_registrations

    def remember_tool_call(self, request_id: str) -> None:
        _remember(self.tool_calls, request_id, None, RECENT_REQUEST_IDS)

    def remember_nonce(self, nonce: str, now: float, window_s: float) -> None:
        self.nonces[nonce] = now
        while self.nonces:
            oldest, seen_at = next(iter(self.nonces.items()))
            if now - seen_at <= window_s:
                break
            self.nonces.pop(oldest)

    def ensure_graph(self) -> ComponentGraph:
        if self.graph is None:
            self.graph = ComponentGraph(self.agbom)
        return self.graph
