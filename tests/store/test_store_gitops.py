"""Approvals as a reviewed file: export, import, round trip, validation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from store_helpers import make_digest, register

from agbom.cli import main
from agbom.store import SkillStatus, SqliteStore, StoreError

T0 = datetime(2025, 5, 1, 8, 30, tzinfo=UTC)


def populate(store: SqliteStore) -> None:
    """A store with every kind of decision, plus a pending pair that must not be exported."""
    register(store, "pdf", make_digest("pdf-1"), now=T0)
    store.set_status(
        "pdf",
        make_digest("pdf-1"),
        "approved",
        actor="alice",
        reason="reviewed in PR #12: reads files only",
        expires_at=T0 + timedelta(days=90),
        scope_agents=["build-*", "ci-?"],
        scope_tenants=["acme"],
        now=T0,
    )
    store.set_status(
        "web", make_digest("web-1"), "denied", actor="bob", reason="exfil: posts to pastebin"
    )
    store.set_status("web", make_digest("web-0"), "approved", actor="bob", now=T0)
    store.set_status("web", make_digest("web-0"), "revoked", actor="carol", reason="CVE-2025-1")
    store.set_status("zeta", make_digest("z"), "approved", actor="dana", reason="ünïcode: ok\nyes")
    register(store, "new", make_digest("new"))  # pending: undecided, not exported


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_import_export_is_identical(tmp_path: Path, capsys, fmt: str) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with SqliteStore.open(source) as store:
        populate(store)
    code, first, err = run_cli(capsys, "skills", "export", "--db", str(source), "--format", fmt)
    assert code == 0, err
    approvals_file = tmp_path / f"approvals.{fmt}"
    approvals_file.write_text(first)

    code, _, err = run_cli(capsys, "skills", "import", str(approvals_file), "--db", str(target))
    assert code == 0, err
    assert "4 of 4 entries changed" in err
    code, second, err = run_cli(capsys, "skills", "export", "--db", str(target), "--format", fmt)
    assert code == 0, err
    assert second == first

    # Re-importing the same file changes nothing and adds no history.
    with SqliteStore.open(target) as store:
        before = store.history("pdf")
    code, _, err = run_cli(capsys, "skills", "import", str(approvals_file), "--db", str(target))
    assert code == 0 and "0 of 4 entries changed" in err
    with SqliteStore.open(target) as store:
        assert store.history("pdf") == before
        pair = make_digest("pdf-1")
        verdict = store.verdict("pdf", pair, agent_id="ci-1", tenant_id="acme", now=T0)
        assert verdict.approved
        assert store.get_skill("new", make_digest("new")) is None


def test_export_content_and_order(tmp_path: Path, capsys) -> None:
    db = tmp_path / "s.db"
    with SqliteStore.open(db) as store:
        populate(store)
    out_file = tmp_path / "out" / "approvals.yaml"
    code, out, err = run_cli(capsys, "skills", "export", "--db", str(db), "-o", str(out_file))
    assert code == 0 and out == "" and "wrote 4 decisions" in err
    doc = yaml.safe_load(out_file.read_text())
    assert doc["format"] == "agbom-skill-approvals" and doc["version"] == 1
    keys = [(a["skill_id"], a["digest"]) for a in doc["approvals"]]
    assert keys == sorted(keys)
    statuses = {(a["skill_id"], a["digest"]): a["status"] for a in doc["approvals"]}
    assert statuses == {
        ("pdf", str(make_digest("pdf-1"))): "approved",
        ("web", str(make_digest("web-0"))): "revoked",
        ("web", str(make_digest("web-1"))): "denied",
        ("zeta", str(make_digest("z"))): "approved",
    }
    pdf = next(a for a in doc["approvals"] if a["skill_id"] == "pdf")
    assert pdf == {
        "skill_id": "pdf",
        "digest": str(make_digest("pdf-1")),
        "status": "approved",
        "decided_by": "alice",
        "decided_at": "2025-05-01T08:30:00Z",
        "reason": "reviewed in PR #12: reads files only",
        "expires_at": "2025-07-30T08:30:00Z",
        "scope": {"agents": ["build-*", "ci-?"], "tenants": ["acme"]},
        "ref": "file://skills/pdf",
        # Approved while pending: the approval covers what the registration declared.
        "capabilities": ["fs.read"],
    }
    # An entry whose record holds no capabilities has no capabilities key.
    assert all("capabilities" not in a for a in doc["approvals"] if a["skill_id"] != "pdf")


def test_hand_written_file_with_wire_digest_and_spellings(store: SqliteStore) -> None:
    value = make_digest("x").value
    doc = {
        "approvals": [
            {"skill_id": "a", "digest": f"SHA-256:{value.upper()}", "status": "approved"},
            {
                "skill_id": "b",
                "digest": {"algorithm": "sha-256", "value": value},
                "status": "denied",
                "expires_at": datetime(2030, 1, 1),  # YAML parses bare timestamps to datetime
            },
        ]
    }
    assert store.import_approvals(doc, actor="ci-bot") == 2
    a = store.get_skill("a", make_digest("x"))
    assert a is not None and a.status is SkillStatus.APPROVED and a.decided_by == "ci-bot"
    b = store.get_skill("b", make_digest("x"))
    assert b is not None and b.expires_at == datetime(2030, 1, 1, tzinfo=UTC)
    history = store.history("a")
    assert history[-1]["actor"] == "ci-bot" and history[-1]["source"] == "import"


@pytest.mark.parametrize(
    ("approvals", "message"),
    [
        # fmt: off
        ([{"skill_id": "a", "digest": "sha256:zz", "status": "approved"}], r"approvals\[1\]"),
        ([{"skill_id": "a", "digest": "sha256:" + "0" * 64, "status": "pending"}], "status"),
        (
            [{"skill_id": "a", "digest": "sha256:" + "0" * 64, "status": "approved", "by": "x"}],
            "'by'",
        ),  # noqa: E501
        ([{"skill_id": "", "digest": "sha256:" + "0" * 64, "status": "approved"}], "skill_id"),
        (
            [{"skill_id": "good", "digest": str(make_digest("good")), "status": "denied"}],
            "more than once",
        ),  # noqa: E501
        # fmt: on
        (
            [
                {
                    "skill_id": "a",
                    "digest": "sha256:" + "1" * 64,
                    "status": "approved",
                    "scope": {"agents": "x"},
                }
            ],
            "scope.agents",
        ),
        (
            [
                {
                    "skill_id": "a",
                    "digest": "sha256:" + "1" * 64,
                    "status": "approved",
                    "expires_at": "soon",
                }
            ],
            "expires_at",
        ),
    ],
)
def test_invalid_file_imports_nothing(store: SqliteStore, approvals, message) -> None:
    good = {"skill_id": "good", "digest": str(make_digest("good")), "status": "approved"}
    entries = [good, *approvals]
    with pytest.raises(StoreError, match=message):
        store.import_approvals({"approvals": entries}, actor="ci")
    assert store.list_skills() == []  # all or nothing: the good entry was not applied


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "object"),
        ({"approvals": {}}, "must be a list"),
        ({"approvals": [], "extra": 1}, "unknown top-level key 'extra'"),
        ({"approvals": [], "version": 2}, "version 2 is not supported"),
        ({"approvals": [], "format": "other"}, "format"),
    ],
)
def test_invalid_documents(store: SqliteStore, doc, message) -> None:
    with pytest.raises(StoreError, match=message):
        store.import_approvals(doc, actor="ci")


def test_import_cli_refuses_yaml_aliases_and_bad_syntax(tmp_path: Path, capsys) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &x [1, 2]\nb: [*x, *x]\napprovals: []\n")
    code, out, err = run_cli(capsys, "skills", "import", str(bomb), "--db", str(tmp_path / "s.db"))
    assert code == 1 and out == ""
    assert err.startswith("agbom: error: ") and "not allowed" in err and err.count("\n") == 1
    broken = tmp_path / "broken.json"
    broken.write_text('{"approvals": [}')
    code, _, err = run_cli(capsys, "skills", "import", str(broken), "--db", str(tmp_path / "s.db"))
    assert code == 1 and "not valid JSON" in err
    code, _, err = run_cli(
        capsys, "skills", "import", str(tmp_path / "missing.yaml"), "--db", str(tmp_path / "s.db")
    )
    assert code == 1 and "no such file" in err


def test_capabilities_round_trip_and_replace_on_import(tmp_path: Path, capsys) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    runner, plain = make_digest("runner"), make_digest("plain")
    with SqliteStore.open(source) as store:
        store.set_status(
            "runner",
            runner,
            "approved",
            actor="alice",
            now=T0,
            capabilities=["process.execute", "fs.read"],
        )
        store.set_status("plain", plain, "approved", actor="alice", now=T0)
        doc = store.export_approvals()
    entries = {a["skill_id"]: a for a in doc["approvals"]}
    assert entries["runner"]["capabilities"] == ["process.execute", "fs.read"]
    assert "capabilities" not in entries["plain"]

    code, first, err = run_cli(capsys, "skills", "export", "--db", str(source))
    assert code == 0, err
    approvals_file = tmp_path / "approvals.yaml"
    approvals_file.write_text(first)
    code, _, err = run_cli(capsys, "skills", "import", str(approvals_file), "--db", str(target))
    assert code == 0 and "2 of 2 entries changed" in err
    code, second, _ = run_cli(capsys, "skills", "export", "--db", str(target))
    assert second == first
    code, _, err = run_cli(capsys, "skills", "import", str(approvals_file), "--db", str(target))
    assert code == 0 and "0 of 2 entries changed" in err

    with SqliteStore.open(target) as store:
        record = store.get_skill("runner", runner)
        assert record is not None and record.declared_capabilities == ("process.execute", "fs.read")
        # A registration that declared more before the reviewed file arrived does not keep it:
        # the file's entry (no capabilities) is what was reviewed.
        extra = make_digest("extra")
        register(store, "extra", extra, declared_capabilities=["process.execute"])
        entry = {
            "skill_id": "extra",
            "digest": str(extra),
            "status": "approved",
            "decided_by": "alice",
            "decided_at": "2025-05-01T08:30:00Z",
        }
        assert store.import_approvals({"approvals": [entry]}, actor="ci") == 1
        imported = store.get_skill("extra", extra)
        assert imported is not None and imported.declared_capabilities == ()
        # Changing only the capabilities of an entry is a change, not a skipped duplicate.
        entry["capabilities"] = ["fs.read"]
        assert store.import_approvals({"approvals": [entry]}, actor="ci") == 1
        assert store.import_approvals({"approvals": [entry]}, actor="ci") == 0


@pytest.mark.parametrize("capabilities", ["fs.read", [1], {"a": 1}])
def test_import_rejects_bad_capabilities(store: SqliteStore, capabilities) -> None:
    entry = {
        "skill_id": "a",
        "digest": "sha256:" + "1" * 64,
        "status": "approved",
        "capabilities": capabilities,
    }
    with pytest.raises(StoreError, match=r"approvals\[0\]: capabilities"):
        store.import_approvals({"approvals": [entry]}, actor="ci")
    assert store.list_skills() == []
