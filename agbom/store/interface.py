"""Store layer vocabulary: the error family, digests, skill records, verdicts, and the
protocols every backend implements.

These types carry no I/O. The Guardian, the transports and the CLI speak only these names:
they take a :class:`Store` and get one from :func:`agbom.store.open_store`, which picks the
backend from the location (a SQLite file, embedded and the default; or a PostgreSQL URL).
The protocols are split by concern (:class:`ApprovalStore`, :class:`ChainStore`,
:class:`SessionStore`, :class:`InventoryStore`, :class:`ServerApprovalStore`,
:class:`StoreLifecycle`) so that each backend
implements the same small pieces and the contract tests can exercise each piece.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, Self, runtime_checkable

from agbom.errors import AgbomError

# Input bounds: everything a user or an agent hands the store is size-checked here.
MAX_SKILL_ID = 512
MAX_REASON = 4096
MAX_ACTOR = 256
MAX_PATTERN = 256
MAX_PATTERNS = 64

# Hex lengths of the digests we know; other algorithms are accepted if they are hex.
_DIGEST_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128, "sha1": 40}
_HEX = re.compile(r"[0-9a-f]+")
_ALGORITHM = re.compile(r"[a-z0-9]{1,32}")


class StoreError(AgbomError):
    """The store cannot do what was asked: unreadable file, bad schema, invalid value."""


class StoreValueError(StoreError):
    """A value handed to the store is not acceptable (an empty or overlong id, a malformed
    digest, time or JSON): the caller's input, not the store, is at fault. Servers answer it
    as a bad request (400 ``invalid_value``) with this message."""


class UntrustedStoreError(StoreError):
    """Another user could have written the store: the file, a file SQLite keeps beside it, or
    a folder leading to it belongs to someone else or is writable by others
    (:mod:`agbom._ownership`). Never opened; a hook denies, even in fail-open mode, since
    whoever planted the store would otherwise choose the answer."""


class ChainConflict(StoreError):
    """``previous_hash`` does not name the current head of the session's audit chain."""


class DuplicateRequest(StoreError):
    """The (session, request_id) or (session, nonce) pair was already recorded.

    ``field`` says which: ``"request_id"`` or ``"nonce"``.
    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Digest:
    """A content digest: normalized algorithm name (``sha256``) and lowercase hex value."""

    algorithm: str
    value: str

    def __post_init__(self) -> None:
        # Callers pass wire values; the annotations are what we promise, not what we receive.
        if not isinstance(self.algorithm, str) or not isinstance(self.value, str):  # type: ignore[redundant-expr]
            raise StoreValueError("digest algorithm and value must be strings")
        # Imported here: agbom.inventory (its model and diffs) is not for every command line
        # that names a store type (agbom --help); after the first call this is a dict lookup.
        from agbom.inventory import normalize_algorithm

        algorithm = normalize_algorithm(self.algorithm)
        value = self.value.strip().lower()
        if not _ALGORITHM.fullmatch(algorithm):
            raise StoreValueError(f"digest algorithm {self.algorithm!r} is not a valid name")
        if not value or len(value) > 256 or not _HEX.fullmatch(value):
            raise StoreValueError(f"digest value for {algorithm} must be hexadecimal")
        expected = _DIGEST_HEX_LENGTHS.get(algorithm)
        if expected is not None and len(value) != expected:
            raise StoreValueError(
                f"a {algorithm} digest has {expected} hex digits, this one has {len(value)}"
            )
        object.__setattr__(self, "algorithm", algorithm)
        object.__setattr__(self, "value", value)

    @classmethod
    def parse(cls, text: str) -> Digest:
        """Parse the command-line spelling ``ALG:HEX`` (``sha256:ab12...``, ``SHA-256:AB12...``)."""
        if not isinstance(text, str):
            raise StoreValueError("digest must be a string like sha256:HEX")
        algorithm, sep, value = text.strip().partition(":")
        if not sep or not algorithm or not value:
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise StoreValueError(
                f"digest {shown!r} is not of the form ALGORITHM:HEX (e.g. sha256:...)"
            )
        return cls(algorithm=algorithm, value=value)

    @classmethod
    def from_wire(cls, raw: Any) -> Digest:
        """Build from the wire object ``{"algorithm": "sha256", "value": HEX}``."""
        if not isinstance(raw, Mapping):
            raise StoreValueError("digest must be an object with 'algorithm' and 'value'")
        algorithm, value = raw.get("algorithm"), raw.get("value")
        if not isinstance(algorithm, str) or not isinstance(value, str):
            raise StoreValueError("digest needs string fields 'algorithm' and 'value'")
        return cls(algorithm=algorithm, value=value)

    def to_wire(self) -> dict[str, str]:
        """The wire object form."""
        return {"algorithm": self.algorithm, "value": self.value}

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.value}"


class SkillStatus(StrEnum):
    """Where a (skill_id, digest) pair stands in the approval workflow."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    REVOKED = "revoked"


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


