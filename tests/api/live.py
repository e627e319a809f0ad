"""A real ``agbom serve`` with a seeded store and a token, and the ``schemathesis run``
command against it: shared by the CI test (tests/api/test_api_openapi.py, a fixed seed,
derandomized) and the longer random run (benchmarks/fuzz_api.py, docs/api.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from agbom.inventory import AgBOM
from agbom.store import Digest, SkillStatus, open_store
from agbom.transports.bundle import MAX_WAIT_S
from tests.transports.served import Served

REPO = Path(__file__).resolve().parents[2]
TOKEN = "api-token-0123456789abcdef"
OSV = REPO / "tests" / "advisories" / "fixtures" / "osv"
FLEET_AGENT = "claude-code/alice@laptop"
VULNERABLE_SERVER = {
    "id": "mcp-acme-fs",
    "type": "mcp_server",
    "name": "acme-filesystem",
    "version": "1.4.1",
    "endpoint": None,
    "tools": [],
    "purl": "pkg:npm/%40acme/mcp-filesystem@1.4.1",
}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def seed_store(db: Path) -> None:
    """The examples the document names exist, so the fuzzer reaches 200s, not only 404s."""
    sample = orjson.loads((REPO / "samples" / "agboms" / "coding-agent.json").read_bytes())
    agbom = AgBOM.from_document(sample, source="sample")
    document = agbom.to_document()
    agent_id = str(document["agent"]["id"])
    with open_store(db) as store:
        store.set_status(
            "acme/pdf-tools",
            Digest.parse("sha256:" + "ab" * 32),
            SkillStatus.APPROVED,
            actor="seed",
            scope_agents=["travel-*"],
            # The verdict then carries required_signer (status signer_required): the fuzzer
            # checks that body against the document too.
            required_signer="skills@publisher.example",
        )
        store.set_status(
            "acme/old", Digest.parse("sha256:" + "cd" * 32), SkillStatus.REVOKED, actor="seed"
        )
        for session, agent in (("session-example", "travel-orchestrator"), ("s2", agent_id)):
            store.save_agbom_version(
                session, agent_id=agent, document=document, agbom_hash=agbom.agbom_hash
            )
        # an agent named as the hooks name one, running a server an advisory of OSV (below)
        # names: the fleet's agents, timeline and advisories answer with rows
        named = {**document, "agent": {"id": FLEET_AGENT}}
        named["components"] = sorted(
            [*document["components"], VULNERABLE_SERVER], key=lambda c: str(c["id"])
        )
        store.save_agbom_version(
            "s3", agent_id=FLEET_AGENT, document=named, agbom_hash=AgBOM.from_document(
                named, source="seed").agbom_hash,
        )  # fmt: skip


def seeded_server(folder: Path) -> Served:
    """A started ``agbom serve`` over a seeded store in ``folder``, needing :data:`TOKEN`."""
    seed_store(folder / "s.db")
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "token").chmod(0o600)  # a secret: the owner's alone
    return Served(
        db=folder / "s.db",
        log=folder / "serve.log",
        extra=["--api-token-file", str(folder / "token"), "--osv", str(OSV)],
    ).start()


def schemathesis_run(
    url: str,
    report_dir: Path,
    *,
    max_examples: int,
    seed: int | None,
    deterministic: bool,
    max_seconds: int | None = None,
    workers: int = 1,
    timeout: float,
    reports: tuple[str, ...] = ("ndjson",),
) -> subprocess.CompletedProcess[str]:
    """``schemathesis run`` with every check against ``url``'s document, to completion.

    ``deterministic`` derandomizes generation (schemathesis' ``--generation-deterministic``,
    Hypothesis' ``derandomize``, which also keeps no example database), so that two runs
    send the same requests: with one worker and no time budget, a red run is red again.
    """
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        url + "/v1/openapi.json",
        "--checks",
        "all",
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--max-examples",
        str(max_examples),
        "--workers",
        str(workers),
        # Over the longest long poll: a generated If-None-Match: * with Prefer: wait=N is a
        # legitimate poll that is answered after up to MAX_WAIT_S.
        "--request-timeout",
        str(MAX_WAIT_S + 15),
        "--report",
        ",".join(reports),
        "--report-dir",
        str(report_dir),
    ]
    if seed is not None:
        command += ["--seed", str(seed)]
    if not deterministic:
        command.append("--continue-on-failure")  # a search: find every failure, not the first
    if deterministic:
        command.append("--generation-deterministic")  # (which also turns the database off)
    if max_seconds is not None:
        command += ["--max-time", str(max_seconds)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False,
        cwd=report_dir,  # its crash cache (.schemathesis/) goes there, not into the work tree
        env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"},
    )  # fmt: skip
