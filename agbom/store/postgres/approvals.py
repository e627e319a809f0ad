"""Skill approvals on PostgreSQL: registrations, decisions, history, GitOps, skill churn.

Same contract as the SQLite store (the docstrings there are the specification). What differs:
a read-modify-write first takes a transaction-scoped advisory lock on the pair's hash (a row
lock cannot cover a pair whose row is still to be inserted), so two replicas deciding the
same pair at once apply one decision after the other; and every change NOTIFYs
:data:`~agbom.store.postgres._base.APPROVALS_CHANNEL` with the skill id in the same
transaction, so other replicas hear of it when it is visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._approval_logic import (
    EXPORT_SQL,
    HISTORY_COLUMNS,
    ApprovalSql,
    Decision,
    apply_decision,
    apply_registration,
    approvals_document,
    check_pair,
    check_skill_event,
    churn_entry,
    decision,
    history_entry,
    import_entries,
    imported_decision,
    registration,
    skill_status,
    unexpired_digests,
    verdict_of,
)
from agbom.store._shared import pyformat_sql
from agbom.store.interface import (
    MAX_SKILL_ID,
    Digest,
    SkillRecord,
    SkillStatus,
    Verdict,
    check_text,
)
from agbom.store.postgres._base import APPROVALS_CHANNEL, Connection, PostgresBase
from agbom.store.postgres._values import (
    PAIR,
    SKILL_COLUMNS,
    dumps,
    record_from_row,
    stamp,
)

MAX_DEFINITION_BYTES = 4 << 20
"""What a registration carried for review, as the SQLite store bounds it."""

_SQL = ApprovalSql.in_style(pyformat_sql)


def _notify(conn: Connection, skill_id: str) -> None:
    conn.execute("SELECT pg_notify(%s, %s)", (APPROVALS_CHANNEL, skill_id))


def _fetch(conn: Connection, skill_id: str, digest: Digest) -> SkillRecord | None:
    row = conn.execute(
        f"SELECT {SKILL_COLUMNS} FROM skills WHERE {PAIR}",
        (skill_id, digest.algorithm, digest.value),
    ).fetchone()
    return None if row is None else record_from_row(row)


def _lock_pair(conn: Connection, key: tuple[str, str, str]) -> None:
    """Serialize writers of one pair, whether or not its row exists yet: a transaction-scoped
    advisory lock on the pair's hash (a row lock cannot cover a row still to be inserted)."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        ("\x1f".join(key),),
    )