_formatted_second: tuple[int, str] = (-1, "")


def utc_timestamp(ts: float | None = None) -> str:
    """``ts`` (POSIX seconds, now when None) as ISO 8601 UTC with microseconds and a ``Z``.

    The same text as ``datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")`` at
    a fifth of the cost: every decision stamps its audit entry, and the seconds part is only
    formatted once per second.
    """
    global _formatted_second
    if ts is None:
        ts = time.time()
    whole = math.floor(ts)
    micros = round((ts - whole) * 1_000_000)
    if micros == 1_000_000:
        whole, micros = whole + 1, 0
    cached = _formatted_second
    if cached[0] != whole:
        cached = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
        _formatted_second = cached
    return f"{cached[1]}.{micros:06d}Z"


def as_utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive datetime is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_timestamp(value: datetime | None) -> str | None:
    """ISO 8601 UTC with a ``Z``; microseconds only when present (stable for round trips)."""
    if value is None:
        return None
    value = as_utc(value)
    spec = "microseconds" if value.microsecond else "seconds"
    return value.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def parse_timestamp(text: Any, *, what: str = "timestamp") -> datetime:
    """Parse an ISO 8601 date or date-time (``Z`` or offset; naive means UTC)."""
    if isinstance(text, datetime):
        return as_utc(text)
    if not isinstance(text, str) or not text.strip() or len(text) > 64:
        raise StoreValueError(f"{what} must be an ISO 8601 date-time string")
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        return as_utc(datetime.fromisoformat(raw))
    except ValueError:
        raise StoreValueError(f"{what} {text!r} is not an ISO 8601 date-time") from None


def check_text(value: Any, what: str, limit: int, *, optional: bool = False) -> str | None:
    """Bound a user-supplied string; ``None`` allowed when ``optional``."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not optional and not value.strip()):
        raise StoreValueError(f"{what} must be a non-empty string")
    if len(value) > limit:
        raise StoreValueError(f"{what} is longer than {limit} characters")
    return value


def check_patterns(patterns: Any, what: str) -> tuple[str, ...]:
    """Scope patterns: a short list of non-empty glob strings, deduplicated and sorted."""
    if patterns is None:
        return ()
    if isinstance(patterns, str) or not isinstance(patterns, list | tuple | set | frozenset):
        raise StoreValueError(f"{what} must be a list of glob patterns")
    if len(patterns) > MAX_PATTERNS:
        raise StoreValueError(f"{what} has more than {MAX_PATTERNS} patterns")
    out = set()
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise StoreValueError(f"{what} patterns must be non-empty strings")
        if len(pattern) > MAX_PATTERN:
            raise StoreValueError(f"{what} pattern is longer than {MAX_PATTERN} characters")
        out.add(pattern.strip())
    return tuple(sorted(out))


@dataclass(frozen=True, slots=True)
class SkillRecord:
    """Everything the store knows about one (skill_id, digest) pair."""

    skill_id: str
    digest: Digest
    ref: str | None
    declared_capabilities: tuple[str, ...]
    composition: dict[str, Any]
    provenance: dict[str, Any] | None
    status: SkillStatus
    decided_by: str | None
    decided_at: datetime | None
    reason: str | None
    expires_at: datetime | None
    scope_agents: tuple[str, ...] = ()
    scope_tenants: tuple[str, ...] = ()
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    # Who first registered the pair (None when approved ahead of any registration).
    registered_by_agent: str | None = None
    registered_by_tenant: str | None = None
    # The signer whose signature must verify over the skill for the approval to hold
    # (`skills approve --require-signer`; None: no signer required).
    required_signer: str | None = None

    def is_expired(self, now: datetime | None = None) -> bool:
        """True when the decision carries an expiry that has passed at ``now``."""
        if self.expires_at is None:
            return False
        return as_utc(now or utc_now()) >= self.expires_at

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (timestamps as ISO 8601 strings, digest in wire form)."""
        return {
            "skill_id": self.skill_id,
            "digest": self.digest.to_wire(),
            "ref": self.ref,
            "declared_capabilities": list(self.declared_capabilities),
            "composition": self.composition,
            "registration_provenance": self.provenance,
            "status": str(self.status),
            "decided_by": self.decided_by,
            "decided_at": format_timestamp(self.decided_at),
            "reason": self.reason,
            "expires_at": format_timestamp(self.expires_at),
            "scope": {"agents": list(self.scope_agents), "tenants": list(self.scope_tenants)},
            "first_seen": format_timestamp(self.first_seen),
            "last_seen": format_timestamp(self.last_seen),
            "registered_by": {
                "agent_id": self.registered_by_agent,
                "tenant_id": self.registered_by_tenant,
            },
            "required_signer": self.required_signer,
        }


