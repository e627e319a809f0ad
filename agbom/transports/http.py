"""JSON-RPC over HTTP (``POST /acs``), runtime hook endpoints and the read API, on starlette.

The Guardian call runs on the event loop thread: a decision costs well under a millisecond,
and keeping every store access on one thread is what SQLite's one-writer model wants.

Before any handler runs, the front refuses what no legitimate client sends (see
:class:`FrontPolicy`): a ``Host`` that is not this server's (DNS rebinding), a browser
``Origin`` nobody allowed (cross-site requests), a POST body that is not ``application/json``.
Below the app, :func:`guarded_protocol` bounds how long a connection may take to send its
headers and its body, and how many connections may be open at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import hmac
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, unquote_plus

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from agbom._identifiers import identifier_problem, invisible_character
from agbom.adapters.headers import MAX_EVENT_BYTES, RUNTIME_HEADER, TOO_LARGE_CODE, too_large_reason
from agbom.adapters.interface import HookReply
from agbom.display import visible
from agbom.errors import AgbomError
from agbom.guardian import Guardian
from agbom.guardian.core import on_database_server
from agbom.guardian.precheck import precheck_body
from agbom.protocol import INTERNAL_ERROR
from agbom.store import Store, open_store
from agbom.transports.bundle import BundleService, BundleSource, bundle_route, waiter_bound
from agbom.transports.connections import connection_cap, guarded_protocol
from agbom.transports.decision_wire import (
    IDLE_PROBE_S,
    KIND_ACS,
    KIND_ACS_CHECKED,
    PROBE_INTERVAL_S,
    WorkerSpec,
)
from agbom.transports.fleet import fleet_routes
from agbom.transports.front_policy import FrontPolicy
from agbom.transports.interface import Limits, error_body, handle_body_pipelined, too_large
from agbom.transports.keys import keys_route
from agbom.transports.openapi import openapi_route
from agbom.transports.worker import DEADLINE_S, DecisionProcess, DecisionUnavailable

if TYPE_CHECKING:
    from agbom.adapters.project_skills import ProjectSkills
    from agbom.review.app import ReviewConfig

JSON = "application/json"


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type=JSON, headers=headers)


MAX_READ_ID = 512
"""Longest skill, session, agent or tenant id the read API looks up (the store's MAX_ID)."""


def _bad_identifier(field: str, value: str) -> Response | None:
    """A 400 for an id that holds control or invisible characters (``None`` when fine): the
    read API refuses them as the wire does, rather than answer "not found" for a look-alike."""
    problem = identifier_problem(value)
    if problem is None and not value:
        problem = "is empty"
    if problem is None and len(value) > MAX_READ_ID:
        problem = f"is longer than {MAX_READ_ID} characters"  # the store's bound (it would raise)
    if problem is None:
        return None
    return _json({"error": "invalid_identifier", "field": field, "message": problem}, 400)


async def _store_value_refused(request: Request, exc: Exception) -> Response:
    return _json({"error": "invalid_value", "message": str(exc)}, 400)


async def _store_failed(request: Request, exc: Exception) -> Response:
    # One line for the operator, no traceback; the path escaped (it may hold control bytes).
    print(f"agbom: store error on {visible(request.url.path)}: {exc}", file=sys.stderr)
    return _json({"error": "store_unavailable", "message": "the store cannot answer now"}, 503)


def store_error_handlers() -> dict[Any, Callable[..., Any]]:
    """Where a store error that a route let through becomes a response, for every route of
    the app: a value the store refuses (:class:`StoreValueError`: an id that is blank, a
    time, a digest) is ``400 invalid_value`` with the store's reason; any other store error
    is ``503 store_unavailable``. Neither is a 500 or a traceback in the log."""
    from agbom.store import StoreError, StoreValueError

    return {StoreValueError: _store_value_refused, StoreError: _store_failed}


class _Disconnected(Exception):
    """The client went away before its body arrived: there is no one to answer."""


DRAIN_LIMIT = 16 * 1024 * 1024
"""Bytes of an unwanted body read and dropped before answering, so the client gets the answer
(413, 415, ...) instead of a connection reset. A bigger body is answered at once and the
connection closed. Dropped bytes are not kept, so this costs bandwidth, not memory."""


def _content_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:  # a plain loop: this runs for every request
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def _read_body(declared: int | None, receive: Any, limit: int) -> bytes | None:
    """An ASGI request body, or ``None`` when it exceeds ``limit`` (read no further than that).

    ``declared`` is the request's Content-Length: one over the limit is refused before anything
    is read. How long the body may take is bounded below the app (:func:`guarded_protocol`).
    """
    if declared is not None and declared > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


async def _drain(declared: int | None, receive: Any) -> bool:
    """Read and drop the rest of a body we will not use; False when it is too big to bother
    (the answer then closes the connection)."""
    if declared is not None and declared > DRAIN_LIMIT:
        return False
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        size += len(message.get("body", b""))
        if size > DRAIN_LIMIT:
            return False
        if not message.get("more_body", False):
            return True


class InProcessDecisions:
    """The Guardian in the serving process (``agbom serve --single-process``)."""

    def __init__(self, guardian_factory: Callable[[], Guardian], limits: Limits) -> None:
        self._factory = guardian_factory
        self._guardian: Guardian | None = None
        self._probe: asyncio.Task[None] | None = None
        self.limits = limits

    @property
    def guardian(self) -> Guardian:
        if self._guardian is None:
            self._guardian = self._factory()
        return self._guardian

    @property
    def store(self) -> Store:
        return self.guardian.store

    @property
    def ready(self) -> bool:
        """Up, and its store takes writes (``/healthz``): 503 while it cannot."""
        return self._guardian is None or self._guardian.store.write_failure is None

    async def start(self) -> None:
        self.store.start_background_checkpoints()
        self.guardian.start_pipelined_commits(asyncio.get_running_loop().call_soon_threadsafe)
        self._probe = asyncio.create_task(self._probe_store())

    async def _probe_store(self) -> None:
        # As the decision process does: while the store cannot write, try a write of our own
        # every PROBE_INTERVAL_S, so it is seen to recover even when no request arrives.
        # On a database server, also every IDLE_PROBE_S while healthy: it can go away while no
        # request arrives, and /healthz must say so.
        guardian = self.guardian
        guardian.store_probed_elsewhere = True
        on_server = on_database_server(guardian.store)
        next_idle_probe = 0.0
        while True:
            await asyncio.sleep(PROBE_INTERVAL_S)
            now = time.monotonic()
            if guardian.store.write_failure is not None:
                guardian.store.check_writable()
            elif on_server and now >= next_idle_probe:
                next_idle_probe = now + IDLE_PROBE_S
                guardian.store.check_writable()

    async def stop(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
        self.guardian.stop_pipelined_commits()
        self.store.close()

    async def acs(self, body: bytes) -> bytes:
        return await handle_body_pipelined(self.guardian, body, self.limits)

    async def hook(
        self, runtime: str, body: bytes, *, env: dict[str, str], fail_open: bool
    ) -> HookReply:
        from agbom.adapters import get_adapter

        return get_adapter(runtime).handle(body, self.guardian, env=env, fail_open=fail_open)


class ProcessDecisions:
    """The Guardian in a decision process of its own (the default; see transports/decision_loop.py).

    The read API reads the store through a connection of this process, so reads never wait
    for a decision.
    """

    def __init__(self, spec: WorkerSpec, limits: Limits, *, deadline_s: float = DEADLINE_S) -> None:
        self.process = DecisionProcess(spec, deadline_s=deadline_s)
        self.limits = limits
        self._max_json_depth = spec.guardian_config().max_json_depth
        self._store: Store | None = None
        self._db = spec.db

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self._db)
        return self._store

    @property
    def ready(self) -> bool:
        return self.process.ready

    async def start(self) -> None:
        await self.process.start()

    async def stop(self) -> None:
        await self.process.stop()
        if self._store is not None:
            self._store.close()

    async def acs(self, body: bytes) -> bytes:
        # The checks that need no Guardian state run here, in the front, which has CPU to
        # spare, instead of in the decision process every decision waits on.
        digest = precheck_body(body, max_json_depth=self._max_json_depth)
        try:
            if digest is not None:
                return await self.process.call(KIND_ACS_CHECKED, digest + body)
            return await self.process.call(KIND_ACS, body)
        except DecisionUnavailable as exc:
            return error_body(INTERNAL_ERROR, "guardian_unavailable", str(exc))

    async def hook(
        self, runtime: str, body: bytes, *, env: dict[str, str], fail_open: bool
    ) -> HookReply:
        from agbom.adapters import get_adapter

        try:
            return await self.process.hook(runtime, body, env=env, fail_open=fail_open)
        except DecisionUnavailable as exc:
            return get_adapter(runtime).malformed(
                f"the Guardian is unavailable: {exc}",
                fail_open=fail_open,
                code="guardian_unavailable",
            )


Decisions = InProcessDecisions | ProcessDecisions


def create_app(
    decisions: Decisions,
    *,
    limits: Limits | None = None,
    api_token: str | None = None,
    fail_open_hooks: bool = False,
    policy: FrontPolicy | None = None,
    review: ReviewConfig | None = None,
    bundle_source: BundleSource | None = None,
    published_keys: Mapping[str, Any] | None = None,
    hook_token: str | None = None,
    project_skills: ProjectSkills | None = None,
    advisories: Callable[[], Any] | None = None,
) -> Any:
    """Build the ASGI app around where decisions are made (this process or its own).

    ``review`` turns on the reviewers' page under ``/ui/`` (agbom/review). ``bundle_source``
    names the rule packs whose bans the OPA bundle carries (agbom/transports/bundle.py).
    ``hook_token`` makes ``/hooks/*`` require that bearer token; ``project_skills`` reads the
    skill a Claude Code event names from this server's disk, off the loop
    (agbom/adapters/project_skills.py). ``advisories`` gives the ``serve --osv`` export for
    ``GET /v1/fleet/advisories`` (agbom/advisories/fleet.py).

    ``policy`` defaults to a server on 127.0.0.1:8787 (``agbom serve``'s defaults).
    """
    limits = limits or Limits()
    policy = policy or FrontPolicy.for_address("127.0.0.1", 8787)

    def bearer(request: Request, expected: str | None) -> bool:
        if expected is None:
            return True
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode(), expected.encode()
        )

    def authorized(request: Request) -> bool:
        return bearer(request, api_token)

    def unauthorized() -> Response:
        return _json(
            {"error": "unauthorized", "message": "a valid bearer token is required"},
            401,
            {"WWW-Authenticate": "Bearer"},
        )

    async def healthz(request: Request) -> Response:
        if not decisions.ready:
            return _json({"status": "starting", "guardian": "unavailable"}, 503)
        return _json({"status": "ok"})

    async def hooks(request: Request) -> Response:
        from agbom.adapters import ADAPTERS, get_adapter
        from agbom.adapters.headers import env_from_headers, fail_open_from_headers

        name = request.path_params["runtime"]
        if name not in ADAPTERS:
            return _json({"error": "unknown_runtime", "known": sorted(ADAPTERS)}, 404)
        adapter = get_adapter(name)
        fail_open = fail_open_from_headers(request.headers, fail_open_hooks)
        declared = _content_length(request.headers.raw)
        headers = {RUNTIME_HEADER: name}
        try:
            body = await _read_body(declared, request.receive, MAX_EVENT_BYTES)
        except _Disconnected:
            return Response(status_code=400)  # nobody is left to read an answer
        if body is None:
            # A deny in both failure modes, as in standalone and thin mode; HTTP 200 because
            # runtimes with HTTP hooks (Claude Code) take any other status as "no objection".
            if not await _drain(declared, request.receive):
                headers["Connection"] = "close"
            reply = adapter.malformed(too_large_reason(), fail_open=False, code=TOO_LARGE_CODE)
        elif not bearer(request, hook_token):
            # Also a deny in both modes, and HTTP 200 for the same reason: nothing is decided
            # or recorded for a caller without the token.
            from agbom.adapters.replies import event_name

            headers["WWW-Authenticate"] = "Bearer"
            reply = adapter.malformed(
                "a valid hook token is required (Authorization: Bearer, the token of "
                "serve --hook-token-file; thin mode: --token-file)",
                fail_open=False,
                event=event_name(name, body),
                code="unauthorized",
            )
        else:
            if project_skills is not None:
                body = await project_skills.attach(name, body)
            from agbom.adapters.identity import checked

            # Who is asking: the hook's claim, replaced by what the kernel says of the peer
            # where the server can ask it (a loopback connection on Linux).
            client = request.client
            server = request.scope.get("server")
            env = checked(
                env_from_headers(request.headers),
                (client.host, client.port) if client is not None else None,
                (str(server[0]), int(server[1])) if server else None,
            )
            reply = await decisions.hook(name, body, env=env, fail_open=fail_open)
        headers["X-Agbom-Exit-Code"] = str(reply.exit_code)
        diagnostic = " ".join(reply.stderr.split())[:512]
        if diagnostic:
            headers["X-Agbom-Diagnostic"] = diagnostic.encode("ascii", "replace").decode()
        return Response(reply.body, status_code=reply.http_status, media_type=JSON, headers=headers)

    async def skill(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        skill_id = unquote(request.path_params["skill_id"])
        if (refused := _bad_identifier("skill_id", skill_id)) is not None:
            return refused
        records = decisions.store.skill_records(skill_id)
        if not records:
            return _json({"error": "not_found", "skill_id": skill_id}, 404)
        return _json({"skill_id": skill_id, "digests": [r.to_json() for r in records]})

    async def approval(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        from agbom.store import Digest, StoreError

        skill_id = unquote(request.path_params["skill_id"])
        if (refused := _bad_identifier("skill_id", skill_id)) is not None:
            return refused
        try:
            digest = Digest.parse(unquote(request.path_params["digest"]))
        except StoreError as exc:
            return _json({"error": "bad_digest", "message": str(exc)}, 400)
        agent_id = request.query_params.get("agent_id")
        tenant_id = request.query_params.get("tenant_id")
        for name, value in (("agent_id", agent_id), ("tenant_id", tenant_id)):
            if value is not None and (refused := _bad_identifier(name, value)) is not None:
                return refused
        verdict = decisions.store.verdict(skill_id, digest, agent_id=agent_id, tenant_id=tenant_id)
        answer: dict[str, Any] = {
            "skill_id": skill_id,
            "digest": str(digest),
            "approved": verdict.approved,
            "status": str(verdict.status),
            "record": verdict.record.to_json() if verdict.record else None,
        }
        signer = verdict.record.required_signer if verdict.record else None
        if verdict.approved and signer is not None:
            # The approval holds only while a signature by that signer verifies over the
            # skill, which this endpoint cannot check: a caller must not read it as a bare
            # approval (the OPA example policy answers the same, docs/opa.md).
            answer |= {"approved": False, "status": "signer_required", "required_signer": signer}
        return _json(answer)

    def _serialize(document: dict[str, Any], fmt: str) -> Response:
        from agbom.export import get_exporter
        from agbom.inventory import AgBOM

        agbom = AgBOM.from_document(document, source="stored AgBOM")
        if fmt == "canonical":
            return _json(agbom.to_document(with_hash=True))
        # The exporter names its own media type (SPDX was labelled CycloneDX JSON).
        exporter = get_exporter(fmt)
        return Response(exporter.export(agbom), media_type=exporter.media_type)

    async def session_agbom(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        session_id = request.path_params["session_id"]
        if (refused := _bad_identifier("session_id", session_id)) is not None:
            return refused
        version = request.query_params.get("version")
        fmt = request.query_params.get("format", "canonical")
        # ASCII digits only: str.isdigit() also takes '²', which int() refuses (a 500).
        if version is not None and not (
            version.isascii() and version.isdigit() and len(version) <= 18
        ):
            return _json({"error": "bad_version"}, 400)
        record = decisions.store.agbom_version(session_id, int(version) if version else None)
        if record is None:
            return _no_agbom(decisions.store, session_id=session_id, version=version)
        try:
            return _serialize(record["document"], fmt)
        except AgbomError as exc:  # an unknown format name, or a stored AgBOM that no longer loads
            return _json({"error": "bad_format", "message": str(exc)}, 400)

    async def agent_agbom(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        agent_id = request.path_params["agent_id"]
        if (refused := _bad_identifier("agent_id", agent_id)) is not None:
            return refused
        fmt = request.query_params.get("format", "canonical")
        record = decisions.store.latest_agbom_for_agent(agent_id)
        if record is None:
            return _no_agbom(decisions.store, agent_id=agent_id)
        try:
            return _serialize(record["document"], fmt)
        except AgbomError as exc:
            return _json({"error": "bad_format", "message": str(exc)}, 400)

    bundles = BundleService(
        lambda: decisions.store,
        bundle_source or BundleSource(),
        max_waiters=waiter_bound(policy.max_connections),
    )
    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/hooks/{runtime}", hooks, methods=["POST"]),
        Route("/v1/skills/{skill_id:path}/approvals/{digest}", approval, methods=["GET"]),
        Route("/v1/skills/{skill_id:path}", skill, methods=["GET"]),
        Route("/v1/sessions/{session_id}/agbom", session_agbom, methods=["GET"]),
        Route("/v1/agents/{agent_id}/agbom", agent_agbom, methods=["GET"]),
        bundle_route(bundles, authorized, unauthorized),
        openapi_route(),
        keys_route(published_keys),  # GET /v1/keys: the public signing keys
        *fleet_routes(lambda: decisions.store, authorized, unauthorized, advisories),
    ]
    if review is not None:
        from agbom.review.app import review_mount, root_redirect

        routes.append(review_mount(lambda: decisions.store, review))
        routes.append(root_redirect())  # GET / leads to the page

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            await decisions.start()
        except DecisionUnavailable as exc:
            # uvicorn would print the whole traceback; a failed start is one line and exit 2.
            print(f"agbom: error: cannot start the decision process: {exc}", file=sys.stderr)
            os._exit(2)
        try:
            yield
        finally:
            bundles.stop()
            await decisions.stop()

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=store_error_handlers())

    async def read_api(scope: Any, receive: Any, send: Any) -> None:
        # starlette's routes never match a path holding a line break (their patterns stop at
        # one), so such ids would get a bare 404; the read API refuses them as the wire does.
        if scope["type"] == "http" and scope["path"].startswith("/v1/"):
            query = unquote_plus(scope.get("query_string", b"").decode("latin-1"))
            if invisible_character(scope["path"]) or invisible_character(query):
                request = Request(scope, receive)
                response = (
                    unauthorized()
                    if not authorized(request)
                    else _json(
                        {
                            "error": "invalid_identifier",
                            "message": "an id in the path or query holds a control, line-break, "
                            "bidi or other invisible character",
                        },
                        400,
                    )
                )
                await response(scope, receive, send)
                return
        await app(scope, receive, send)

    return _with_front(read_api, decisions, limits, policy)


def _no_agbom(
    store: Store,
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    version: str | None = None,
) -> Response:
    """The 404 of the AgBOM routes, saying why: nothing stored, or (for an agent's or a
    session's current AgBOM) only refused versions, with where the last one is kept."""
    from agbom.store._inventory_logic import last_agbom_version, refused_note

    if agent_id is not None:
        body: dict[str, Any] = {"error": "not_found", "agent_id": agent_id}
        refused = store.latest_agbom_for_agent(agent_id, include_refused=True)
        whose = f"agent {agent_id}"
    else:
        body = {"error": "not_found", "session_id": session_id}
        refused = None if version is not None else last_agbom_version(store, session_id or "")
        whose = f"session {session_id}"
    if refused is not None and not refused.get("accepted"):
        body.update(refused_note(refused, whose))
    elif version is not None:
        body["message"] = f"{whose} has no AgBOM version {version}"
    else:
        body["message"] = f"no AgBOM is stored for {whose}"
    return _json(body, 404)


_JSON_HEADERS = [(b"content-type", b"application/json")]
_CLOSE = (b"connection", b"close")


async def _answer(send: Any, status: int, body: bytes, *, close: bool = False) -> None:
    headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    if close:
        headers.append(_CLOSE)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _with_front(app: Any, decisions: Decisions, limits: Limits, policy: FrontPolicy) -> Any:
    """The front checks for every request, then ``POST /acs`` straight from ASGI; everything
    else goes through starlette.

    ``/acs`` is the hot path: every agent step crosses it. Its handler needs neither routing
    nor starlette's request and response objects, and skipping them saves a fifth of the
    server's time per decision. The behaviour is the starlette route's: same limits, same
    answers. The request's transport is ``scope["scheme"]`` ("http" or "https") here.
    """

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)  # lifespan
            return
        path, method = scope["path"], scope["method"]
        if path != "/healthz":  # health probes (which may not know our name) learn nothing
            refused = policy.refusal(
                scope,
                needs_json=method == "POST" and (path == "/acs" or path[:7] == "/hooks/"),
                check_origin=path[:4] != "/ui/",
            )
            if refused is not None:
                status, reason, message = refused
                drained = await _drain(_content_length(scope["headers"]), receive)
                refusal = orjson.dumps({"error": reason, "message": message})
                await _answer(send, status, refusal, close=not drained)
                return
        if path != "/acs" or method != "POST":
            await app(scope, receive, send)
            return
        declared = _content_length(scope["headers"])
        try:
            body = await _read_body(declared, receive, limits.max_body_bytes)
        except _Disconnected:
            return
        if body is None:
            drained = await _drain(declared, receive)
            await _answer(send, 413, too_large(limits), close=not drained)
            return
        await _answer(send, 200, await decisions.acs(body))

    return asgi


def serve_http(
    decisions: Decisions,
    *,
    host: str,
    port: int,
    limits: Limits,
    api_token: str | None,
    fail_open_hooks: bool = False,
    policy: FrontPolicy | Callable[[int], FrontPolicy] | None = None,
    announce: Callable[[str, int], None] | None = None,
    review: ReviewConfig | None = None,
    bundle_source: BundleSource | None = None,
    published_keys: Mapping[str, Any] | None = None,
    on_ready: Callable[[], None] | None = None,
    on_stop: Callable[[], None] | None = None,
    hook_token: str | None = None,
    project_skills: ProjectSkills | None = None,
    advisories: Callable[[], Any] | None = None,
) -> None:
    """Run the app with uvicorn (uvloop + httptools when installed).

    The socket is bound here first, so that an address in use or a host that cannot be bound
    is one :class:`TransportError` line, and ``announce(host, port)`` is called only once the
    socket listens (with the real port when ``port`` is 0). ``on_ready()`` is called once the
    app has started (the decision process answers) and uvicorn accepts on the socket, and
    ``on_stop()`` as it stops accepting (uvicorn ends a run stopped by a signal by raising
    that signal again, so code after ``run`` may never execute). A ``policy`` given as a
    function gets the bound port (the one the system chose for port 0), which the ``Host``
    check needs.
    """
    import uvicorn

    sock = bind_socket(host, port)
    bound_port = int(sock.getsockname()[1])
    if callable(policy):
        policy = policy(bound_port)
    policy = policy or FrontPolicy.for_address(host, bound_port)
    cap = connection_cap(policy.max_connections)
    if cap < policy.max_connections:
        print(
            f"agbom: at most {cap} connections (the file descriptor limit allows no more)",
            file=sys.stderr,
        )
        # What the app bounds by the cap (the bundle's waiting long polls) sees the real one.
        policy = dataclasses.replace(policy, max_connections=cap)
    app = create_app(
        decisions,
        limits=limits,
        api_token=api_token,
        fail_open_hooks=fail_open_hooks,
        policy=policy,
        review=review,
        bundle_source=bundle_source,
        published_keys=published_keys,
        hook_token=hook_token,
        project_skills=project_skills,
        advisories=advisories,
    )
    # No proxy-header rewriting (agbom is not behind a proxy by default; a deployment that is
    # should terminate there), no per-response Server/Date headers (less work per decision),
    # no WebSocket upgrades (no route takes them).
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(policy, cap),
        ws="none",
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        date_header=False,
    )
    if announce is not None:
        announce(host, bound_port)

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and on_ready is not None:
                on_ready()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if on_stop is not None:
                on_stop()
            await super().shutdown(sockets)

    try:
        Server(config).run(sockets=[sock])
    finally:
        sock.close()


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; a :class:`TransportError` saying why not."""
    from agbom.transports.interface import TransportError

    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise TransportError(f"cannot bind {where}: unknown host") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = {
            errno.EADDRINUSE: "address in use",
            errno.EADDRNOTAVAIL: "not an address of this machine",
            errno.EACCES: "permission denied (ports below 1024 need privileges)",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        raise TransportError(f"cannot bind {where}: {reason}") from exc
    sock.set_inheritable(False)
    return sock


MAX_TOKEN_FILE_BYTES = 4096


def read_token_file(path: Path) -> str:
    """The read API's bearer token from ``path``, read as every file holding a secret is
    (agbom/_private_files.py: yours, 0600, no link, bounded); a :class:`TransportError`
    saying why not."""
    from agbom._private_files import read_private_file
    from agbom.transports.interface import TransportError

    raw = read_private_file(path, "token file", MAX_TOKEN_FILE_BYTES, TransportError)
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise TransportError(f"token file {path} is not UTF-8 text") from None
    if len(token) < 16:
        raise TransportError(f"token in {path} is shorter than 16 characters")
    return token
