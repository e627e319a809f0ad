"""The decision log: one JSON line per committed decision, rotated by size.

Written from the sink's own thread (see :mod:`agbom.telemetry.background`), so a slow or full
disk never holds a decision. A line that cannot be written (the queue was full, or the write
failed: no space, I/O error, a file that cannot be opened) is dropped and counted; once a
write works again, a ``{"dropped": N, ...}`` marker line says how many went missing since the
last marker, and stderr says so too. The counts are in :meth:`DecisionLog.stats`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from agbom.telemetry.background import DEFAULT_CAPACITY, BackgroundSink
from agbom.telemetry.record import DecisionRecord, iso_time, log_bytes

DEFAULT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_KEEP = 5
MARKER_INTERVAL_S = 1.0
"""While lines keep being dropped (a queue that stays full), at most one marker a second."""


class DecisionLog(BackgroundSink):
    """Appends decision lines to ``path``; past ``max_bytes`` the file becomes ``path.1``
    (``path.1`` becomes ``path.2``, ...), and ``keep`` rotated files are kept."""

    name = "decision-log"

    def __init__(
        self,
        path: Path | str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = DEFAULT_KEEP,
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        super().__init__(capacity=capacity)
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        if keep < 0:
            raise ValueError("keep must be 0 or more")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.keep = keep
        self._fd: int | None = None
        self._size = 0
        self._regular = True
        self._written = 0
        self._write_dropped = 0
        self._reported = 0  # drops (queue and write) already told of by a marker line
        self._failing: str | None = None  # the error of the outage under way, if any
        self._partial = False  # the last failed write left part of a line in the file
        self._last_marker = 0.0

    # -- stats ----------------------------------------------------------------------------------

    @property
    def dropped(self) -> int:
        """Lines lost since the start: queue full plus writes that failed."""
        return self.queue_dropped + self._write_dropped

    def stats(self) -> dict[str, int]:
        return {
            "written": self._written,
            "dropped": self.dropped,
            "queued": self._queue.qsize(),
        }

    # -- the sink's thread ------------------------------------------------------------------------

    def handle_batch(self, records: list[DecisionRecord]) -> None:
        """One write for the batch (a line that will not serialize is counted and left out)."""
        lines = []
        for record in records:
            try:
                lines.append(log_bytes(record))
            except Exception as exc:  # noqa: BLE001 - counted, the others are written
                self.failed(exc)
        # As few writes as the rotation allows: a group of lines fills what the file has room
        # for, the next one starts a new file.
        group: list[bytes] = []
        size, room = 0, self._room()
        for line in lines:
            if group and size + len(line) > room:
                self._write(b"".join(group), count=len(group))
                group, size, room = [], 0, self.max_bytes
            group.append(line)
            size += len(line)
        if group:
            self._write(b"".join(group), count=len(group))

    def _room(self) -> int:
        """Bytes the live file takes before it rotates (all of them after a rotation)."""
        try:
            self._open()
        except OSError:
            return self.max_bytes
        if not self._regular or self._size == 0:
            return self.max_bytes
        return max(0, self.max_bytes - self._size)

    def handle(self, record: DecisionRecord) -> None:
        self.handle_batch([record])

    def failed(self, exc: Exception) -> None:
        self._write_dropped += 1  # a record that would not serialize: lost, and counted

    def finish(self) -> None:
        if self.dropped > self._reported:
            self._write(b"", count=0, force_marker=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write(self, line: bytes, *, count: int = 1, force_marker: bool = False) -> None:
        """Write ``line`` (``count`` decision lines, or none), after a marker when lines were
        lost since the last one. A batch that cannot be written is lost as a whole, and
        counted; one cut short by a full disk is cut back to whole lines first."""
        unreported = self.dropped - self._reported
        now = time.monotonic()
        data = line
        marker = unreported > 0 and (
            force_marker
            or self._failing is not None
            or now - self._last_marker >= MARKER_INTERVAL_S
        )
        if marker:
            data = self._marker(unreported) + line
        if self._partial:
            data = b"\n" + data  # end the cut line: every line of the file stays whole JSON
        if not data:
            return
        try:
            self._open()
            if self._regular and self._size > 0 and self._size + len(data) > self.max_bytes:
                self._rotate()
                if self._partial:  # the cut line went with the old file
                    data = data[1:]
                    self._partial = False
            self._write_all(data)
        except OSError as exc:
            if line:
                self._write_dropped += count
            self._outage(exc)
            return
        self._partial = False
        if line:
            self._written += count
        if marker:
            self._reported += unreported
            self._last_marker = now
        if self._failing is not None:
            print(
                f"agbom: decision log {self.path}: writing again; "
                f"{unreported} line(s) were dropped meanwhile",
                file=sys.stderr,
                flush=True,
            )
            self._failing = None
        elif marker:
            print(
                f"agbom: decision log {self.path}: {unreported} line(s) dropped "
                f"(the queue was full), {self.dropped} in all",
                file=sys.stderr,
                flush=True,
            )

    def _marker(self, count: int) -> bytes:
        body: dict[str, Any] = {"dropped": count, "time": iso_time(time.time())}
        return orjson.dumps(body) + b"\n"

    def _outage(self, exc: OSError) -> None:
        reason = exc.strerror or type(exc).__name__
        if self._failing is None:
            print(
                f"agbom: decision log {self.path}: {reason}; decisions go on, and lines are "
                "dropped and counted until it can write",
                file=sys.stderr,
                flush=True,
            )
        self._failing = reason
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) and self._fd is not None:
            # Not a full disk (an I/O error, a file that went away): reopen on the next line.
            os.close(self._fd)
            self._fd = None

    def _open(self) -> None:
        if self._fd is not None:
            return
        self._fd = open_log(self.path)
        info = os.fstat(self._fd)
        self._regular = stat.S_ISREG(info.st_mode)
        self._size = info.st_size if self._regular else 0

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except OSError:
                if len(view) < len(data):
                    self._cut_back(len(data) - len(view))
                raise
            view = view[written:]
        self._size += len(data)

    def _cut_back(self, written: int) -> None:
        """Undo the part of a line a failed write left (a full disk takes what fits), so every
        line of the file stays whole JSON; where that fails, the next line ends it first."""
        assert self._fd is not None
        try:
            if not self._regular:
                raise OSError(errno.ESPIPE, "not a regular file")
            os.ftruncate(self._fd, self._size)
        except OSError:
            self._partial = True
            self._size += written

    def _rotate(self) -> None:
        assert self._fd is not None
        os.close(self._fd)
        self._fd = None
        if self.keep == 0:
            self.path.unlink(missing_ok=True)
        else:
            for index in range(self.keep - 1, 0, -1):
                older = self.path.with_name(f"{self.path.name}.{index}")
                if older.exists():
                    os.replace(older, self.path.with_name(f"{self.path.name}.{index + 1}"))
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        self._open()


def open_log(path: Path) -> int:
    """Open ``path`` for appending (created ``0600``: decisions are sensitive).

    Never through a link (``O_NOFOLLOW``): a planted symlink would make the server append
    agent-chosen text to whatever it points at (a shell rc file, say). What is opened must be
    a regular file of the server's own user with a single name, or a character device
    (``/dev/null``, a terminal); anything else is refused with an :class:`OSError`. Every open
    goes through here, the reopen after a rotation too."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "is a symbolic link; refused") from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            if info.st_uid != os.geteuid():
                raise OSError(errno.EPERM, f"owned by uid {info.st_uid}, not this user; refused")
            if info.st_nlink > 1:
                raise OSError(errno.EPERM, "has more than one name (a hard link); refused")
        elif not stat.S_ISCHR(info.st_mode):
            raise OSError(errno.EPERM, "not a regular file; refused")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_log_path(path: Path) -> str | None:
    """Why ``path`` cannot be a decision log (a one-line reason), or None when it can."""
    if path.is_dir():
        return f"{path} is a directory"
    if not path.parent.is_dir():
        return f"{path.parent} is not a directory"
    try:
        os.close(open_log(path))
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None
