"""The sessions a Guardian holds in memory: found, restored from the store, weighed, dropped.

A mixin of :class:`~agbom.guardian.Guardian`, which owns the state it works on. A session not
in memory is restored from the store when next used (its chain head, registrations and last
accepted AgBOM), so dropping one loses nothing; memory is bounded by count
(:data:`MAX_SESSIONS_IN_MEMORY`) and by estimated bytes (``GuardianConfig.max_session_bytes``),
least recently used first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agbom.guardian.config import GuardianConfig
from agbom.guardian.pipelined import Pipelined
from agbom.guardian.session import ChainFold, HeldInventory, SessionState
from agbom.protocol import AcsError
from agbom.protocol import errors as codes
from agbom.store import Store

MAX_SESSIONS_IN_MEMORY = 2048
"""Sessions whose state a Guardian keeps in memory; others are restored from the store."""


@dataclass(frozen=True, slots=True)
class RestorePoint:
    """What a session forgotten as stale is restored from: the fold of the chain it was last
    restored from, and its inventory as it held it (``None`` without an AgBOM)."""

    chain: ChainFold
    inventory: HeldInventory | None


STALE_CHAINS_KEPT = 64
"""Sessions forgotten as stale whose restore point is kept until they are restored (at once,
as a rule: the request that found them stale is decided again)."""


class SessionMemory:
    """Session lookup and the memory bound (see the module docstring)."""

    # The Guardian's state this works on (set in Guardian.__init__).
    store: Store
    config: GuardianConfig
    clock: Callable[[], float]
    _lock: threading.RLock
    _sessions: dict[str, SessionState]
    _stale_chains: OrderedDict[str, RestorePoint]
    _session_bytes: int
    _queued: list[Pipelined]

    if TYPE_CHECKING:

        def _settle(self) -> None: ...

    def _session(
        self, session_id: str, agent_id: str | None, tenant_id: str | None, *, create: bool = True
    ) -> SessionState:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._sessions[session_id] = session  # most recently used goes last
            return session
        if self._queued:
            self._settle()  # restoring reads the chain: queued entries land first
            session = self._sessions.get(session_id)
            if session is not None:  # restored meanwhile, by a request decided again
                return session
        stored = self.store.get_session(session_id)
        if stored is None:
            if not create:
                raise AcsError(codes.CAPABILITY_NOT_NEGOTIATED, "no_session", "unknown session")
            # A new session's chain is empty: restoring it after another replica appended
            # starts from that (and keeps the AgBOM it holds, if that is still the latest).
            session = SessionState(
                session_id=session_id,
                agent_id=agent_id or "unknown",
                tenant_id=tenant_id,
                chain=ChainFold(),
            )
        else:
            session = self._restore(session_id, stored)
        self._sessions[session_id] = session
        self._reweigh(session)
        if len(self._sessions) > MAX_SESSIONS_IN_MEMORY:
            # Bound memory on a long-running server: agents that vanish without sessionEnd
            # would otherwise stay forever. The least recently used one is restored from the
            # store if it ever comes back.
            self._forget(next(iter(self._sessions)))
        return session

    def _reloaded(
        self, session: SessionState, agent_id: str | None, tenant_id: str | None
    ) -> SessionState:
        """``session``, held with no handshake, as the store has it if another replica has
        negotiated it since (else as it is: it may hold components observed by a hook)."""
        stored = self.store.get_session(session.session_id)
        if stored is None or stored.get("negotiated") is None:
            return session
        self._forget(session.session_id)
        return self._session(session.session_id, agent_id, tenant_id)

    def _forget(self, session_id: str, *, stale: bool = False) -> None:
        """Drop ``session_id`` from memory. ``stale``: because the store refused its append
        (another replica appended to it, or the commit failed), so its state in memory ran
        ahead of the store; what it was restored from is kept aside for a while, so that
        restoring it reads only the entries appended since."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        self._session_bytes -= session.weight
        if stale and session.chain is not None:
            kept = self._stale_chains
            kept.pop(session_id, None)
            held = None
            if session.agbom is not None:
                findings = session.findings if session.findings_known else None
                tools = session.tools_by_name if session.tools_by_name_of is session.agbom else None
                held = HeldInventory(
                    session.agbom, session.agbom_version, session.graph, findings, tools
                )
            kept[session_id] = RestorePoint(session.chain, held)
            if len(kept) > STALE_CHAINS_KEPT:
                kept.popitem(last=False)

    def _reweigh(self, session: SessionState) -> None:
        """Count ``session`` at its current size; past the memory bound, drop the least
        recently used other sessions (their state is in the store, restored when next used)."""
        weight = session.estimated_bytes()
        self._session_bytes += weight - session.weight
        session.weight = weight
        while self._session_bytes > self.config.max_session_bytes and len(self._sessions) > 1:
            oldest = next(iter(self._sessions))
            if oldest == session.session_id:
                # The session being served is the oldest only when it is alone with ones
                # used after it; drop the next instead.
                oldest = list(self._sessions)[1]
            self._forget(oldest)

    def memory_in_use(self) -> tuple[int, int]:
        """How many sessions are held in memory, and their estimated bytes."""
        with self._lock:
            return len(self._sessions), self._session_bytes

    def _restore(self, session_id: str, stored: Mapping[str, Any]) -> SessionState:
        """The session as the store has it. After a stale forget, from what it was restored
        from plus the entries appended since, and its AgBOM as it was when that is still the
        latest accepted version; else from the whole chain and the stored AgBOM."""
        kept = self._stale_chains.pop(session_id, None)
        chain = None
        if kept is not None:
            since = self.store.chain_entries(session_id, after=kept.chain.seq)
            chain = kept.chain.extended(since)
        if chain is None:
            chain = ChainFold.of(self.store.chain_entries(session_id))
        held = kept.inventory if kept is not None else None
        if held is not None and self.store.agbom_version_number(session_id) == held.version:
            return SessionState.restored(session_id, stored, chain, None, held)
        return SessionState.restored(
            session_id, stored, chain, self.store.agbom_version(session_id)
        )

    def _persist_session(self, session: SessionState, *, status: str) -> None:
        now = datetime.fromtimestamp(self.clock(), UTC)
        self.store.upsert_session(
            session.session_id,
            agent_id=session.agent_id,
            tenant_id=session.tenant_id,
            parent_session_id=session.parent_session_id,
            status=status,
            ended_at=now if status == "closed" else None,
            negotiated={
                "methods": sorted(session.negotiated or ()),
                "origin": session.origin,
                "signed_key": session.signed_key,
                "client": {"modify": session.can_modify, "ask": session.can_ask},
            },
        )

    def forget_sessions(self) -> None:
        """Drop in-memory session state (tests use this to simulate a restart)."""
        with self._lock:
            self._sessions.clear()
            self._session_bytes = 0
            self._stale_chains.clear()
