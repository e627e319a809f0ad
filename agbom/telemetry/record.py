"""One committed decision, as every telemetry sink sees it.

The Guardian hands the observer what it already holds (the request's params, the decision,
the chain hash, the time it took) and the observer queues it as a tuple (:data:`Offered`);
each sink builds the record on its own thread and turns it into its own form (a log line, a
span, an OCSF event), off the decision path.
Every string that came from the request is hostile: :func:`scrub` keeps credential-shaped
values out of everything a sink writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeAlias

from agbom.guardian.decision import EVALUATOR_VERSION, Decision
from agbom.guardian.secrets import contains_secret, may_contain_secret

REDACTED = "<redacted>"
EVALUATOR = "deterministic"
"""``metadata.evaluator`` of every agbom decision (see :meth:`Decision.to_result`)."""
MAX_TEXT = 4096
"""Longest string a sink writes; longer ones are cut (hostile input may be megabytes)."""

Offered: TypeAlias = tuple[str, Mapping[str, Any], Decision, str, float, float]
"""What the Guardian's thread hands a sink: method, params, decision, chain hash, duration in
milliseconds, commit time. Only a tuple: the record is built on the sink's thread."""


def clip(value: Any) -> str:
    """``value`` as a string cut to :data:`MAX_TEXT` characters (hostile input may be
    megabytes); control characters are kept (JSON and protobuf escape them)."""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def scrub(value: Any) -> str:
    """``value`` as a string safe to export: clipped, and hidden whole when it holds
    something credential-shaped."""
    text = clip(value)
    return REDACTED if may_contain_secret(text) and contains_secret(text) else text


def clean_of(*values: Any) -> bool:
    """True when nothing in ``values`` (plain JSON) is credential-shaped: then a sink only
    clips strings, instead of searching each one (see :func:`may_contain_secret`)."""
    return not may_contain_secret(values)


def safe_strings(value: Any, text: Callable[[Any], str]) -> Any:
    """A copy of ``value`` (JSON-like, built by a sink) with ``text`` applied to every
    string in it, keys excepted (the sinks' own names)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {key: safe_strings(child, text) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [safe_strings(child, text) for child in value]
    return value


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """A decision whose chain entry is committed."""

    decision_id: str
    committed_at: float  # seconds since the epoch
    method: str
    params: Mapping[str, Any]  # the request's params, as decided (never mutated afterwards)
    decision: Decision
    chain_hash: str
    duration_ms: float
    clean: bool = False  # nothing credential-shaped in the request or the decision's texts

    def text(self, value: Any) -> str:
        """``value`` made safe to export: clipped, and scrubbed unless the record is clean."""
        return clip(value) if self.clean else scrub(value)

    @classmethod
    def of(
        cls,
        method: str,
        params: Mapping[str, Any],
        decision: Decision,
        chain_hash: str,
        duration_ms: float,
        committed_at: float,
    ) -> DecisionRecord:
        return cls(
            # The chain entry's hash names the decision uniquely, and every sink derives the
            # same id from it: a log line and a span of one decision carry the same id.
            decision_id=_uuid_form(chain_hash),
            committed_at=committed_at,
            method=method,
            params=params,
            decision=decision,
            chain_hash=chain_hash,
            duration_ms=duration_ms,
            clean=clean_of(
                params,
                decision.reasoning,
                decision.reason_codes,
                [ref.to_json() for ref in decision.policy_references],
            ),
        )

    @property
    def metadata(self) -> Mapping[str, Any]:
        metadata = self.params.get("metadata")
        return metadata if isinstance(metadata, Mapping) else {}

    @property
    def payload(self) -> Mapping[str, Any]:
        payload = self.params.get("payload")
        return payload if isinstance(payload, Mapping) else {}

    @property
    def session_id(self) -> str:
        return str(self.metadata.get("session_id", ""))

    @property
    def agent_id(self) -> str:
        return str(self.metadata.get("agent_id", ""))

    @property
    def request_id(self) -> str:
        return str(self.params.get("request_id", ""))

    @property
    def tenant_id(self) -> str | None:
        tenant = self.params.get("tenant_id") or self.metadata.get("tenant_id")
        return tenant if isinstance(tenant, str) and tenant else None

    @property
    def tool_name(self) -> str | None:
        tool = self.payload.get("tool")
        name = tool.get("name") if isinstance(tool, Mapping) else None
        return name if isinstance(name, str) and name else None


def _uuid_form(chain_hash: str) -> str:
    """The first 128 bits of a chain hash, written as a UUID ("" for a hash that is not hex)."""
    head = chain_hash[:32].lower()
    if len(head) < 32 or head.strip("0123456789abcdef"):
        return ""
    return f"{head[:8]}-{head[8:12]}-{head[12:16]}-{head[16:20]}-{head[20:]}"


def iso_time(seconds: float) -> str:
    """RFC 3339 UTC with milliseconds (``2026-12-01T16:00:00.123Z``)."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def policy_references(decision: Decision, text: Callable[[Any], str] = scrub) -> list[Any]:
    """The decision's policy references as the response carries them, made safe."""
    return [
        {key: text(value) for key, value in ref.to_json().items()}
        for ref in decision.policy_references
    ]


_INVISIBLE = frozenset(
    [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F)]
    + [*range(0x2066, 0x206A), 0x2028, 0x2029]
)


def log_text(value: Any) -> str:
    """A string for the decision log: scrubbed, every credential shape inside it hidden
    (tokens, ``user:password@`` URLs), and every control character (C0, C1, U+2028/2029,
    bidi controls) written as a ``\\uXXXX`` escape, so one entry stays one line of plain text."""
    from agbom.scan.redact import redact_free_text

    text = redact_free_text(scrub(value))
    if any(ord(char) in _INVISIBLE for char in text):
        text = "".join(f"\\u{ord(c):04x}" if ord(c) in _INVISIBLE else c for c in text)
    return text


def log_bytes(record: DecisionRecord) -> bytes:
    """The decision log's line for ``record``, newline included."""
    import orjson

    return orjson.dumps(log_line(record)) + b"\n"


def log_line(record: DecisionRecord) -> dict[str, Any]:
    """The decision log's JSON object for ``record`` (one line per decision)."""
    decision = record.decision
    scrub = log_text  # every field, whatever the record's clean flag says
    line: dict[str, Any] = {
        "decision_id": record.decision_id,
        "time": iso_time(record.committed_at),
        "agent_id": scrub(record.agent_id),
        "session_id": scrub(record.session_id),
        "request_id": scrub(record.request_id),
        "method": record.method,
        "decision": decision.disposition.value,
        "reason_codes": [scrub(code) for code in dict.fromkeys(decision.reason_codes)],
        "policy_references": policy_references(decision, scrub),
        "chain_hash": record.chain_hash,
        "duration_ms": round(record.duration_ms, 3),
    }
    tenant = record.tenant_id
    if tenant is not None:
        line["tenant_id"] = scrub(tenant)
    tool = record.tool_name
    if tool is not None:
        line["tool"] = scrub(tool)
    if decision.reasoning:
        line["reasoning"] = scrub(decision.reasoning)
    line["evaluator"] = EVALUATOR
    line["evaluator_version"] = EVALUATOR_VERSION
    return line
