"""``GET /v1/bundles/agbom.tar.gz``: the OPA bundle of the approval records, served the way
OPA's bundle service API expects (docs/opa.md).

- ``ETag`` is the bundle's revision; a request whose ``If-None-Match`` names it gets 304.
- Long polling: with ``Prefer: wait=N`` and a current ``If-None-Match``, the answer waits up
  to N seconds (at most :data:`MAX_WAIT_S`) for a new revision, then is a 304. Every answer
  to such a request says ``Content-Type: application/vnd.openpolicyagent.bundles``, which
  tells OPA the server long-polls (otherwise it falls back to periodic polling).
- Waiting is bounded: a waiting request is complete, so the front's connection cap never
  pushes it out. At most a quarter of the cap (:func:`waiter_bound`) may wait here, for a
  new revision or for the first build. A long poll past that gets the current bundle at once
  as ``application/gzip``, which turns OPA's downloader to periodic polling (a 304 would not:
  OPA keeps long-polling after a 304 and would ask again at once, in a loop); a request that
  would wait for the first build gets 503. So decisions always find a connection.

The bundle is built off the event loop by one watcher thread with a store handle of its own.
On PostgreSQL it rebuilds when ``NOTIFY agbom_approvals`` says an approval changed on any
replica (and every :data:`SAFETY_REFRESH_S`, for server pins, which announce nothing); on
SQLite it rebuilds every :data:`POLL_S`. The thread starts with the first bundle request and
stops after :data:`IDLE_STOP_S` without one, so a server nobody polls pays nothing. A build
that fails keeps the last good bundle.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agbom.errors import AgbomError

if TYPE_CHECKING:
    from agbom.export.opa_bundle import Bundle
    from agbom.store import Store

BUNDLE_PATH = "/v1/bundles/agbom.tar.gz"
LONG_POLL_MEDIA_TYPE = "application/vnd.openpolicyagent.bundles"
GZIP = "application/gzip"

MAX_WAIT_S = 60
"""Longest long poll. A longer ``Prefer: wait`` is cut to this: OPA then simply asks again."""
MAX_HEADER_CHARS = 256
"""Longest ``If-None-Match`` or ``Prefer`` accepted; an ETag here is 66 characters."""
WAITER_SHARE = 4
"""One connection in this many may wait in the bundle route (:func:`waiter_bound`)."""
FIRST_BUILD_S = 30.0
POLL_S = 1.0
SAFETY_REFRESH_S = 10.0
IDLE_STOP_S = 2 * MAX_WAIT_S

_WAIT = re.compile(r"(?:^|[;,\s])wait\s*=\s*(\d{1,6})(?:$|[;,\s])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class BundleSource:
    """Which rule packs' bans the bundle carries: those ``agbom serve --rules`` loads."""

    rules: Path | None = None
    with_default: bool = True


class BundleUnavailable(AgbomError):
    """No bundle could be built yet (the store or a rule pack failed)."""


def waiter_bound(max_connections: int) -> int:
    """Requests that may wait in the bundle route at once, for a server that keeps at most
    ``max_connections`` open (its effective cap): a quarter, so that three quarters of the
    connections are always left to decisions, health probes and reads."""
    return max_connections // WAITER_SHARE


