"""Approval logic both backends share, free of any database driver: how a stored skill row
reads back as a :class:`SkillRecord`, what a record's verdict is, when an imported decision
changes nothing, the approvals file (GitOps) out and in, and the registration and decision
flows themselves over either driver's connection (:class:`ApprovalSql` holds their statements
in one placeholder style).

What really differs stays in each backend: its transactions, PostgreSQL's per-pair lock and
NOTIFY, and the statements one dialect spells its own way. What is decided from the values is
decided here once, so the two stores cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import orjson

from agbom.store._shared import (
    IMPORT_FORMAT,
    IMPORT_VERSION,
    MAX_REF,
    _capabilities_text,
    _check_id,
    _dumps,
    _in_scope,
    _now,
    _stamp,
    _ts,
    _validate_import,
    check_signer,
)
from agbom.store.interface import (
    MAX_ACTOR,
    MAX_REASON,
    MAX_SKILL_ID,
    Digest,
    SkillRecord,
    SkillStatus,
    StoreValueError,
    Verdict,
    as_utc,
    check_patterns,
    check_text,
    format_timestamp,
)

SKILL_COLUMNS = (
    "skill_id, digest_alg, digest_value, ref, declared_capabilities, composition, provenance, "
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, "
    "first_seen, last_seen, registered_by_agent, registered_by_tenant, required_signer"
)
"""The columns of a skill row, in the order :func:`record_from_row` reads them."""

DECISION_COLUMNS = (
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, ref, "
    "declared_capabilities, required_signer"
)
"""The columns of a skill row a decision compares (:func:`import_changes_nothing`)."""


def record_from_row(row: Sequence[Any]) -> SkillRecord:
    """A :class:`SkillRecord` from a row of :data:`SKILL_COLUMNS`."""
    return SkillRecord(
        skill_id=row[0],
        digest=Digest(algorithm=row[1], value=row[2]),
        ref=row[3],
        declared_capabilities=tuple(orjson.loads(row[4])),
        composition=orjson.loads(row[5]),
        provenance=None if row[6] is None else orjson.loads(row[6]),
        status=SkillStatus(row[7]),
        decided_by=row[8],
        decided_at=_ts(row[9]),
        reason=row[10],
        expires_at=_ts(row[11]),
        scope_agents=tuple(orjson.loads(row[12])),
        scope_tenants=tuple(orjson.loads(row[13])),
        first_seen=_ts(row[14]),
        last_seen=_ts(row[15]),
        registered_by_agent=row[16],
        registered_by_tenant=row[17],
        required_signer=row[18],
    )


def verdict_of(
    record: SkillRecord | None,
    *,
    agent_id: str | None,
    tenant_id: str | None,
    now: datetime | None,
) -> Verdict:
    """May ``agent_id`` (of ``tenant_id``) use the pair ``record`` stores, at ``now``?

    ``approved`` only when approved, unexpired and in scope; otherwise the reason why not.
    """
    if record is None:
        return Verdict("unknown", None)
    if record.status is not SkillStatus.APPROVED:
        return Verdict(str(record.status), record)
    if record.is_expired(_now(now)):
        return Verdict("expired", record)
    if not (
        _in_scope(record.scope_agents, agent_id) and _in_scope(record.scope_tenants, tenant_id)
    ):
        return Verdict("out_of_scope", record)
    return Verdict("approved", record)


def import_changes_nothing(
    row: Sequence[Any],
    decision: tuple[str, str, str, str | None, str | None, str, str],
    *,
    ref: str | None,
    caps: str | None,
    required_signer: str | None,
) -> bool:
    """Whether an imported ``decision`` (status, decided_by, decided_at, reason, expires_at,
    agent scope, tenant scope) requiring ``required_signer`` would leave the stored row of
    :data:`DECISION_COLUMNS` as it is.

    A re-import of the same file must write no history, so this compares stored text as is.
    """
    return (
        tuple(row[:7]) == decision
        and (ref is None or row[7] == ref)
        and (caps is None or row[8] == caps)
        and row[9] == required_signer
    )


EXPORT_SQL = (
    "SELECT skill_id, digest_alg, digest_value, status, decided_by, decided_at, reason, "
    "expires_at, scope_agents, scope_tenants, ref, declared_capabilities, required_signer "
    "FROM skills "
    "WHERE status IN ('approved', 'denied', 'revoked') "
    "ORDER BY skill_id, digest_alg, digest_value"
)
"""Every decided pair, in the order of the approvals file (the same text in both dialects)."""


def approvals_document(rows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """The approvals file of the rows :data:`EXPORT_SQL` reads.

    Absent optional fields are omitted rather than written as null, and so is an empty
    ``capabilities`` list, so the file is deterministic and diffs stay small.
    """
    approvals = []
    for row in rows:
        entry: dict[str, Any] = {
            "skill_id": row[0],
            "digest": f"{row[1]}:{row[2]}",
            "status": row[3],
            "decided_by": row[4],
            "decided_at": row[5],
        }
        if row[6] is not None:
            entry["reason"] = row[6]
        if row[7] is not None:
            entry["expires_at"] = row[7]
        agents, tenants = orjson.loads(row[8]), orjson.loads(row[9])
        if agents or tenants:
            entry["scope"] = {"agents": agents, "tenants": tenants}
        if row[10] is not None:
            entry["ref"] = row[10]
        capabilities = orjson.loads(row[11])
        if capabilities:
            entry["capabilities"] = capabilities
        if row[12] is not None:
            entry["required_signer"] = row[12]
        approvals.append({k: v for k, v in entry.items() if v is not None})
    return {"format": IMPORT_FORMAT, "version": IMPORT_VERSION, "approvals": approvals}


def import_entries(doc: Any, *, actor: Any) -> list[dict[str, Any]]:
    """The checked entries of an approvals file, all validated before anything is written.

    ``actor`` (who imports) may be None only when every entry names who decided it.
    """
    if actor is not None:
        check_text(actor, "actor", MAX_ACTOR)
    entries = _validate_import(doc)
    if actor is None:
        unnamed = undecided_entries(entries)
        if unnamed:
            raise StoreValueError(
                f"approvals[{unnamed[0]}] does not say who decided it (decided_by), and the "
                "import names nobody"
            )
    return entries


def undecided_entries(entries: Any) -> list[int]:
    """The indexes of an approvals file's entries that do not name who decided them
    (``decided_by``); such an entry is recorded under the importer's name."""
    if not isinstance(entries, list):
        return []
    return [
        i
        for i, entry in enumerate(entries)
        if not isinstance(entry, Mapping) or not entry.get("decided_by")
    ]