VERDICT_STATUSES = frozenset(
    {"approved", "pending", "denied", "revoked", "expired", "out_of_scope", "unknown"}
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The store's answer to "may this agent load this (skill_id, digest) now?"."""

    status: str
    record: SkillRecord | None = field(default=None)

    def __post_init__(self) -> None:
        if self.status not in VERDICT_STATUSES:
            raise StoreValueError(f"unknown verdict status {self.status!r}")

    @property
    def approved(self) -> bool:
        """Only an approved, unexpired, in-scope record allows a load."""
        return self.status == "approved"


@dataclass(frozen=True, slots=True)
class ChainAppend:
    """One audit entry to append, as :meth:`ChainStore.append_entry` takes it."""

    session_id: str
    entry: Mapping[str, Any] | bytes | str
    entry_hash: str
    previous_hash: str | None
    request_id: str | None = None
    nonce: str | None = None


# -- the protocols every backend implements -------------------------------------------------
#
# Each method's contract is written once, on the SQLite implementation (agbom/store/sqlite),
# and checked for every backend by tests/store. Errors are always StoreError (or one of its
# subclasses); no backend lets a driver exception out.


class StoreLifecycle(Protocol):
    """Opening state, health and maintenance of a store."""

    @property
    def location(self) -> str:
        """Where the store lives, for messages: a file path, or a URL without its password."""
        ...

    def reopen(self) -> Store:
        """Another handle on the same store with a connection of its own, for another thread
        (closing it leaves this one open). Never creates a store."""
        ...

    @property
    def schema_version(self) -> int: ...

    @property
    def write_failure(self) -> str | None: ...

    def check_writable(self) -> str | None: ...

    def checkpoint(self, wal_limit_bytes: int = ...) -> int: ...

    def start_background_checkpoints(
        self, interval_s: float = ..., wal_limit_bytes: int = ...
    ) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


class ApprovalStore(Protocol):
    """Skill approvals: registrations, decisions, their history, GitOps import/export, and
    the load/unload churn of skills."""

    def record_registration(
        self,
        *,
        skill_id: str,
        digest: Digest,
        ref: str | None,
        declared_capabilities: Sequence[str],
        composition: Mapping[str, Any],
        provenance: Mapping[str, Any] | None,
        agent_id: str | None,
        tenant_id: str | None,
        now: datetime | None = None,
    ) -> SkillRecord: ...

    def get_skill(self, skill_id: str, digest: Digest) -> SkillRecord | None: ...

    def skill_records(self, skill_id: str) -> list[SkillRecord]: ...

    def record_definition(
        self,
        skill_id: str,
        digest: Digest,
        definition: Mapping[str, Any],
        *,
        replace: bool = False,
        now: datetime | None = None,
    ) -> bool:
        """Keep what a registration carried for review (shaped and bounded by
        agbom/review/definition.py); False when one is kept already and ``replace`` is not
        set."""
        ...

    def skill_definition(self, skill_id: str, digest: Digest) -> dict[str, Any] | None:
        """What :meth:`record_definition` kept for the pair, or None."""
        ...

    def verdict(
        self,
        skill_id: str,
        digest: Digest,
        *,
        agent_id: str | None,
        tenant_id: str | None,
        now: datetime | None = None,
    ) -> Verdict: ...

    def approved_digests(self, skill_id: str, *, now: datetime | None = None) -> list[Digest]: ...

    def set_status(
        self,
        skill_id: str,
        digest: Digest,
        status: SkillStatus | str,
        *,
        actor: str,
        reason: str | None = None,
        expires_at: datetime | None = None,
        scope_agents: Sequence[str] = (),
        scope_tenants: Sequence[str] = (),
        now: datetime | None = None,
        source: str = "api",
        capabilities: Sequence[str] | None = None,
        required_signer: str | None = None,
    ) -> SkillRecord: ...

    def history(self, skill_id: str, digest: Digest | None = None) -> list[dict[str, Any]]: ...

    def list_skills(self, status: SkillStatus | str | None = None) -> list[SkillRecord]: ...

    def export_approvals(self) -> dict[str, Any]: ...

    def import_approvals(self, doc: Mapping[str, Any], *, actor: str | None) -> int: ...

    def record_skill_event(
        self, session_id: str, skill_id: str, event: str, now: datetime | None = None
    ) -> int: ...

    def skill_churn(self, session_id: str | None = None) -> list[dict[str, Any]]: ...


class ChainStore(Protocol):
    """Append-only audit chains, one per session, with replay protection."""

    def append_entry(
        self,
        session_id: str,
        *,
        entry: Mapping[str, Any] | bytes | str,
        entry_hash: str,
        previous_hash: str | None,
        request_id: str | None,
        nonce: str | None,
    ) -> int: ...

    def append_entries(self, appends: Sequence[ChainAppend]) -> list[int | StoreError]: ...

    def chain_head(self, session_id: str) -> str | None: ...

    def chain_tip(self, session_id: str) -> tuple[int, str] | None: ...

    def chain_entries(self, session_id: str, *, after: int = 0) -> list[dict[str, Any]]: ...

    def chain_entry_text(self, session_id: str, seq: int) -> str | None: ...

    def chain_session_ids(self) -> list[str]: ...


class SessionStore(Protocol):
    """Session records: who, when, what was negotiated, and the head a session was sealed
    with."""

    def upsert_session(
        self,
        session_id: str,
        *,
        agent_id: str,
        tenant_id: str | None = None,
        parent_session_id: str | None = None,
        status: str,
        started_at: datetime | None = None,
        ended_at: datetime | None = None,
        negotiated: Mapping[str, Any] | None = None,
    ) -> None: ...

    def seal_session(self, session_id: str, head: str | None) -> None: ...

    def save_signed_head(self, session_id: str, statement: Mapping[str, Any]) -> None:
        """Keep the session's signed head statement (``agbom.chain-head/v1``), once."""
        ...

    def signed_head(self, session_id: str) -> dict[str, Any] | None: ...

    def replace_signed_head(
        self, session_id: str, statement: Mapping[str, Any], previous: Mapping[str, Any]
    ) -> bool:
        """Put ``statement`` in place of ``previous`` if that is still the stored head (a
        later head of the same chain: the caller checks that); True when it was replaced."""
        ...

    def save_response_key(self, session_id: str, key_id: str) -> None:
        """Record the asymmetric key that signs the session's answers (acs-crypto)."""
        ...

    def response_key(self, session_id: str) -> str | None: ...

    def get_session(self, session_id: str) -> dict[str, Any] | None: ...

    def list_sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]: ...


