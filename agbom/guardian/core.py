"""The Guardian: one ACS request in, one JSON-RPC response out.

:meth:`Guardian._handle` runs the stages of :mod:`agbom.guardian.stages` in order (the
package docstring of :mod:`agbom.guardian` lists them). This module holds what ties them to
one Guardian: its lock, its parts (session memory, the commit queue), the retries when a
session's chain moves on elsewhere, the error answer, the in-process entry for adapters
(:meth:`Guardian.decide`), the handshake and ping, and the snapshot prepared off the lock.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agbom.guardian.config import GuardianConfig
from agbom.guardian.decision import Decision
from agbom.guardian.handshake import PROVENANCE_PROFILE, read_client_hello, server_hello
from agbom.guardian.memory import SessionMemory, persist_session
from agbom.guardian.pipelined import (
    PIPELINED_METHODS,
    STALE_ATTEMPTS,
    Pipelined,
    PipelinedCommits,
    Reply,
    Schedule,
)
from agbom.guardian.policies import Policies, PreparedSnapshot
from agbom.guardian.precheck import Prechecked
from agbom.guardian.session import SessionState
from agbom.guardian.stages.authenticate import Authenticate
from agbom.guardian.stages.chain import AppendToChain, StaleSession
from agbom.guardian.stages.decide import decide
from agbom.guardian.stages.envelope import read_envelope
from agbom.guardian.stages.replay import check_clock, check_replay_and_clock
from agbom.guardian.stages.request import RequestContext
from agbom.guardian.stages.respond import respond
from agbom.guardian.stages.session import resolve_session
from agbom.guardian.stages.sign import sign
from agbom.protocol import (
    ACS_VERSION,
    METHODS,
    AcsError,
    Disposition,
    KeyRing,
    MethodSpec,
    lookup,
    validate_envelope,
    validate_payload,
)
from agbom.protocol import errors as codes
from agbom.rules import RuleSet
from agbom.store import ChainConflict, DuplicateRequest, Store, StoreError
from agbom.store.interface import utc_timestamp

if TYPE_CHECKING:
    from agbom.guardian.signing import WireSigner
    from agbom.telemetry import DecisionObserver

Clock = Callable[[], float]

STORE_PROBE_S = 0.25
"""While the database server is unreachable, how often a request may try a write of its own
to see whether it is back (the others are refused at once)."""


def on_database_server(store: Store) -> bool:
    """Whether ``store`` lives on a database server (PostgreSQL) that can become unreachable
    while this process does nothing, rather than in a local file."""
    from agbom.store.factory import POSTGRES_SCHEMES

    scheme, _, rest = store.location.partition("://")
    return bool(rest) and scheme.lower() in POSTGRES_SCHEMES


class Guardian:
    """An ACS v0.1.0 Guardian over one store and one rule set.

    Thread-safe: requests are serialized under one lock. A decision is cheap (well under a
    millisecond), and the store has one writer anyway; serializing keeps the chain append and
    the session state consistent without finer locking.

    It has two parts of its own, both under that lock: :attr:`memory`, the sessions held in
    memory (:class:`~agbom.guardian.memory.SessionMemory`), and :attr:`commits`, the queue of
    pipelined chain entries (:class:`~agbom.guardian.pipelined.PipelinedCommits`).
    """

    def __init__(
        self,
        *,
        store: Store,
        rules: RuleSet,
        config: GuardianConfig | None = None,
        keyring: KeyRing | None = None,
        clock: Clock = time.time,
        transport: str | None = None,
        observer: DecisionObserver | None = None,
    ) -> None:
        self.store = store
        self.rules = rules
        self.config = config or GuardianConfig()
        self.keyring = keyring
        self.clock = clock
        # The transport requests arrive on ("http", "stdio"); None in process (replay, tests),
        # where a ClientHello's transports_supported is not checked against it.
        self.transport = transport
        self._prepared: PreparedSnapshot | None = None  # for the request being answered
        # Checks the HTTP front ran on the request being answered (agbom/guardian/precheck.py),
        # with the params object they hold for.
        self._checked: tuple[Prechecked, Any] | None = None
        self._lock = threading.RLock()
        self.policies = Policies(self)
        self.memory = SessionMemory(
            store, self.config, settle=self._settle, forgotten=lambda: self.policies.flow
        )
        self.commits = PipelinedCommits(store, self.memory, self._lock, self._decide_again)
        self._pipelined: Pipelined | None = None  # the request being decided, if pipelined
        # On a database server, once a call has found it unreachable, requests are refused at
        # once (every store call would wait out the pool's timeout) until a write of the
        # server's health probe, or any other, succeeds again.
        self._fails_fast = on_database_server(store)
        self._next_store_probe = 0.0
        self.store_probed_elsewhere = False
        """Set by a server that probes the store on its own schedule (the decision process):
        requests then never wait for a probe."""
        # Told of every committed decision (agbom.telemetry); None costs one test per step.
        self.observer = observer
        # The Guardian's own asymmetric keys (ACS-Crypto; agbom/guardian/signing.py), imported
        # only when configured: `cryptography` costs ~24 ms of start-up otherwise.
        self.signer: WireSigner | None = None
        if self.config.signing_keys:
            from agbom.guardian.signing import WireSigner

            self.signer = WireSigner.from_files(
                self.config.signing_keys, scope=self.config.sign_responses, store=store
            )
        # The stages that hold parts of the Guardian (the others are plain functions).
        self._authenticate = Authenticate(
            keyring=keyring,
            require_signatures=self.config.require_signatures,
            signer=self.signer,
            store=store,
            held=self.memory.held,
        )
        self._append = AppendToChain(
            store=store,
            commits=self.commits,
            memory=self.memory,
            clock=clock,
            extras=self.policies.entry_extras,
        )

    # -- public entry points -------------------------------------------------------------------

    def start_pipelined_commits(self, schedule: Schedule) -> None:
        """Queue the chain entries of :data:`PIPELINED_METHODS` and commit them in batches.

        Call on the thread that will call :meth:`submit`, with a ``schedule`` that runs a
        callback on that thread once the requests at hand are decided: an event loop's
        ``call_soon_threadsafe``, or the decision process's end-of-batch list. A request's
        answer is still sent only after its entry is committed, but the entries of everything
        decided in between share one statement and one WAL commit.
        """
        self.commits.start(schedule)

    def stop_pipelined_commits(self) -> None:
        """Commit what is queued and go back to committing every entry at once."""
        self.commits.stop()

    def memory_in_use(self) -> tuple[int, int]:
        """How many sessions are held in memory, and their estimated bytes."""
        with self._lock:
            return self.memory.in_use()

    def forget_sessions(self) -> None:
        """Drop in-memory session state (tests use this to simulate a restart)."""
        with self._lock:
            self.memory.clear()

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one parsed JSON-RPC request object with a response object."""
        with self._lock:
            self._settle()
            return self._answer(request)

    def prepare(self, request: Any, store: Store) -> PreparedSnapshot | None:
        """Do the heavy, state-free part of an ``agbom/snapshot`` ahead of :meth:`submit`.

        Runs without the Guardian's lock, so another thread can keep deciding small steps
        meanwhile: schema validation, the inventory model, its graph, the rule findings (with
        approvals read through ``store``, a connection of the caller's own) and the stored
        form. Pass the result to :meth:`submit` with the same request, which still runs every
        check of the pipeline in order and uses the work only if it is for that request and
        session. Returns None for a request that is not worth preparing (another method, a
        malformed envelope, a signature that does not verify).
        """
        if not isinstance(request, dict) or request.get("method") != "agbom/snapshot":
            return None
        try:
            validate_envelope(request, max_depth=self.config.max_json_depth)
            params: dict[str, Any] = request["params"]
            metadata = params["metadata"]
            if self.keyring is not None and "signature" in params:
                self.keyring.verify(request, metadata["session_id"])
            elif self.config.require_signatures:
                return None  # refused by the pipeline: not worth the work
            check_clock(params, self.clock(), self.config.skew_window_ms)
        except AcsError:
            return None
        if not _may_take_snapshot(store.get_session(str(metadata["session_id"]))):
            # Refused by the pipeline (no handshake, not negotiated, ended, a hook's): the
            # component bodies a prepared snapshot writes ahead must not be written for it.
            return None
        return self.policies.prepare_snapshot(
            params, str(metadata["agent_id"]), params.get("tenant_id"), store
        )

    def prepared_for(
        self, params: dict[str, Any], session: SessionState
    ) -> PreparedSnapshot | None:
        """The prepared work for the request being decided, if it is for this very request and
        this session's agent and tenant."""
        prepared = self._prepared
        if (
            prepared is None
            or prepared.params is not params
            or prepared.agent_id != session.agent_id
            or prepared.tenant_id != session.tenant_id
        ):
            return None
        return prepared

    def submit(
        self,
        request: Any,
        reply: Reply,
        prepared: PreparedSnapshot | None = None,
        *,
        checked: Prechecked | None = None,
    ) -> dict[str, Any] | None:
        """Answer now, or later once the chain entry is committed.

        Returns the response when it is final now. Returns None for a pipelined step (see
        :data:`PIPELINED_METHODS`, after :meth:`start_pipelined_commits`): ``reply`` is then
        called exactly once, on the event loop's thread, after the entry is committed, with the
        response, or with an error response if the entry could not be stored.

        ``checked`` says that another process already ran :func:`~agbom.guardian.precheck.
        precheck` on ``request`` (the HTTP front): its envelope and payload are not validated
        again and its request hash is taken as given.
        """
        with self._lock:
            params = request.get("params") if isinstance(request, dict) else None
            if checked is not None and isinstance(params, dict):
                self._checked = (checked, params)
            try:
                return self._submit(request, reply, prepared)
            finally:
                self._checked = None

    def _submit(
        self, request: Any, reply: Reply, prepared: PreparedSnapshot | None
    ) -> dict[str, Any] | None:
        method = request.get("method") if isinstance(request, dict) else None
        if (
            not self.commits.started
            or method not in PIPELINED_METHODS
            or not self._started_in_memory(request)
        ):
            # A session this Guardian does not hold as started is restored, or opened by
            # this step, with its entry committed at once (see _run's ``opens``).
            self._settle()
            self._prepared = prepared
            try:
                return self._answer(request)
            finally:
                self._prepared = None
        if self.commits.full:
            self._settle()
        pipelined = Pipelined(request_id=_response_id(request), reply=reply, request=request)
        self._pipelined = pipelined
        try:
            response = self._answer(request)
        finally:
            self._pipelined = None
        if pipelined.append is None:
            return response  # refused before its entry was queued: final now
        pipelined.answer(response)
        return None

    def _settle(self) -> None:
        """Commit the queued chain entries (before anything that reads the chain)."""
        self.commits.settle()

    def _decide_again(
        self, request: Any, *, pipelined: Pipelined | None, attempts: int
    ) -> dict[str, Any]:
        """Decide ``request`` again for :attr:`commits` (its entry was refused for a stale
        head). May run in the middle of another request's pipeline (a restore commits the
        queue first): that request's context is kept aside meanwhile."""
        saved = self._pipelined, self._prepared
        self._pipelined, self._prepared = pipelined, None
        try:
            return self._answer(request, attempts=attempts)
        finally:
            self._pipelined, self._prepared = saved

    def _persist_session(self, session: SessionState, *, status: str) -> None:
        """Write the session's row to the store (the :class:`PolicyHost` call)."""
        persist_session(self.store, session, status=status, at=self.clock())

    def _prechecked(self, params: Any) -> Prechecked | None:
        """What the front checked of the request being answered, if ``params`` are its own."""
        checked = self._checked
        return checked[0] if checked is not None and checked[1] is params else None

    def _started_in_memory(self, request: Any) -> bool:
        session = self.memory.held(_session_of(request) or "")
        return session is not None and session.started

    def _answer(self, request: Any, *, attempts: int = STALE_ATTEMPTS) -> dict[str, Any]:
        """Answer ``request``, deciding it again (at most ``attempts`` times in all) while its
        session's chain moves on elsewhere; every refusal becomes its error response here."""
        params = request.get("params") if isinstance(request, dict) else None
        for _attempt in range(max(1, attempts)):
            context = RequestContext(
                request=request, prechecked=self._prechecked(params), pipelined=self._pipelined
            )
            try:
                return self._handle(context)
            except StaleSession:
                continue  # decided on a stale head: decide again on the reloaded session
            except AcsError as exc:
                err = exc
            except StoreError as exc:
                err = _store_failure(exc)
            except Exception as exc:  # noqa: BLE001 - a Guardian answers, it does not crash
                err = _internal_error(exc)
            break
        else:
            err = _chain_conflict()
        session = context.session
        if session is not None and context.request_id and err.code != codes.REPLAY_DETECTED:
            # A replay of a refused request must be told it is a replay, not refused again
            # for its first reason (which may since have gone away).
            session.remember_refused(context.request_id)
        response = codes.error_response(_response_id(request), err)
        return sign(
            response,
            signer=self.signer,
            keyring=self.keyring,
            session_id=context.session_id,
            key_id=context.key_id,
            request_id=context.request_id or _request_id_of(request),
        )

    def _sign(self, context: RequestContext, response: dict[str, Any]) -> dict[str, Any]:
        """Stage 8 for an answered request: signed with the key the request was signed with
        (a rotation keeps both keys in the ring), or the Guardian's acs-crypto key."""
        params = context.checked_params
        return sign(
            response,
            signer=self.signer,
            keyring=self.keyring,
            session_id=params["metadata"]["session_id"],
            key_id=context.signed_by,
            request_id=params.get("request_id"),
            hello=context.method == "handshake/hello",
        )

    def decide(
        self,
        method: str,
        payload: dict[str, Any],
        *,
        session_id: str,
        agent_id: str,
        turn_id: str | None = None,
        tenant_id: str | None = None,
    ) -> Decision:
        """Trusted in-process entry for adapters: no envelope, implicit handshake and session.

        The same policies, approvals and audit chain decide as for ACS traffic.
        """
        spec = lookup(method)
        if spec is None:
            raise AcsError(codes.METHOD_NOT_FOUND, "method_not_found", f"unknown method {method}")
        with self._lock:
            self._settle()
            for _attempt in range(STALE_ATTEMPTS):
                try:
                    return self._decide(method, payload, session_id, agent_id, turn_id, tenant_id)
                except StaleSession:
                    continue  # another replica appended: decide again on the reloaded session
            raise _chain_conflict()

    def _decide(
        self,
        method: str,
        payload: dict[str, Any],
        session_id: str,
        agent_id: str,
        turn_id: str | None,
        tenant_id: str | None,
    ) -> Decision:
        self._require_reachable_store()
        session = self.memory.session(session_id, agent_id, tenant_id)
        if session.negotiated is None:
            session = self.memory.reloaded(session, agent_id, tenant_id)
        if session.negotiated is None:
            session.negotiated = frozenset(METHODS)
            session.origin = "hook"
            self._persist_session(session, status="negotiated")
        elif session.origin == "acs":
            raise AcsError(
                codes.SESSION_REFUSED,
                "acs_session",
                "this session was opened by an ACS handshake; a runtime hook cannot drive it",
            )
        if not session.started and method != "steps/sessionStart":
            self._run(
                _step(
                    "steps/sessionStart", self._params({"implicit": True}, session, None), session
                )
            )
        if session.closed:
            # The chain is sealed: nothing more is decided or recorded for this session,
            # the same refusal an ACS client gets.
            raise AcsError(codes.SESSION_REFUSED, "session_closed", "session was ended")
        params = self._params(payload, session, turn_id)
        if method == "steps/sessionStart" and session.started:
            return Decision.allow(reason_codes=("session_already_started",))
        context = _step(method, params, session)
        self._run(context)
        assert context.decision is not None
        return replace(
            context.decision,
            chain_hash=context.chain_hash,
            evaluation_duration_ms=context.elapsed_ms,
        )

    def observe_component(
        self, session_id: str, agent_id: str, component: Mapping[str, Any]
    ) -> None:
        """Add a component seen in use (runtime without an AgBOM) to the session's inventory."""
        with self._lock:
            self._settle()
            session = self.memory.session(session_id, agent_id, None)
            self.policies.observe_component(session, dict(component))
            self.memory.reweigh(session)

    def session(self, session_id: str) -> SessionState | None:
        """The in-memory state of a session (restored from the store when needed)."""
        with self._lock:
            self._settle()
            try:
                return self.memory.session(session_id, None, None, create=False)
            except AcsError:
                return None

    # -- pipeline ------------------------------------------------------------------------------

    def _params(
        self, payload: dict[str, Any], session: SessionState, turn_id: str | None
    ) -> dict[str, Any]:
        metadata: dict[str, Any] = {"agent_id": session.agent_id, "session_id": session.session_id}
        turn = turn_id or session.turn_id
        if turn:
            metadata["turn_id"] = turn
        if session.tenant_id:
            metadata["tenant_id"] = session.tenant_id
        return {
            "acs_version": ACS_VERSION,
            "request_id": str(uuid.uuid4()),
            "timestamp": utc_timestamp(self.clock()),
            "metadata": metadata,
            "payload": payload,
        }

    def _handle(self, context: RequestContext) -> dict[str, Any]:
        """The decision path, one stage after another (see :mod:`agbom.guardian`)."""
        context.started = time.perf_counter()
        read_envelope(context, max_json_depth=self.config.max_json_depth)  # 1. envelope
        if context.method == "system/ping":
            return self._ping(context.request)  # never authenticated (§13), never recorded
        self._require_reachable_store()
        self._authenticate(context)  # 2. authenticate
        if context.spec is None:
            raise AcsError(
                codes.METHOD_NOT_FOUND, "method_not_found", f"unknown method {context.method}"
            )
        if context.method == "handshake/hello":
            return self._handshake(context)
        resolve_session(context, self.memory)  # 3. session
        check_replay_and_clock(context, self.config, self.clock)  # 4. clock and replay
        self._run(context)  # 5. decide, 6. append
        assert context.decision is not None
        response = respond(  # 7. respond
            context,
            context.decision,
            chain_hash=context.chain_hash,
            elapsed_ms=context.elapsed_ms,
        )
        return self._sign(context, response)  # 8. sign

    def _handshake(self, context: RequestContext) -> dict[str, Any]:
        """A ``handshake/hello`` after stage 2: its clock, then the ServerHello, signed."""
        # The clock for a hello too (§10.3: every request): a hello recorded days ago, signed
        # or not, must not open a session. Replay is about a session it opens.
        check_clock(context.checked_params, self.clock(), self.config.skew_window_ms)
        assert context.spec is not None
        hello = self._hello(context.request, context.spec, context.signed_by)
        return self._sign(context, respond(context, hello))

    def _require_reachable_store(self) -> None:
        """Fail closed, at once, while the database server is known to be unreachable."""
        problem = self.store.write_failure if self._fails_fast else None
        if problem is None:
            return
        now = time.monotonic()
        if not self.store_probed_elsewhere and now >= self._next_store_probe:
            # Nobody else probes (stdio, agbom replay, --single-process): see for ourselves.
            self._next_store_probe = now + STORE_PROBE_S
            problem = self.store.check_writable()
            if problem is None:
                return
        raise AcsError(
            codes.INTERNAL_ERROR,
            "store_unavailable",
            f"{problem}; nothing is decided until the store is reachable again",
        )

    def _run(self, context: RequestContext) -> None:
        """Stages 5 and 6 for one step, and what its committed entry makes true: the
        decision, its chain hash, and the milliseconds it took (they go on the wire beside
        the decision, not into a copy of it)."""
        session = context.checked_session
        try:
            prepared = (
                self.prepared_for(context.checked_params, session)
                if self._prepared is not None
                else None
            )
            decide(context, self.policies, self.config, prepared)  # 5. decide
            assert context.spec is not None
            if context.spec.audited:
                self._append(context)  # 6. append, committed before anyone hears the answer
            self._committed(context)
        except BaseException:
            if context.opens:  # not opened after all (refused, or its entry was not stored)
                session.started = session.implicit_start = False
            raise
        if context.nonce is not None:
            session.remember_nonce(context.nonce, context.now, self.config.nonce_window_ms / 1000)

    def _committed(self, context: RequestContext) -> None:
        """After the step's entry is in the chain (or queued for it): the policy's change to
        the session applied, the session's row, seal and memory weight kept, the observer told."""
        method, params, session = context.method, context.checked_params, context.checked_session
        decision, chain_hash = context.decision, context.chain_hash
        assert decision is not None
        if context.opens:
            # Only once its first entry is in the chain: a replica with a stale view of the
            # session must never write "open" over a session another one has ended.
            self._persist_session(session, status="open")
        self.policies.after_commit(method, params, session, decision)
        if self.signer is not None and method == "steps/sessionEnd" and chain_hash is not None:
            self.signer.seal_ended(self.store, session.session_id, session.head, session.seq)
        if session.closed:
            # An ended session refuses everything and its state is in the store: free it.
            self.memory.forget(session.session_id)
        else:
            self.memory.reweigh(session)
        context.elapsed_ms = elapsed = (time.perf_counter() - context.started) * 1000
        if self.observer is not None and chain_hash is not None:
            self._observe(method, params, decision, chain_hash, elapsed, context.pipelined)

    def _observe(
        self,
        method: str,
        params: dict[str, Any],
        decision: Decision,
        chain_hash: str,
        elapsed: float,
        pipelined: Pipelined | None,
    ) -> None:
        """Tell the observer of a decision once its entry is committed: now, or for a
        pipelined step after the batch commit (an entry the store refuses is no decision)."""
        observer = self.observer
        assert observer is not None

        def notify() -> None:
            try:
                observer.decision_committed(method, params, decision, chain_hash, elapsed)
            except Exception:  # noqa: BLE001, S110 - telemetry never changes an answer (ACS-Trace)
                pass

        if pipelined is not None and pipelined.append is not None:
            pipelined.on_commit = notify
        else:
            notify()

    # -- special methods -----------------------------------------------------------------------

    def _ping(self, request: dict[str, Any]) -> dict[str, Any]:
        payload = request["params"].get("payload") or {}
        body: dict[str, Any] = {"status": "ok", "server_timestamp": utc_timestamp(self.clock())}
        if isinstance(payload, dict) and "echo" in payload:
            body["echo"] = payload["echo"]
        decision = Decision(disposition=Disposition.ALLOW, payload=body)
        return {
            "jsonrpc": "2.0",
            "id": request.get("id"),
            "result": decision.to_result(
                request_id=request["params"]["request_id"], acs_version=ACS_VERSION
            ),
        }

    def _hello(self, request: dict[str, Any], spec: MethodSpec, key_id: str | None) -> Decision:
        params = request["params"]
        validate_payload(spec, params.get("payload"))
        hello: dict[str, Any] = params["payload"]
        offer = read_client_hello(hello, self.config, self.transport)
        metadata = params["metadata"]
        # Always as the store has it: another replica may have started this session since
        # this one last saw it, and a handshake after sessionStart is refused.
        self.memory.forget(metadata["session_id"])
        session = self.memory.session(
            metadata["session_id"], metadata.get("agent_id"), params.get("tenant_id")
        )
        if session.origin == "hook":
            raise AcsError(
                codes.SESSION_REFUSED,
                "hook_session",
                "this session belongs to a runtime hook; it cannot be driven over ACS",
            )
        if session.started:
            raise AcsError(
                codes.SESSION_REFUSED,
                "session_already_started",
                "handshake after sessionStart (no renegotiation in v0.1)",
            )
        session.negotiated = offer.negotiated
        session.origin = "acs"
        # acs-provenance (guardian/flow.py): on the session's record, so a restore holds it.
        session.provenance_profile = offer.deterministic and PROVENANCE_PROFILE in offer.profiles
        session.signed_key = key_id
        # What the client can apply: the operator's declaration, narrowed (never widened) by
        # what the ClientHello says of itself.
        agent_id = session.agent_id
        session.can_modify = self.config.client_can_modify(agent_id) and offer.can_modify
        session.can_ask = self.config.client_can_ask(agent_id) and offer.can_ask
        try:
            self._persist_session(session, status="negotiated")
        except StoreError:
            # A refused handshake negotiates nothing: the next request finds the session as
            # the store has it, not the offer this answer turned down.
            self.memory.forget(session.session_id)
            raise
        answer = server_hello(
            offer, self.config, signing=self.keyring is not None, can_ask=session.can_ask
        )
        if self.signer is not None:
            answer = self.signer.hello(session.session_id, offer.profiles, answer)
        return Decision(disposition=Disposition.ALLOW, payload=answer)


