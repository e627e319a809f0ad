"""Per-session state the Guardian keeps in memory (and restores from the store on restart)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agbom.inventory import AgBOM, ComponentGraph

RECENT_REQUEST_IDS = 4096
"""Request ids of decided steps each in-memory session remembers (older ones are caught by the
store's unique index when their entry is appended)."""
REFUSED_REQUEST_IDS = 1024
"""Request ids of refused requests each in-memory session remembers, so that a replay of a
refused request is answered -32005 rather than refused again for its first reason."""
SKILL_REGISTRATIONS = 1024
"""Outcomes of skillRegister per (skill_id, digest) each in-memory session remembers."""

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
    findings: list[Any] = field(default_factory=list)
    recent_request_ids: OrderedDict[str, None] = field(default_factory=OrderedDict)
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
    # Latest skillRegister outcome (allowed?) per pair in this session.
    registrations: OrderedDict[SkillPair, bool] = field(default_factory=OrderedDict)
    # request_ids of this session's toolCallRequests, which a toolCallResult's request_id_ref
    # must name.
    tool_calls: OrderedDict[str, None] = field(default_factory=OrderedDict)
    weight: int = 0  # the bytes this session is counted for in the Guardian's memory bound
    # Tools of ``agbom`` by name (see Policies._find_tool); rebuilt when agbom is replaced.
    tools_by_name: dict[str, Any] = field(default_factory=dict)
    tools_by_name_of: AgBOM | None = None

    def estimated_bytes(self) -> int:
        """What this session's state costs in memory, estimated from the sizes that grow."""
        components = len(self.agbom) if self.agbom is not None else 0
        if self.graph is not None and self.agbom is None:
            components = len(self.graph)
        remembered = (
            len(self.recent_request_ids)
            + len(self.refused_request_ids)
            + len(self.tool_calls)
            + len(self.nonces)
            + len(self.registrations)
        )
        return SESSION_BASE_BYTES + COMPONENT_BYTES * components + REMEMBERED_ID_BYTES * remembered

    @classmethod
    def restored(
        cls,
        session_id: str,
        stored: Mapping[str, Any],
        entries: Sequence[Mapping[str, Any]],
        latest_agbom: Mapping[str, Any] | None,
    ) -> SessionState:
        """A session as its stored row, its chain entries and its latest accepted AgBOM
        version say it was (what a Guardian holds in memory, rebuilt after a restart or an
        eviction)."""
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
            client = negotiated.get("client")
            if isinstance(client, Mapping):
                session.can_modify = client.get("modify") is not False
                session.can_ask = client.get("ask") is not False
        status = stored.get("status")
        # The chain is the serialized record (one writer per entry, across replicas); the
        # session row is written beside it. A chain with entries has started, and one with its
        # sessionEnd is sealed, whatever the row says (a crash between the two writes).
        session.started = status in ("open", "closed") or bool(entries)
        session.closed = status == "closed" or any(
            entry.get("step_type") == "steps/sessionEnd" for entry in entries
        )
        session.deferrals = sum(1 for entry in entries if entry.get("decision") == "defer")
        session.head = entries[-1]["entry_hash"] if entries else None
        session.seq = len(entries)
        for entry in entries[-RECENT_REQUEST_IDS:]:
            if isinstance(entry.get("step_id"), str):
                session.remember_request(entry["step_id"])
        for entry in entries:
            if entry.get("step_type") == "steps/toolCallRequest":
                session.remember_tool_call(str(entry.get("step_id")))
            skill = entry.get("skill") if entry.get("step_type") == "steps/skillRegister" else None
            if isinstance(skill, Mapping):
                pair = (str(skill["skill_id"]), str(skill["algorithm"]), str(skill["value"]))
                session.remember_registration(pair, entry.get("decision") != "deny")
        for entry in entries[-64:]:
            if entry.get("turn_id"):
                session.turn_id = entry["turn_id"]
            if entry.get("step_type") == "steps/turnEnd":
                session.turn_id = None
        if latest_agbom is not None:
            session.agbom = AgBOM.from_document(latest_agbom["document"], source="stored AgBOM")
            session.agbom_version = int(latest_agbom.get("version", 0))
        return session

    def remember_request(self, request_id: str) -> None:
        self.recent_request_ids[request_id] = None
        if len(self.recent_request_ids) > RECENT_REQUEST_IDS:
            self.recent_request_ids.popitem(last=False)

    def remember_refused(self, request_id: str) -> None:
        self.refused_request_ids[request_id] = None
        if len(self.refused_request_ids) > REFUSED_REQUEST_IDS:
            self.refused_request_ids.popitem(last=False)

    def seen_request(self, request_id: str) -> bool:
        return request_id in self.recent_request_ids or request_id in self.refused_request_ids

    def remember_registration(self, pair: SkillPair, allowed: bool) -> None:
        self.registrations.pop(pair, None)
        self.registrations[pair] = allowed
        if len(self.registrations) > SKILL_REGISTRATIONS:
            self.registrations.popitem(last=False)

    def remember_tool_call(self, request_id: str) -> None:
        self.tool_calls[request_id] = None
        if len(self.tool_calls) > RECENT_REQUEST_IDS:
            self.tool_calls.popitem(last=False)

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
