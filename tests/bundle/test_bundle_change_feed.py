"""The change feed the bundle watcher waits on: PostgreSQL's NOTIFY agbom_approvals, heard on
a connection of its own; SQLite has none (the watcher polls)."""

from __future__ import annotations

from pathlib import Path

from agbom.store import Digest, SkillStatus, open_store
from agbom.store.notifications import approval_changes

PAIR = ("acme/pdf-tools", Digest.parse("sha256:" + "ab" * 32))


def test_sqlite_announces_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        assert approval_changes(store) is None


def test_postgresql_feed_hears_a_decision_made_through_another_connection(pg_url: str) -> None:
    with open_store(pg_url) as writer, open_store(pg_url) as reader:
        feed = approval_changes(reader)
        assert feed is not None
        try:
            assert feed.wait(0) is True  # connected: whatever happened before is unknown
            assert feed.wait(0.2) is False  # silence
            writer.set_status(*PAIR, SkillStatus.APPROVED, actor="t", reason="r")
            assert feed.wait(30) is True
            assert feed.wait(0.2) is False  # one decision, heard once
            # And again for later decisions (a revoke among them).
            for status in (SkillStatus.REVOKED, SkillStatus.APPROVED, SkillStatus.DENIED):
                writer.set_status(*PAIR, status, actor="t", reason="r")
            assert feed.wait(30) is True
        finally:
            feed.close()
