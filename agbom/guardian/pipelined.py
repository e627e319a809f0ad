"""Pipelined commits: answers that wait for their chain entry, committed in batches.

See :meth:`agbom.guardian.Guardian.submit`. A step's answer is sent only once its entry is
stored; an entry the store refuses turns the answer into an error, never an allow.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agbom.guardian.session import SessionState
from agbom.protocol import AcsError
from agbom.protocol import errors as codes
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, Store, StoreError

if TYPE_CHECKING:
    from agbom.guardian.context import PreparedSnapshot

PIPELINED_METHODS = frozenset(
    {
        "steps/agentTrigger",
        "steps/turnStart",
        "steps/userMessage",
        "steps/agentResponse",
        "steps/knowledgeRetrieval",
        "steps/memoryContextRetrieval",
        "steps/memoryStore",
        "steps/toolCallRequest",
        "steps/toolCallResult",
        "steps/preCompact",
        "steps/postCompact",
        "steps/turnEnd",
    }
)
"""Steps whose decision writes nothing to the store but the chain entry. With pipelined
commits (:meth:`Guardian.submit`), their entries are queued and committed together once the
event loop has decided the requests at hand. Every other method first commits what is queued,
then commits its own entry at once, because it reads or writes store state (sessions, skills,
AgBOM versions, a child's chain) that must agree with the chain."""

MAX_QUEUED = 512
"""Entries queued for one commit; the next request commits them first (back-pressure)."""

Reply = Callable[[dict[str, Any]], None]
Schedule = Callable[[Callable[[], None]], object]


@dataclass(slots=True)
class Pipelined:
    """One request whose answer waits for its chain entry; replies once both are known."""

    request_id: Any
    reply: Reply
    request: Any = None  # decided again if its entry lands on a chain that moved on elsewhere
    attempts: int = 0  # times its entry was refused for a stale head
    append: ChainAppend | None = None
    response: dict[str, Any] | None = None
    outcome: int | StoreError | None = None
    sent: bool = False
    signer: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    on_commit: Callable[[], None] | None = None  # telemetry, once the entry is stored

    def answer(self, response: dict[str, Any]) -> None:
        self.response = response
        self._maybe_reply()

    def committed(self, outcome: int | StoreError) -> None:
        self.outcome = outcome
        self._maybe_reply()

    def reset(self) -> None:
        """Forget the refused entry and its answer, to be decided again."""
        self.append = self.response = self.outcome = self.signer = None

    def redecided(self, response: dict[str, Any]) -> None:
        """Answer with the outcome of deciding the request again (its first entry chained on
        a head another replica had moved past, so it was never stored)."""
        if not self.sent:
            self.sent = True
            self.reply(response)

    def _maybe_reply(self) -> None:
        if self.sent or self.response is None or self.outcome is None:
            return
        self.sent = True
        if isinstance(self.outcome, int):
            self.reply(self.response)
            if self.on_commit is not None:
                self.on_commit()
            return
        if isinstance(self.outcome, DuplicateRequest):
            err = replay_error(self.outcome)
        else:
            # The decision was made but its entry is not in the chain: it must not stand.
            err = AcsError(codes.INTERNAL_ERROR, "audit_append_failed", str(self.outcome))
        response = codes.error_response(self.request_id, err)
        self.reply(self.signer(response) if self.signer is not None else response)


def replay_error(exc: DuplicateRequest) -> AcsError:
    """A request id or nonce the store already holds, as the -32005 the client gets."""
    return AcsError(codes.REPLAY_DETECTED, f"duplicate_{exc.field}", str(exc))


@dataclass(slots=True)
class RequestContext:
    """What the Guardian has learnt of the request it is answering, for its error answer:
    the session (once known to have a handshake) and the key that signs the answer."""

    request_id: str | None = None
    session: SessionState | None = None
    session_id: str | None = None
    key_id: str | None = None


STALE_ATTEMPTS = 5
"""How many times one request is decided when its session's chain keeps moving under it
(another replica on the same store appending to the same session): each attempt reloads the
session from the store and decides again; after the last, the client gets ``chain_conflict``."""


class PipelinedCommits:
    """The Guardian's commit queue: entries of pipelined steps committed in batches, and what
    happens to a batch's refused entries. A mixin of :class:`~agbom.guardian.Guardian`, which
    owns the state it works on."""

    # The Guardian's state this works on (set in Guardian.__init__).
    store: Store
    _lock: threading.RLock
    _schedule: Schedule | None
    _loop_thread: int | None
    _queued: list[Pipelined]
    _request: RequestContext | None
    _pipelined: Pipelined | None
    _prepared: PreparedSnapshot | None
    _sessions: dict[str, SessionState]

    if TYPE_CHECKING:

        def _answer(self, request: Any, *, attempts: int = STALE_ATTEMPTS) -> dict[str, Any]: ...

        def _forget(self, session_id: str, *, stale: bool = False) -> None: ...

        def _restore(self, session_id: str, stored: Any) -> SessionState: ...

        def _reweigh(self, session: SessionState) -> None: ...

    def start_pipelined_commits(self, schedule: Schedule) -> None:
        """Queue the chain entries of :data:`PIPELINED_METHODS` and commit them in batches.

        Call on the thread that will call :meth:`submit`, with a ``schedule`` that runs a
        callback on that thread once the requests at hand are decided: an event loop's
        ``call_soon_threadsafe``, or the decision process's end-of-batch list. A request's
        answer is still sent only after its entry is committed, but the entries of everything
        decided in between share one statement and one WAL commit.
        """
        with self._lock:
            self._schedule = schedule
            self._loop_thread = threading.get_ident()

    def stop_pipelined_commits(self) -> None:
        """Commit what is queued and go back to committing every entry at once."""
        with self._lock:
            self._settle()
            self._schedule = None
            self._loop_thread = None

    def _commit_scheduled(self) -> None:
        with self._lock:
            self._settle()

    def _settle(self) -> None:
        """Commit the queued entries, until none is left (see :meth:`_settle_batch`)."""
        while self._queued:
            self._settle_batch()

    def _settle_batch(self) -> None:
        """Commit the queued entries; sessions with a refused entry are dropped from memory
        (their head ran ahead of the store) and restored from the store when next used.

        An entry refused because the stored chain moved on (another replica appended to the
        session, or an earlier entry of this batch was refused) was decided on a stale head:
        its session is restored and it is decided again, queued for the next batch, at most
        :data:`STALE_ATTEMPTS` times in all (the last time on its own, committed at once)."""
        queued, self._queued = self._queued, []
        if not queued:
            return
        appends = [p.append for p in queued if p.append is not None]  # all of them: see _append
        try:
            outcomes = self.store.append_entries(appends)
        except StoreError as exc:  # refused as a whole before anything was written
            outcomes = [exc] * len(appends)
        for append, outcome in zip(appends, outcomes, strict=True):
            if not isinstance(outcome, int):
                self._forget(append.session_id, stale=True)
        stale = [
            index
            for index, (pipelined, outcome) in enumerate(zip(queued, outcomes, strict=True))
            if isinstance(outcome, ChainConflict) and pipelined.request is not None
        ]
        redecided: dict[int, dict[str, Any]] = {}
        requeued: set[int] = set()
        # One restore per session, before any is decided again (so none restores mid-way).
        restored = self._schedule is not None and self._restore_all(
            {appends[index].session_id for index in stale}
        )
        for index in stale:
            pipelined = queued[index]
            pipelined.attempts += 1
            if not restored or pipelined.attempts >= STALE_ATTEMPTS - 1:
                # The attempts left, each committed at once (a refusal is answered at once).
                left = STALE_ATTEMPTS - pipelined.attempts
                redecided[index] = self._redecide(pipelined.request, attempts=left)
                continue
            response = self._requeue(pipelined)
            if response is None:
                requeued.add(index)  # answered once its new entry is committed
            else:
                redecided[index] = response  # refused this time (a replay, a closed session)

        def deliver() -> None:
            for index, (pipelined, outcome) in enumerate(zip(queued, outcomes, strict=True)):
                if index in redecided:
                    pipelined.redecided(redecided[index])
                elif index not in requeued:
                    pipelined.committed(outcome)

        if threading.get_ident() == self._loop_thread or self._schedule is None:
            deliver()
        else:
            self._schedule(deliver)  # replies resolve the loop's futures: on its thread

    def _restore_all(self, session_ids: set[str]) -> bool:
        """Restore these sessions from the store into memory; False if one could not be."""
        for session_id in sorted(session_ids):
            try:
                stored = self.store.get_session(session_id)
                if stored is None:
                    return False
                session = self._restore(session_id, stored)
            except StoreError:
                return False
            self._forget(session_id)
            self._sessions[session_id] = session
            self._reweigh(session)
        return True

    def _requeue(self, pipelined: Pipelined) -> dict[str, Any] | None:
        """Decide a pipelined request again and queue its new entry; returns its response when
        it is final now (refused before an entry was queued), else None."""
        saved = self._request, self._pipelined, self._prepared
        pipelined.reset()
        self._request, self._pipelined, self._prepared = None, pipelined, None
        try:
            response = self._answer(pipelined.request)
        finally:
            self._request, self._pipelined, self._prepared = saved
        if pipelined.append is None:
            return response
        pipelined.answer(response)
        return None

    def _redecide(self, request: Any, *, attempts: int) -> dict[str, Any]:
        """Decide ``request`` again, committing its entry at once (not queued). May run in the
        middle of another request's pipeline (a restore commits the queue first): that
        request's context is kept aside meanwhile."""
        saved = self._request, self._pipelined, self._prepared
        self._request = self._pipelined = self._prepared = None
        try:
            return self._answer(request, attempts=attempts)
        finally:
            self._request, self._pipelined, self._prepared = saved
