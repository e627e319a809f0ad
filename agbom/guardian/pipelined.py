"""Pipelined commits: answers that wait for their chain entry, committed in batches.

See :meth:`agbom.guardian.Guardian.submit`. A step's answer is sent only once its entry is
stored; an entry the store refuses turns the answer into an error, never an allow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agbom.guardian.session import SessionState
from agbom.protocol import AcsError
from agbom.protocol import errors as codes
from agbom.store import ChainAppend, DuplicateRequest, StoreError

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
