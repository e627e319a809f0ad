"""A real OTLP/HTTP receiver on 127.0.0.1 for the tests: decodes each protobuf
ExportTraceServiceRequest with opentelemetry-proto and keeps the spans it carried."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

# The ACS v0.1.0 trace mappings, copied byte for byte (acs_trace/SOURCE.md says from where).
MAPPINGS = Path(__file__).resolve().parent / "acs_trace"


def mapping(name: str) -> dict[str, Any]:
    """The ACS v0.1.0 trace mapping ``name``, as the tests carry it."""
    return dict(orjson.loads((MAPPINGS / name).read_bytes()))


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@dataclass
class Span:
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int


@dataclass
class Receiver:
    """Started with :meth:`start`; ``spans`` grows as exports arrive."""

    spans: list[Span] = field(default_factory=list)
    requests: int = 0
    content_types: set[str] = field(default_factory=set)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                export = ExportTraceServiceRequest()
                export.ParseFromString(body)
                receiver._keep(export, self.headers.get("content-type", ""))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def _keep(self, export: ExportTraceServiceRequest, content_type: str) -> None:
        with self._lock:
            self.requests += 1
            self.content_types.add(content_type)
            for resource_spans in export.resource_spans:
                resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.spans.append(
                            Span(
                                name=span.name,
                                attributes={a.key: value_of(a.value) for a in span.attributes},
                                events=[
                                    (e.name, {a.key: value_of(a.value) for a in e.attributes})
                                    for e in span.events
                                ],
                                resource=resource,
                                start_ns=span.start_time_unix_nano,
                                end_ns=span.end_time_unix_nano,
                            )
                        )

    def wait_for(self, count: int, tries: int = 3000) -> list[Span]:
        """The spans once ``count`` have arrived (bounded by tries, not by a deadline)."""
        for _ in range(tries):
            with self._lock:
                if len(self.spans) >= count:
                    return list(self.spans)
            time.sleep(0.01)
        raise AssertionError(f"{len(self.spans)} spans arrived, {count} expected")

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
