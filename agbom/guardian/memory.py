"""The sessions a Guardian holds in memory: found, restored from the store, weighed, dropped.

A mixin of :class:`~agbom.guardian.Guardian`, which owns the state it works on. A session not
in memory is restored from the store when next used (its chain head, registrations and last
accepted AgBOM), so dropping one loses nothing; memory is bounded by count
(:data:`MAX_SESSIONS_IN_MEMORY`) and by estimated bytes (``GuardianConfig.max_session_bytes``),
least recently used first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agbom.guardian.config import GuardianConfig
from agbom.guardian.pipelined import Pipelined
from agbom.guardian.session import SessionState
from agbom.protocol import AcsError
from agbom.protocol import errors as codes
from agbom.store import Store

MAX_SESSIONS_IN_MEMORY = 2048
"""Sessions whose state a Guardian keeps in memory; others are restored from the store."""


class SessionMemory:
    """Session lookup and the memory bound (see the module docstring)."""

    # The Guardian's state this works on (set in Guardian.__init__).
    store: Store
    config: GuardianConfig
    clock: Callable[[], float]
    _lock: threading.RLock
    _sessions: dict[str, SessionState]
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
            session = SessionState(
                session_id=session_id, agent_id=agent_id or "unknown", tenant_id=tenant_id
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

    def _forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._session_bytes -= session.weight

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
        return SessionState.restored(
            session_id,
            stored,
            self.store.chain_entries(session_id),
            self.store.agbom_version(session_id),
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
