"""``agbom bundle build`` and the example policy, evaluated by a real Rego engine (rego-cpp).

The policy's verdict is checked against the store's own (``Store.verdict``) over generated
approval records: the bundle and the policy must answer what agbom itself would.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agbom.export import ExportError
from agbom.export.opa_bundle import build_bundle, build_store_bundle, bundle_data, policy_text
from agbom.store import Digest, SkillStatus, open_store
from tests.bundle.rego import BundleEngine, bundle_members
from tests.cli_process import run_agbom

REPO = Path(__file__).resolve().parents[2]
PAIR = ("acme/pdf-tools", "sha256:" + "ab" * 32)
ALLOW = "data.agbom.skill_load.allow"
VERDICT = "data.agbom.skill_load.verdict"


def _build(tmp_path: Path, db: Path, *extra: str) -> bytes:
    out = tmp_path / "bundle.tar.gz"
    done = run_agbom("bundle", "build", "-o", str(out), "--db", str(db), *extra, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "revision" in done.stderr
    return out.read_bytes()


def _skills(tmp_path: Path, *args: str) -> None:
    reason = ("--reason", "reviewed in the bundle tests")
    done = run_agbom("skills", *args, "--db", str(tmp_path / "s.db"), *reason, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_cli_bundle_holds_manifest_data_and_policy_and_the_policy_follows_approvals(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    skill, digest = PAIR
    _skills(tmp_path, "approve", skill, "--digest", digest, "--agent", "bot-*")
    body = _build(tmp_path, db, "--rules", str(REPO / "rules" / "example-bans.yaml"))

    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
        names = tar.getnames()
    assert names == [".manifest", "agbom/data.json", "agbom/skill_load.rego"]
    members = bundle_members(body)
    manifest = orjson.loads(members[".manifest"])
    assert manifest["roots"] == ["agbom"]
    assert manifest["revision"] == hashlib.sha256(members["agbom/data.json"]).hexdigest()
    data = orjson.loads(members["agbom/data.json"])
    assert data["skills"][skill][digest]["status"] == "approved"
    assert data["skills"][skill][digest]["scope"]["agents"] == ["bot-*"]
    ban_ids = {b["id"] for b in data["bans"]}
    assert {"EX-BAN-001", "EX-BAN-002", "EX-BAN-003"} <= ban_ids
    assert "EX-PATH-001" not in ban_ids  # a path rule is not a ban
    assert members["agbom/skill_load.rego"].decode() == policy_text()

    engine = BundleEngine(body)
    asked = {"skill_id": skill, "digest": digest, "agent_id": "bot-7"}
    assert engine.query(ALLOW, asked) is True
    assert engine.query(ALLOW, {**asked, "agent_id": "intruder"}) is False
    assert engine.query(VERDICT, {**asked, "agent_id": "intruder"}) == "out_of_scope"
    other = {**asked, "digest": "sha256:" + "cd" * 32}
    assert engine.query(ALLOW, other) is False
    assert engine.query(VERDICT, other) == "unknown"

    # Reproducible: the same store and packs give the same bytes.
    again = _build(tmp_path, db, "--rules", str(REPO / "rules" / "example-bans.yaml"))
    assert again == body

    _skills(tmp_path, "revoke", skill, "--digest", digest)
    revoked = _build(tmp_path, db, "--rules", str(REPO / "rules" / "example-bans.yaml"))
    assert orjson.loads(bundle_members(revoked)[".manifest"])["revision"] != manifest["revision"]
    engine = BundleEngine(revoked)
    assert engine.query(ALLOW, asked) is False
    assert engine.query(VERDICT, asked) == "revoked"


def test_docs_show_the_shipped_policy_verbatim() -> None:
    assert policy_text().rstrip() in (REPO / "docs" / "opa.md").read_text(encoding="utf-8")


def test_pending_pairs_stay_out_of_the_bundle(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        store.record_registration(
            skill_id="agent/registered",
            digest=Digest.parse(PAIR[1]),
            ref=None,
            declared_capabilities=[],
            composition={},
            provenance=None,
            agent_id="a1",
            tenant_id=None,
        )
        data = bundle_data(store)
    assert data["skills"] == {}


def test_cli_refuses_a_missing_store_and_a_folder_as_output(tmp_path: Path) -> None:
    missing = run_agbom(
        "bundle", "build", "-o", str(tmp_path / "b.tgz"), "--db", str(tmp_path / "no.db"),
        cwd=tmp_path,
    )  # fmt: skip
    assert missing.returncode != 0
    assert "no store there" in missing.stderr and "Traceback" not in missing.stderr
    assert not (tmp_path / "b.tgz").exists()
    with open_store(tmp_path / "s.db"):
        pass
    folder = run_agbom(
        "bundle", "build", "-o", str(tmp_path), "--db", str(tmp_path / "s.db"), cwd=tmp_path
    )
    assert folder.returncode == 2, folder.stderr
    assert "must name a file" in folder.stderr


def test_data_over_the_bound_is_refused_with_a_message(tmp_path: Path) -> None:
    data = {"format": 1, "skills": {f"s{i}": {} for i in range(1000)}, "servers": {}, "bans": []}
    assert build_bundle(data).data_bytes > 5000
    with pytest.raises(ExportError, match="over the 5,000 byte limit"):
        build_bundle(data, max_data_bytes=5000)


# -- the policy against the store's own verdict ----------------------------------------------

NOW = datetime.now(UTC)
_counter = itertools.count()
_patterns = st.lists(st.sampled_from(["bot-*", "a?c", "x/*", "bot-1", "*"]), max_size=2)
_who = st.one_of(st.none(), st.sampled_from(["bot-1", "bot-22", "abc", "x/y", "other"]))


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    with open_store(tmp_path_factory.mktemp("verdicts") / "s.db") as store:
        yield store


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    status=st.sampled_from(["approved", "denied", "revoked", "pending", "never"]),
    expiry=st.sampled_from([None, -3600, 3600]),
    agents=_patterns,
    tenants=_patterns,
    agent_id=_who,
    tenant_id=_who,
)
# Each verdict at least once, whatever the draw.
@example("approved", -3600, [], [], None, None)  # expired
@example("approved", 3600, ["bot-*"], [], "bot-22", None)  # approved, scoped, not yet expired
@example("approved", None, ["bot-*"], [], None, None)  # scoped, caller says nothing
@example("approved", None, [], ["x/*"], "bot-1", "x/y")  # '*' crosses '/' as fnmatch's does
@example("denied", None, [], [], None, None)
@example("revoked", None, [], [], None, None)
@example("pending", None, [], [], None, None)
@example("never", None, [], [], None, None)
def test_policy_verdict_is_the_stores_verdict(
    shared_store,  # type: ignore[no-untyped-def]
    status: str,
    expiry: int | None,
    agents: list[str],
    tenants: list[str],
    agent_id: str | None,
    tenant_id: str | None,
) -> None:
    store = shared_store
    skill = f"gen/skill-{next(_counter)}"
    digest = Digest.parse(PAIR[1])
    if status == "pending":
        store.record_registration(
            skill_id=skill, digest=digest, ref=None, declared_capabilities=[], composition={},
            provenance=None, agent_id="a", tenant_id=None,
        )  # fmt: skip
    elif status != "never":
        store.set_status(
            skill,
            digest,
            SkillStatus(status),
            actor="tester",
            expires_at=None if expiry is None else NOW + timedelta(seconds=expiry),
            scope_agents=agents,
            scope_tenants=tenants,
            now=NOW - timedelta(hours=2),
        )
    expected = store.verdict(skill, digest, agent_id=agent_id, tenant_id=tenant_id)
    engine = BundleEngine(build_store_bundle(store).body)
    asked: dict[str, str] = {"skill_id": skill, "digest": str(digest)}
    if agent_id is not None:
        asked["agent_id"] = agent_id
    if tenant_id is not None:
        asked["tenant_id"] = tenant_id
    # A pending pair is no decision: the bundle leaves it out, so the policy knows nothing.
    want = "unknown" if expected.status == "pending" else expected.status
    assert engine.query(VERDICT, asked) == want
    assert engine.query(ALLOW, asked) is expected.approved


def test_an_approval_requiring_a_signer_is_denied_by_the_policy(tmp_path: Path) -> None:
    """The policy cannot verify a skill's signature, so a pair approved with
    ``--require-signer`` is not allowed by it (the Guardian verifies; the policy fails closed)."""
    with open_store(tmp_path / "agbom.db") as store:
        digest = Digest.parse(PAIR[1])
        store.set_status("signed/skill", digest, SkillStatus.APPROVED, actor="alice",
                         required_signer="skills@publisher.example")  # fmt: skip
        store.set_status("plain/skill", digest, SkillStatus.APPROVED, actor="alice")
        bundle = build_store_bundle(store).body
    engine = BundleEngine(bundle)
    signed = {"skill_id": "signed/skill", "digest": str(digest)}
    assert engine.query(VERDICT, signed) == "signer_required"
    assert engine.query(ALLOW, signed) is False
    plain = {"skill_id": "plain/skill", "digest": str(digest)}
    assert engine.query(ALLOW, plain) is True
