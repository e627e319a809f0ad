"""The front process's side of ``agbom serve``'s decision process.

``agbom serve`` runs two processes. The front process runs uvicorn: it parses HTTP, serves
``/healthz`` and the read API, and forwards each ``POST /acs`` body and each runtime hook event
over a Unix socket pair (frames: agbom/transports/decision_wire.py). The decision process
(agbom/transports/decision_loop.py) runs the one Guardian. On a machine with two cores, HTTP
parsing and deciding then run side by side instead of taking turns on one core under one GIL.
There is still exactly one Guardian, so every session's state and chain have one owner, as in
a single process.

:class:`DecisionProcess` starts it, forwards frames, matches replies to requests, and restarts
it if it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from typing import Any

from agbom.adapters.interface import HookReply
from agbom.transports.decision_wire import (
    CONTROL_TAG,
    KIND_HOOK,
    READY,
    REPLY,
    REQUEST,
    STORE_UNWRITABLE,
    STORE_WRITABLE,
    WorkerSpec,
    decode_hook_reply,
    join_meta,
)
from agbom.transports.interface import TransportError

START_TIMEOUT_S = 60.0
RESTART_DELAY_S = 0.5
DEADLINE_S = 90.0
"""Longest a request may wait for its decision. Longer than the store's own busy timeout
(30 s), so a slow store answers with its error first; past it, the process is stuck."""


class DecisionUnavailable(TransportError):
    """The decision process is not running (starting, restarting, or failed to start)."""


class _Link(asyncio.Protocol):
    def __init__(self, owner: DecisionProcess) -> None:
        self.owner = owner
        self.buffer = bytearray()
        self.transport: Any = None  # uvloop's transports are not asyncio.Transport subclasses

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        pos, end = 0, len(buffer)
        while end - pos >= REPLY.size:
            length, tag = REPLY.unpack_from(buffer, pos)
            start = pos + REPLY.size
            if end - start < length:
                break
            pos = start + length
            self.owner._reply(tag, bytes(buffer[start:pos]))
        del buffer[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner._lost(self)


class DecisionProcess:
    """Starts the decision process, forwards frames to it, and restarts it if it dies.

    While it is down, calls raise :class:`DecisionUnavailable` at once: the HTTP side answers
    with an error (fail closed), it never allows on its own.
    """

    def __init__(self, spec: WorkerSpec, *, deadline_s: float = DEADLINE_S) -> None:
        self.spec = spec
        self.deadline_s = deadline_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._link: _Link | None = None
        self._ready: asyncio.Future[None] | None = None
        # Each request's reply future and its deadline (loop time). Every request gets the
        # same deadline_s, so insertion order is deadline order: one timer, set for the oldest,
        # watches them all (asyncio.wait_for cost a timer, a future and callbacks per request).
        self._waiters: dict[int, tuple[asyncio.Future[bytes], float]] = {}
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._next_tag = 1
        self._pending: list[bytes] = []
        self._flush_scheduled = False
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._launched: socket.socket | None = None  # see launch()
        self.store_problem: str | None = None
        """Why the decision process's store cannot write now, as it last said; ``None`` if it
        can. Requests are still forwarded meanwhile: they are answered with the store's error
        (nothing is allowed without its chain entry), and the process sees the store recover
        on its own (it tries a write every :data:`PROBE_INTERVAL_S`)."""

    @property
    def running(self) -> bool:
        """The process is up and takes frames."""
        return self._ready is not None and self._ready.done() and self._link is not None

    @property
    def ready(self) -> bool:
        """Running, and its store takes writes (what ``/healthz`` reports)."""
        return self.running and self.store_problem is None

    async def start(self) -> None:
        """Start the process and wait until its Guardian is built."""
        self._loop = asyncio.get_running_loop()
        try:
            await self._spawn()
        except BaseException:
            self._stopping = True  # a process that cannot start is not restarted in a loop
            await self.stop()
            raise

    def launch(self) -> None:
        """Start the process now, before the event loop runs, so that it builds its Guardian
        (loading an ``--osv`` export takes seconds) while this process does its own start-up;
        :meth:`start` then waits for it. :meth:`abandon` stops it if this process gives up
        first."""
        if self._launched is None and self._proc is None:
            self._launched = self._popen()

    def abandon(self) -> None:
        """Stop a process :meth:`launch` started that :meth:`start` never took over."""
        launched, self._launched = self._launched, None
        if launched is None:
            return
        launched.close()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def _popen(self) -> socket.socket:
        """The process, started; our end of its socket pair."""
        ours, theirs = socket.socketpair()
        spec_read, spec_write = os.pipe()
        try:
            # -P: the working directory (maybe a checkout an agent wrote to) is never put on
            # sys.path, so a planted orjson.py or agbom.py cannot run in the Guardian. Not -I:
            # PYTHONPATH and the user site are the operator's, and this process uses them too.
            self._proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                [sys.executable, "-P", "-m", "agbom.transports.decision_loop"]
                + [str(theirs.fileno()), str(spec_read)],
                pass_fds=[theirs.fileno(), spec_read],
                stdin=subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            os.close(spec_write)
            raise
        finally:
            theirs.close()
            os.close(spec_read)
        # The spec through a pipe, not argv: a command line is readable by every local user.
        with os.fdopen(spec_write, "wb") as pipe, contextlib.suppress(BrokenPipeError):
            pipe.write(self.spec.to_json().encode())
        return ours

    async def _spawn(self) -> None:
        assert self._loop is not None
        ours, self._launched = self._launched or self._popen(), None
        self.store_problem = None  # the new process says so first if its store cannot write
        self._ready = self._loop.create_future()
        _, self._link = await self._loop.create_unix_connection(lambda: _Link(self), sock=ours)
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), START_TIMEOUT_S)
        except TimeoutError as exc:
            raise DecisionUnavailable("the decision process did not start in time") from exc

    async def stop(self) -> None:
        """Close the socket (the process commits what it has and exits), then reap it."""
        self._stopping = True
        if self._link is not None and self._link.transport is not None:
            self._link.transport.close()
        proc = self._proc
        if proc is not None:
            for _ in range(100):
                if proc.poll() is not None:
                    break
                await asyncio.sleep(0.05)
            else:
                proc.kill()
                proc.wait()

    async def call(self, kind: int, payload: bytes) -> bytes:
        """Send one frame and wait for its reply."""
        link = self._link
        if link is None or link.transport is None or not self.running:
            raise DecisionUnavailable("the decision process is not running")
        assert self._loop is not None
        tag = self._next_tag
        self._next_tag = tag + 1 if tag < 0xFFFFFFFF else 1
        waiter: asyncio.Future[bytes] = self._loop.create_future()
        deadline = self._loop.time() + self.deadline_s
        self._waiters[tag] = (waiter, deadline)
        if self._deadline_timer is None:
            self._deadline_timer = self._loop.call_at(deadline, self._expire)
        self._pending.append(REQUEST.pack(len(payload), tag, kind))
        self._pending.append(payload)
        if not self._flush_scheduled:
            # One write per turn of the loop for every frame queued in it.
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
        return await waiter

    def _expire(self) -> None:
        """Fail every request past its deadline (oldest first), then watch the next one."""
        self._deadline_timer = None
        assert self._loop is not None
        now = self._loop.time()
        expired = False
        while self._waiters:
            tag, (waiter, deadline) = next(iter(self._waiters.items()))
            if deadline > now:
                self._deadline_timer = self._loop.call_at(deadline, self._expire)
                break
            del self._waiters[tag]
            if not waiter.done():  # not when its caller went away meanwhile
                expired = True
                waiter.set_exception(
                    DecisionUnavailable(
                        f"no decision within {self.deadline_s:g} s; "
                        "the decision process is restarted"
                    )
                )
        if expired:
            self._hung()

    def _hung(self) -> None:
        """A decision process that holds a request past the deadline is stuck (its store waits
        time out well before): kill it, and the usual restart takes over."""
        if self._proc is not None and self._proc.poll() is None and not self._stopping:
            print(
                f"agbom: the decision process answered nothing for {self.deadline_s:g} s; "
                "killing it",
                file=sys.stderr,
            )
            self._proc.kill()

    def send_signal(self, signum: int) -> None:
        """Pass ``signum`` on to the decision process, if it runs (SIGHUP: reload what the
        Guardian decides with; see ``agbom serve --osv``)."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signum)

    async def hook(
        self, runtime: str, body: bytes, *, env: dict[str, str], fail_open: bool
    ) -> HookReply:
        event = join_meta({"runtime": runtime, "env": env, "fail_open": fail_open}, body)
        return decode_hook_reply(await self.call(KIND_HOOK, event))

    def _flush(self) -> None:
        self._flush_scheduled = False
        link = self._link
        if link is not None and link.transport is not None and self._pending:
            link.transport.write(b"".join(self._pending))
        self._pending.clear()

    def _reply(self, tag: int, payload: bytes) -> None:
        if tag == CONTROL_TAG:
            if payload == STORE_WRITABLE:
                self.store_problem = None
                return
            if payload.startswith(STORE_UNWRITABLE):
                text = payload[len(STORE_UNWRITABLE) :].decode("utf-8", "replace")
                self.store_problem = text or "the store cannot write"
                return
            if self._ready is None or self._ready.done():
                return
            if payload == READY:
                self._ready.set_result(None)
            else:
                text = payload.decode("utf-8", "replace").removeprefix("error: ")
                self._ready.set_exception(DecisionUnavailable(text))
            return
        entry = self._waiters.pop(tag, None)
        if entry is not None and not entry[0].done():
            entry[0].set_result(payload)

    def _lost(self, link: _Link) -> None:
        if link is not self._link:
            return
        self._link = None
        waiters, self._waiters = self._waiters, {}
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._pending.clear()
        for waiter, _ in waiters.values():
            if not waiter.done():
                waiter.set_exception(DecisionUnavailable("the decision process stopped"))
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(DecisionUnavailable("the decision process exited"))
        if not self._stopping and self._loop is not None:
            print("agbom: the decision process stopped; restarting it", file=sys.stderr)
            self._loop.call_later(RESTART_DELAY_S, self._restart)

    def _restart(self) -> None:
        if self._stopping or self._loop is None:
            return
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()  # its socket is gone: it can no longer answer anyone
        if self._proc is not None:
            self._proc.wait()  # reap it (it has exited or was just killed)

        async def again() -> None:
            try:
                await self._spawn()
            except (DecisionUnavailable, OSError) as exc:
                # An exit is retried by _lost; a process that hangs at start-up is not.
                print(f"agbom: decision process restart failed: {exc}", file=sys.stderr)

        task = self._loop.create_task(again())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
