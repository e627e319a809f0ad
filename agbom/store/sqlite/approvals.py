"""Skill approvals in SQLite: registrations, decisions and their history, and the
load/unload churn of skills."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store._approval_logic import (
    DECISION_COLUMNS,
    SKILL_COLUMNS,
    import_changes_nothing,
    record_from_row,
    verdict_of,
)
from agbom.store._shared import (
    MAX_REF,
    _capabilities_text,
    _check_id,
    _dumps,
    _now,
    _stamp,
)
from agbom.store.interface import (
    MAX_ACTOR,
    MAX_REASON,
    MAX_SKILL_ID,
    Digest,
    SkillRecord,
    SkillStatus,
    StoreError,
    Verdict,
    as_utc,
    check_patterns,
    check_text,
    format_timestamp,
)
from agbom.store.sqlite.connection import SqliteBase, _guarded

_PAIR = "skill_id = ? AND digest_alg = ? AND digest_value = ?"
MAX_DEFINITION_BYTES = 4 << 20  # what a registration carried for review (agbom/review)


class ApprovalsMixin(SqliteBase):
    """Approvals and skill churn (:class:`~agbom.store.interface.ApprovalStore`)."""

    def _fetch(self, conn: sqlite3.Connection, skill_id: str, digest: Digest) -> SkillRecord | None:
        row = conn.execute(
            f"SELECT {SKILL_COLUMNS} FROM skills WHERE {_PAIR}",
            (skill_id, digest.algorithm, digest.value),
        ).fetchone()
        return None if row is None else record_from_row(row)

    @staticmethod
    def _check_pair(skill_id: Any, digest: Any) -> None:
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        if not isinstance(digest, Digest):
            raise StoreError("digest must be a Digest (use Digest.parse or Digest.from_wire)")

    def _append_history(
        self,
        conn: sqlite3.Connection,
        skill_id: str,
        digest: Digest,
        *,
        from_status: str | None,
        to_status: str,
        actor: str,
        reason: str | None,
        expires_at: str | None,
        scope_agents: str,
        scope_tenants: str,
        at: str,
        source: str,
        capabilities: str,
    ) -> None:
        conn.execute(
            "INSERT INTO skill_history (skill_id, digest_alg, digest_value, from_status, "
            "to_status, actor, reason, expires_at, at, source, scope_agents, scope_tenants, "
            "capabilities) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                skill_id,
                digest.algorithm,
                digest.value,
                from_status,
                to_status,
                actor,
                reason,
                expires_at,
                at,
                source,
                scope_agents,
                scope_tenants,
                capabilities,
            ),
        )

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
        self._check_pair(skill_id, digest)
        check_text(ref, "definition ref", MAX_REF, optional=True)
        _check_id(agent_id, "agent_id", optional=True)
        _check_id(tenant_id, "tenant_id", optional=True)
        caps = _capabilities_text(declared_capabilities, "declared_capabilities")
        comp = _dumps(dict(composition or {}), "composition")
        prov = None if provenance is None else _dumps(dict(provenance), "registration_provenance")
        ts = _stamp(now)
        pair = (skill_id, digest.algorithm, digest.value)
        # The registration facts, in the column order both the INSERT and the UPDATE use:
        # ref, declared_capabilities, composition, provenance, first_seen, last_seen,
        # registered_by_agent, registered_by_tenant.
        facts = (ref, caps, comp, prov, ts, ts, agent_id, tenant_id)
        with self._write() as conn:
            row = conn.execute(
                f"SELECT status, first_seen FROM skills WHERE {_PAIR}", pair
            ).fetchone()
            if row is None:
                conn.execute(
                    f"INSERT INTO skills ({SKILL_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, NULL, NULL, '[]', '[]', "
                    "?, ?, ?, ?)",
                    (*pair, *facts),
                )
                self._append_history(
                    conn,
                    skill_id,
                    digest,
                    from_status=None,
                    to_status="pending",
                    actor=agent_id or "unknown-agent",
                    reason="registered",
                    expires_at=None,
                    scope_agents="[]",
                    scope_tenants="[]",
                    at=ts,
                    source="registration",
                    capabilities=caps,
                )
            elif row[1] is None:
                # Only an undecided pair takes the declared capabilities (see the docstring).
                conn.execute(
                    "UPDATE skills SET ref = COALESCE(ref, ?), declared_capabilities = "
                    "CASE WHEN status = 'pending' THEN ? ELSE declared_capabilities END, "
                    "composition = ?, provenance = ?, first_seen = ?, last_seen = ?, "
                    f"registered_by_agent = ?, registered_by_tenant = ? WHERE {_PAIR}",
                    (*facts, *pair),
                )
            else:
                conn.execute(f"UPDATE skills SET last_seen = ? WHERE {_PAIR}", (ts, *pair))
            record = self._fetch(conn, skill_id, digest)
        assert record is not None
        return record

    @_guarded
    def get_skill(self, skill_id: str, digest: Digest) -> SkillRecord | None:
        """The record of one pair, or ``None``."""
        self._check_pair(skill_id, digest)
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
        self._check_pair(skill_id, digest)
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
        self._check_pair(skill_id, digest)
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
        self._check_pair(skill_id, digest)
        record = self._fetch(self._require(), skill_id, digest)
        return verdict_of(record, agent_id=agent_id, tenant_id=tenant_id, now=now)

    @_guarded
    def approved_digests(self, skill_id: str, *, now: datetime | None = None) -> list[Digest]:
        """Digests of ``skill_id`` that are approved and unexpired (scope not considered)."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        moment = _now(now)
        out = []
        for alg, value, expires in self._require().execute(
            "SELECT digest_alg, digest_value, expires_at FROM skills "
            "WHERE skill_id = ? AND status = 'approved' ORDER BY digest_alg, digest_value",
            (skill_id,),
        ):
            # Compare as datetimes, not strings: stored stamps may or may not carry microseconds.
            if expires is not None and datetime.fromisoformat(expires) <= moment:
                continue
            out.append(Digest(algorithm=alg, value=value))
        return out

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
        """
        self._check_pair(skill_id, digest)
        try:
            status = SkillStatus(status)
        except ValueError:
            known = ", ".join(s.value for s in SkillStatus)
            raise StoreError(f"unknown status {status!r} (known: {known})") from None
        check_text(actor, "actor", MAX_ACTOR)
        check_text(reason, "reason", MAX_REASON, optional=True)
        agents = _dumps(list(check_patterns(scope_agents, "agent scope")), "agent scope")
        tenants = _dumps(list(check_patterns(scope_tenants, "tenant scope")), "tenant scope")
        expires = format_timestamp(None if expires_at is None else as_utc(expires_at))
        caps = None if capabilities is None else _capabilities_text(capabilities, "capabilities")
        decided_at = _stamp(now)
        with self._write() as conn:
            self._apply_decision(
                conn,
                skill_id,
                digest,
                status=status,
                decided_by=actor,
                decided_at=decided_at,
                reason=reason,
                expires=expires,
                agents=agents,
                tenants=tenants,
                ref=None,
                caps=caps,
                history_actor=actor,
                source=source,
            )
            record = self._fetch(conn, skill_id, digest)
        assert record is not None
        return record

    def _apply_decision(
        self,
        conn: sqlite3.Connection,
        skill_id: str,
        digest: Digest,
        *,
        status: SkillStatus,
        decided_by: str,
        decided_at: str,
        reason: str | None,
        expires: str | None,
        agents: str,
        tenants: str,
        ref: str | None,
        caps: str | None,
        history_actor: str,
        source: str,
    ) -> bool:
        """Write one decision and its history row; ``False`` when nothing would change.

        ``caps`` (JSON text) replaces the record's capabilities; ``None`` keeps them.
        """
        key = (skill_id, digest.algorithm, digest.value)
        row = conn.execute(
            f"SELECT {DECISION_COLUMNS} FROM skills WHERE {_PAIR}",
            key,
        ).fetchone()
        if row is None:
            conn.execute(
                f"INSERT INTO skills ({SKILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, '{{}}', NULL, "
                "?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL)",
                (
                    *key,
                    ref,
                    "[]" if caps is None else caps,
                    str(status),
                    decided_by,
                    decided_at,
                    reason,
                    expires,
                    agents,
                    tenants,
                ),
            )
            previous = None
        else:
            decision = (str(status), decided_by, decided_at, reason, expires, agents, tenants)
            if source == "import" and import_changes_nothing(row, decision, ref=ref, caps=caps):
                return False
            conn.execute(
                "UPDATE skills SET status = ?, decided_by = ?, decided_at = ?, reason = ?, "
                f"expires_at = ?, scope_agents = ?, scope_tenants = ?, ref = COALESCE(ref, ?), "
                f"declared_capabilities = COALESCE(?, declared_capabilities) WHERE {_PAIR}",
                (
                    str(status),
                    decided_by,
                    decided_at,
                    reason,
                    expires,
                    agents,
                    tenants,
                    ref,
                    caps,
                    *key,
                ),
            )
            previous = row[0]
        self._append_history(
            conn,
            skill_id,
            digest,
            from_status=previous,
            to_status=str(status),
            actor=history_actor,
            reason=reason,
            expires_at=expires,
            scope_agents=agents,
            scope_tenants=tenants,
            at=decided_at if source != "import" else _stamp(None),
            source=source,
            # what the record covers after this decision
            capabilities=caps if caps is not None else (row[8] if row is not None else "[]"),
        )
        return True

    @_guarded
    def history(self, skill_id: str, digest: Digest | None = None) -> list[dict[str, Any]]:
        """Every status change of ``skill_id`` (or of one pair), oldest first."""
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        sql = (
            "SELECT id, skill_id, digest_alg, digest_value, from_status, to_status, actor, "
            "reason, expires_at, scope_agents, scope_tenants, at, source, capabilities "
            "FROM skill_history "
            "WHERE skill_id = ?"
        )
        params: tuple[Any, ...] = (skill_id,)
        if digest is not None:
            sql += " AND digest_alg = ? AND digest_value = ?"
            params += (digest.algorithm, digest.value)
        rows = self._require().execute(sql + " ORDER BY id", params)
        return [
            {
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
            }
            for row in rows
        ]

    @_guarded
    def list_skills(self, status: SkillStatus | str | None = None) -> list[SkillRecord]:
        """All records, or those with ``status``, ordered by skill id and digest."""
        conn = self._require()
        order = " ORDER BY skill_id, digest_alg, digest_value"
        if status is None:
            rows = conn.execute(f"SELECT {SKILL_COLUMNS} FROM skills{order}")
        else:
            try:
                status = SkillStatus(status)
            except ValueError:
                known = ", ".join(s.value for s in SkillStatus)
                raise StoreError(f"unknown status {status!r} (known: {known})") from None
            rows = conn.execute(
                f"SELECT {SKILL_COLUMNS} FROM skills WHERE status = ?{order}", (str(status),)
            )
        return [record_from_row(row) for row in rows]

    @_guarded
    def record_skill_event(
        self, session_id: str, skill_id: str, event: str, now: datetime | None = None
    ) -> int:
        """Record a load or unload; return how many of that event the skill has in the session."""
        _check_id(session_id, "session_id")
        check_text(skill_id, "skill_id", MAX_SKILL_ID)
        if event not in ("load", "unload"):
            raise StoreError(f"skill event must be 'load' or 'unload', not {event!r}")
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
        return [
            {
                "session_id": r[0],
                "skill_id": r[1],
                "loads": r[2],
                "unloads": r[3],
                "first_at": r[4],
                "last_at": r[5],
            }
            for r in rows
        ]
