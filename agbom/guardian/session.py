"""Per-session state the Guardian keeps in memory (and restores from the store on restart)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from agbom.inventory import AgBOM, ComponentGraph

RECENT_REQUEST_IDS = 4096


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

    def remember_request(self, request_id: str) -> None:
        self.recent_request_ids[request_id] = None
        if len(self.recent_request_ids) > RECENT_REQUEST_IDS:
            self.recent_request_ids.popitem(last=False)

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
