"""A clean venv holding only the wheel, in a folder with no checkout, runs every command.

The venv is made from the base interpreter (none of this test venv's packages), the wheel is
installed with its dependencies, and each command runs as a user would: in a temporary folder
holding a copy of the samples and nothing else of the repository, with its own HOME. Every
file the commands need (packs, schemas, templates, page assets, the Rego policy, the OpenAPI
document) must come from the installed package. The last test checks that every command
`agbom --help` lists was run here, so a new command is added to this file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import agbom
from tests.pgcluster import PgCluster
from tests.release.release_tools import (
    REPO,
    clean_env,
    copy_samples,
    free_port,
    wait_healthy,
)

SESSION = "7f1c2a9e-5b3d-4e8f-9a61-0c2d4e6f8a10"  # samples/sessions/coding-agent.jsonl
RAN: set[str] = set()


class User:
    """Runs the venv's ``agbom`` in ``home``/work, as a user without the checkout would."""

    def __init__(self, venv: Path, home: Path) -> None:
        self.venv = venv
        self.home = home
        self.work = home / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.env = clean_env(home, venv / "bin")

    def run(
        self, *args: str, code: int | tuple[int, ...] = 0, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["agbom", *args],
            cwd=self.work,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        codes = code if isinstance(code, tuple) else (code,)
        assert done.returncode in codes, (
            args,
            done.returncode,
            done.stdout[-3000:],
            done.stderr[-3000:],
        )
        assert "Traceback" not in done.stderr, done.stderr
        RAN.add(args[0])
        return done


@pytest.fixture(scope="module")
def user(wheel_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[User]:
    person = User(wheel_venv, tmp_path_factory.mktemp("wheel-user"))
    copy_samples(person.work)
    yield person


def test_the_venv_imports_agbom_from_the_installed_wheel(user: User) -> None:
    done = subprocess.run(
        ["python", "-c", "import agbom, sys; print(agbom.__file__); print(sys.prefix)"],
        cwd=user.work,
        env=user.env,
        capture_output=True,
        text=True,
        check=True,
    )
    module, prefix = done.stdout.split()
    assert Path(module).is_relative_to(user.venv / "lib") and Path(prefix) == user.venv
    assert user.run("--version").stdout.strip() == f"agbom {agbom.__version__}"


def test_inventory_commands(user: User) -> None:
    table = user.run("scan", "samples")
    assert "mcp_server" in table.stdout and "AGB-" in table.stdout
    user.run("scan", "samples", "-o", "report.json")
    report = json.loads((user.work / "report.json").read_text())
    assert report["summary"]["components"] >= 50 and report["summary"]["error"] == 0
    # Each export validates against the CycloneDX and SPDX schemas the wheel ships.
    user.run("scan", "samples", "-o", "bom.cdx.json")
    assert json.loads((user.work / "bom.cdx.json").read_text())["specVersion"] == "1.6"
    user.run("scan", "samples", "-o", "bom.spdx.json")
    user.run("scan", "samples", "-o", "scan.sarif")
    assert json.loads((user.work / "scan.sarif").read_text())["version"] == "2.1.0"
    user.run("scan", "samples", "--fail-on", "high", code=1)
    user.run("lock", "samples", "-o", "agbom.lock.json")
    user.run("check", "report.json", "--locked", "agbom.lock.json")
    user.run("check", "samples/agboms/coding-agent.json", "-f", "sarif", "-o", "check.sarif")
    user.run("explain", "samples/agboms/coding-agent.json")
    user.run("diff", "samples/agboms/coding-agent.json", "samples/agboms/multi-agent.json", code=1)
    user.run(
        "export", "samples/agboms/coding-agent.json", "--spec-version", "1.7", "-o", "x.cdx.xml"
    )
    assert "<bom" in (user.work / "x.cdx.xml").read_text()
    assert (
        "flowchart" in user.run("graph", "samples/agboms/coding-agent.json", "-f", "mermaid").stdout
    )


def test_rules_commands_read_the_packaged_packs(user: User) -> None:
    site = next((user.venv / "lib").glob("python3*/site-packages"))
    runtime = site / "agbom" / "rules" / "packs" / "runtime"
    suite = user.run("rules", "test", str(runtime))  # the runtime pack's own suite
    # The same cases pass from the wheel as from the checkout (every one of them: none failed).
    packs = REPO / "agbom" / "rules" / "packs" / "runtime"
    checkout = subprocess.run(
        [sys.executable, "-P", "-m", "agbom", "rules", "test", str(packs)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    counted = re.search(r"\b(\d+) passed, 0 failed", checkout.stdout)
    assert counted and int(counted.group(1)) > 0, checkout.stdout
    assert re.search(rf"\b{counted.group(1)} passed, 0 failed", suite.stdout), suite.stdout
    shutil.copy(site / "agbom" / "rules" / "packs" / "default.yaml", user.work / "team.yaml")
    user.run("rules", "check", "team.yaml")


def test_guardian_and_approval_commands(user: User) -> None:
    db = "guardian.db"
    user.run("replay", "samples/sessions/coding-agent.jsonl", "--db", db, "--format", "jsonl")
    user.run("skills", "import", "samples/approvals.yaml", "--db", db, "--by", "ci@example.com")
    assert "skill-code-review" in user.run("skills", "list", "--db", db).stdout
    user.run("skills", "digest", "samples/skills/repo-triage")
    user.run("servers", "list", "--db", db)
    user.run("audit", "verify", "--db", db)
    ocsf = user.run("audit", "export", SESSION, "--format", "ocsf", "--db", db).stdout
    assert ocsf.strip() and all(json.loads(line) for line in ocsf.splitlines())
    user.run("inventory", "agents", "--db", db)
    assert SESSION in user.run("inventory", "sessions", "--db", db).stdout
    user.run("explain", "--session", SESSION, "--entry", "2", "--db", db)
    event = {
        "session_id": "s1",
        "cwd": str(user.work),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    answer = user.run("hook", "claude-code", "--db", "hooks.db", stdin=json.dumps(event))
    assert isinstance(json.loads(answer.stdout), dict)
    user.run("bundle", "build", "-o", "bundle.tar.gz", "--db", db)
    with tarfile.open(user.work / "bundle.tar.gz") as bundle:
        assert any(name.endswith(".rego") for name in bundle.getnames())  # the packaged policy


def test_evidence_commands(user: User) -> None:
    user.run("keys", "generate", "--algorithm", "Ed25519", "--out", "k")
    user.run("keys", "export", "k.pub")
    user.run("scan", "samples/agboms", "-o", "small.cdx.json")
    user.run("sign", "small.cdx.json", "--key", "k.key", "-o", "signed.cdx.json")
    user.run("verify", "signed.cdx.json", "--public-key", "k.pub")


def test_reviewers_and_serve_with_the_review_page_and_read_api(user: User) -> None:
    user.run("reviewers", "add", "alice", "--role", "approver", "--file", "reviewers.json")
    assert "alice" in user.run("reviewers", "list", "--file", "reviewers.json").stdout
    port = free_port()
    log = (user.home / "serve.log").open("wb")
    proc = subprocess.Popen(
        [
            "agbom",
            "serve",
            "--port",
            str(port),
            "--db",
            "serve.db",
            "--reviewers-file",
            "reviewers.json",
        ],
        cwd=user.work,
        env=user.env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    RAN.add("serve")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, f"{base}/healthz")
        openapi = httpx.get(f"{base}/v1/openapi.json", timeout=10)
        assert openapi.status_code == 200 and openapi.json()["openapi"].startswith("3.1")
        login = httpx.get(f"{base}/ui/login", timeout=10)
        assert login.status_code == 200 and "<form" in login.text  # a packaged template
        assets = re.findall(r'(/ui/static/[^"]+\.(?:css|js))', login.text)
        assert any(a.endswith(".css") for a in assets), login.text
        for asset in assets:  # the packaged page assets
            assert httpx.get(base + asset, timeout=10).status_code == 200, asset
        bundle = httpx.get(f"{base}/v1/bundles/agbom.tar.gz", timeout=10)
        assert bundle.status_code == 200
        # The hook a host runs is the launcher installed beside agbom, and it answers.
        launcher = user.venv / "bin" / "agbom-hook"
        assert launcher.read_text().startswith(f"#!{user.venv / 'bin' / 'python'}")
        user.run("hook", "install", "claude-code", "--server", base)
        settings = json.loads((user.home / ".claude" / "settings.json").read_text())
        command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        assert command.startswith(f"{launcher} claude-code --server {base}"), command
        event = {"session_id": "s2", "cwd": str(user.work), "hook_event_name": "PreToolUse",
                 "tool_name": "Read", "tool_input": {"file_path": "/etc/hosts"}}  # fmt: skip
        hooked = subprocess.run(
            ["bash", "-c", command], input=json.dumps(event), cwd=user.work, env=user.env,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert (hooked.returncode, json.loads(hooked.stdout)) == (0, {}), hooked.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
    # It was this server that answered: nothing answers there once it is gone.
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base}/healthz", timeout=2)


def test_store_migrate_into_postgresql(user: User, pg_cluster: PgCluster) -> None:
    user.run("replay", "samples/sessions/coding-agent.jsonl", "--db", "tomigrate.db")
    name = pg_cluster.create_database()
    try:
        url = pg_cluster.url(name)
        user.run("store", "migrate", "--from", "tomigrate.db", "--to", url, "--quiet")
        user.run("audit", "verify", "--db", url)
    finally:
        pg_cluster.drop_database(name)


def test_every_command_ran_from_the_wheel(user: User) -> None:
    listed = user.run("--help").stdout
    commands = set(re.findall(r"^  (\w[\w-]*)\s{2,}", listed, flags=re.M)) - {
        "install-completion",
        "show-completion",
    }
    assert len(commands) >= 20
    assert commands - RAN == set(), "commands not run from the wheel: add them to this file"
