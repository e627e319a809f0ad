"""Approval logic both backends share, free of any database driver: how a stored skill row
reads back as a :class:`SkillRecord`, what a record's verdict is, when an imported decision
changes nothing, and the approvals file (GitOps) out and in.

The SQL around these (placeholders, locking, notifications) stays in each backend; what is
decided from the values is decided here once, so the two stores cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._shared import (
    IMPORT_FORMAT,
    IMPORT_VERSION,
    _in_scope,
    _now,
    _stamp,
    _ts,
    _validate_import,
)
from agbom.store.interface import (
    MAX_ACTOR,
    Digest,
    SkillRecord,
    SkillStatus,
    Verdict,
    check_text,
)

SKILL_COLUMNS = (
    "skill_id, digest_alg, digest_value, ref, declared_capabilities, composition, provenance, "
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, "
    "first_seen, last_seen, registered_by_agent, registered_by_tenant"
)
"""The columns of a skill row, in the order :func:`record_from_row` reads them."""

DECISION_COLUMNS = (
    "status, decided_by, decided_at, reason, expires_at, scope_agents, scope_tenants, ref, "
    "declared_capabilities"
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
) -> bool:
    """Whether an imported ``decision`` (status, decided_by, decided_at, reason, expires_at,
    agent scope, tenant scope) would leave the stored row of :data:`DECISION_COLUMNS` as it is.

    A re-import of the same file must write no history, so this compares stored text as is.
    """
    return (
        tuple(row[:7]) == decision
        and (ref is None or row[7] == ref)
        and (caps is None or row[8] == caps)
    )


EXPORT_SQL = (
    "SELECT skill_id, digest_alg, digest_value, status, decided_by, decided_at, reason, "
    "expires_at, scope_agents, scope_tenants, ref, declared_capabilities FROM skills "
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
        approvals.append({k: v for k, v in entry.items() if v is not None})
    return {"format": IMPORT_FORMAT, "version": IMPORT_VERSION, "approvals": approvals}


def import_entries(doc: Any, *, actor: Any) -> list[dict[str, Any]]:
    """The checked entries of an approvals file, all validated before anything is written."""
    check_text(actor, "actor", MAX_ACTOR)
    return _validate_import(doc)


def imported_decision(entry: Mapping[str, Any], *, actor: str) -> dict[str, Any]:
    """The keyword arguments of a backend's ``_apply_decision`` for one checked entry.

    An entry without ``decided_by``/``decided_at`` is decided by the importing actor, now
    (taken here, as the entry is applied).
    """
    return {
        "status": entry["status"],
        "decided_by": entry["decided_by"] or actor,
        "decided_at": entry["decided_at"] or _stamp(None),
        "reason": entry["reason"],
        "expires": entry["expires_at"],
        "agents": entry["agents"],
        "tenants": entry["tenants"],
        "ref": entry["ref"],
        "caps": entry["capabilities"],
        "history_actor": actor,
        "source": "import",
    }
