"""``agbom store migrate`` carries the heads the Guardian signed at sessionEnd to PostgreSQL,
and a seal the target already holds stands."""

from __future__ import annotations

from pathlib import Path

from agbom.cli import main
from agbom.evidence import KeySet, SigningKey, sign_head, verify_head
from agbom.store import open_store


def test_signed_heads_are_copied_once(tmp_path: Path, pg_url: str, capsys) -> None:
    key = SigningKey.generate("ML-DSA-65")
    heads = {
        sid: sign_head(sid, chain_hash=f"{n:064x}", entry_count=n, last_entry_id=str(n), key=key)
        for n, sid in enumerate(("s-1", "s-2"), start=1)
    }
    db = tmp_path / "agbom.db"
    with open_store(db) as store:
        for sid, head in heads.items():
            store.save_signed_head(sid, head)
        store.save_response_key("s-1", key.key_id)
    with open_store(pg_url) as target:  # s-2 is already sealed there, otherwise
        other = sign_head("s-2", chain_hash="f" * 64, entry_count=9, last_entry_id="9", key=key)
        target.save_signed_head("s-2", other)
    assert main(["store", "migrate", "--from", str(db), "--to", pg_url]) == 0
    capsys.readouterr()
    with open_store(pg_url) as target:
        assert target.signed_head("s-1") == heads["s-1"]
        assert verify_head(target.signed_head("s-1"), KeySet([key.public]))
        assert target.signed_head("s-2") == other
        assert target.response_key("s-1") == key.key_id
    assert main(["store", "migrate", "--from", str(db), "--to", pg_url]) == 0  # idempotent
