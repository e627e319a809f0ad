"""Telemetry of the Guardian's decisions: a decision log, OpenTelemetry spans, OCSF events.

The Guardian calls one :class:`DecisionObserver` after a decision's chain entry is committed
(and only then: a decision whose entry the store refused was never made). :class:`Telemetry`
offers what it is told to each sink without waiting: a tuple, from which each sink builds its
:class:`~agbom.telemetry.record.DecisionRecord` on a thread of its own, fed by a bounded
queue. So a slow disk or an unreachable collector never delays nor changes a decision
(ACS-Trace). Nothing here is imported unless telemetry is configured.
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agbom.guardian.decision import Decision
    from agbom.telemetry.background import BackgroundSink

__all__ = ["DecisionObserver", "Telemetry", "TelemetrySettings", "open_telemetry"]

CLOSE_TIMEOUT_S = 3.0
"""How long the sinks may take at exit to write and send what they hold (the front process
gives a stopping decision process 5 s)."""


class DecisionObserver(Protocol):
    """What the Guardian calls once a decision is committed; must return at once."""

    def decision_committed(
        self,
        method: str,
        params: Mapping[str, Any],
        decision: Decision,
        chain_hash: str,
        duration_ms: float,
    ) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetrySettings:
    """Where decisions go: ``agbom serve``'s ``--decision-log*`` and ``--otlp-endpoint``."""

    decision_log: str | None = None
    decision_log_max_bytes: int = 100 * 1024 * 1024
    decision_log_keep: int = 5
    otlp_endpoint: str | None = None

    @property
    def configured(self) -> bool:
        return self.decision_log is not None or self.otlp_endpoint is not None


class Telemetry:
    """Fans a committed decision out to the sinks; counts what they drop."""

    def __init__(
        self, sinks: list[BackgroundSink], *, clock: Callable[[], float] = time.time
    ) -> None:
        self.sinks = sinks
        self.clock = clock

    def start(self) -> Telemetry:
        for sink in self.sinks:
            sink.start()
        atexit.register(self.close)
        return self

    def decision_committed(
        self,
        method: str,
        params: Mapping[str, Any],
        decision: Decision,
        chain_hash: str,
        duration_ms: float,
    ) -> None:
        offered = (method, params, decision, chain_hash, duration_ms, self.clock())
        for sink in self.sinks:
            sink.offer(offered)

    def stats(self) -> dict[str, dict[str, int]]:
        """Per sink: lines or spans written, dropped (queue full, write failed), queued."""
        return {sink.name: sink.stats() for sink in self.sinks}

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Write and send what the sinks hold, within ``timeout`` seconds in all."""
        deadline = time.monotonic() + timeout
        for sink in self.sinks:
            sink.close(max(0.1, deadline - time.monotonic()))
        for sink in self.sinks:
            dropped = sink.stats()["dropped"]
            if dropped:
                print(f"agbom: {sink.name}: {dropped} record(s) dropped in all", file=sys.stderr)


def open_telemetry(settings: TelemetrySettings) -> Telemetry | None:
    """The started sinks ``settings`` asks for, or None when it asks for none. Raises
    :class:`~agbom.errors.InputError` (one line) for a log or endpoint that cannot work."""
    if not settings.configured:
        return None
    from pathlib import Path

    from agbom.errors import InputError

    sinks: list[BackgroundSink] = []
    if settings.decision_log is not None:
        from agbom.telemetry.decision_log import DecisionLog, check_log_path

        path = Path(settings.decision_log)
        problem = check_log_path(path)
        if problem is not None:
            raise InputError(f"--decision-log: {problem}")
        sinks.append(
            DecisionLog(
                path,
                max_bytes=settings.decision_log_max_bytes,
                keep=settings.decision_log_keep,
            )
        )
    if settings.otlp_endpoint is not None:
        from agbom.telemetry.otlp import OtlpSpans

        sinks.append(OtlpSpans(settings.otlp_endpoint))
    return Telemetry(sinks).start()
