"""The decision process of ``agbom serve``: the Guardian in a process of its own.

The front process (agbom/transports/worker.py) parses HTTP and forwards each ``POST /acs``
body and each runtime hook event over a Unix socket pair, in the frames of
agbom/transports/decision_wire.py. This process runs the one Guardian: it validates, decides,
appends to the audit chain and answers. It reads whatever frames have arrived, decides them
all, commits their chain entries together (pipelined commits, see ``Guardian.submit``), and
writes every reply in one send. A reply is only written after its entry is committed.

Run as ``python -P -m agbom.transports.decision_loop FD SPEC_FD``, where FD is the inherited
socket and SPEC_FD an inherited pipe the spec (JSON) is read from: never the command line,
which every user of the machine can read (the spec may hold a store URL with its password).
It ignores SIGINT (the front process owns shutdown) and exits when the socket closes.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

from agbom.adapters.headers import MAX_EVENT_BYTES
from agbom.adapters.interface import HookReply
from agbom.guardian import Guardian
from agbom.guardian.core import on_database_server
from agbom.guardian.precheck import Prechecked, split_prechecked
from agbom.protocol import INTERNAL_ERROR, request_hash
from agbom.transports.decision_wire import (
    CONTROL_TAG,
    FRAME_SLACK,
    IDLE_PROBE_S,
    KIND_ACS,
    KIND_ACS_CHECKED,
    KIND_HOOK,
    PROBE_INTERVAL_S,
    READY,
    REPLY,
    REQUEST,
    STORE_UNWRITABLE,
    STORE_WRITABLE,
    WorkerSpec,
    encode_hook_reply,
    split_meta,
)
from agbom.transports.heap import TenuredHeap
from agbom.transports.interface import Limits, TransportError, error_body, parse_message

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

    def __init__(
        self, guardian: Guardian, limits: Limits, *, heap: TenuredHeap | None = None
    ) -> None:
        """``heap``: the process's collector tenure (agbom/transports/heap.py), which the
        loop drives between turns; ``None`` leaves the collector as it is."""
        self.guardian = guardian
        self.limits = limits
        self.heap = heap
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
                idle = self.heap.idle_timeout() if self.heap is not None else None
                timeout = min((t for t in (wait, idle) if t is not None), default=None)
                readable = select.select([sock.fileno(), self._bulk.wake_r], [], [], timeout)[0]
                if not readable:
                    # A due probe runs at the top of the loop.
                    if self.heap is not None and timeout == idle:
                        self.heap.when_idle()
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
                if self.heap is not None:
                    self.heap.after_turn()
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
        heap = TenuredHeap()
        heap.install()
        served = DecisionServer(guardian, Limits(**spec.limits), heap=heap).serve(sock)
    finally:
        guardian.store.close()
    return 0 if served else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
