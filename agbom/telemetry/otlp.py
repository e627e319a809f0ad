"""Decisions as OpenTelemetry spans, sent over OTLP/HTTP (protobuf) in batches.

Needs the ``otel`` extra (``pip install 'agbom[otel]'``: opentelemetry-sdk and the OTLP/HTTP
exporter); it is imported only when ``--otlp-endpoint`` is given, so nothing else pays for it.
Spans are built on this sink's own thread from the records the Guardian offers, with the
decision's own start and end times, and the SDK's BatchSpanProcessor exports them from its
thread: neither the span nor the export is on a decision's path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from agbom.errors import InputError
from agbom.telemetry.background import DEFAULT_CAPACITY, BackgroundSink
from agbom.telemetry.otel import DECISION_EVENT, decision_attributes, span_attributes, span_name
from agbom.telemetry.record import DecisionRecord

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

TRACES_PATH = "/v1/traces"
SERVICE_NAME = "agbom-guardian"
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
    """Turns records into spans of ``agbom-guardian`` and exports them to ``endpoint``."""

    name = "otlp"

    def __init__(
        self,
        endpoint: str,
        *,
        capacity: int = DEFAULT_CAPACITY,
        schedule_delay_ms: int = 1000,
    ) -> None:
        super().__init__(capacity=capacity)
        self.url = traces_url(endpoint)
        if not otel_available():
            raise InputError("--otlp-endpoint needs OpenTelemetry: pip install 'agbom[otel]'")
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from agbom import __version__

        self._exporter = _CountingExporter(
            OTLPSpanExporter(endpoint=self.url, timeout=EXPORT_TIMEOUT_S)
        )
        self._provider: TracerProvider = TracerProvider(
            resource=Resource.create({"service.name": SERVICE_NAME, "service.version": __version__})
        )
        exporter: Any = self._exporter  # duck-typed: the SDK's SpanExporter is not imported
        self._processor = BatchSpanProcessor(exporter, schedule_delay_millis=schedule_delay_ms)
        self._provider.add_span_processor(self._processor)
        self._tracer = self._provider.get_tracer("agbom.guardian", __version__)
        self._failed = 0  # records no span could be made of
        self._created = 0
        self._batcher_lost = 0  # spans the batch processor dropped (its queue was full)

    def handle(self, record: DecisionRecord) -> None:
        end_ns = int(record.committed_at * 1e9)
        start_ns = end_ns - int(record.duration_ms * 1e6)
        span = self._tracer.start_span(
            span_name(record.method),
            start_time=start_ns,
            attributes=span_attributes(record),
        )
        span.add_event(DECISION_EVENT, decision_attributes(record), timestamp=end_ns)
        span.end(end_time=end_ns)
        self._created += 1

    def failed(self, exc: Exception) -> None:
        self._failed += 1

    def finish(self) -> None:
        self._provider.shutdown()  # exports what the batch processor holds, then stops
        # Every span is now exported, failed, or was dropped by the batch processor, which
        # drops (with a warning of its own) when the collector falls behind: count those too.
        self._batcher_lost = max(0, self._created - self._exporter.exported - self._exporter.failed)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Export what is batched now (tests and benchmarks)."""
        return bool(self._provider.force_flush(int(timeout_s * 1000)))

    def stats(self) -> dict[str, int]:
        """Spans exported, and those lost: the queue was full, no span could be made, the
        collector refused or could not be reached (after the exporter's retries), or (known
        once closed) the batch processor dropped them."""
        failed = self._exporter.failed + self._failed
        return {
            "spans_exported": self._exporter.exported,
            "dropped": self.queue_dropped + failed + self._batcher_lost,
            "queue_dropped": self.queue_dropped,
            "spans_failed": failed,
            "queued": self._queue.qsize(),
        }


class _CountingExporter:
    """An exporter that counts what its wrapped exporter sent and failed to send."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.exported = 0
        self.failed = 0

    def export(self, spans: Sequence[ReadableSpan]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception:  # noqa: BLE001 - a collector's failure is counted, never raised
            self.failed += len(spans)
            return SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))
