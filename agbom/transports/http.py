"""JSON-RPC over HTTP (``POST /acs``), runtime hook endpoints and the read API, on starlette.

The Guardian call runs on the event loop thread: a decision costs well under a millisecond,
and keeping every store access on one thread is what SQLite's one-writer model wants.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agbom.adapters.interface import HookReply
from agbom.errors import AgbomError
from agbom.guardian import Guardian
from agbom.protocol import INTERNAL_ERROR
from agbom.store import SqliteStore
from agbom.transports.interface import Limits, error_body, handle_body_pipelined, too_large
from agbom.transports.worker import (
    DEADLINE_S,
    KIND_ACS,
    DecisionProcess,
    DecisionUnavailable,
    WorkerSpec,
)

JSON = "application/json"


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type=JSON, headers=headers)


class _Disconnected(Exception):
    """The client went away before its body arrived: there is no one to answer."""


async def _read_body(headers: Any, receive: Any, limit: int) -> bytes | None:
    """An ASGI request body, or ``None`` when it exceeds ``limit`` (read no further than that).

    ``headers`` are the raw ASGI header pairs; a declared length over the limit is refused
    before anything is read.
    """
    declared = next((v for k, v in headers if k == b"content-length"), None)
    if declared is not None and declared.isdigit() and int(declared) > limit:
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


class InProcessDecisions:
    """The Guardian in the serving process (``agbom serve --single-process``)."""

    def __init__(self, guardian_factory: Callable[[], Guardian], limits: Limits) -> None:
        self._factory = guardian_factory
        self._guardian: Guardian | None = None
        self.limits = limits

    @property
    def guardian(self) -> Guardian:
        if self._guardian is None:
            self._guardian = self._factory()
        return self._guardian

    @property
    def store(self) -> SqliteStore:
        return self.guardian.store

    @property
    def ready(self) -> bool:
        return True

    async def start(self) -> None:
        self.store.start_background_checkpoints()
        self.guardian.start_pipelined_commits(asyncio.get_running_loop().call_soon_threadsafe)

    async def stop(self) -> None:
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
    """The Guardian in a decision process of its own (the default; see transports/worker.py).

    The read API reads the store through a connection of this process, so reads never wait
    for a decision.
    """

    def __init__(self, spec: WorkerSpec, limits: Limits, *, deadline_s: float = DEADLINE_S) -> None:
        self.process = DecisionProcess(spec, deadline_s=deadline_s)
        self.limits = limits
        self._store: SqliteStore | None = None
        self._db = Path(spec.db)

    @property
    def store(self) -> SqliteStore:
        if self._store is None:
            self._store = SqliteStore.open(self._db)
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
        try:
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
) -> Any:
    """Build the ASGI app around where decisions are made (this process or its own)."""
    limits = limits or Limits()

    def authorized(request: Request) -> bool:
        if api_token is None:
            return True
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode(), api_token.encode()
        )

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
        try:
            body = await _read_body(request.headers.raw, request.receive, limits.max_body_bytes)
        except _Disconnected:
            return Response(status_code=400)  # nobody is left to read an answer
        if body is None:
            reply = adapter.malformed("payload too large", fail_open=fail_open)
        else:
            env = dict(env_from_headers(request.headers))
            reply = await decisions.hook(name, body, env=env, fail_open=fail_open)
        headers = {"X-Agbom-Exit-Code": str(reply.exit_code)}
        diagnostic = " ".join(reply.stderr.split())[:512]
        if diagnostic:
            headers["X-Agbom-Diagnostic"] = diagnostic.encode("ascii", "replace").decode()
        return Response(reply.body, status_code=reply.http_status, media_type=JSON, headers=headers)

    async def skill(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        skill_id = unquote(request.path_params["skill_id"])
        records = decisions.store.skill_records(skill_id)
        if not records:
            return _json({"error": "not_found", "skill_id": skill_id}, 404)
        return _json({"skill_id": skill_id, "digests": [r.to_json() for r in records]})

    async def approval(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        from agbom.store import Digest, StoreError

        skill_id = unquote(request.path_params["skill_id"])
        try:
            digest = Digest.parse(unquote(request.path_params["digest"]))
        except StoreError as exc:
            return _json({"error": "bad_digest", "message": str(exc)}, 400)
        agent_id = request.query_params.get("agent_id")
        tenant_id = request.query_params.get("tenant_id")
        verdict = decisions.store.verdict(skill_id, digest, agent_id=agent_id, tenant_id=tenant_id)
        return _json(
            {
                "skill_id": skill_id,
                "digest": str(digest),
                "approved": verdict.approved,
                "status": str(verdict.status),
                "record": verdict.record.to_json() if verdict.record else None,
            }
        )

    def _serialize(document: dict[str, Any], fmt: str) -> Response:
        from agbom.export import export
        from agbom.inventory import AgBOM

        agbom = AgBOM.from_document(document, source="stored AgBOM")
        if fmt == "canonical":
            return _json(agbom.to_document(with_hash=True))
        name, _, version = fmt.partition("@")
        spec = version or "1.6"
        media = (
            "application/vnd.cyclonedx+xml"
            if name.endswith("xml")
            else ("application/vnd.cyclonedx+json")
        )
        return Response(export(agbom, name, spec), media_type=media)

    async def session_agbom(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        session_id = request.path_params["session_id"]
        version = request.query_params.get("version")
        fmt = request.query_params.get("format", "canonical")
        if version is not None and not version.isdigit():
            return _json({"error": "bad_version"}, 400)
        record = decisions.store.agbom_version(session_id, int(version) if version else None)
        if record is None:
            return _json({"error": "not_found", "session_id": session_id}, 404)
        try:
            return _serialize(record["document"], fmt)
        except AgbomError as exc:  # an unknown format name, or a stored AgBOM that no longer loads
            return _json({"error": "bad_format", "message": str(exc)}, 400)

    async def agent_agbom(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        agent_id = request.path_params["agent_id"]
        fmt = request.query_params.get("format", "canonical")
        record = decisions.store.latest_agbom_for_agent(agent_id)
        if record is None:
            return _json({"error": "not_found", "agent_id": agent_id}, 404)
        try:
            return _serialize(record["document"], fmt)
        except AgbomError as exc:
            return _json({"error": "bad_format", "message": str(exc)}, 400)

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/hooks/{runtime}", hooks, methods=["POST"]),
        Route("/v1/skills/{skill_id:path}/approvals/{digest}", approval, methods=["GET"]),
        Route("/v1/skills/{skill_id:path}", skill, methods=["GET"]),
        Route("/v1/sessions/{session_id}/agbom", session_agbom, methods=["GET"]),
        Route("/v1/agents/{agent_id}/agbom", agent_agbom, methods=["GET"]),
    ]

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
            await decisions.stop()

    app = Starlette(routes=routes, lifespan=lifespan)
    return _with_fast_acs(app, decisions, limits)


_JSON_HEADERS = [(b"content-type", b"application/json")]


def _with_fast_acs(app: Starlette, decisions: Decisions, limits: Limits) -> Any:
    """Serve ``POST /acs`` straight from ASGI; everything else goes through starlette.

    ``/acs`` is the hot path: every agent step crosses it. Its handler needs neither routing
    nor starlette's request and response objects, and skipping them saves a fifth of the
    server's time per decision. The behaviour is the starlette route's: same limits, same
    answers.
    """

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/acs" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        try:
            body = await _read_body(scope["headers"], receive, limits.max_body_bytes)
        except _Disconnected:
            return
        answer = too_large(limits) if body is None else await decisions.acs(body)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*_JSON_HEADERS, (b"content-length", str(len(answer)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    return asgi


def serve_http(
    decisions: Decisions,
    *,
    host: str,
    port: int,
    limits: Limits,
    api_token: str | None,
    fail_open_hooks: bool = False,
) -> None:
    """Run the app with uvicorn (uvloop + httptools when installed)."""
    import uvicorn

    app = create_app(decisions, limits=limits, api_token=api_token, fail_open_hooks=fail_open_hooks)
    # No proxy-header rewriting (agbom is not behind a proxy by default; a deployment that is
    # should terminate there) and no per-response Server/Date headers: less work per decision.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        date_header=False,
    )


def read_token_file(path: Path) -> str:
    from agbom.transports.interface import TransportError

    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise TransportError(f"cannot read token file {path}: {exc.strerror or exc}") from exc
    if len(token) < 16:
        raise TransportError(f"token in {path} is shorter than 16 characters")
    return token
