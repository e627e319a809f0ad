"""Below the app: deadlines per connection, the cap on open connections, and one send per
loop turn, for uvicorn's HTTP protocols (moved out of agbom/transports/http.py, which had
grown past 900 lines; the routes stay there, the front's checks are in front_policy.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson

from agbom.transports.front_policy import FrontPolicy

FD_RESERVE = 64
"""File descriptors kept free of client connections: the listening socket, the link to the
decision process, the store's files, standard streams, the event loop's own."""


def connection_cap(requested: int) -> int:
    """``requested``, lowered so that client connections can never use up the process's file
    descriptors (past that, accept() fails and nobody is served at all)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, soft - FD_RESERVE))


_TIMEOUT_BODY = orjson.dumps({"error": "request_timeout", "message": "the request took too long"})
_TIMEOUT_REPLY = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    + b"content-length: %d\r\n\r\n" % len(_TIMEOUT_BODY)
    + _TIMEOUT_BODY
)


@dataclass(slots=True)
class _Connection:
    cycle: Any = None  # the request whose headers were seen last (uvicorn's cycle object)
    timer: asyncio.TimerHandle | None = None
    pending: int = 0  # bytes received towards the next request's headers


@dataclass
class _Guard:
    """Deadlines per connection and the cap on open connections, for uvicorn's HTTP protocols.

    A connection is *waiting* while the next request's headers have not all arrived, and
    *uploading* while its body is arriving; each stage has a deadline (a 408, then the
    connection is closed). When the cap is reached, a new connection pushes out the oldest
    waiting one, else the oldest uploading one; a connection whose request is complete (being
    decided or answered) is never pushed out. So slow clients cannot hold every descriptor,
    and a client that sends its request promptly is served while they try.

    uvicorn parses the request; this only looks at its ``cycle`` (the current request:
    ``more_body``, ``response_started``, ``response_complete``), as both its protocols keep it.
    On the hot path (a whole request in one read) it costs an identity check.
    """

    policy: FrontPolicy
    max_connections: int
    open: dict[Any, _Connection] = field(default_factory=dict)  # oldest first

    def made(self, conn: Any) -> None:
        if len(self.open) >= self.max_connections and not self._evict():
            conn.transport.close()  # every slot holds a request being decided: refuse this one
            return
        state = self.open[conn] = _Connection()
        self._arm(conn, state, self.policy.header_timeout_s)

    def lost(self, conn: Any) -> None:
        state = self.open.pop(conn, None)
        if state is not None and state.timer is not None:
            state.timer.cancel()

    def received(self, conn: Any, size: int) -> None:
        state = self.open.get(conn)
        if state is None:
            return
        cycle = conn.cycle
        if cycle is not state.cycle:  # a new request's headers are complete
            state.cycle, state.pending = cycle, 0
            if state.timer is not None:
                state.timer.cancel()
                state.timer = None
            if cycle.more_body:
                self._arm(conn, state, self.policy.body_timeout_s)
        elif cycle is None or cycle.response_complete:  # headers of the next request arriving
            state.pending += size
            if state.pending > self.policy.max_header_bytes:
                self._close(conn, state)
            elif state.timer is None:
                self._arm(conn, state, self.policy.header_timeout_s)
        elif not cycle.more_body and state.timer is not None:  # the body is complete
            state.timer.cancel()
            state.timer = None

    def _arm(self, conn: Any, state: _Connection, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        state.timer = loop.call_later(seconds, self._expired, conn, state, state.cycle)

    def _expired(self, conn: Any, state: _Connection, cycle: Any) -> None:
        state.timer = None
        if self.open.get(conn) is not state or conn.cycle is not cycle:
            return  # gone, or a new request started since
        if cycle is None or cycle.response_complete or cycle.more_body:
            self._close(conn, state)

    def _close(self, conn: Any, state: _Connection) -> None:
        """Answer 408 when nothing else was answered yet, then close."""
        transport = conn.transport
        cycle = state.cycle
        if not transport.is_closing():
            if cycle is None or cycle.response_complete or not cycle.response_started:
                transport.write(_TIMEOUT_REPLY)
            transport.close()

    def _evict(self) -> bool:
        """Close the oldest waiting connection, else the oldest uploading one."""
        victim = None
        for conn in self.open:
            cycle = conn.cycle
            if cycle is None or cycle.response_complete:
                victim = conn
                break
            if victim is None and cycle.more_body and not cycle.response_started:
                victim = conn
        if victim is None:
            return False
        self.lost(victim)  # forget it now: its connection_lost comes later
        victim.transport.close()
        return True


class _CoalescedWrites:
    """A connection's transport whose writes of one loop turn leave in one send.

    uvicorn writes a response's status line and headers, then its body: two sends, two TCP
    segments, and two wake-ups of the client for every decision. Here the bytes written in one
    turn of the loop are joined and sent once, at the start of the next turn. Anything that
    ends the connection (``close``, ``write_eof``) sends what is queued first; ``abort`` drops
    it, as the transport's own buffer would be. Everything else is the transport's.
    """

    __slots__ = ("_transport", "_queued", "_loop")

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._queued: list[bytes] = []
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._queued:
            self._loop.call_soon(self.flush)
        self._queued.append(data)

    def flush(self) -> None:
        if not self._queued:
            return
        data = b"".join(self._queued) if len(self._queued) > 1 else self._queued[0]
        self._queued.clear()
        if not self._transport.is_closing():  # a reset connection: nobody reads it any more
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._queued.clear()
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return int(self._transport.get_write_buffer_size()) + sum(map(len, self._queued))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def guarded_protocol(policy: FrontPolicy, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools when installed, else h11) under a :class:`_Guard`."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    except ImportError:  # pragma: no cover - uvicorn[standard] brings httptools
        from uvicorn.protocols.http.h11_impl import H11Protocol as base  # type: ignore[assignment]
    guard = _Guard(policy, max_connections)

    class Guarded(base):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(_CoalescedWrites(transport))  # type: ignore[arg-type]
            guard.made(self)

        def connection_lost(self, exc: Exception | None) -> None:
            guard.lost(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            guard.received(self, len(data))

    return Guarded