def _may_take_snapshot(stored: Mapping[str, Any] | None) -> bool:
    """Whether a session row says an ``agbom/snapshot`` can be decided in it: negotiated by
    an ACS handshake with the method, and not closed."""
    negotiated = stored.get("negotiated") if stored is not None else None
    if not isinstance(negotiated, Mapping) or stored is None or stored.get("status") == "closed":
        return False
    methods = negotiated.get("methods")
    return (
        negotiated.get("origin") != "hook"
        and isinstance(methods, list)
        and "agbom/snapshot" in methods
    )


def _internal_error(exc: Exception) -> AcsError:
    """What a failure nobody answered more precisely is answered with."""
    return AcsError(codes.INTERNAL_ERROR, "internal_error", f"{type(exc).__name__}: {exc}")


def _store_failure(exc: StoreError) -> AcsError:
    """The answer to a store failure outside a chain append (the handshake's session record, a
    session restored from the store): the store's own words as ``store_unavailable``, as when
    the database is known to be unreachable, not an ``internal_error`` that reads as a bug."""
    if isinstance(exc, ChainConflict | DuplicateRequest):
        return _internal_error(exc)
    return AcsError(
        codes.INTERNAL_ERROR,
        "store_unavailable",
        f"{exc}; nothing is decided until the store takes writes again",
    )


