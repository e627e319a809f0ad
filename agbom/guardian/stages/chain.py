"""Stage 6, append: the step's ContextEntry appended to the session's hash chain.

Guarantees to the next stage: for an audited method, the entry (its request hash, decision,
reason codes, turn, substitution and what the policy adds) is committed to the store and
``context.chain_hash`` is the session's new head; or, for a pipelined step, the entry is
queued for the next batch commit, the head moved on in memory, and the answer will be sent
only once the entry is stored. A chain that moved on elsewhere raises :class:`StaleSession`
(the session dropped from memory); a request id or nonce the store holds, -32005; any other
store refusal, -32603 ``audit_append_failed``: no decision stands without its entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agbom.guardian.pipelined import PipelinedCommits, replay_error
from agbom.guardian.stages.request import RequestContext
from agbom.protocol import AcsError, entry_hash, request_hash
from agbom.protocol import errors as codes
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, Store, StoreError
from agbom.store.interface import utc_timestamp

if TYPE_CHECKING:
    from agbom.guardian.memory import SessionMemory
    from agbom.guardian.session import SessionState


class StaleSession(Exception):
    """The session's chain in the store moved past this Guardian's head (another replica, or
    another process on the same store, appended to it). The session has been dropped from
    memory; the request must be decided again on its reloaded state."""


EntryExtras = Callable[[str, "SessionState"], dict[str, Any]]
"""What the policy adds to a step's entry (``Policies.entry_extras``)."""


class AppendToChain:
    """Stage 6 (see the module docstring), over the Guardian's store and commit queue."""

    def __init__(
        self,
        *,
        store: Store,
        commits: PipelinedCommits,
        memory: SessionMemory,
        clock: Callable[[], float],
        extras: EntryExtras,
    ) -> None:
        self._store = store
        self._commits = commits
        self._memory = memory
        self._clock = clock
        self._extras = extras

    def __call__(self, context: RequestContext) -> None:
        """Commit (or queue) the step's ContextEntry; ``context.chain_hash`` is its hash."""
        method = context.method
        params = context.checked_params
        session = context.checked_session
        decision = context.decision
        assert decision is not None
        substitution = context.substitution
        request_id = params["request_id"]
        entry: dict[str, Any] = {
            "entry_id": str(session.seq + 1),
            "step_id": request_id,
            "step_type": method,
            "request_hash": (
                context.prechecked.request_hash
                if context.prechecked is not None
                else request_hash(params)
            ),
            "timestamp": utc_timestamp(self._clock()),
            "decision": decision.disposition.value,
        }
        if decision.reason_codes:
            entry["reason_codes"] = list(dict.fromkeys(decision.reason_codes))
        # Steps between turnStart and turnEnd belong to the open turn even if the framework
        # omitted metadata.turn_id.
        turn_id = params["metadata"].get("turn_id") or session.turn_id
        if turn_id:
            entry["turn_id"] = turn_id
        if substitution is not None:
            entry["substitution"] = dict(substitution)
        if session.seq == 0 and session.implicit_start:
            entry["session_start"] = "implicit"
        extra = self._extras(method, session)
        entry.update(extra)
        pipelined = context.pipelined
        if pipelined is not None and self._commits.started:
            digest = entry_hash(entry, session.head)
            pipelined.append = ChainAppend(
                session.session_id,
                entry,
                digest,
                session.head,
                request_id=request_id,
                nonce=params.get("nonce"),
            )
            self._commits.enqueue(pipelined)
            # The head moves now so that the next request chains on this entry; if the store
            # refuses it, the session is dropped from memory and restored from the store.
            session.head = digest
            session.seq += 1
            session.remember_request(request_id)
            context.chain_hash = digest
            return
        digest = entry_hash(entry, session.head)
        try:
            seq = self._store.append_entry(
                session.session_id,
                entry=entry,
                entry_hash=digest,
                previous_hash=session.head,
                request_id=request_id,
                nonce=params.get("nonce"),
            )
        except ChainConflict as exc:
            # Another replica appended to this session: everything this decision stood on
            # (closed, started, turn, tool calls, inventory, replayed ids) may have changed.
            self._memory.forget(session.session_id, stale=True)
            raise StaleSession(session.session_id) from exc
        except DuplicateRequest as exc:
            raise replay_error(exc) from exc
        except StoreError as exc:
            # Not stored: the decision must not stand (the same answer as a batched entry's).
            raise AcsError(codes.INTERNAL_ERROR, "audit_append_failed", str(exc)) from exc
        session.head = digest
        session.seq = seq
        session.remember_request(request_id)
        context.chain_hash = digest
