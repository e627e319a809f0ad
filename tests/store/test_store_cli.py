"""``agbom skills ...``: output, exit codes, and concurrent use from several processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_helpers import make_digest, register

from agbom.cli import main
from agbom.store import SqliteStore

HEX = make_digest("pdf").value


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_register_pending_approve_via_cli(db_path: Path, capsys) -> None:
    with SqliteStore.open(db_path) as store:
        register(store, "pdf", make_digest("pdf"))
    code, out, err = run_cli(capsys, "skills", "pending", "--db", str(db_path), "--format", "json")
    assert code == 0, err
    pending = json.loads(out)
    assert [(p["skill_id"], p["digest"]["value"], p["status"]) for p in pending] == [
        ("pdf", HEX, "pending")
    ]

    code, out, err = run_cli(
        capsys,
        "skills",
        "approve",
        "pdf",
        "--digest",
        f"SHA-256:{HEX.upper()}",
        "--db",
        str(db_path),
        "--reason",
        "reviewed",
        "--expires",
        "30d",
        "--agent",
        "build-*",
        "--agent",
        "ci-*",
        "--tenant",
        "acme",
        "--by",
        "alice",
    )
    assert code == 0 and out == ""
    assert err.startswith(f"pdf sha256:{HEX}: pending -> approved (scope: agents=build-*,ci-* ")

    code, out, _ = run_cli(capsys, "skills", "pending", "--db", str(db_path))
    assert code == 0 and out == ""
    code, out, _ = run_cli(capsys, "skills", "list", "--db", str(db_path), "--status", "approved")
    lines = out.splitlines()
    assert lines[0].split() == [
        "SKILL_ID",
        "DIGEST",
        "STATUS",
        "DECIDED_BY",
        "EXPIRES",
        "SCOPE",
        "LAST_SEEN",
        "CAPABILITIES",
    ]
    assert lines[1].split()[:4] == ["pdf", f"sha256:{HEX}", "approved", "alice"]
    # Approved without --capability: what the registration declared is what was approved.
    assert lines[1].split()[-1] == "fs.read"

    with SqliteStore.open(db_path) as store:
        digest = make_digest("pdf")
        assert store.verdict("pdf", digest, agent_id="ci-3", tenant_id="acme").approved
        assert store.verdict("pdf", digest, agent_id="dev-1", tenant_id="acme").status == (
            "out_of_scope"
        )
        history = store.history("pdf")
    assert history[-1]["actor"] == "alice" and history[-1]["source"] == "cli"


def test_show_and_history(db_path: Path, capsys) -> None:
    with SqliteStore.open(db_path) as store:
        register(store, "pdf", make_digest("pdf"))
        store.set_status("pdf", make_digest("pdf"), "approved", actor="alice")
        store.set_status("pdf", make_digest("pdf"), "revoked", actor="bob", reason="CVE")
        register(store, "pdf", make_digest("pdf-2"))
    code, out, _ = run_cli(
        capsys, "skills", "show", "pdf", "--db", str(db_path), "--format", "json"
    )
    assert code == 0
    shown = json.loads(out)
    assert {r["status"] for r in shown["records"]} == {"revoked", "pending"}
    assert [h["to_status"] for h in shown["history"]] == [
        "pending",
        "approved",
        "revoked",
        "pending",
    ]

    code, out, _ = run_cli(capsys, "skills", "show", "pdf", "--db", str(db_path))
    assert code == 0 and out.startswith("skill pdf\n") and "approved -> revoked" in out

    code, out, _ = run_cli(
        capsys, "skills", "history", "pdf", "--digest", f"sha256:{HEX}", "--db", str(db_path)
    )
    assert code == 0
    assert [line.split()[2:5] for line in out.splitlines()[1:]] == [
        ["-", "->", "pending"],
        ["pending", "->", "approved"],
        ["approved", "->", "revoked"],
    ]

    code, out, err = run_cli(capsys, "skills", "show", "nope", "--db", str(db_path))
    assert (code, out) == (1, "")
    assert err == f"agbom: error: no skill 'nope' in {db_path}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["approve", "pdf", "--digest", "sha256:xyz"], "Invalid value for '--digest'"),
        (["approve", "pdf", "--digest", "nocolon"], "not of the form ALGORITHM:HEX"),
        (["approve", "pdf"], "Missing option '--digest'"),
        (["approve", "pdf", "--digest", f"sha256:{HEX}", "--expires", "soonish"], "--expires"),
        (["approve", "pdf", "--digest", f"sha256:{HEX}", "--expires", "2001-01-01"], "in the past"),
        (["deny", "pdf", "--digest", "md5"], "--digest"),
        (["list", "--status", "maybe"], "--status"),
        (["export", "--format", "xml"], "--format"),
        (["approve", "pdf", "--digest", f"sha256:{HEX}", "--capability", " "], "--capability"),
    ],
)
def test_usage_errors_exit_2_with_one_line(db_path: Path, capsys, args, message) -> None:
    code, out, err = run_cli(capsys, "skills", *args, "--db", str(db_path))
    assert code == 2 and out == ""
    assert err.startswith("agbom: error: ") and message in err and err.count("\n") == 1
    assert not db_path.exists() or args[0] == "list"  # nothing written for a bad decision


def test_runtime_errors_exit_1(tmp_path: Path, capsys) -> None:
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("hello\n" * 1000)
    code, out, err = run_cli(capsys, "skills", "list", "--db", str(not_a_db))
    assert (code, out) == (1, "")
    assert err == f"agbom: error: {not_a_db}: not an agbom store (not a SQLite database)\n"
    code, _, err = run_cli(capsys, "skills", "list", "--db", str(tmp_path / "no" / "x.db"))
    assert code == 1 and "does not exist" in err


def test_deny_and_revoke_ahead_of_registration(db_path: Path, capsys) -> None:
    code, _, err = run_cli(
        capsys, "skills", "deny", "evil", "--digest", f"sha256:{HEX}", "--db", str(db_path),
        "--reason", "known bad",
    )  # fmt: skip
    assert code == 0 and "unknown -> denied" in err and "not been registered" in err
    with SqliteStore.open(db_path) as store:
        register(store, "evil", make_digest("pdf"))
        assert store.verdict("evil", make_digest("pdf"), agent_id="a", tenant_id=None).status == (
            "denied"
        )


def test_approve_ahead_with_capability(db_path: Path, capsys) -> None:
    digest = f"sha256:{HEX}"
    code, out, err = run_cli(
        capsys,
        "skills",
        "approve",
        "runner",
        "--digest",
        digest,
        "--db",
        str(db_path),
        "--capability",
        "process.execute",
        "--capability",
        "fs.read",
        "--by",
        "alice",
        "--reason",
        "reviewed",
    )
    assert code == 0 and out == ""
    assert "capabilities: process.execute, fs.read)" in err and "not been registered" in err
    assert "approved with no capabilities" not in err
    with SqliteStore.open(db_path) as store:
        # The agent declares something else: the approval keeps what was approved.
        register(store, "runner", make_digest("pdf"), declared_capabilities=["net.http"])
    code, out, _ = run_cli(
        capsys, "skills", "show", "runner", "--db", str(db_path), "--format", "json"
    )
    assert code == 0
    assert json.loads(out)["records"][0]["declared_capabilities"] == ["process.execute", "fs.read"]
    code, out, _ = run_cli(capsys, "skills", "show", "runner", "--db", str(db_path))
    assert "capabilities  process.execute, fs.read" in out
    code, out, _ = run_cli(capsys, "skills", "list", "--db", str(db_path))
    assert out.splitlines()[1].split()[-1] == "process.execute,fs.read"

    # Without --capability, an approval ahead of registration covers none, and says so.
    code, _, err = run_cli(
        capsys, "skills", "approve", "other", "--digest", digest, "--db", str(db_path),
        "--reason", "reviewed",
    )  # fmt: skip
    assert code == 0 and "capabilities: none)" in err and "approved with no capabilities" in err
    # Re-approving with --capability replaces the list.
    code, _, err = run_cli(
        capsys,
        "skills",
        "approve",
        "runner",
        "--digest",
        digest,
        "--db",
        str(db_path),
        "--capability",
        "fs.read",
        "--reason",
        "narrowed",
    )
    assert code == 0
    with SqliteStore.open(db_path) as store:
        record = store.get_skill("runner", make_digest("pdf"))
        assert record is not None and record.declared_capabilities == ("fs.read",)


def test_digest_command(tmp_path: Path, capsys) -> None:
    from agbom.inventory.skill_digest import digest_skill_folder

    skill = tmp_path / "pdf"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: pdf\n---\nRead PDFs.\n")
    expected = digest_skill_folder(skill)
    code, out, _ = run_cli(capsys, "skills", "digest", str(skill))
    assert code == 0 and out == f"sha256:{expected.value}\n"
    code, out, _ = run_cli(capsys, "skills", "digest", str(skill), "--format", "json")
    assert code == 0 and json.loads(out)["files"][0]["path"] == "SKILL.md"
    code, out, err = run_cli(capsys, "skills", "digest", str(tmp_path / "missing"))
    assert code == 1 and out == "" and err.startswith("agbom: error: ")


WRITER = textwrap.dedent(
    """
    import os, sys
    from agbom.store import Digest, SqliteStore
    db, stop, digest_hex = sys.argv[1], sys.argv[2], sys.argv[3]
    with SqliteStore.open(db) as store:
        head = None
        i = 0
        # Keep writing until the test says every approver has finished.
        while not os.path.exists(stop) or i < 24:
            store.record_registration(
                skill_id=f"reg-{i}", digest=Digest("sha256", digest_hex), ref=None,
                declared_capabilities=[], composition={}, provenance=None,
                agent_id="writer", tenant_id=None)
            # Re-register the pairs the CLI processes are approving, racing their decisions.
            store.record_registration(
                skill_id=f"shared-{i % 12}", digest=Digest("sha256", digest_hex), ref="r",
                declared_capabilities=["x"], composition={}, provenance=None,
                agent_id="writer", tenant_id=None)
            h = f"h{i}"
            store.append_entry("sess", entry={"i": i}, entry_hash=h, previous_hash=head,
                               request_id=f"r{i}", nonce=None)
            head = h
            i += 1
    print(i)
    """
)


def test_concurrent_cli_approvals_while_another_process_writes(db_path: Path) -> None:
    with SqliteStore.open(db_path):
        pass  # create the schema once so every process starts from the same file
    stop = db_path.parent / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db_path), str(stop), HEX],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    cli = [sys.executable, "-m", "agbom", "skills"]
    approvers = []
    for batch in range(3):
        procs = [
            subprocess.Popen(
                [
                    *cli,
                    "approve",
                    f"shared-{batch * 4 + k}",
                    "--digest",
                    f"sha256:{HEX}",
                    "--db",
                    str(db_path),
                    "--by",
                    f"approver-{k}",
                    "--reason",
                    "concurrent",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in range(4)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        approvers.extend(procs)
    with SqliteStore.open(db_path) as store:
        # The writer was still running while the approvers ran (it stops only when told).
        assert writer.poll() is None
        during = len(store.chain_entries("sess"))
    stop.touch()
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    writes = int(out)
    assert writes >= during > 0

    digest = make_digest("pdf")
    with SqliteStore.open(db_path) as store:
        for i in range(12):
            record = store.get_skill(f"shared-{i}", digest)
            assert record is not None and record.status.value == "approved", i
            assert record.decided_by == f"approver-{i % 4}"
            assert [h["to_status"] for h in store.history(f"shared-{i}")][-1] == "approved"
        assert len(store.list_skills()) == writes + 12
        entries = store.chain_entries("sess")
        assert [e["i"] for e in entries] == list(range(writes))
        assert all(e["previous_hash"] == (f"h{e['i'] - 1}" if e["i"] else None) for e in entries)