class BundleService:
    """The current bundle, rebuilt by a watcher thread, and the requests waiting on it (at
    most ``max_waiters`` at once: :func:`waiter_bound`)."""

    def __init__(self, store: Callable[[], Store], source: BundleSource, max_waiters: int) -> None:
        self._store = store
        self._source = source
        self.max_waiters = max_waiters
        self._bundle: Bundle | None = None
        self._problem: str | None = None
        self._changed: asyncio.Event | None = None
        self._first: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_request = 0.0
        self.waiting = 0

    # -- the event loop's side -------------------------------------------------------------

    def _ensure_running(self) -> None:
        self._last_request = time.monotonic()
        if self._thread is not None and self._thread.is_alive():
            return
        self._loop = asyncio.get_running_loop()
        # A new thread builds afresh: what a stopped one left may be stale by now.
        self._bundle, self._problem = None, None
        self._first = asyncio.Event()
        self._changed = self._changed or asyncio.Event()
        base = self._store()
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._watch, args=(base,), name="agbom-bundle", daemon=True
        )
        self._thread.start()

    @property
    def full(self) -> bool:
        """Whether as many requests wait as may: another one must be answered at once."""
        return self.waiting >= self.max_waiters

    async def current(self) -> Bundle:
        """The bundle now; waits for the first build (BundleUnavailable if it fails, or at
        once when :attr:`full` and there is nothing to answer with yet)."""
        self._ensure_running()
        if self._bundle is not None:
            return self._bundle
        if self.full:
            raise BundleUnavailable("the bundle is still being built; retry")
        self.waiting += 1
        try:
            return await self._latest()
        finally:
            self.waiting -= 1

    async def _latest(self) -> Bundle:
        """The bundle now, waiting for the first build; the caller counts the wait."""
        self._ensure_running()  # (restarts a watcher that went idle)
        if self._bundle is None:
            assert self._first is not None
            try:
                await asyncio.wait_for(self._first.wait(), FIRST_BUILD_S)
            except TimeoutError:
                raise BundleUnavailable("the bundle is still being built; retry") from None
        if self._bundle is None:
            raise BundleUnavailable(self._problem or "the bundle could not be built")
        return self._bundle

    async def newer_than(
        self, revision: str, wait_s: float, gone: asyncio.Future[Any] | None = None
    ) -> Bundle | None:
        """A bundle of another revision, waiting up to ``wait_s`` for it; None if none came,
        or as soon as ``gone`` is done (the client went away: its slot is free at once).
        The caller checks :attr:`full` first."""
        deadline = time.monotonic() + wait_s
        self.waiting += 1
        try:
            while True:
                bundle = await self._latest()
                if bundle.revision != revision:
                    return bundle
                left = deadline - time.monotonic()
                if left <= 0 or (gone is not None and gone.done()):
                    return None
                assert self._changed is not None
                changed = asyncio.ensure_future(self._changed.wait())
                try:
                    done, _ = await asyncio.wait(
                        [changed] if gone is None else [changed, gone],
                        timeout=left,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    changed.cancel()
                if changed not in done:
                    return None  # timed out, or the client is gone
        finally:
            self.waiting -= 1

    def _publish(self, bundle: Bundle | None, problem: str | None) -> None:
        self._problem = problem
        if bundle is not None:
            self._bundle = bundle
            if self._changed is not None:
                # Wake every waiter of this revision; later waiters wait on a fresh event.
                self._changed.set()
                self._changed = asyncio.Event()
        if self._first is not None:
            self._first.set()

    def stop(self) -> None:
        self._stop.set()

    # -- the watcher thread ----------------------------------------------------------------

    def _watch(self, base: Store) -> None:
        from agbom.export.opa_bundle import ban_entries, build_bundle, bundle_data
        from agbom.store.notifications import approval_changes

        # The thread's own handle, opened here: a SQLite connection belongs to the thread that
        # uses it, and opening a PostgreSQL pool may block, which the event loop must not.
        try:
            store = base.reopen()
        except AgbomError as exc:
            self._call(self._publish, None, str(exc))
            return
        feed = approval_changes(store)
        bans: list[dict[str, Any]] | None = None
        last: str | None = None
        try:
            if feed is not None:
                feed.wait(0)  # LISTEN before the first build: no change falls in between
            refresh = SAFETY_REFRESH_S if feed is not None else POLL_S
            while not self._stop.is_set():
                bundle, problem = None, None
                try:
                    if bans is None:  # the packs are read once, as the Guardian reads them
                        bans = ban_entries(
                            self._source.rules, with_default=self._source.with_default
                        )
                    bundle = build_bundle(bundle_data(store, bans=bans))
                except AgbomError as exc:  # store, rule pack or size: keep the last good one
                    problem = str(exc)
                if bundle is not None and bundle.revision == last:
                    bundle = None  # nothing new to publish
                elif bundle is not None:
                    last = bundle.revision
                if bundle is not None or problem is not None:
                    self._call(self._publish, bundle, problem)
                if time.monotonic() - self._last_request > IDLE_STOP_S:
                    return
                if feed is not None:
                    feed.wait(refresh)
                else:
                    self._stop.wait(refresh)
        finally:
            if feed is not None:
                feed.close()
            store.close()

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(fn, *args)
            except RuntimeError:  # the loop closed meanwhile (shutdown)
                pass


# -- the route ------------------------------------------------------------------------------


def _error(status: int, error: str, message: str) -> Response:
    body = orjson.dumps({"error": error, "message": message})
    return Response(body, status_code=status, media_type="application/json")


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone away (the request has no body to read first)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def etag_matches(header: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``etag`` (a list, weak tags, or ``*``)."""
    for candidate in header.split(","):
        tag = candidate.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def requested_wait(prefer: str | None) -> int | None:
    """The seconds of ``Prefer: wait=N`` (cut to :data:`MAX_WAIT_S`), None when absent."""
    if prefer is None:
        return None
    found = _WAIT.search(prefer)
    if found is None:
        return None
    return min(int(found.group(1)), MAX_WAIT_S)


def bundle_route(
    service: BundleService,
    authorized: Callable[[Request], bool],
    unauthorized: Callable[[], Response],
) -> Route:
    async def bundle(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        if_none_match = request.headers.get("if-none-match")
        prefer = request.headers.get("prefer")
        for name, value in (("If-None-Match", if_none_match), ("Prefer", prefer)):
            if value is not None and len(value) > MAX_HEADER_CHARS:
                return _error(
                    400, "header_too_long", f"{name} is longer than {MAX_HEADER_CHARS} characters"
                )
        wait = requested_wait(prefer)
        media = LONG_POLL_MEDIA_TYPE if wait is not None else GZIP
        try:
            current = await service.current()
            if if_none_match is not None and etag_matches(if_none_match, current.etag):
                if wait and service.full:
                    # No waiting: the bundle now, labelled so that OPA polls periodically.
                    return Response(
                        current.body,
                        media_type=GZIP,
                        headers={"ETag": current.etag, "Cache-Control": "no-cache"},
                    )
                newer = None
                if wait:
                    gone = asyncio.ensure_future(_disconnected(request))
                    try:
                        newer = await service.newer_than(current.revision, wait, gone)
                    finally:
                        gone.cancel()
                if newer is None:
                    return Response(
                        status_code=304,
                        headers={"ETag": current.etag, "Content-Type": media},
                    )
                current = newer
        except BundleUnavailable as exc:
            return _error(503, "bundle_unavailable", str(exc))
        return Response(
            current.body,
            media_type=media,
            headers={"ETag": current.etag, "Cache-Control": "no-cache"},
        )

    return Route(BUNDLE_PATH, bundle, methods=["GET"])