def _chain_conflict() -> AcsError:
    return AcsError(
        codes.INTERNAL_ERROR,
        "chain_conflict",
        f"the session's chain moved on another replica {STALE_ATTEMPTS} times while this "
        "request was decided; nothing was recorded, send it again",
    )


def _request_id_of(request: Any) -> str | None:
    params = request.get("params") if isinstance(request, dict) else None
    request_id = params.get("request_id") if isinstance(params, dict) else None
    return request_id if isinstance(request_id, str) else None


def _step(method: str, params: dict[str, Any], session: SessionState) -> RequestContext:
    """The context of a step decided in process (:meth:`Guardian.decide`): no envelope, no
    signature, its session already resolved and admitted."""
    context = RequestContext()
    context.method, context.params, context.spec = method, params, lookup(method)
    context.session_id, context.session = session.session_id, session
    context.request_id = params["request_id"]
    context.started = time.perf_counter()
    return context


def _session_of(request: Any) -> str | None:
    params = request.get("params") if isinstance(request, dict) else None
    metadata = params.get("metadata") if isinstance(params, dict) else None
    session_id = metadata.get("session_id") if isinstance(metadata, dict) else None
    return session_id if isinstance(session_id, str) else None


def _response_id(request: Any) -> str | int | None:
    """The JSON-RPC id to answer with: the request's, when it is a usable one."""
    request_id = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None
    return request_id
