"""The decision process: the Guardian in a process of its own, behind ``agbom serve``'s HTTP.

``agbom serve`` runs two processes. The front process runs uvicorn: it parses HTTP, serves
``/healthz`` and the read API, and forwards each ``POST /acs`` body and each runtime hook event
over a Unix socket pair. The decision process runs the one Guardian: it validates, decides,
appends to the audit chain and answers. On a machine with two cores, HTTP parsing and deciding
then run side by side instead of taking turns on one core under one GIL. There is still exactly
one Guardian, so every session's state and chain have one owner, as in a single process.

Frames on the socket (big-endian)::

    request: length u32 | tag u32 | kind u8 | payload      (kind 1: ACS body, 2: hook event)
    reply:   length u32 | tag u32 | payload                (tag 0: control, "ready"/"error: …")

A hook payload is ``u32 length | meta JSON | event body``, its reply ``u32 length | meta JSON |
reply body``. The decision process reads whatever frames have arrived, decides them all, commits
their chain entries together (pipelined commits, see ``Guardian.submit``), and writes every
reply in one send. A reply is only written after its entry is committed.

Run as ``python -m agbom.transports.worker FD SPEC_FD``, where FD is the inherited socket and
SPEC_FD an inherited pipe the spec (JSON) is read from: never the command line, which every
user of the machine can read (the spec may hold a store URL with its password).
It ignores SIGINT (the front process owns shutdown) and exits when the socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from agbom.adapters.headers import MAX_EVENT_BYTES
from agbom.adapters.interface import HookReply
from agbom.guardian import Guardian, GuardianConfig
from agbom.guardian.config import Mode
from agbom.guardian.core import on_database_server
from agbom.guardian.precheck import Prechecked, split_prechecked
from agbom.protocol import INTERNAL_ERROR, request_hash
from agbom.transports.interface import Limits, TransportError, error_body, parse_message

REQUEST = struct.Struct(">IIB")
REPLY = struct.Struct(">II")
META = struct.Struct(">I")
KIND_ACS = 1
KIND_HOOK = 2
KIND_ACS_CHECKED = 3
"""An ACS request the front already checked (agbom/guardian/precheck.py): the payload is its
request hash, 64 hex digits, then the body."""
CONTROL_TAG = 0
READY = b"ready"
STORE_WRITABLE = b"store: writable"
STORE_UNWRITABLE = b"store: unwritable: "
"""Control frames the decision process sends when its store stops or starts taking writes."""
PROBE_INTERVAL_S = 0.25
"""How often a decision process whose store cannot write tries a write of its own."""
IDLE_PROBE_S = 1.0
"""How often a decision process on a database server (PostgreSQL) tries a write of its own
while the store is healthy: the server can go away while no request arrives, and /healthz
must say so (503) within about this (plus the probe's own 2 s connection timeout)."""
FRAME_SLACK = 1 << 20
"""Bytes a frame may carry beyond the body limit (a hook's headers and metadata)."""
START_TIMEOUT_S = 60.0
RESTART_DELAY_S = 0.5
DEADLINE_S = 90.0
"""Longest a request may wait for its decision. Longer than the store's own busy timeout
(30 s), so a slow store answers with its error first; past it, the process is stuck."""


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """Everything the decision process needs to build the Guardian the CLI asked for."""

    db: str
    rules: str | None = None
    mode: str = "enforce"
    secret_file: str | None = None
    key_id: str | None = None
    keys_file: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    with_default_rules: bool = False

    @classmethod
    def of(
        cls,
        db: os.PathLike[str] | str,
        rules: os.PathLike[str] | str | None,
        *,
        mode: str,
        secret_file: os.PathLike[str] | str | None,
        config: GuardianConfig,
        limits: Limits,
        key_id: str | None = None,
        keys_file: os.PathLike[str] | str | None = None,
        with_default_rules: bool = False,
    ) -> WorkerSpec:
        settings = asdict(config)
        settings["mode"] = str(config.mode)
        for name, value in settings.items():
            if isinstance(value, tuple):
                settings[name] = list(value)  # JSON has no tuples; guardian_config turns back
        return cls(
            db=os.fspath(db),
            rules=None if rules is None else os.fspath(rules),
            mode=mode,
            secret_file=None if secret_file is None else os.fspath(secret_file),
            key_id=key_id,
            keys_file=None if keys_file is None else os.fspath(keys_file),
            config=settings,
            limits=asdict(limits),
            with_default_rules=with_default_rules,
        )

    def to_json(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def from_json(cls, text: str) -> WorkerSpec:
        return cls(**orjson.loads(text))

    def guardian_config(self) -> GuardianConfig:
        settings = dict(self.config)
        if "mode" in settings:
            settings["mode"] = Mode(settings["mode"])
        for name, value in settings.items():
            if isinstance(value, list):
                settings[name] = tuple(value)
        return GuardianConfig(**settings)

    def build(self) -> Guardian:
        from agbom.guardian import build_guardian

        return build_guardian(
            self.db,
            self.rules,
            mode=self.mode,
            secret_file=self.secret_file,
            key_id=self.key_id,
            keys_file=self.keys_file,
            config=self.guardian_config(),
            transport="http",  # the decision process answers the HTTP front only
            with_default_rules=self.with_default_rules,
        )


# -- the decision process -------------------------------------------------------------------------


SWITCH_INTERVAL_S = 0.001
"""The decision process's GIL switch interval (see :func:`main`)."""
BULK_FRAME_BYTES = 256 * 1024
"""An ``agbom/snapshot`` body at least this large is prepared off the Guardian's lock, in the
bulk thread, so that small decisions of other sessions go on meanwhile (a 9,000-component
snapshot takes seconds to validate, model and evaluate)."""


class _Bulk:
    """The bulk thread: prepares big snapshots (``Guardian.prepare``) one at a time, with a
    store connection of its own, and wakes the loop when one is ready."""

    def __init__(self, guardian: Guardian) -> None:
        self.guardian = guardian
        self.todo: queue.SimpleQueue[tuple[int, Any] | None] = queue.SimpleQueue()
        self.done: deque[tuple[int, Any, Any, Prechecked | None]] = deque()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        self._thread: threading.Thread | None = None

    def submit(self, tag: int, message: Any) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agbom-bulk", daemon=True)
            self._thread.start()
        self.todo.put((tag, message))

    def _run(self) -> None:
        from agbom.store import Store

        store: Store | None = None
        while (item := self.todo.get()) is not None:
            tag, message = item
            prepared = checked = None
            try:
                if store is None:
                    store = self.guardian.store.reopen()
                prepared = self.guardian.prepare(message, store)
                if prepared is not None and prepared.error is None:
                    # The envelope and payload were validated by prepare: the loop takes
                    # the request hash as computed here, not again under the lock.
                    checked = Prechecked(request_hash(message["params"]))
                    if prepared.document is not None:
                        store.prepare_document(prepared.document)
            except Exception as exc:  # noqa: BLE001 - the pipeline decides it unprepared
                print(f"agbom: decision process: preparing a snapshot: {exc}", file=sys.stderr)
            self.done.append((tag, message, prepared, checked))
            with contextlib.suppress(OSError):
                os.write(self.wake_w, b"!")
        if store is not None:
            store.close()

    def drain_wakeups(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.wake_r, 4096):
                pass

    def close(self) -> None:
        """Stop after the snapshot at hand. The wake-up pipe stays open until the process
        exits: the thread may still write to it, and a closed descriptor could be reused."""
        self.todo.put(None)


def _session_of(message: Any) -> str | None:
    params = message.get("params") if isinstance(message, dict) else None
    metadata = params.get("metadata") if isinstance(params, dict) else None
    session_id = metadata.get("session_id") if isinstance(metadata, dict) else None
    return session_id if isinstance(session_id, str) else None


class DecisionServer:
    """The decision process's loop: frames in, decisions committed, replies out.

    Big snapshots are prepared in a thread of their own (see :data:`BULK_FRAME_BYTES`); while
    one is, later requests of the same session are held back and decided after it, in order,
    and every other session's requests are decided as they come.
    """

    def __init__(self, guardian: Guardian, limits: Limits) -> None:
        self.guardian = guardian
        self.limits = limits
        self._bulk = _Bulk(guardian)
        # Sessions with a snapshot being prepared, and their requests held back meanwhile.
        self._held: dict[str, deque[tuple[int, Any, int]]] = {}
        # Hook events have their own limit, independent of --max-body-bytes.
        self.max_frame = max(limits.max_body_bytes, MAX_EVENT_BYTES) + FRAME_SLACK
        self._scheduled: list[Callable[[], None]] = []
        self._out: list[bytes] = []
        self._reported: str | None = None  # the store's write failure the front last heard of
        self._next_probe = 0.0

    def serve(self, sock: socket.socket) -> bool:
        """Answer frames until the front process closes the socket (True), or sends something
        that is not a frame (False, after saying so on stderr). Closes the socket.

        Also tells the front process whether the store takes writes (it answers ``/healthz``
        with 503 while not). While it does not, the loop wakes every
        :data:`PROBE_INTERVAL_S` to try a write of its own, so it sees the store come back
        even when no request arrives."""
        self.guardian.start_pipelined_commits(self._scheduled.append)
        probes_when_healthy = on_database_server(self.guardian.store)
        self.guardian.store_probed_elsewhere = True  # by this loop, every PROBE_INTERVAL_S
        buffer = bytearray()
        try:
            # A store that is read-only from the start (for example, reopened while it was)
            # is reported before the front process hears that we are ready.
            self._store_health(sock, probe=True)
            sock.sendall(REPLY.pack(len(READY), CONTROL_TAG) + READY)
            while True:
                probing = self._reported is not None or probes_when_healthy
                wait = self._next_probe - time.monotonic() if probing else None
                if wait is not None and wait <= 0:
                    self._store_health(sock, probe=True)
                    continue
                readable = select.select([sock.fileno(), self._bulk.wake_r], [], [], wait)[0]
                if not readable:
                    self._store_health(sock, probe=True)
                    continue
                if self._bulk.wake_r in readable:
                    self._bulk.drain_wakeups()
                    self._finish_prepared()
                if sock.fileno() in readable:
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        break
                    buffer += chunk
                    consumed = self.answer_frames(buffer)
                    del buffer[:consumed]
                # Commit the entries of everything just decided, which releases their replies.
                while self._scheduled:
                    self._scheduled.pop(0)()
                self._store_health(sock)
                if self._out:
                    sock.sendall(b"".join(self._out))
                    self._out.clear()
        except (OSError, TransportError) as exc:
            print(f"agbom: decision process: {exc}", file=sys.stderr)
            return False
        finally:
            self._bulk.close()  # a snapshot still being prepared is not decided: no one waits
            self.guardian.stop_pipelined_commits()
            sock.close()
        return True

    def _store_health(self, sock: socket.socket, *, probe: bool = False) -> None:
        """Queue a control frame when the store's ability to write changed since the last one
        (``probe``: try a write first), and wake up to probe while it cannot write."""
        store = self.guardian.store
        if probe:
            problem = store.check_writable()
            interval = PROBE_INTERVAL_S if problem is not None else IDLE_PROBE_S
            self._next_probe = time.monotonic() + interval
        else:
            problem = store.write_failure
        if problem == self._reported:
            return
        if self._reported is None:
            self._next_probe = time.monotonic() + PROBE_INTERVAL_S
        self._reported = problem
        frame = STORE_WRITABLE if problem is None else STORE_UNWRITABLE + problem.encode()
        self._out.append(REPLY.pack(len(frame), CONTROL_TAG))
        self._out.append(frame)
        if probe:
            sock.sendall(b"".join(self._out))
            self._out.clear()
        print(
            "agbom: decision process: the store takes writes again"
            if problem is None
            else f"agbom: decision process: {problem}",
            file=sys.stderr,
        )

    def answer_frames(self, buffer: bytearray) -> int:
        """Decide every complete frame in ``buffer``; return how many bytes were used."""
        pos, end = 0, len(buffer)
        view = memoryview(buffer)
        try:
            while end - pos >= REQUEST.size:
                length, tag, kind = REQUEST.unpack_from(buffer, pos)
                if length > self.max_frame:
                    raise TransportError(f"frame of {length} bytes from the front process")
                start = pos + REQUEST.size
                if end - start < length:
                    break
                payload = bytes(view[start : start + length])
                pos = start + length
                self._answer(tag, kind, payload)
        finally:
            view.release()
        return pos

    def _emit(self, tag: int, payload: bytes) -> None:
        self._out.append(REPLY.pack(len(payload), tag))
        self._out.append(payload)

    def _answer(self, tag: int, kind: int, payload: bytes) -> None:
        try:
            if kind == KIND_ACS:
                self._answer_acs(tag, payload)
            elif kind == KIND_ACS_CHECKED:
                split = split_prechecked(payload)
                if split is None:
                    raise TransportError("a checked request frame without its request hash")
                self._answer_acs(tag, split[1], split[0])
            elif kind == KIND_HOOK:
                self._answer_hook(tag, payload)
            else:
                raise TransportError(f"unknown frame kind {kind}")
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001 - one bad frame must not stop the Guardian
            reason = f"{type(exc).__name__}: {exc}"
            if kind == KIND_HOOK:
                # No decision: a blocking reply (exit 2 / HTTP 500) the runtime cannot mistake
                # for an allow.
                failed = HookReply(
                    body=b"", exit_code=2, stderr=f"agbom: {reason}", http_status=500
                )
                self._emit(tag, encode_hook_reply(failed))
            else:
                self._emit(tag, error_body(INTERNAL_ERROR, "internal_error", reason))

    def _answer_acs(self, tag: int, body: bytes, checked: Prechecked | None = None) -> None:
        message = parse_message(body, self.limits)
        if isinstance(message, bytes):
            self._emit(tag, message)
            return
        if self._held:
            sessions = [_session_of(m) for m in message] if isinstance(message, list) else []
            sessions.append(_session_of(message))
            for session_id in sessions:
                if session_id in self._held:
                    self._held[session_id].append((tag, message, len(body)))
                    return
        if (
            len(body) >= BULK_FRAME_BYTES
            and isinstance(message, dict)
            and message.get("method") == "agbom/snapshot"
            and (session_id := _session_of(message)) is not None
        ):
            self._held[session_id] = deque()
            self._bulk.submit(tag, message)
            return
        self._decide(tag, message, checked=checked)

    def _finish_prepared(self) -> None:
        """Decide the snapshots the bulk thread prepared, then what their sessions held."""
        while self._bulk.done:
            tag, message, prepared, checked = self._bulk.done.popleft()
            self._decide_safely(tag, message, prepared, checked)
            session_id = _session_of(message)
            held = self._held.get(session_id) if session_id is not None else None
            while held:
                next_tag, next_message, size = held.popleft()
                if (
                    size >= BULK_FRAME_BYTES
                    and isinstance(next_message, dict)
                    and next_message.get("method") == "agbom/snapshot"
                ):
                    self._bulk.submit(next_tag, next_message)  # the rest waits behind it
                    break
                self._decide_safely(next_tag, next_message)
            else:
                if session_id is not None:
                    self._held.pop(session_id, None)

    def _decide_safely(
        self, tag: int, message: Any, prepared: Any = None, checked: Prechecked | None = None
    ) -> None:
        try:
            self._decide(tag, message, prepared, checked)
        except Exception as exc:  # noqa: BLE001 - one bad request must not stop the Guardian
            self._emit(tag, error_body(INTERNAL_ERROR, "internal_error", f"{type(exc).__name__}"))

    def _decide(
        self, tag: int, message: Any, prepared: Any = None, checked: Prechecked | None = None
    ) -> None:
        if not isinstance(message, list):
            response = self.guardian.submit(
                message, lambda r: self._emit(tag, orjson.dumps(r)), prepared, checked=checked
            )
            if response is not None:
                self._emit(tag, orjson.dumps(response))
            return
        results: list[Any] = [None] * len(message)
        missing = [len(message)]

        def put(index: int, response: dict[str, Any]) -> None:
            results[index] = response
            missing[0] -= 1
            if not missing[0]:
                self._emit(tag, orjson.dumps(results))

        for index, item in enumerate(message):
            answer = self.guardian.submit(item, lambda r, i=index: put(i, r))  # type: ignore[misc]
            if answer is not None:
                put(index, answer)

    def _answer_hook(self, tag: int, payload: bytes) -> None:
        from agbom.adapters import get_adapter

        meta, body = split_meta(payload)
        adapter = get_adapter(meta["runtime"])
        reply = adapter.handle(body, self.guardian, env=meta["env"], fail_open=meta["fail_open"])
        self._emit(tag, encode_hook_reply(reply))


def join_meta(meta: dict[str, Any], body: bytes) -> bytes:
    """A hook frame's payload (either way): ``u32 length | meta JSON | body``."""
    text = orjson.dumps(meta)
    return META.pack(len(text)) + text + body


def split_meta(payload: bytes) -> tuple[dict[str, Any], bytes]:
    """The inverse of :func:`join_meta`."""
    (size,) = META.unpack_from(payload)
    return orjson.loads(payload[META.size : META.size + size]), payload[META.size + size :]


def encode_hook_reply(reply: HookReply) -> bytes:
    status = {
        "exit_code": reply.exit_code,
        "stderr": reply.stderr,
        "http_status": reply.http_status,
    }
    return join_meta(status, reply.body)


def decode_hook_reply(payload: bytes) -> HookReply:
    meta, body = split_meta(payload)
    return HookReply(body=body, **meta)


def main(argv: list[str]) -> int:
    """Entry of ``python -m agbom.transports.worker FD SPEC_FD``."""
    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl-C reaches the whole group: the front stops us
    sock = socket.socket(fileno=int(argv[0]))
    with os.fdopen(int(argv[1]), "rb") as spec_pipe:
        spec = WorkerSpec.from_json(spec_pipe.read().decode())
    reloads: list[int] = []
    if spec.config.get("osv_path") or spec.config.get("lock_path"):
        # A SIGHUP passed on while the export still loads is a reload for later, not an exit.
        signal.signal(signal.SIGHUP, lambda signum, _frame: reloads.append(signum))
    try:
        guardian = spec.build()
    except Exception as exc:  # noqa: BLE001 - reported to the front process as one line
        message = f"error: {exc}".encode()
        with contextlib.suppress(OSError):
            sock.sendall(REPLY.pack(len(message), CONTROL_TAG) + message)
        return 2
    if guardian.policies.signals is not None:  # serve --osv/--lock: the front forwards SIGHUP
        guardian.policies.signals.install_sighup()
        if reloads:
            threading.Thread(target=guardian.policies.signals.reload, daemon=True).start()
    guardian.store.start_background_checkpoints()
    # The loop thread answers small requests while the bulk thread prepares big snapshots:
    # each time the loop gives up the GIL (a store call, a socket read) it waits for the
    # bulk thread to hand it back, by default up to 5 ms. 1 ms keeps a small decision, which
    # gives it up a few times, within a few ms of its own cost (docs/performance.md).
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        served = DecisionServer(guardian, Limits(**spec.limits)).serve(sock)
    finally:
        guardian.store.close()
    return 0 if served else 1


# -- the front process's side ---------------------------------------------------------------------


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
                [sys.executable, "-P", "-m", "agbom.transports.worker"]
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