class InventoryStore(Protocol):
    """AgBOM versions per session and the fleet inventory built from them."""

    def release_session(self, session_id: str) -> None:
        """Forget what this handle caches of the session (the Guardian dropped it from
        memory); the next version it saves is compared with the database's copy."""
        ...

    def prepare_document(self, document: Mapping[str, Any]) -> None:
        """Do the part of storing ``document`` that depends on it alone, ahead of
        :meth:`save_agbom_version` and off the Guardian's lock (a store may do nothing)."""
        ...

    def save_agbom_version(
        self,
        session_id: str,
        *,
        agent_id: str,
        document: Mapping[str, Any],
        agbom_hash: str,
        change: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        accepted: bool = True,
    ) -> int: ...

    def agbom_version(
        self, session_id: str, version: int | None = None
    ) -> dict[str, Any] | None: ...

    def agbom_version_number(self, session_id: str) -> int: ...

    def latest_agbom_for_agent(
        self, agent_id: str, *, include_refused: bool = False
    ) -> dict[str, Any] | None: ...

    def list_agents(self) -> list[dict[str, Any]]: ...

    def list_components(
        self, type: str | None = None, name: str | None = None
    ) -> list[dict[str, Any]]: ...

    def fleet_components(
        self,
        *,
        type: str | None = None,
        status: str | None = None,
        search: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
        host: str | None = None,
        severity: str | None = None,
    ) -> dict[str, Any]:
        """One page of the distinct components of every agent's latest accepted AgBOM
        (:mod:`agbom.store._fleet_logic`): ``{"total", "limit", "offset", "components"}``.
        ``host``: only the agents of that host platform (``cursor``, ``claude-code``).
        ``severity``: only components with a rule finding at least that severe (each row's
        ``severity`` is its worst, ``findings`` its rule ids: those the Guardian found when
        it took the latest AgBOMs that hold it)."""
        ...

    def fleet_component_agents(
        self,
        type: str,
        ref: str,
        version: str | None,
        *,
        limit: int | None = None,
        offset: int | None = None,
    ) -> dict[str, Any]:
        """One page of the agents whose latest accepted AgBOM holds the component
        ``(type, ref, version)``: ``{"total", "limit", "offset", "agents"}``."""
        ...

    def fleet_charts(self, now: datetime | None = None) -> dict[str, Any]:
        """The overview's charts: ``{"components_by_status": [{"status", "count"}],
        "pending_by_day": [{"day", "pending"}]}`` (:mod:`agbom.store._fleet_logic`)."""
        ...

    def fleet_agents(
        self,
        *,
        host: str | None = None,
        search: str | None = None,
        unapproved: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> dict[str, Any]:
        """One page of the agents with an accepted AgBOM, one per developer, machine and
        host platform: what the latest holds by type, how much is not approved, the last
        decision of its session. ``{"total", "limit", "offset", "agents"}``."""
        ...

    def fleet_agent_components(self, agent_id: str) -> list[dict[str, Any]]:
        """The fleet components of one agent's latest accepted AgBOM, with their status."""
        ...

    def fleet_agent_versions(
        self, agent_id: str, *, limit: int | None = None, offset: int | None = None
    ) -> dict[str, Any]:
        """A page of one agent's AgBOM versions, newest first, each diffed against the
        accepted version in use when it came: ``{"agent_id", "total", "limit", "offset",
        "versions"}``."""
        ...


@dataclass(frozen=True, slots=True)
class ServerPin:
    """An MCP server's approved tool set: the pin the Guardian compares its tools with.

    ``server`` is what the approval named (a component id, else a name; matched without
    regard to case); ``pin`` is :func:`agbom.scan.lock.tool_set_pin` of the canonical tool
    definitions, with those definitions under ``"definitions"`` (a diff then shows what a
    changed tool now says). A revoked pin pins nothing.
    """

    server: str
    status: str  # approved | revoked
    pin: Mapping[str, Any]
    purl: str | None
    version: str | None
    decided_by: str
    decided_at: datetime
    reason: str | None

    @property
    def approved(self) -> bool:
        return self.status == "approved"

    @property
    def value(self) -> str:
        """The tool-set pin's SHA-256 (hex)."""
        return str(self.pin.get("value", ""))


class ServerApprovalStore(Protocol):
    """Approved MCP servers with the pin of their tool set, and the append-only history of
    every approval and revocation."""

    def approve_server(
        self,
        server: str,
        *,
        pin: Mapping[str, Any],
        actor: str,
        reason: str | None = None,
        purl: str | None = None,
        version: str | None = None,
        now: datetime | None = None,
    ) -> ServerPin: ...

    def revoke_server(
        self, server: str, *, actor: str, reason: str | None = None, now: datetime | None = None
    ) -> ServerPin: ...

    def server_pin(self, server: str) -> ServerPin | None: ...

    def server_pins_for(self, names: Sequence[str]) -> list[ServerPin]: ...

    def list_server_pins(self) -> list[ServerPin]: ...

    def server_history(self, server: str | None = None) -> list[dict[str, Any]]: ...


@runtime_checkable
class Store(
    StoreLifecycle,
    ApprovalStore,
    ChainStore,
    SessionStore,
    InventoryStore,
    ServerApprovalStore,
    Protocol,
):
    """A whole store: what the Guardian, the transports and the CLI are given."""
