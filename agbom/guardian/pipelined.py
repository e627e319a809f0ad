"""Pipelined commits: answers that wait for their chain entry, committed in batches.

See :meth:`agbom.guardian.Guardian.submit`. A step's answer is sent only once its entry is
stored; an entry the store refuses turns the answer into an error, never an allow.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agbom.protocol import AcsError
from agbom.protocol import errors as codes
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, Store, StoreError

if TYPE_CHECKING:
    from agbom.guardian.memory import SessionMemory

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


STALE_ATTEMPTS = 5
"""How many times one request is decided when its session's chain keeps moving under it
(another replica on the same store appending to the same session): each attempt reloads the
session from the store and decides again; after the last, the client gets ``chain_conflict``."""


class Redecide(Protocol):
    """Decide a request again, from its envelope, on the sessions as memory now holds them;
    ``pipelined``: the queued request it is (its new entry is queued again), or None to
    commit its entry at once. Returns its response."""

    def __call__(
        self, request: Any, *, pipelined: Pipelined | None, attempts: int
    ) -> dict[str, Any]: ...


class PipelinedCommits:
    """The Guardian's commit queue: entries of pipelined steps committed in batches, and what
    happens to a batch's refused entries. A part the :class:`~agbom.guardian.Guardian` has:
    it is given the store, the session memory (to drop and restore the sessions of refused
    entries), the Guardian's lock, and how to decide a request again."""

    def __init__(
        self,
        store: Store,
        memory: SessionMemory,
        lock: threading.RLock,
        redecide: Redecide,
    ) -> None:
        self._store = store
        self._memory = memory
        self._lock = lock
        self._redecide_request = redecide
        self._schedule: Schedule | None = None
        self._loop_thread: int | None = None
        self._queued: list[Pipelined] = []

    @property
    def started(self) -> bool:
        """Whether pipelined steps are queued (after :meth:`start`), not committed at once."""
        return self._schedule is not None

    @property
    def full(self) -> bool:
        """Whether the queue is at :data:`MAX_QUEUED` (commit it before queueing more)."""
        return len(self._queued) >= MAX_QUEUED

    def enqueue(self, pipelined: Pipelined) -> None:
        """Queue a decided step's entry (``pipelined.append``); the first of a batch schedules
        the batch's commit."""
        assert self._schedule is not None
        self._queued.append(pipelined)
        if len(self._queued) == 1:
            self._schedule(self._commit_scheduled)

    def start(self, schedule: Schedule) -> None:
        """See :meth:`Guardian.start_pipelined_commits`."""
        with self._lock:
            self._schedule = schedule
            self._loop_thread = threading.get_ident()

    def stop(self) -> None:
        """Commit what is queued and go back to committing every entry at once."""
        with self._lock:
            self.settle()
            self._schedule = None
            self._loop_thread = None

    def _commit_scheduled(self) -> None:
        with self._lock:
            self.settle()

    def settle(self) -> None:
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
        appends = [p.append for p in queued if p.append is not None]  # all of them: see enqueue
        try:
            outcomes = self._store.append_entries(appends)
        except StoreError as exc:  # refused as a whole before anything was written
            outcomes = [exc] * len(appends)
        for append, outcome in zip(appends, outcomes, strict=True):
            if not isinstance(outcome, int):
                self._memory.forget(append.session_id, stale=True)
        stale = [
            index
            for index, (pipelined, outcome) in enumerate(zip(queued, outcomes, strict=True))
            if isinstance(outcome, ChainConflict) and pipelined.request is not None
        ]
        redecided: dict[int, dict[str, Any]] = {}
        requeued: set[int] = set()
        # One restore per session, before any is decided again (so none restores mid-way).
        restored = self._schedule is not None and self._memory.restore_all(
            {appends[index].session_id for index in stale}
        )
        for index in stale:
            pipelined = queued[index]
            pipelined.attempts += 1
            if not restored or pipelined.attempts >= STALE_ATTEMPTS - 1:
                # The attempts left, each committed at once (a refusal is answered at once).
                left = STALE_ATTEMPTS - pipelined.attempts
                redecided[index] = self._redecide_request(
                    pipelined.request, pipelined=None, attempts=left
                )
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

    def _requeue(self, pipelined: Pipelined) -> dict[str, Any] | None:
        """Decide a pipelined request again and queue its new entry; returns its response when
        it is final now (refused before an entry was queued), else None."""
        pipelined.reset()
        response = self._redecide_request(
            pipelined.request, pipelined=pipelined, attempts=STALE_ATTEMPTS
        )
        if pipelined.append is None:
            return response
        pipelined.answer(response)
        return None
