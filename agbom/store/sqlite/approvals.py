"""Skill approvals in SQLite: registrations, decisions and their history, and the
load/unload churn of skills."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._approval_logic import (
    HISTORY_COLUMNS,
    SKILL_COLUMNS,
    ApprovalSql,
    Decision,
    apply_decision,
    apply_registration,
    check_pair,
    check_skill_event,
    churn_entry,
    decision,
    history_entry,
    record_from_row,
    registration,
    skill_status,
    unexpired_digests,
    verdict_of,
)
from agbom.store._shared import (
    _dumps,
    _stamp,
)
from agbom.store.interface import (
    MAX_SKILL_ID,
    Digest,
    SkillRecord,
    SkillStatus,
    Verdict,
    check_text,
)
from agbom.store.sqlite.connection import SqliteBase, _guarded

_PAIR = "skill_id = ? AND digest_alg = ? AND digest_value = ?"
_SQL = ApprovalSql.in_style(lambda sql: sql)  # sqlite3 takes ? as written
MAX_DEFINITION_BYTES = 4 << 20  # what a registration carried for review (agbom/review)


class ApprovalsMixin(SqliteBase):
    """Approvals and skill churn (:class:`~agbom.store.interface.ApprovalStore`)."""

    def _fetch(self, conn: sqlite3.Connection, skill_id: str, digest: Digest) -> SkillRecord | None:
        row = conn.execute(
            f"SELECT {SKILL_COLUMNS} FROM skills WHERE {_PAIR}",
            (skill_id, digest.algorithm, digest.value),
        ).fetchone()
        return None if row is None else record_from_row(row)

    @_guarded
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
        """Note that an agent registered ``(skill_id, digest)``.

        A pair never seen before becomes ``pending`` (with a history row); a known pair only
        gets its ``last_seen`` moved. A pair decided ahead of its first registration keeps
        its decision and gains the registration facts, except its capabilities: those of a
        decided pair are what the decision covered, and an agent must not be able to widen
        them by declaring more (the Guardian compares the two). A pair put back to pending
        ahead of registration takes the capabilities the agent declares.
        """
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
            apply_registration(conn, _SQL, reg)
            record = self._fetch(conn, skill_id, digest)
        assert record is not None
        return record

    @_guarded
    def get_skill(self, skill_id: str, digest: Digest) -> SkillRecord | None:
        """The record of one pair, or ``None``."""
        check_pair(skill_id, digest)
        return self._fetch(self._require(), skill_id, digest)

    @_guarded
    def skill_records(self, skill_id: str) -> list[SkillRecord]:
        """Every digest known for ``skill_id``, ordered by digest."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        rows = self._require().execute(
            f"SELECT {SKILL_COLUMNS} FROM skills WHERE skill_id = ? "
            "ORDER BY digest_alg, digest_value",
            (skill_id,),
        )
        return [record_from_row(row) for row in rows]

    @_guarded
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
        text = _dumps(dict(definition), "skill definition", MAX_DEFINITION_BYTES)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._write() as conn:
            cursor = conn.execute(
                f"{verb} INTO skill_definitions (skill_id, digest_alg, digest_value, "
                "definition, recorded_at) VALUES (?, ?, ?, ?, ?)",
                (skill_id, digest.algorithm, digest.value, text, _stamp(now)),
            )
        return cursor.rowcount > 0

    @_guarded
    def skill_definition(self, skill_id: str, digest: Digest) -> dict[str, Any] | None:
        """What a registration of the pair carried for review, or None."""
        check_pair(skill_id, digest)
        row = (
            self._require()
            .execute(
                f"SELECT definition FROM skill_definitions WHERE {_PAIR}",
                (skill_id, digest.algorithm, digest.value),
            )
            .fetchone()
        )
        return None if row is None else dict(orjson.loads(row[0]))

    @_guarded
    def verdict(
        self,
        skill_id: str,
        digest: Digest,
        *,
        agent_id: str | None,
        tenant_id: str | None,
        now: datetime | None = None,
    ) -> Verdict:
        """May ``agent_id`` (of ``tenant_id``) use this pair now?

        ``approved`` only when the pair's status is approved, its expiry (if any) is in the
        future, and the agent and tenant match the approval's scope patterns (fnmatch, case
        sensitive; an empty scope matches everyone, a scoped approval never matches a caller
        that gave no id). Otherwise the status says why not.
        """
        check_pair(skill_id, digest)
        record = self._fetch(self._require(), skill_id, digest)
        return verdict_of(record, agent_id=agent_id, tenant_id=tenant_id, now=now)

    @_guarded
    def approved_digests(self, skill_id: str, *, now: datetime | None = None) -> list[Digest]:
        """Digests of ``skill_id`` that are approved and unexpired (scope not considered)."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        rows = self._require().execute(
            "SELECT digest_alg, digest_value, expires_at FROM skills "
            "WHERE skill_id = ? AND status = 'approved' ORDER BY digest_alg, digest_value",
            (skill_id,),
        )
        return unexpired_digests(rows, now)

    @_guarded
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
        """Decide a pair: approve, deny, revoke (or put back to pending).

        Creates the record when the pair was never registered (approving ahead of
        registration is normal GitOps). The decision and its history row are written in the
        same ``BEGIN IMMEDIATE`` transaction, so the next :meth:`verdict` anywhere sees it.

        ``capabilities`` are what the decision covers: when given, the record's
        ``declared_capabilities`` become exactly that list. When ``None`` the record keeps the
        capabilities it has, so approving a pending registration approves what the agent
        declared (``agbom skills show`` lists them), and a pair approved ahead of any
        registration is approved with none. The Guardian denies a registration that declares
        more than the approved record holds. Each history row records the capabilities the
        record held after its decision.

        ``required_signer`` (approvals only) makes the approval hold only while a signature by
        that signer verifies over the skill (the Guardian checks it,
        agbom/guardian/skill_trust.py); each decision states it anew, as it does the scopes.
        """
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
            record = self._fetch(conn, skill_id, digest)
        assert record is not None
        return record

    def _apply_decision(
        self, conn: sqlite3.Connection, skill_id: str, digest: Digest, decided: Decision
    ) -> bool:
        """Write one decision and its history row; ``False`` when nothing would change."""
        return apply_decision(conn, _SQL, skill_id, digest, decided)

    @_guarded
    def history(self, skill_id: str, digest: Digest | None = None) -> list[dict[str, Any]]:
        """Every status change of ``skill_id`` (or of one pair), oldest first."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        sql = f"SELECT {HISTORY_COLUMNS} FROM skill_history WHERE skill_id = ?"
        params: tuple[Any, ...] = (skill_id,)
        if digest is not None:
            sql += " AND digest_alg = ? AND digest_value = ?"
            params += (digest.algorithm, digest.value)
        rows = self._require().execute(sql + " ORDER BY id", params)
        return [history_entry(row) for row in rows]

    @_guarded
    def list_skills(self, status: SkillStatus | str | None = None) -> list[SkillRecord]:
        """All records, or those with ``status``, ordered by skill id and digest."""
        conn = self._require()
        order = " ORDER BY skill_id, digest_alg, digest_value"
        if status is None:
            rows = conn.execute(f"SELECT {SKILL_COLUMNS} FROM skills{order}")
        else:
            rows = conn.execute(
                f"SELECT {SKILL_COLUMNS} FROM skills WHERE status = ?{order}",
                (str(skill_status(status)),),
            )
        return [record_from_row(row) for row in rows]

    @_guarded
    def record_skill_event(
        self, session_id: str, skill_id: str, event: str, now: datetime | None = None
    ) -> int:
        """Record a load or unload; return how many of that event the skill has in the session."""
        check_skill_event(session_id, skill_id, event)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO skill_events (session_id, skill_id, event, at) VALUES (?, ?, ?, ?)",
                (session_id, skill_id, event, _stamp(now)),
            )
            row = conn.execute(
                "SELECT COUNT(*) FROM skill_events WHERE session_id = ? AND skill_id = ? "
                "AND event = ?",
                (session_id, skill_id, event),
            ).fetchone()
        return int(row[0])

    @_guarded
    def skill_churn(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Load/unload counts per (session, skill), busiest first."""
        rows = self._require().execute(
            "SELECT session_id, skill_id, SUM(event = 'load'), SUM(event = 'unload'), "
            "MIN(at), MAX(at) FROM skill_events WHERE (?1 IS NULL OR session_id = ?1) "
            "GROUP BY session_id, skill_id "
            "ORDER BY COUNT(*) DESC, session_id, skill_id",
            (session_id,),
        )
        return [churn_entry(r) for r in rows]