class ApprovalsMixin(PostgresBase):
    """The :class:`~agbom.store.interface.ApprovalStore` part of the PostgreSQL store."""

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
    ) -> SkillRecord:
        """Note that an agent registered ``(skill_id, digest)`` (see SqliteStore)."""
        reg = registration(
            skill_id=skill_id,
            digest=digest,
            ref=ref,
            declared_capabilities=declared_capabilities,
            composition=composition,
            provenance=provenance,
            agent_id=agent_id,
            tenant_id=tenant_id,
            now=now,
        )
        with self._write() as conn:
            _lock_pair(conn, reg.pair)
            if apply_registration(conn, _SQL, reg):
                _notify(conn, skill_id)
            record = _fetch(conn, skill_id, digest)
        assert record is not None
        return record

    def get_skill(self, skill_id: str, digest: Digest) -> SkillRecord | None:
        """The record of one pair, or ``None``."""
        check_pair(skill_id, digest)
        with self._read() as conn:
            return _fetch(conn, skill_id, digest)

    def skill_records(self, skill_id: str) -> list[SkillRecord]:
        """Every digest known for ``skill_id``, ordered by digest."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {SKILL_COLUMNS} FROM skills WHERE skill_id = %s "
                "ORDER BY digest_alg, digest_value",
                (skill_id,),
            ).fetchall()
        return [record_from_row(row) for row in rows]

    def record_definition(
        self,
        skill_id: str,
        digest: Digest,
        definition: Mapping[str, Any],
        *,
        replace: bool = False,
        now: datetime | None = None,
    ) -> bool:
        """Keep what a registration of the pair carried for review; False when one is kept
        already and ``replace`` is not set."""
        check_pair(skill_id, digest)
        text = dumps(dict(definition), "skill definition", MAX_DEFINITION_BYTES)
        on_conflict = (
            "DO UPDATE SET definition = excluded.definition, recorded_at = excluded.recorded_at"
            if replace
            else "DO NOTHING"
        )
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO skill_definitions (skill_id, digest_alg, digest_value, definition, "
                f"recorded_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (skill_id, digest_alg, "
                f"digest_value) {on_conflict} RETURNING skill_id",
                (skill_id, digest.algorithm, digest.value, text, stamp(now)),
            ).fetchone()
        return row is not None

    def skill_definition(self, skill_id: str, digest: Digest) -> dict[str, Any] | None:
        """What a registration of the pair carried for review, or None."""
        check_pair(skill_id, digest)
        with self._read() as conn:
            row = conn.execute(
                f"SELECT definition FROM skill_definitions WHERE {PAIR}",
                (skill_id, digest.algorithm, digest.value),
            ).fetchone()
        return None if row is None else dict(orjson.loads(row[0]))

    def verdict(
        self,
        skill_id: str,
        digest: Digest,
        *,
        agent_id: str | None,
        tenant_id: str | None,
        now: datetime | None = None,
    ) -> Verdict:
        """May ``agent_id`` (of ``tenant_id``) use this pair now? (see SqliteStore)."""
        check_pair(skill_id, digest)
        with self._read() as conn:
            record = _fetch(conn, skill_id, digest)
        return verdict_of(record, agent_id=agent_id, tenant_id=tenant_id, now=now)

    def approved_digests(self, skill_id: str, *, now: datetime | None = None) -> list[Digest]:
        """Digests of ``skill_id`` that are approved and unexpired (scope not considered)."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT digest_alg, digest_value, expires_at FROM skills WHERE skill_id = %s "
                "AND status = 'approved' ORDER BY digest_alg, digest_value",
                (skill_id,),
            ).fetchall()
        return unexpired_digests(rows, now)

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
    ) -> SkillRecord:
        """Decide a pair: approve, deny, revoke (or put back to pending) (see SqliteStore)."""
        check_pair(skill_id, digest)
        decided = decision(
            status,
            actor=actor,
            reason=reason,
            expires_at=expires_at,
            scope_agents=scope_agents,
            scope_tenants=scope_tenants,
            capabilities=capabilities,
            now=now,
            source=source,
            required_signer=required_signer,
        )
        with self._write() as conn:
            self._apply_decision(conn, skill_id, digest, decided)
            record = _fetch(conn, skill_id, digest)
        assert record is not None
        return record

    def _apply_decision(
        self, conn: Connection, skill_id: str, digest: Digest, decided: Decision
    ) -> bool:
        """Write one decision, its history row and its notification; ``False`` when an
        imported entry would change nothing."""
        _lock_pair(conn, (skill_id, digest.algorithm, digest.value))
        changed = apply_decision(conn, _SQL, skill_id, digest, decided)
        if changed:
            _notify(conn, skill_id)
        return changed

    def history(self, skill_id: str, digest: Digest | None = None) -> list[dict[str, Any]]:
        """Every status change of ``skill_id`` (or of one pair), oldest first."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        sql = f"SELECT {HISTORY_COLUMNS} FROM skill_history WHERE skill_id = %s"
        params: tuple[Any, ...] = (skill_id,)
        if digest is not None:
            sql += " AND digest_alg = %s AND digest_value = %s"
            params += (digest.algorithm, digest.value)
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY id", params).fetchall()
        return [history_entry(row) for row in rows]

    def list_skills(self, status: SkillStatus | str | None = None) -> list[SkillRecord]:
        """All records, or those with ``status``, ordered by skill id and digest."""
        order = " ORDER BY skill_id, digest_alg, digest_value"
        wanted = None if status is None else skill_status(status)
        with self._read() as conn:
            if wanted is None:
                rows = conn.execute(f"SELECT {SKILL_COLUMNS} FROM skills{order}").fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {SKILL_COLUMNS} FROM skills WHERE status = %s{order}", (str(wanted),)
                ).fetchall()
        return [record_from_row(row) for row in rows]

    def export_approvals(self) -> dict[str, Any]:
        """Every decided pair as a deterministic document (see SqliteStore)."""
        with self._read() as conn:
            rows = conn.execute(EXPORT_SQL).fetchall()
        return approvals_document(rows)

    def import_approvals(self, doc: Mapping[str, Any], *, actor: str | None) -> int:
        """Apply a reviewed approvals document in one transaction (see SqliteStore)."""
        entries = import_entries(doc, actor=actor)
        changed = 0
        with self._write() as conn:
            for e in entries:
                decided = imported_decision(e, actor=actor)
                changed += self._apply_decision(conn, e["skill_id"], e["digest"], decided)
        return changed

    # -- skill churn -----------------------------------------------------------------------

    def record_skill_event(
        self, session_id: str, skill_id: str, event: str, now: datetime | None = None
    ) -> int:
        """Record a load or unload; return how many of that event the skill has in the session."""
        check_skill_event(session_id, skill_id, event)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO skill_events (session_id, skill_id, event, at) "
                "VALUES (%s, %s, %s, %s)",
                (session_id, skill_id, event, stamp(now)),
            )
            row = conn.execute(
                "SELECT COUNT(*) FROM skill_events WHERE session_id = %s AND skill_id = %s "
                "AND event = %s",
                (session_id, skill_id, event),
            ).fetchone()
        return int(row[0]) if row else 0

    def skill_churn(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Load/unload counts per (session, skill), busiest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT session_id, skill_id, COUNT(*) FILTER (WHERE event = 'load'), "
                "COUNT(*) FILTER (WHERE event = 'unload'), MIN(at), MAX(at) FROM skill_events "
                "WHERE (%(s)s::text IS NULL OR session_id = %(s)s) GROUP BY session_id, skill_id "
                "ORDER BY COUNT(*) DESC, session_id, skill_id",
                {"s": session_id},
            ).fetchall()
        return [churn_entry(r) for r in rows]