def imported_decision(entry: Mapping[str, Any], *, actor: str | None) -> Decision:
    """The decision one checked entry of an approvals file makes.

    An entry without ``decided_by``/``decided_at`` is decided by the importing actor, now
    (taken here, as the entry is applied). The history row names the importer, or, when the
    import names nobody, who the entry says decided.
    """
    decided_by = entry["decided_by"] or actor
    if decided_by is None:  # import_entries refused this already
        raise StoreValueError(f"no decider for {entry['skill_id']!r}")
    return Decision(
        status=entry["status"],
        decided_by=decided_by,
        decided_at=entry["decided_at"] or _stamp(None),
        reason=entry["reason"],
        expires=entry["expires_at"],
        agents=entry["agents"],
        tenants=entry["tenants"],
        ref=entry["ref"],
        caps=entry["capabilities"],
        required_signer=entry["required_signer"],
        history_actor=actor or decided_by,
        source="import",
    )


# -- the decision and registration flows, over either driver's connection ---------------------


class SqlConnection(Protocol):
    """What the shared flows need of a connection: ``sqlite3.Connection`` and psycopg's
    ``Connection`` both execute a statement with positional parameters this way."""

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...


@dataclass(frozen=True, slots=True)
class ApprovalSql:
    """The statements of the shared flows in one driver's placeholder style.

    Written once with ``?``; :meth:`in_style` converts them all at definition time, so a
    backend holds one instance and never rewrites SQL per call.
    """

    select_registered: str
    insert_registered: str
    update_registered: str
    touch: str
    select_decision: str
    insert_decided: str
    update_decided: str
    insert_history: str

    @classmethod
    def in_style(cls, convert: Callable[[str], str]) -> ApprovalSql:
        pair = "skill_id = ? AND digest_alg = ? AND digest_value = ?"
        return cls(
            select_registered=convert(f"SELECT status, first_seen FROM skills WHERE {pair}"),
            insert_registered=convert(
                f"INSERT INTO skills ({SKILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', "
                "NULL, NULL, NULL, NULL, '[]', '[]', ?, ?, ?, ?, NULL)"
            ),
            # Only an undecided pair takes the declared capabilities (see record_registration).
            update_registered=convert(
                "UPDATE skills SET ref = COALESCE(ref, ?), declared_capabilities = "
                "CASE WHEN status = 'pending' THEN ? ELSE declared_capabilities END, "
                "composition = ?, provenance = ?, first_seen = ?, last_seen = ?, "
                f"registered_by_agent = ?, registered_by_tenant = ? WHERE {pair}"
            ),
            touch=convert(f"UPDATE skills SET last_seen = ? WHERE {pair}"),
            select_decision=convert(f"SELECT {DECISION_COLUMNS} FROM skills WHERE {pair}"),
            insert_decided=convert(
                f"INSERT INTO skills ({SKILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, '{{}}', NULL, "
                "?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, ?)"
            ),
            update_decided=convert(
                "UPDATE skills SET status = ?, decided_by = ?, decided_at = ?, reason = ?, "
                "expires_at = ?, scope_agents = ?, scope_tenants = ?, ref = COALESCE(ref, ?), "
                "declared_capabilities = COALESCE(?, declared_capabilities), required_signer = ? "
                f"WHERE {pair}"
            ),
            insert_history=convert(
                "INSERT INTO skill_history (skill_id, digest_alg, digest_value, from_status, "
                "to_status, actor, reason, expires_at, at, source, scope_agents, scope_tenants, "
                "capabilities, required_signer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
        )


def check_pair(skill_id: Any, digest: Any) -> None:
    """Refuse a pair that is not a bounded skill id and a :class:`Digest`."""
    check_text(skill_id, "skill_id", MAX_SKILL_ID)
    if not isinstance(digest, Digest):
        raise StoreValueError("digest must be a Digest (use Digest.parse or Digest.from_wire)")


def skill_status(status: SkillStatus | str) -> SkillStatus:
    """``status`` as a :class:`SkillStatus`, or a one-line error naming the known ones."""
    try:
        return SkillStatus(status)
    except ValueError:
        known = ", ".join(s.value for s in SkillStatus)
        raise StoreValueError(f"unknown status {status!r} (known: {known})") from None


@dataclass(frozen=True, slots=True)
class Registration:
    """The checked values of one registration, as stored."""

    pair: tuple[str, str, str]
    # ref, declared_capabilities, composition, provenance, first_seen, last_seen,
    # registered_by_agent, registered_by_tenant: the column order of the INSERT and UPDATE
    facts: tuple[Any, ...]
    agent_id: str | None
    capabilities: str
    at: str


def registration(
    *,
    skill_id: Any,
    digest: Any,
    ref: Any,
    declared_capabilities: Any,
    composition: Any,
    provenance: Any,
    agent_id: Any,
    tenant_id: Any,
    now: datetime | None,
) -> Registration:
    """Check a registration's inputs and give the values it stores."""
    check_pair(skill_id, digest)
    check_text(ref, "definition ref", MAX_REF, optional=True)
    _check_id(agent_id, "agent_id", optional=True)
    _check_id(tenant_id, "tenant_id", optional=True)
    caps = _capabilities_text(declared_capabilities, "declared_capabilities")
    comp = _dumps(dict(composition or {}), "composition")
    prov = None if provenance is None else _dumps(dict(provenance), "registration_provenance")
    ts = _stamp(now)
    return Registration(
        pair=(skill_id, digest.algorithm, digest.value),
        facts=(ref, caps, comp, prov, ts, ts, agent_id, tenant_id),
        agent_id=agent_id,
        capabilities=caps,
        at=ts,
    )


def apply_registration(conn: SqlConnection, sql: ApprovalSql, reg: Registration) -> bool:
    """Store one registration; ``True`` when the record changed (not only ``last_seen``).

    A pair never seen becomes ``pending`` with a history row; a pair decided ahead of its
    first registration gains the registration facts; a known pair only moves ``last_seen``.
    The caller holds the write transaction (and any lock its backend needs).
    """
    row = conn.execute(sql.select_registered, reg.pair).fetchone()
    if row is None:
        conn.execute(sql.insert_registered, (*reg.pair, *reg.facts))
        conn.execute(
            sql.insert_history,
            (
                *reg.pair,
                None,
                "pending",
                reg.agent_id or "unknown-agent",
                "registered",
                None,
                reg.at,
                "registration",
                "[]",
                "[]",
                reg.capabilities,
                None,
            ),
        )
        return True
    if row[1] is None:
        conn.execute(sql.update_registered, (*reg.facts, *reg.pair))
        return True
    conn.execute(sql.touch, (reg.at, *reg.pair))
    return False


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision on a pair, in stored form (JSON text for scopes and capabilities)."""

    status: SkillStatus
    decided_by: str
    decided_at: str
    reason: str | None
    expires: str | None
    agents: str
    tenants: str
    # set only by an import: the definition ref it names (a stored ref is kept)
    ref: str | None
    # JSON text that replaces the record's capabilities; None keeps them
    caps: str | None
    # the signer whose verifying signature the approval requires (None: none); each
    # decision states it anew, as it does the scopes
    required_signer: str | None
    history_actor: str
    source: str


def decision(
    status: SkillStatus | str,
    *,
    actor: Any,
    reason: Any,
    expires_at: datetime | None,
    scope_agents: Sequence[str],
    scope_tenants: Sequence[str],
    capabilities: Sequence[str] | None,
    now: datetime | None,
    source: str,
    required_signer: str | None = None,
) -> Decision:
    """Check the inputs of :meth:`set_status` (after its pair) and give its decision."""
    decided = skill_status(status)
    check_text(actor, "actor", MAX_ACTOR)
    check_text(reason, "reason", MAX_REASON, optional=True)
    agents = _dumps(list(check_patterns(scope_agents, "agent scope")), "agent scope")
    tenants = _dumps(list(check_patterns(scope_tenants, "tenant scope")), "tenant scope")
    expires = format_timestamp(None if expires_at is None else as_utc(expires_at))
    caps = None if capabilities is None else _capabilities_text(capabilities, "capabilities")
    signer = check_signer(required_signer)
    if signer is not None and decided is not SkillStatus.APPROVED:
        raise StoreValueError("only an approval can require a signer")
    return Decision(
        status=decided,
        decided_by=actor,
        decided_at=_stamp(now),
        reason=reason,
        expires=expires,
        agents=agents,
        tenants=tenants,
        ref=None,
        caps=caps,
        required_signer=signer,
        history_actor=actor,
        source=source,
    )


def apply_decision(
    conn: SqlConnection, sql: ApprovalSql, skill_id: str, digest: Digest, d: Decision
) -> bool:
    """Write one decision and its history row; ``False`` when an imported entry would change
    nothing. The caller holds the write transaction (and any lock its backend needs)."""
    key = (skill_id, digest.algorithm, digest.value)
    row = conn.execute(sql.select_decision, key).fetchone()
    status = str(d.status)
    if row is None:
        conn.execute(
            sql.insert_decided,
            (
                *key,
                d.ref,
                "[]" if d.caps is None else d.caps,
                status,
                d.decided_by,
                d.decided_at,
                d.reason,
                d.expires,
                d.agents,
                d.tenants,
                d.required_signer,
            ),
        )
        previous = None
    else:
        stored = (status, d.decided_by, d.decided_at, d.reason, d.expires, d.agents, d.tenants)
        if d.source == "import" and import_changes_nothing(
            row, stored, ref=d.ref, caps=d.caps, required_signer=d.required_signer
        ):
            return False
        conn.execute(sql.update_decided, (*stored, d.ref, d.caps, d.required_signer, *key))
        previous = row[0]
    conn.execute(
        sql.insert_history,
        (
            *key,
            previous,
            status,
            d.history_actor,
            d.reason,
            d.expires,
            d.decided_at if d.source != "import" else _stamp(None),
            d.source,
            d.agents,
            d.tenants,
            # what the record covers after this decision
            d.caps if d.caps is not None else (row[8] if row is not None else "[]"),
            d.required_signer,
        ),
    )
    return True


HISTORY_COLUMNS = (
    "id, skill_id, digest_alg, digest_value, from_status, to_status, actor, reason, "
    "expires_at, scope_agents, scope_tenants, at, source, capabilities, required_signer"
)
"""The columns of a history row, in the order :func:`history_entry` reads them."""


def history_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One status change as :meth:`history` returns it, from a row of :data:`HISTORY_COLUMNS`."""
    return {
        "id": row[0],
        "skill_id": row[1],
        "digest": f"{row[2]}:{row[3]}",
        "from_status": row[4],
        "to_status": row[5],
        "actor": row[6],
        "reason": row[7],
        "expires_at": row[8],
        "scope": {"agents": orjson.loads(row[9]), "tenants": orjson.loads(row[10])},
        "at": row[11],
        "source": row[12],
        # None: decided before agbom recorded capabilities in the history (store v6)
        "capabilities": None if row[13] is None else orjson.loads(row[13]),
        # the signer the decision required (None: none, or decided before store v12)
        "required_signer": row[14],
    }


def unexpired_digests(rows: Iterable[Sequence[Any]], now: datetime | None) -> list[Digest]:
    """The digests of ``(digest_alg, digest_value, expires_at)`` rows not expired at ``now``."""
    moment = _now(now)
    # Compare as datetimes, not strings: stored stamps may or may not carry microseconds.
    return [
        Digest(algorithm=alg, value=value)
        for alg, value, expires in rows
        if expires is None or datetime.fromisoformat(expires) > moment
    ]


def check_skill_event(session_id: Any, skill_id: Any, event: Any) -> None:
    """Refuse a skill event that is not a load or unload of a bounded skill in a session."""
    _check_id(session_id, "session_id")
    check_text(skill_id, "skill_id", MAX_SKILL_ID)
    if event not in ("load", "unload"):
        raise StoreValueError(f"skill event must be 'load' or 'unload', not {event!r}")


def churn_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One (session, skill) of :meth:`skill_churn`: session, skill, loads, unloads, first
    and last event."""
    return {
        "session_id": row[0],
        "skill_id": row[1],
        "loads": row[2],
        "unloads": row[3],
        "first_at": row[4],
        "last_at": row[5],
    }
