"""The GitOps approvals file: export every decided pair, import a reviewed file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.store._approval_logic import (
    EXPORT_SQL,
    approvals_document,
    import_entries,
    imported_decision,
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
        return approvals_document(self._require().execute(EXPORT_SQL))

    @_guarded
    def import_approvals(self, doc: Mapping[str, Any], *, actor: str | None) -> int:
        """Apply a reviewed approvals document; return how many pairs changed.

        The whole document is validated before anything is written, and applied in one
        transaction: either every entry lands or none does. Entries identical to the stored
        decision are skipped (re-importing the same file is a no-op). Pairs in the store but
        not in the file are left alone.

        Each entry's ``capabilities`` (absent means none) replace the stored ones: the file is
        what was reviewed, so a pair cannot keep capabilities its reviewed entry does not list.
        """
        entries = import_entries(doc, actor=actor)
        changed = 0
        with self._write() as conn:
            for e in entries:
                decided = imported_decision(e, actor=actor)
                changed += self._apply_decision(conn, e["skill_id"], e["digest"], decided)
        return changed
