"""Skill registrations, decisions and verdicts on a real SQLite file."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from store_helpers import make_digest, register

from agbom.store import Digest, SkillStatus, SqliteStore, StoreError, Verdict

HEX = "ab" * 32


class TestDigest:
    @pytest.mark.parametrize("alg", ["sha256", "SHA-256", "sha-256", "Sha_256"])
    def test_algorithm_spellings_normalize(self, alg: str) -> None:
        digest = Digest.parse(f"{alg}:{HEX.upper()}")
        assert digest.algorithm == "sha256"
        assert digest.value == HEX
        assert str(digest) == f"sha256:{HEX}"

    def test_wire_round_trip(self) -> None:
        digest = Digest.from_wire({"algorithm": "SHA-256", "value": HEX})
        assert digest.to_wire() == {"algorithm": "sha256", "value": HEX}
        assert Digest.from_wire(digest.to_wire()) == digest

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (HEX, "not of the form"),
            ("sha256:", "not of the form"),
            ("sha256:xyz", "hexadecimal"),
            ("sha256:abcd", "64 hex digits"),
            ("sha 256:" + HEX, "not a valid name"),
        ],
    )
    def test_bad_command_line_digest(self, text: str, message: str) -> None:
        with pytest.raises(StoreError, match=message):
            Digest.parse(text)

    @pytest.mark.parametrize("raw", [None, "sha256:ab", {"algorithm": "sha256"}, {"value": HEX}])
    def test_bad_wire_digest(self, raw: object) -> None:
        with pytest.raises(StoreError):
            Digest.from_wire(raw)


def test_register_pending_then_approve(store: SqliteStore) -> None:
    digest = make_digest("pdf-v1")
    record = register(store, "pdf", digest)
    assert record.status is SkillStatus.PENDING
    assert record.first_seen is not None and record.first_seen == record.last_seen
    assert record.declared_capabilities == ("fs.read",)
    assert record.provenance == {"origin": "system", "source_id": "marketplace"}
    assert store.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).status == "pending"

    store.set_status("pdf", digest, SkillStatus.APPROVED, actor="alice", reason="reviewed")
    verdict = store.verdict("pdf", digest, agent_id="agent-1", tenant_id=None)
    assert verdict.approved
    assert verdict.record is not None and verdict.record.decided_by == "alice"
    assert [h["to_status"] for h in store.history("pdf")] == ["pending", "approved"]


def test_known_pair_only_moves_last_seen(store: SqliteStore) -> None:
    digest = make_digest("pdf-v1")
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    register(store, "pdf", digest, now=t0)
    store.set_status("pdf", digest, "approved", actor="alice")
    again = register(
        store, "pdf", digest, ref="elsewhere", agent_id="agent-2", now=t0 + timedelta(days=1)
    )
    assert again.status is SkillStatus.APPROVED
    assert again.first_seen == t0
    assert again.last_seen == t0 + timedelta(days=1)
    assert again.ref == "file://skills/pdf"
    assert again.registered_by_agent == "agent-1"
    assert len(store.history("pdf")) == 2  # registration did not add a status change


def test_unknown_pair_and_changed_digest(store: SqliteStore) -> None:
    old, new = make_digest("v1"), make_digest("v2")
    assert store.verdict("pdf", old, agent_id="a", tenant_id=None) == Verdict("unknown", None)
    register(store, "pdf", old)
    store.set_status("pdf", old, "approved", actor="alice")
    register(store, "pdf", new)
    assert store.verdict("pdf", new, agent_id="agent-1", tenant_id=None).status == "pending"
    assert store.approved_digests("pdf") == [old]
    assert [r.digest for r in store.skill_records("pdf")] == sorted(
        [old, new], key=lambda d: d.value
    )


def test_approve_ahead_of_registration_then_register(store: SqliteStore) -> None:
    digest = make_digest("ahead")
    store.set_status("pdf", digest, "approved", actor="gitops")
    record = store.get_skill("pdf", digest)
    assert record is not None and record.first_seen is None and record.ref is None
    registered = register(store, "pdf", digest, agent_id="agent-7")
    assert registered.status is SkillStatus.APPROVED
    assert registered.ref == "file://skills/pdf"
    assert registered.registered_by_agent == "agent-7"
    assert store.verdict("pdf", digest, agent_id="agent-7", tenant_id=None).approved
    # The approval named no capabilities, so the agent's declaration does not become approved.
    assert registered.declared_capabilities == ()


def test_revoke_is_seen_by_a_long_lived_connection_immediately(db_path) -> None:
    digest = make_digest("pdf")
    with SqliteStore.open(db_path) as server, SqliteStore.open(db_path) as cli:
        register(server, "pdf", digest)
        assert not server.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).approved
        cli.set_status("pdf", digest, "approved", actor="alice")
        assert server.verdict("pdf", digest, agent_id="agent-1", tenant_id=None).approved
        cli.set_status("pdf", digest, "revoked", actor="alice", reason="CVE")
        verdict = server.verdict("pdf", digest, agent_id="agent-1", tenant_id=None)
        assert verdict.status == "revoked" and not verdict.approved
        assert server.approved_digests("pdf") == []


def test_expiry(store: SqliteStore) -> None:
    digest = make_digest("pdf")
    now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    expires = now + timedelta(days=30)
    store.set_status("pdf", digest, "approved", actor="alice", expires_at=expires, now=now)
    assert store.verdict("pdf", digest, agent_id="a", tenant_id=None, now=now).approved
    just_before = expires - timedelta(microseconds=1)
    assert store.verdict("pdf", digest, agent_id="a", tenant_id=None, now=just_before).approved
    at_expiry = store.verdict("pdf", digest, agent_id="a", tenant_id=None, now=expires)
    assert at_expiry.status == "expired" and not at_expiry.approved
    assert store.approved_digests("pdf", now=now) == [digest]
    assert store.approved_digests("pdf", now=expires) == []
    # Expiry is evaluated at lookup time, with the real clock when ``now`` is omitted.
    assert store.verdict("pdf", digest, agent_id="a", tenant_id=None).status == "expired"


@pytest.mark.parametrize(
    ("agents", "tenants", "agent_id", "tenant_id", "expected"),
    [
        ((), (), "anyone", None, "approved"),
        (("build-*",), (), "build-42", None, "approved"),
        (("build-*",), (), "deploy-1", None, "out_of_scope"),
        (("build-*",), (), None, None, "out_of_scope"),
        (("build-*", "ci-?"), (), "ci-7", None, "approved"),
        (("Build-*",), (), "build-1", None, "out_of_scope"),  # case-sensitive
        ((), ("acme",), "x", "acme", "approved"),
        ((), ("acme",), "x", "globex", "out_of_scope"),
        ((), ("acme",), "x", None, "out_of_scope"),
        (("build-*",), ("acme-*",), "build-1", "acme-eu", "approved"),
        (("build-*",), ("acme-*",), "build-1", "globex", "out_of_scope"),
    ],
)
def test_scope_patterns(store, agents, tenants, agent_id, tenant_id, expected) -> None:
    digest = make_digest("pdf")
    store.set_status(
        "pdf", digest, "approved", actor="alice", scope_agents=agents, scope_tenants=tenants
    )
    verdict = store.verdict("pdf", digest, agent_id=agent_id, tenant_id=tenant_id)
    assert verdict.status == expected
    assert verdict.approved is (expected == "approved")


def test_denied_and_revoked_are_not_approved(store: SqliteStore) -> None:
    for status in ("denied", "revoked", "pending"):
        digest = make_digest(status)
        store.set_status("s", digest, status, actor="bob")
        assert store.verdict("s", digest, agent_id="a", tenant_id=None).status == status
    assert {str(r.status) for r in store.list_skills()} == {"denied", "revoked", "pending"}
    assert [str(r.status) for r in store.list_skills("denied")] == ["denied"]


def test_history_is_append_only(store: SqliteStore, db_path) -> None:
    digest = make_digest("pdf")
    register(store, "pdf", digest)
    store.set_status("pdf", digest, "approved", actor="alice", scope_agents=["a*"])
    store.set_status("pdf", digest, "revoked", actor="carol", reason="leaked key")
    history = store.history("pdf", digest)
    assert [(h["from_status"], h["to_status"], h["actor"]) for h in history] == [
        (None, "pending", "agent-1"),
        ("pending", "approved", "alice"),
        ("approved", "revoked", "carol"),
    ]
    assert history[1]["scope"] == {"agents": ["a*"], "tenants": []}
    raw = sqlite3.connect(db_path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute("UPDATE skill_history SET actor = 'mallory'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute("DELETE FROM skill_history")
    finally:
        raw.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"status": "maybe"}, "unknown status"),
        ({"actor": ""}, "actor"),
        ({"reason": "x" * 5000}, "reason"),
        ({"scope_agents": "build-*"}, "list of glob"),
        ({"scope_agents": [""]}, "non-empty"),
    ],
)
def test_set_status_rejects_bad_input(store: SqliteStore, kwargs, message) -> None:
    args = {"status": "approved", "actor": "alice", **kwargs}
    status = args.pop("status")
    with pytest.raises(StoreError, match=message):
        store.set_status("pdf", make_digest("x"), status, **args)
    assert store.list_skills() == []


def test_registration_rejects_bad_input(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match="skill_id"):
        register(store, "", make_digest("x"))
    with pytest.raises(StoreError, match="declared_capabilities"):
        register(store, "pdf", make_digest("x"), declared_capabilities="fs.read")
    with pytest.raises(StoreError, match="Digest"):
        store.verdict("pdf", "sha256:" + HEX, agent_id=None, tenant_id=None)  # type: ignore[arg-type]


def test_record_to_json_is_json_ready(store: SqliteStore) -> None:
    import orjson

    digest = make_digest("pdf")
    register(store, "pdf", digest)
    record = store.set_status(
        "pdf",
        digest,
        "approved",
        actor="alice",
        expires_at=datetime(2030, 1, 1, tzinfo=UTC),
        scope_tenants=["acme"],
    )
    data = orjson.loads(orjson.dumps(record.to_json()))
    assert data["digest"] == {"algorithm": "sha256", "value": digest.value}
    assert data["expires_at"] == "2030-01-01T00:00:00Z"
    assert data["scope"] == {"agents": [], "tenants": ["acme"]}
    assert data["status"] == "approved"


def test_closed_store_raises(db_path) -> None:
    store = SqliteStore.open(db_path)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list_skills()


# -- capabilities an approval covers -----------------------------------------------------------


def test_approve_ahead_with_capabilities_sets_exactly_them(store: SqliteStore) -> None:
    digest = make_digest("caps-ahead")
    record = store.set_status(
        "runner", digest, "approved", actor="gitops", capabilities=["process.execute"]
    )
    assert record.declared_capabilities == ("process.execute",)
    # The agent declares something else at first registration: the approval stays as decided.
    registered = register(store, "runner", digest, declared_capabilities=["net.http", "fs.read"])
    assert registered.declared_capabilities == ("process.execute",)
    assert registered.first_seen is not None and registered.ref == "file://skills/runner"


def test_registration_does_not_widen_a_decided_record(store: SqliteStore) -> None:
    digest = make_digest("decided")
    register(store, "pdf", digest, declared_capabilities=["fs.read"])
    # Approving a pending registration with capabilities None approves what it declared.
    approved = store.set_status("pdf", digest, "approved", actor="alice")
    assert approved.declared_capabilities == ("fs.read",)
    again = register(store, "pdf", digest, declared_capabilities=["fs.read", "process.execute"])
    assert again.declared_capabilities == ("fs.read",)
    for status in ("denied", "revoked"):
        other = make_digest(status)
        store.set_status("pdf", other, status, actor="bob")
        after = register(store, "pdf", other, declared_capabilities=["process.execute"])
        assert after.status == status and after.declared_capabilities == ()


def test_pending_ahead_of_registration_takes_the_declared_capabilities(
    store: SqliteStore,
) -> None:
    digest = make_digest("pending-ahead")
    store.set_status("pdf", digest, "pending", actor="ops")
    registered = register(store, "pdf", digest, declared_capabilities=["fs.read"])
    assert registered.declared_capabilities == ("fs.read",)


def test_decision_with_capabilities_replaces_them_and_none_keeps_them(
    store: SqliteStore,
) -> None:
    digest = make_digest("replace")
    register(store, "pdf", digest, declared_capabilities=["fs.read", "net.http"])
    narrowed = store.set_status("pdf", digest, "approved", actor="a", capabilities=["fs.read"])
    assert narrowed.declared_capabilities == ("fs.read",)
    revoked = store.set_status("pdf", digest, "revoked", actor="a")
    assert revoked.declared_capabilities == ("fs.read",)
    cleared = store.set_status("pdf", digest, "approved", actor="a", capabilities=[])
    assert cleared.declared_capabilities == ()


@pytest.mark.parametrize(
    ("capabilities", "message"),
    [
        ("process.execute", "list of strings"),
        (["fs.read", 3], "list of strings"),
        (["x"] * 1025, "more than 1024"),
    ],
)
def test_set_status_rejects_bad_capabilities(store: SqliteStore, capabilities, message) -> None:
    digest = make_digest("bad-caps")
    with pytest.raises(StoreError, match=message):
        store.set_status("pdf", digest, "approved", actor="a", capabilities=capabilities)
    assert store.get_skill("pdf", digest) is None


def test_history_records_the_capabilities_each_decision_covered(store) -> None:
    digest = make_digest("caps-history")
    register(store, "caps", digest, declared_capabilities=["fs.read", "net.fetch"])
    store.set_status("caps", digest, "approved", actor="alice", capabilities=["fs.read"])
    store.set_status("caps", digest, "revoked", actor="bob", reason="incident")
    rows = store.history("caps", digest)
    assert [(r["to_status"], r["capabilities"]) for r in rows] == [
        ("pending", ["fs.read", "net.fetch"]),  # what the agent declared
        ("approved", ["fs.read"]),  # what the approval narrowed it to
        ("revoked", ["fs.read"]),  # a revocation keeps what the record held
    ]
