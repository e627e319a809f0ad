"""Decisions as OpenTelemetry spans, sent over OTLP/HTTP (protobuf) in batches.

Needs the ``otel`` extra (``pip install 'agbom[otel]'``: opentelemetry-sdk and the OTLP/HTTP
exporter); it is imported only when ``--otlp-endpoint`` is given, so nothing else pays for it.
This sink's thread turns each record into a span's name, times and (scrubbed) attributes; an
exporter process of its own (:mod:`agbom.telemetry.otlp_export`) builds the SDK spans and
exports them with the SDK's BatchSpanProcessor. Building and encoding a span costs more CPU
than the decision it records: in the deciding process it would compete with decisions for the
GIL, so neither the span nor the export is on a decision's path, nor in its process.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from agbom.errors import InputError
from agbom.telemetry.background import DEFAULT_CAPACITY, BackgroundSink
from agbom.telemetry.otel import decision_attributes, span_attributes, span_name
from agbom.telemetry.record import DecisionRecord

TRACES_PATH = "/v1/traces"
ENDPOINT_VARIABLE = "AGBOM_OTLP_TRACES_URL"
"""Where the exporter process reads the URL to send to."""
EXPORT_TIMEOUT_S = 10.0


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for ``endpoint``: a bare ``http://host:4318`` gets
    ``/v1/traces``, a URL with a path is used as it is. Raises InputError for anything that is
    not an http(s) URL with a host."""
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise InputError(f"--otlp-endpoint: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError("--otlp-endpoint: needs an http:// or https:// URL with a host")
    if parts.query or parts.fragment:
        raise InputError("--otlp-endpoint: a query or fragment is not allowed")
    path = parts.path if parts.path not in ("", "/") else TRACES_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def shown_url(url: str) -> str:
    """``url`` without its userinfo, for messages."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def otel_available() -> bool:
    """Whether the ``otel`` extra is installed."""
    from importlib.util import find_spec

    try:
        return (
            find_spec("opentelemetry.sdk.trace") is not None
            and find_spec("opentelemetry.exporter.otlp.proto.http.trace_exporter") is not None
        )
    except ModuleNotFoundError:
        return False


class OtlpSpans(BackgroundSink):
    """Turns records into spans of ``agbom-guardian`` and exports them to ``endpoint``.

    This thread computes each span's name, times and attributes (scrubbed) and writes them,
    one JSON line each, to an exporter process of its own
    (:mod:`agbom.telemetry.otlp_export`), which builds the SDK spans and exports them with the
    SDK's BatchSpanProcessor. Spans the process cannot take (it is gone) are counted."""

    name = "otlp"

    def __init__(self, endpoint: str, *, capacity: int = DEFAULT_CAPACITY) -> None:
        super().__init__(capacity=capacity)
        self.url = traces_url(endpoint)
        if not otel_available():
            raise InputError("--otlp-endpoint needs OpenTelemetry: pip install 'agbom[otel]'")
        self._proc: subprocess.Popen[bytes] | None = None
        self._sent = 0
        self._failed = 0  # records no span could be made of, or that the process did not take
        self._exported = 0  # as the process last reported
        self._export_failed = 0
        self._batcher_lost = 0  # known once the process is done
        self._flushed = threading.Condition()
        self._last_flush = 0
        self._flush_seq = 0
        self._reader: threading.Thread | None = None
        self._gone = False

    def start(self) -> None:
        # The URL goes in the environment, not the command line: a command line is readable
        # by every user of the machine, and the URL may carry credentials.
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "agbom.telemetry.otlp_export"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
            env={**os.environ, ENDPOINT_VARIABLE: self.url},
        )
        self._reader = threading.Thread(target=self._read_counts, name="agbom-otlp-counts")
        self._reader.daemon = True
        self._reader.start()
        super().start()

    def _read_counts(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        for line in proc.stdout:
            try:
                counts = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            with self._flushed:
                self._exported = int(counts.get("exported", 0))
                self._export_failed = int(counts.get("failed", 0))
                if "flushed" in counts:
                    self._last_flush = int(counts["flushed"])
                self._flushed.notify_all()

    def handle_batch(self, records: list[DecisionRecord]) -> None:
        lines = []
        for record in records:
            try:
                lines.append(orjson.dumps(span_line(record)) + b"\n")
            except Exception:  # noqa: BLE001 - counted, the others go on
                self._failed += 1
        self._send(b"".join(lines), len(lines))

    def handle(self, record: DecisionRecord) -> None:
        self.handle_batch([record])

    def _send(self, data: bytes, count: int) -> None:
        proc = self._proc
        if not data:
            return
        try:
            assert proc is not None and proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.flush()
        except (OSError, ValueError, AssertionError):
            if not self._gone:
                self._gone = True
                print(
                    f"agbom: otlp: the exporter process for {shown_url(self.url)} is gone; "
                    "spans are dropped and counted",
                    file=sys.stderr,
                    flush=True,
                )
            self._failed += count
            return
        self._sent += count

    def failed(self, exc: Exception) -> None:
        self._failed += 1

    def finish(self) -> None:
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()  # the process exports what it holds, reports, exits
        try:
            proc.wait(EXPORT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._reader is not None:
            self._reader.join(1.0)
        # Every span sent is now exported, failed, or was dropped by the batch processor
        # (which drops, with a warning of its own, when the collector falls behind).
        self._batcher_lost = max(0, self._sent - self._exported - self._export_failed)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Have the exporter process export what it holds now (tests and benchmarks)."""
        self._flush_seq += 1
        sequence = self._flush_seq
        self._send(orjson.dumps({"flush": sequence}) + b"\n", 0)
        with self._flushed:
            return self._flushed.wait_for(lambda: self._last_flush >= sequence, timeout_s)

    def stats(self) -> dict[str, int]:
        """Spans exported, and those lost: the queue was full, no span could be made or the
        exporter process was gone, the collector refused or could not be reached (after the
        exporter's retries), or (known once closed) the batch processor dropped them."""
        failed = self._failed + self._export_failed
        return {
            "spans_exported": self._exported,
            "dropped": self.queue_dropped + failed + self._batcher_lost,
            "queue_dropped": self.queue_dropped,
            "spans_failed": failed,
            "queued": self._queue.qsize(),
        }


def span_line(record: DecisionRecord) -> dict[str, Any]:
    """What the exporter process needs to build ``record``'s span."""
    end_ns = int(record.committed_at * 1e9)
    return {
        "n": span_name(record.method),
        "s": end_ns - int(record.duration_ms * 1e6),
        "e": end_ns,
        "a": span_attributes(record),
        "v": decision_attributes(record),
    }
