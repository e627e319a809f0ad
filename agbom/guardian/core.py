"""The Guardian: one ACS request in, one JSON-RPC response out.

Pipeline, in the order the spec fixes the error codes:
  (1) envelope shape (-32600) → (2) signature (-32004) → (3) method (-32601) →
  (4) negotiation and session (-32003) → (5) replay (-32005) → (6) clock skew (-32006) →
  (7) payload schema (-32602) → (8) policy: rules, approvals, inventory →
  (9) disposition clamp to what the hook allows → (10) chain append, committed →
  (11) response, signed when the request was.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agbom.guardian.config import GuardianConfig
from agbom.guardian.decision import Decision, clamp
from agbom.guardian.handshake import PROVENANCE_PROFILE, read_client_hello, server_hello
from agbom.guardian.memory import RestorePoint, SessionMemory
from agbom.guardian.pipelined import (
    MAX_QUEUED,
    PIPELINED_METHODS,
    STALE_ATTEMPTS,
    Pipelined,
    PipelinedCommits,
    Reply,
    RequestContext,
    Schedule,
    replay_error,
)
from agbom.guardian.policies import Policies, PreparedSnapshot
from agbom.guardian.precheck import Prechecked
from agbom.guardian.session import SessionState
from agbom.guardian.substitution import substitute
from agbom.protocol import (
    ACS_VERSION,
    METHODS,
    AcsError,
    Disposition,
    KeyRing,
    MethodSpec,
    entry_hash,
    lookup,
    request_hash,
    timestamp_seconds,
    validate_envelope,
    validate_payload,
    version_supported,
)
from agbom.protocol import errors as codes
from agbom.rules import RuleSet
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, Store, StoreError
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


class StaleSession(Exception):
    """The session's chain in the store moved past this Guardian's head (another replica, or
    another process on the same store, appended to it). The session has been dropped from
    memory; the request must be decided again on its reloaded state."""


class Guardian(PipelinedCommits, SessionMemory):
    """An ACS v0.1.0 Guardian over one store and one rule set.

    Thread-safe: requests are serialized under one lock. A decision is cheap (well under a
    millisecond), and the store has one writer anyway; serializing keeps the chain append and
    the session state consistent without finer locking.
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
        self._request: RequestContext | None = None
        self._prepared: PreparedSnapshot | None = None  # for the request being answered
        # Checks the HTTP front ran on the request being answered (agbom/guardian/precheck.py),
        # with the params object they hold for.
        self._checked: tuple[Prechecked, Any] | None = None
        self._sessions: dict[str, SessionState] = {}
        self._session_bytes = 0  # the estimated memory of ``_sessions`` (their weights)
        self._stale_chains: OrderedDict[str, RestorePoint] = OrderedDict()
        self._lock = threading.RLock()
        self.policies = Policies(self)
        self._schedule: Schedule | None = None
        self._loop_thread: int | None = None
        self._queued: list[Pipelined] = []
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

    # -- public entry points -------------------------------------------------------------------

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
            self._check_clock(params, self.clock())
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
            self._schedule is None
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
        if len(self._queued) >= MAX_QUEUED:
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

    def _prechecked(self, params: Any) -> Prechecked | None:
        """What the front checked of the request being answered, if ``params`` are its own."""
        checked = self._checked
        return checked[0] if checked is not None and checked[1] is params else None

    def _started_in_memory(self, request: Any) -> bool:
        session = self._sessions.get(_session_of(request) or "")
        return session is not None and session.started

    def _answer(self, request: Any, *, attempts: int = STALE_ATTEMPTS) -> dict[str, Any]:
        for _attempt in range(max(1, attempts)):
            self._request = context = RequestContext()
            try:
                return self._handle(request)
            except StaleSession:
                continue  # decided on a stale head: decide again on the reloaded session
            except AcsError as exc:
                err = exc
            except StoreError as exc:
                err = _store_failure(exc)
            except Exception as exc:  # noqa: BLE001 - a Guardian answers, it does not crash
                err = _internal_error(exc)
            finally:
                self._request = None
            break
        else:
            err = _chain_conflict()
        session = context.session
        if session is not None and context.request_id and err.code != codes.REPLAY_DETECTED:
            # A replay of a refused request must be told it is a replay, not refused again
            # for its first reason (which may since have gone away).
            session.remember_refused(context.request_id)
        return self._error_answer(request, err, context)

    def _error_answer(self, request: Any, err: AcsError, context: RequestContext) -> dict[str, Any]:
        response = codes.error_response(_response_id(request), err)
        if self.signer is not None:
            signed = self.signer.sign(
                response,
                session_id=context.session_id,
                hmac_key_id=context.key_id,
                request_id=context.request_id or _request_id_of(request),
            )
            if signed is not None:
                return signed
        if context.key_id is not None and context.session_id is not None:
            return self._sign(response, context.session_id, context.key_id)
        return response

    def _sign(self, response: dict[str, Any], session_id: str, key_id: str) -> dict[str, Any]:
        assert self.keyring is not None
        return self.keyring.sign(response, session_id, key_id)

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
        session = self._session(session_id, agent_id, tenant_id)
        if session.negotiated is None:
            session = self._reloaded(session, agent_id, tenant_id)
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
                "steps/sessionStart",
                self._params({"implicit": True}, session, None),
                session,
            )
        if session.closed:
            # The chain is sealed: nothing more is decided or recorded for this session,
            # the same refusal an ACS client gets.
            raise AcsError(codes.SESSION_REFUSED, "session_closed", "session was ended")
        params = self._params(payload, session, turn_id)
        if method == "steps/sessionStart" and session.started:
            return Decision.allow(reason_codes=("session_already_started",))
        decision, chain_hash, elapsed = self._run(method, params, session)
        return replace(decision, chain_hash=chain_hash, evaluation_duration_ms=elapsed)

    def observe_component(
        self, session_id: str, agent_id: str, component: Mapping[str, Any]
    ) -> None:
        """Add a component seen in use (runtime without an AgBOM) to the session's inventory."""
        with self._lock:
            self._settle()
            session = self._session(session_id, agent_id, None)
            self.policies.observe_component(session, dict(component))
            self._reweigh(session)

    def session(self, session_id: str) -> SessionState | None:
        """The in-memory state of a session (restored from the store when needed)."""
        with self._lock:
            self._settle()
            try:
                return self._session(session_id, None, None, create=False)
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

    def _handle(self, request: Any) -> dict[str, Any]:
        started = time.perf_counter()
        # (1) envelope shape
        if self._prechecked(request.get("params") if isinstance(request, dict) else None) is None:
            validate_envelope(_unsigned_ping(request), max_depth=self.config.max_json_depth)
        method: str = request["method"]
        params: dict[str, Any] = request["params"]
        metadata: dict[str, Any] = params["metadata"]
        session_id: str = metadata["session_id"]
        if not version_supported(params["acs_version"]):
            raise AcsError(
                codes.UNSUPPORTED_VERSION,
                "unsupported_version",
                f"ACS version {params['acs_version']} is not supported",
                data={"supported_versions": [ACS_VERSION]},
            )
        spec = lookup(method)
        context = self._request
        assert context is not None
        context.session_id = session_id
        if method != "system/ping":
            self._require_reachable_store()
        # (2) signature: ping is exempt and never authenticated
        key_id: str | None = None
        if method != "system/ping":
            key_id = self._authenticate(request, method, session_id, context)
            pipelined = self._pipelined
            if key_id is not None and pipelined is not None:
                # An error found only at commit (a replay the store caught, a failed append)
                # is signed like the answer it replaces.
                signed_key = key_id
                pipelined.signer = lambda response: self._sign(response, session_id, signed_key)
            if self.signer is not None and method != "handshake/hello":
                # An acs-crypto session whose key this Guardian was not started with (a restart
                # without it) is refused, never answered with another key (issue 39 D4).
                self.signer.require_key(session_id)
        # (3) method
        if spec is None:
            raise AcsError(codes.METHOD_NOT_FOUND, "method_not_found", f"unknown method {method}")
        if method == "system/ping":
            return self._ping(request, spec)
        if method == "handshake/hello":
            # (6) for a hello too (§10.3: every request): a hello recorded days ago, signed
            # or not, must not open a session. (4) and (5) are about a session it opens.
            self._check_clock(params, self.clock())
            hello = self._hello(request, spec, key_id)
            return self._respond(request, hello, key_id=key_id)
        # (4) negotiation and session
        session = self._session(session_id, metadata.get("agent_id"), params.get("tenant_id"))
        if session.negotiated is None:
            # Held from a request before any handshake: the handshake may since have been
            # answered by another replica. Ask the store before refusing.
            session = self._reloaded(session, metadata.get("agent_id"), params.get("tenant_id"))
        if session.negotiated is None:
            raise AcsError(
                codes.CAPABILITY_NOT_NEGOTIATED,
                "no_handshake",
                "no handshake/hello for this session",
                data={"method": method},
            )
        if session.origin == "hook":
            raise AcsError(
                codes.SESSION_REFUSED,
                "hook_session",
                "this session belongs to a runtime hook; it cannot be driven over ACS",
            )
        request_id: str = params["request_id"]
        context.session, context.request_id = session, request_id
        # (5) replay, before anything else can refuse it: a request id seen in this session,
        # decided or refused, is a replay. Older decided ids still fail on the store's unique
        # index when their entry is appended.
        if session.seen_request(request_id):
            raise AcsError(
                codes.REPLAY_DETECTED,
                "duplicate_request_id",
                "request_id was already used in this session",
            )
        negotiated_name = (
            "protocols/MCP/*" if method.startswith(("protocols/", "wrapped:")) else method
        )
        if negotiated_name not in session.negotiated and method not in session.negotiated:
            raise AcsError(
                codes.CAPABILITY_NOT_NEGOTIATED,
                "method_not_negotiated",
                f"{method} was not negotiated for this session",
                data={"method": method},
            )
        implicit_start = method != "steps/sessionStart" and not session.started
        if implicit_start and self.config.require_session_start:
            raise AcsError(
                codes.CAPABILITY_NOT_NEGOTIATED,
                "no_session",
                "steps/sessionStart has not opened this session",
                data={"method": method},
            )
        if session.closed:
            raise AcsError(
                codes.SESSION_REFUSED,
                "session_closed",
                "the session has ended; its chain is sealed",
            )
        if method == "steps/sessionStart" and session.started:
            raise AcsError(
                codes.SESSION_REFUSED,
                "session_already_started",
                "sessionStart was already received",
            )
        now = self.clock()
        nonce = params.get("nonce")
        if (
            nonce is not None
            and nonce in session.nonces
            and now - session.nonces[nonce] <= self.config.nonce_window_ms / 1000
        ):
            raise AcsError(codes.REPLAY_DETECTED, "duplicate_nonce", "nonce was already used")
        # (6) clock skew
        self._check_clock(params, now)
        # Chain cross-check: the client's view of the head must be ours.
        client_head = (
            (metadata.get("session_state") or {}).get("chain_hash")
            if isinstance(metadata.get("session_state"), dict)
            else None
        )
        if client_head is not None and client_head != session.head:
            raise AcsError(
                codes.CHAIN_MISMATCH,
                "chain_mismatch",
                "session_state.chain_hash is not the current chain head",
            )
        opens = implicit_start and spec.audited
        if opens:
            # Spec §8: with no sessionStart, the first step opens the session; its entry is the
            # chain root and says so.
            session.started = True
            session.implicit_start = True
        # (7)..(10)
        try:
            decision, chain_hash, elapsed = self._run(
                method, params, session, spec=spec, started=started, opens=opens
            )
        except BaseException:
            if opens:  # not opened after all (refused, or its entry was not stored)
                session.started = session.implicit_start = False
            raise
        if nonce is not None:
            session.remember_nonce(nonce, now, self.config.nonce_window_ms / 1000)
        # (11)
        return self._respond(
            request, decision, key_id=key_id, chain_hash=chain_hash, elapsed_ms=elapsed
        )

    def _check_clock(self, params: Mapping[str, Any], now: float) -> None:
        """(6) -32006 when ``params.timestamp`` is further than the skew window from ``now``.

        A timestamp the RFC 3339 grammar refuses was refused with -32600 at (1); read here
        again (the HTTP front may have run (1)), it is refused the same way, not as skew."""
        sent_at = timestamp_seconds(params["timestamp"])
        window = self.config.skew_window_ms
        if abs(now - sent_at) * 1000 > window:
            raise AcsError(
                codes.TIMESTAMP_OUT_OF_WINDOW,
                "timestamp_out_of_window",
                "timestamp is outside the accepted clock skew window",
                data={"skew_window_ms": window},
            )

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

    def _authenticate(
        self, request: dict[str, Any], method: str, session_id: str, context: RequestContext
    ) -> str | None:
        """Verify the request's signature; return the key id that signed it, or None when it
        is unsigned and may be. Sets the key that signs the error answer as soon as one is
        known: the key the request names, else the key of the session's signed handshake."""
        params = request["params"]
        keyring = self.keyring
        if "signature" not in params:
            signed_key = self._signed_key_of(session_id) if keyring is not None else None
            if keyring is not None and signed_key is not None:
                context.key_id = signed_key if signed_key in keyring.key_ids else None
                raise AcsError(
                    codes.SIGNATURE_INVALID,
                    "signature_required",
                    "this session's handshake was signed: every request in it must be",
                )
            if self.config.require_signatures:
                raise AcsError(
                    codes.SIGNATURE_INVALID,
                    "signature_required",
                    "this Guardian requires signed requests",
                )
            return None
        if keyring is None:
            if method == "handshake/hello":
                return None  # answered, unsigned, with signature_algorithms_supported: []
            raise AcsError(
                codes.SIGNATURE_INVALID,
                "signing_not_configured",
                "the request is signed, but this Guardian has no key and its ServerHello "
                "advertises no signature algorithm; send requests unsigned",
                data={"signature_algorithms_supported": []},
            )
        named = params["signature"].get("key_id") if isinstance(params["signature"], dict) else None
        if isinstance(named, str) and named in keyring.key_ids:
            context.key_id = named
        else:
            signed_key = self._signed_key_of(session_id)
            context.key_id = signed_key if signed_key in keyring.key_ids else None
        # SignatureInvalid is an AcsError (-32004) carrying the precise reason.
        return keyring.verify(request, session_id)

    def _signed_key_of(self, session_id: str) -> str | None:
        """The key id of the session's signed handshake, if it had one (without creating or
        restoring the session)."""
        session = self._sessions.get(session_id)
        if session is not None:
            return session.signed_key
        stored = self.store.get_session(session_id)
        negotiated = stored.get("negotiated") if stored is not None else None
        if isinstance(negotiated, Mapping) and isinstance(negotiated.get("signed_key"), str):
            return str(negotiated["signed_key"])
        return None

    def _run(
        self,
        method: str,
        params: dict[str, Any],
        session: SessionState,
        *,
        spec: MethodSpec | None = None,
        started: float | None = None,
        opens: bool = False,
    ) -> tuple[Decision, str | None, float]:
        """Decide and record one step: the decision, its chain hash, and the milliseconds it
        took (they go on the wire beside the decision, not into a copy of it)."""
        started = time.perf_counter() if started is None else started
        spec = spec or lookup(method)
        assert spec is not None
        payload = params.get("payload")
        # (7) payload schema (already checked when the snapshot was prepared)
        prepared = self.prepared_for(params, session) if self._prepared is not None else None
        if prepared is None:
            if self._prechecked(params) is None:
                validate_payload(spec, payload)
        elif prepared.error is not None:
            raise prepared.error
        # (8) policy
        decision = self.policies.evaluate(method, spec, params, session)
        # (9) never a disposition the hook does not allow, nor one the client cannot apply
        decision = clamp(decision, spec)
        decision, substitution = substitute(
            decision,
            spec,
            can_modify=session.can_modify,
            can_ask=session.can_ask,
            ask_fallback=self.config.ask_fallback,
        )
        if decision.disposition is Disposition.DEFER:
            session.deferrals += 1
            if session.deferrals > self.config.max_deferrals_per_session:
                decision = clamp(
                    Decision.deny("too many deferrals in this session", "deferral_limit"), spec
                )
        # (10) chain append, committed before anyone hears the answer
        chain_hash = None
        if spec.audited:
            chain_hash, _ = self._append(method, params, session, decision, substitution)
        if opens:
            # Only once its first entry is in the chain: a replica with a stale view of the
            # session must never write "open" over a session another one has ended.
            self._persist_session(session, status="open")
        self.policies.after_commit(method, params, session, decision)
        if self.signer is not None and method == "steps/sessionEnd" and chain_hash is not None:
            self.signer.seal_ended(self.store, session.session_id, session.head, session.seq)
        if session.closed:
            # An ended session refuses everything and its state is in the store: free it.
            self._forget(session.session_id)
        else:
            self._reweigh(session)
        elapsed = (time.perf_counter() - started) * 1000
        if self.observer is not None and chain_hash is not None:
            self._observe(method, params, decision, chain_hash, elapsed)
        return decision, chain_hash, elapsed

    def _observe(
        self,
        method: str,
        params: dict[str, Any],
        decision: Decision,
        chain_hash: str,
        elapsed: float,
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

        pipelined = self._pipelined
        if pipelined is not None and pipelined.append is not None:
            pipelined.on_commit = notify
        else:
            notify()

    def _append(
        self,
        method: str,
        params: dict[str, Any],
        session: SessionState,
        decision: Decision,
        substitution: Mapping[str, str] | None = None,
    ) -> tuple[str, int]:
        """Commit the step's ContextEntry; return its hash (the new chain head) and seq."""
        request_id = params["request_id"]
        entry: dict[str, Any] = {
            "entry_id": str(session.seq + 1),
            "step_id": request_id,
            "step_type": method,
            "request_hash": (
                checked.request_hash
                if (checked := self._prechecked(params)) is not None
                else request_hash(params)
            ),
            "timestamp": utc_timestamp(self.clock()),
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
        extra = self.policies.entry_extras(method, session)
        entry.update(extra)
        pipelined = self._pipelined
        if pipelined is not None and self._schedule is not None:
            digest = entry_hash(entry, session.head)
            pipelined.append = ChainAppend(
                session.session_id,
                entry,
                digest,
                session.head,
                request_id=request_id,
                nonce=params.get("nonce"),
            )
            self._queued.append(pipelined)
            if len(self._queued) == 1:
                self._schedule(self._commit_scheduled)
            # The head moves now so that the next request chains on this entry; if the store
            # refuses it, the session is dropped from memory and restored from the store.
            session.head = digest
            session.seq += 1
            session.remember_request(request_id)
            return digest, session.seq
        digest = entry_hash(entry, session.head)
        try:
            seq = self.store.append_entry(
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
            self._forget(session.session_id, stale=True)
            raise StaleSession(session.session_id) from exc
        except DuplicateRequest as exc:
            raise replay_error(exc) from exc
        except StoreError as exc:
            # Not stored: the decision must not stand (the same answer as a batched entry's).
            raise AcsError(codes.INTERNAL_ERROR, "audit_append_failed", str(exc)) from exc
        session.head = digest
        session.seq = seq
        session.remember_request(request_id)
        return digest, seq

    # -- special methods -----------------------------------------------------------------------

    def _ping(self, request: dict[str, Any], spec: MethodSpec) -> dict[str, Any]:
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
        self._forget(metadata["session_id"])
        session = self._session(
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
            self._forget(session.session_id)
            raise
        answer = server_hello(
            offer, self.config, signing=self.keyring is not None, can_ask=session.can_ask
        )
        if self.signer is not None:
            answer = self.signer.hello(session.session_id, offer.profiles, answer)
        return Decision(disposition=Disposition.ALLOW, payload=answer)

    def _respond(
        self,
        request: dict[str, Any],
        decision: Decision,
        *,
        key_id: str | None,
        chain_hash: str | None = None,
        elapsed_ms: float | None = None,
    ) -> dict[str, Any]:
        params = request["params"]
        if request["method"] == "handshake/hello":
            result: dict[str, Any] = dict(decision.payload or {})
        else:
            result = decision.to_result(
                request_id=params["request_id"],
                acs_version=ACS_VERSION,
                chain_hash=chain_hash,
                evaluation_duration_ms=elapsed_ms,
            )
        response = {"jsonrpc": "2.0", "id": request.get("id"), "result": result}
        if self.signer is not None:
            signed = self.signer.sign(
                response,
                session_id=params["metadata"]["session_id"],
                hmac_key_id=key_id,
                hello=request["method"] == "handshake/hello",
                request_id=params.get("request_id"),
            )
            if signed is not None:
                return signed
        if key_id is not None:
            # Signed with the key the request used (a rotation keeps both keys in the ring).
            response = self._sign(response, params["metadata"]["session_id"], key_id)
        return response


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


def _unsigned_ping(request: Any) -> Any:
    """A ``system/ping`` as its envelope is checked: without its signature, whatever that
    holds (an unregistered algorithm, a string). §13: a ping is answered allow regardless of
    signature, so that liveness can be probed during a key or algorithm mismatch; its
    signature is never read. Any other request is returned as it is."""
    if not isinstance(request, dict) or request.get("method") != "system/ping":
        return request
    params = request.get("params")
    if not isinstance(params, dict) or "signature" not in params:
        return request
    return {**request, "params": {k: v for k, v in params.items() if k != "signature"}}


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
