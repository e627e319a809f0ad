"""The sessions a Guardian holds in memory: found, restored from the store, weighed, dropped.

A part the :class:`~agbom.guardian.Guardian` has (not a base class of it): it holds the
sessions, and is told by the Guardian how to commit the queued entries first (``settle``) and
whom to tell of a dropped session (``forgotten``). The Guardian's lock guards it. A session not
in memory is restored from the store when next used (its chain head, registrations and last
accepted AgBOM), so dropping one loses nothing; memory is bounded by count
(:data:`MAX_SESSIONS_IN_MEMORY`), by estimated bytes (``GuardianConfig.max_session_bytes``)
and by the process's resident size (``GuardianConfig.max_memory_bytes``), least recently used
first.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from agbom.guardian.config import GuardianConfig
from agbom.guardian.session import ChainFold, HeldInventory, SessionState
from agbom.guardian.sizing import resident_bytes, return_freed_memory
from agbom.protocol import AcsError
from agbom.protocol import errors as codes
from agbom.store import Store, StoreError

RESIDENT_CHECK_BYTES = 8 * 1024 * 1024
RESIDENT_CHECK_S = 1.0
"""How often the process's resident size is looked at: after the sessions grew by so many
estimated bytes, or so many seconds (see ``SessionMemory._check_resident``)."""

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


class ForgottenSessions(Protocol):
    """Who keeps state of its own per session (the flow guard's provenance lineage), told
    when a session is dropped from memory so that it drops that state too."""

    def forget(self, session_id: str) -> None: ...

    def forget_all(self) -> None: ...


class SessionMemory:
    """Session lookup and the memory bound (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        config: GuardianConfig,
        *,
        settle: Callable[[], None],
        forgotten: Callable[[], ForgottenSessions],
    ) -> None:
        self._store = store
        self._config = config
        # Commits the queued chain entries (a restore reads the chain: they land first).
        self._settle = settle
        self._forgotten = forgotten
        self._sessions: dict[str, SessionState] = {}
        self._session_bytes = 0  # the estimated memory of ``_sessions`` (their weights)
        self._stale_chains: OrderedDict[str, RestorePoint] = OrderedDict()
        # The last look at the process's resident size (see _check_resident).
        self._resident_checked_at = 0.0
        self._resident_checked_bytes = 0
        self._resident_floor = 0

    def held(self, session_id: str) -> SessionState | None:
        """The session if it is in memory (without restoring it or marking it used)."""
        return self._sessions.get(session_id)

    def session(
        self, session_id: str, agent_id: str | None, tenant_id: str | None, *, create: bool = True
    ) -> SessionState:
        """The session, most recently used now: from memory, else restored from the store,
        else (``create``) a new one with an empty chain; raises -32003 ``no_session`` for an
        unknown one without ``create``."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._sessions[session_id] = session  # most recently used goes last
            return session
        self._settle()  # restoring reads the chain: queued entries land first
        session = self._sessions.get(session_id)
        if session is not None:  # restored meanwhile, by a request decided again
            return session
        stored = self._store.get_session(session_id)
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
            session = self.restore(session_id, stored)
        self._sessions[session_id] = session
        self.reweigh(session)
        if len(self._sessions) > MAX_SESSIONS_IN_MEMORY:
            # Bound memory on a long-running server: agents that vanish without sessionEnd
            # would otherwise stay forever. The least recently used one is restored from the
            # store if it ever comes back.
            self.forget(next(iter(self._sessions)))
        return session

    def reloaded(
        self, session: SessionState, agent_id: str | None, tenant_id: str | None
    ) -> SessionState:
        """``session``, held with no handshake, as the store has it if another replica has
        negotiated it since (else as it is: it may hold components observed by a hook)."""
        stored = self._store.get_session(session.session_id)
        if stored is None or stored.get("negotiated") is None:
            return session
        self.forget(session.session_id)
        return self.session(session.session_id, agent_id, tenant_id)

    def forget(self, session_id: str, *, stale: bool = False) -> None:
        """Drop ``session_id`` from memory. ``stale``: because the store refused its append
        (another replica appended to it, or the commit failed), so its state in memory ran
        ahead of the store; what it was restored from is kept aside for a while, so that
        restoring it reads only the entries appended since."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        self._session_bytes -= session.weight
        self._store.release_session(session_id)
        # Its provenance lineage goes too (it is outside the session's weight, and a stale
        # one ran ahead of the store like the rest): flow.py rebuilds it from the chain
        # entries when a decision next needs it.
        self._forgotten().forget(session_id)
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

    def reweigh(self, session: SessionState) -> None:
        """Count ``session`` at its current size; past the memory bound, drop the least
        recently used other sessions (their state is in the store, restored when next used)."""
        weight = session.estimated_bytes()
        self._session_bytes += weight - session.weight
        session.weight = weight
        while self._session_bytes > self._config.max_session_bytes and len(self._sessions) > 1:
            self.forget(self._least_recent(session))
        self._check_resident(session)

    def _least_recent(self, serving: SessionState) -> str:
        oldest = next(iter(self._sessions))
        if oldest == serving.session_id:
            # The session being served is the oldest only when it is alone with ones used
            # after it; the next goes instead.
            oldest = list(self._sessions)[1]
        return oldest

    def _check_resident(self, serving: SessionState) -> None:
        """Hold the process's real resident size to ``max_memory_bytes``: past it, drop the
        least recently used sessions until their estimated weights add up to the excess, and
        hand the freed memory back to the system.

        Looked at when the sessions grew by :data:`RESIDENT_CHECK_BYTES` (estimated) or
        :data:`RESIDENT_CHECK_S` went by, which costs a read of ``/proc/self/statm``. What the
        heap keeps after a drop (fragments of pages still in use) is not the sessions' to
        free: it becomes the floor, and sessions are dropped again only once the process grew
        past it by the same step, so that a process whose heap cannot shrink below the bound
        does not drop every session on every request."""
        bound = self._config.max_memory_bytes
        if bound is None:
            return
        now = time.monotonic()
        grown = self._session_bytes - self._resident_checked_bytes
        if grown < RESIDENT_CHECK_BYTES and now - self._resident_checked_at < RESIDENT_CHECK_S:
            return
        self._resident_checked_at, self._resident_checked_bytes = now, self._session_bytes
        resident = resident_bytes()
        if resident is None or resident <= max(bound, self._resident_floor + RESIDENT_CHECK_BYTES):
            return
        excess = resident - bound
        freed = 0
        while freed < excess and len(self._sessions) > 1:
            oldest = self._least_recent(serving)
            freed += self._sessions[oldest].weight
            self.forget(oldest)
        return_freed_memory()
        after = resident_bytes()
        self._resident_floor = after if after is not None and after > bound else 0
        self._resident_checked_bytes = self._session_bytes

    def in_use(self) -> tuple[int, int]:
        """How many sessions are held in memory, and their estimated bytes."""
        return len(self._sessions), self._session_bytes

    def restore(self, session_id: str, stored: Mapping[str, Any]) -> SessionState:
        """The session as the store has it. After a stale forget, from what it was restored
        from plus the entries appended since, and its AgBOM as it was when that is still the
        latest accepted version; else from the whole chain and the stored AgBOM."""
        kept = self._stale_chains.pop(session_id, None)
        chain = None
        if kept is not None:
            since = self._store.chain_entries(session_id, after=kept.chain.seq)
            chain = kept.chain.extended(since)
        if chain is None:
            chain = ChainFold.of(self._store.chain_entries(session_id))
        held = kept.inventory if kept is not None else None
        if held is not None and self._store.agbom_version_number(session_id) == held.version:
            return SessionState.restored(session_id, stored, chain, None, held)
        return SessionState.restored(
            session_id, stored, chain, self._store.agbom_version(session_id)
        )

    def restore_all(self, session_ids: set[str]) -> bool:
        """Restore these sessions from the store into memory; False if one could not be."""
        for session_id in sorted(session_ids):
            try:
                stored = self._store.get_session(session_id)
                if stored is None:
                    return False
                session = self.restore(session_id, stored)
            except StoreError:
                return False
            self.forget(session_id)
            self._sessions[session_id] = session
            self.reweigh(session)
        return True

    def clear(self) -> None:
        """Drop every session from memory (a restart, as tests simulate it)."""
        self._sessions.clear()
        self._session_bytes = 0
        self._forgotten().forget_all()
        self._stale_chains.clear()
        self._resident_floor = self._resident_checked_bytes = 0


def persist_session(store: Store, session: SessionState, *, status: str, at: float) -> None:
    """Write the session's row (its status, negotiation and client keys) to ``store``; ``at``
    (epoch seconds) is when it ended, for a closed one."""
    now = datetime.fromtimestamp(at, UTC)
    store.upsert_session(
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
            "acs_provenance": session.provenance_profile,
        },
    )
