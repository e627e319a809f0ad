"""The GitOps approvals file: export every decided pair, import a reviewed file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agbom.store._shared import (
    IMPORT_FORMAT,
    IMPORT_VERSION,
    _stamp,
    _validate_import,
)
from agbom.store.interface import (
    MAX_ACTOR,
    check_text,
)
from agbom.store.sqlite.approvals import ApprovalsMixin
from agbom.store.sqlite.connection import _guarded


class GitopsMixin(ApprovalsMixin):
    """Approvals export and import; an import applies decisions as :meth:`set_status` does."""

    @_guarded
    def export_approvals(self) -> dict[str, Any]:
        """Every decided pair (approved, denied, revoked) as a deterministic document.

        Pending pairs are left out: they are undecided. Entries are sorted by skill id and
        digest; absent optional fields are omitted rather than written as null, and so is an
        empty ``capabilities`` list (an entry without it covers no capabilities).
        """
        rows = self._require().execute(
            "SELECT skill_id, digest_alg, digest_value, status, decided_by, decided_at, reason, "
            "expires_at, scope_agents, scope_tenants, ref, declared_capabilities FROM skills "
            "WHERE status IN "
            "('approved', 'denied', 'revoked') ORDER BY skill_id, digest_alg, digest_value"
        )
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

    @_guarded
    def import_approvals(self, doc: Mapping[str, Any], *, actor: str) -> int:
        """Apply a reviewed approvals document; return how many pairs changed.

        The whole document is validated before anything is written, and applied in one
        transaction: either every entry lands or none does. Entries identical to the stored
        decision are skipped (re-importing the same file is a no-op). Pairs in the store but
        not in the file are left alone.

        Each entry's ``capabilities`` (absent means none) replace the stored ones: the file is
        what was reviewed, so a pair cannot keep capabilities its reviewed entry does not list.
        """
        check_text(actor, "actor", MAX_ACTOR)
        entries = _validate_import(doc)
        changed = 0
        with self._write() as conn:
            for e in entries:
                changed += self._apply_decision(
                    conn,
                    e["skill_id"],
                    e["digest"],
                    status=e["status"],
                    decided_by=e["decided_by"] or actor,
                    decided_at=e["decided_at"] or _stamp(None),
                    reason=e["reason"],
                    expires=e["expires_at"],
                    agents=e["agents"],
                    tenants=e["tenants"],
                    ref=e["ref"],
                    caps=e["capabilities"],
                    history_actor=actor,
                    source="import",
                )
        return changed
