"""The OTLP exporter process: spans in on stdin, OTLP/HTTP out, counts back on stdout.

:class:`~agbom.telemetry.otlp.OtlpSpans` starts ``python -m agbom.telemetry.otlp_export``
with the URL in ``$AGBOM_OTLP_TRACES_URL``. Building a span with the OpenTelemetry SDK and
encoding it to protobuf costs more CPU than the decision it records, so it is done here, in a
process of its own, and not under the deciding process's GIL. Each stdin line is one JSON
object: a span (``n`` name, ``s`` and ``e`` start and end in ns, ``a`` attributes, ``v`` the
decision event's attributes), or ``{"flush": K}``. Stdout gets ``{"exported": N, "failed": M,
"received": R}`` lines (after a flush with ``"flushed": K``). At the end of stdin it exports
what it holds, prints its counts and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import orjson

SERVICE_NAME = "agbom-guardian"
EXPORT_TIMEOUT_S = 10.0
REPORT_EVERY_S = 1.0
DECISION_EVENT = "acs.decision"
NICENESS = 10


class _Counting:
    """Wraps the OTLP exporter and counts the spans it sent and failed to send."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.exported = 0
        self.failed = 0

    def export(self, spans: Sequence[Any]) -> Any:
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


def main(argv: list[str]) -> int:
    # Ctrl-C reaches the whole process group: the parent closes our stdin to stop us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Decisions come first: on a busy machine the exporter gets what CPU they leave, and when
    # it falls behind, the sink's queue fills and drops (counted) rather than slowing them.
    with contextlib.suppress(OSError, AttributeError):
        os.nice(NICENESS)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agbom import __version__

    url = os.environ.get("AGBOM_OTLP_TRACES_URL", "")
    if not url:
        print("agbom: otlp: no AGBOM_OTLP_TRACES_URL to export to", file=sys.stderr)
        return 2
    exporter = _Counting(OTLPSpanExporter(endpoint=url, timeout=EXPORT_TIMEOUT_S))
    provider = TracerProvider(
        resource=Resource.create({"service.name": SERVICE_NAME, "service.version": __version__})
    )
    wrapped: Any = exporter  # duck-typed: a SpanExporter in all but its base class
    provider.add_span_processor(BatchSpanProcessor(wrapped, schedule_delay_millis=1000))
    tracer = provider.get_tracer("agbom.guardian", __version__)
    received = 0
    out = sys.stdout.buffer
    lock = threading.Lock()

    def report(**extra: Any) -> None:
        counts = {"exported": exporter.exported, "failed": exporter.failed, "received": received}
        with lock:
            out.write(orjson.dumps({**counts, **extra}) + b"\n")
            out.flush()

    stop = threading.Event()

    def reporter() -> None:
        last: tuple[int, int] = (-1, -1)
        while not stop.wait(REPORT_EVERY_S):
            now = (exporter.exported, exporter.failed)
            if now != last:
                last = now
                report()

    threading.Thread(target=reporter, daemon=True).start()
    for line in sys.stdin.buffer:
        try:
            item = orjson.loads(line)
            if "flush" in item:
                provider.force_flush(int(EXPORT_TIMEOUT_S * 1000))
                report(flushed=item["flush"])
                continue
            received += 1
            span = tracer.start_span(item["n"], start_time=item["s"], attributes=item["a"])
            span.add_event(DECISION_EVENT, item["v"], timestamp=item["e"])
            span.end(end_time=item["e"])
        except Exception:  # noqa: BLE001, S112 - a bad line is one span lost, counted as failed
            exporter.failed += 1
    stop.set()
    provider.shutdown()  # exports what the batch processor holds
    report(done=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
