"""The GitHub workflows and action.yml pass GitHub's schemas and zizmor (issue 43).

The schemas are the ones check-jsonschema vendors from SchemaStore (GitHub workflows and
actions, and its own rule that every job sets ``timeout-minutes``); zizmor audits the
workflows, action.yml and .pre-commit-hooks.yaml offline, with its pedantic persona. Every
action used is pinned to a full commit SHA of a release, and given only inputs that action
declares (the table below: each action's inputs as its action.yml at that commit lists them).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.release.release_tools import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent

# action -> (commit, release, the inputs its action.yml declares at that commit)
PINNED: dict[str, tuple[str, str, set[str]]] = {
    "actions/checkout": (
        "3d3c42e5aac5ba805825da76410c181273ba90b1",
        "v7.0.1",
        {"repository", "ref", "token", "ssh-key", "ssh-known-hosts", "ssh-strict", "ssh-user",
         "persist-credentials", "path", "clean", "filter", "sparse-checkout",
         "sparse-checkout-cone-mode", "fetch-depth", "fetch-tags", "show-progress", "lfs",
         "submodules", "set-safe-directory", "github-server-url", "allow-unsafe-pr-checkout"},
    ),
    "actions/setup-python": (
        "ece7cb06caefa5fff74198d8649806c4678c61a1",
        "v6.3.0",
        {"python-version", "python-version-file", "cache", "architecture", "check-latest",
         "token", "cache-dependency-path", "update-environment", "allow-prereleases",
         "freethreaded", "pip-version", "pip-install"},
    ),
    "actions/upload-artifact": (
        "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        "v7.0.0",
        {"name", "path", "if-no-files-found", "retention-days", "compression-level",
         "overwrite", "include-hidden-files", "archive"},
    ),
    "actions/download-artifact": (
        "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        "v8.0.1",
        {"name", "artifact-ids", "path", "pattern", "merge-multiple", "github-token",
         "repository", "run-id", "skip-decompress", "digest-mismatch"},
    ),
    "actions/attest-build-provenance": (
        "a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32",
        "v4.1.0",
        {"subject-path", "subject-digest", "subject-name", "subject-checksums",
         "push-to-registry", "show-summary", "github-token", "create-storage-record",
         "predicate", "predicate-path", "predicate-type"},
    ),
    "pypa/gh-action-pypi-publish": (
        "dc37677b2e1c63e2034f94d8a5b11f265b73ba33",
        "v1.14.2",
        {"packages-dir", "repository-url", "user", "password", "verify-metadata",
         "skip-existing", "verbose", "print-hash", "attestations"},
    ),
    "github/codeql-action/upload-sarif": (
        "8aad20d150bbac5944a9f9d289da16a4b0d87c1e",
        "v4.36.2",
        {"sarif_file", "category", "checkout_path", "ref", "sha", "token", "matrix",
         "wait-for-processing"},
    ),
}  # fmt: skip


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )


def _steps() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in [*WORKFLOWS, REPO / "action.yml"]:
        doc = yaml.safe_load(path.read_text("utf-8"))
        jobs = doc.get("jobs") or {"action": doc["runs"]}
        for job in jobs.values():
            found += [(path.name, step) for step in job.get("steps", [])]
    return found


def test_there_are_a_ci_and_a_release_workflow() -> None:
    assert [p.name for p in WORKFLOWS] == ["ci.yml", "release.yml"]
    ci = (REPO / ".github" / "workflows" / "ci.yml").read_text("utf-8")
    assert "bash .ci/run" in ci  # CI runs what .ci/run runs, not a copy of it


@pytest.mark.parametrize(
    "schema", ["vendor.github-workflows", "custom.github-workflows-require-timeout"]
)
def test_workflows_match_the_github_workflow_schema(schema: str) -> None:
    done = _run(str(BIN / "check-jsonschema"), "--builtin-schema", schema, *map(str, WORKFLOWS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_action_yml_matches_the_github_action_schema() -> None:
    done = _run(
        str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml"
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_even_pedantic() -> None:
    done = _run(str(BIN / "zizmor"), "--offline", "--pedantic", "--no-progress", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    audited = re.findall(r"completed (\S+)", done.stderr)
    for expected in ("ci.yml", "release.yml", "action.yml", ".pre-commit-hooks.yaml"):
        assert any(a.endswith(expected) for a in audited), done.stderr


def test_every_action_is_pinned_to_a_release_commit_and_given_its_own_inputs() -> None:
    lines = "\n".join(p.read_text("utf-8") for p in [*WORKFLOWS, REPO / "action.yml"])
    for file, step in _steps():
        if "uses" not in step:
            continue
        action, ref = step["uses"].split("@", 1)
        assert action in PINNED, f"{file}: {action} is not in the table of pinned actions"
        commit, release, inputs = PINNED[action]
        assert ref == commit, f"{file}: {action}@{ref} is not {commit} ({release})"
        assert f"{action}@{commit} # {release}" in lines  # the release named beside it
        assert set(step.get("with") or {}) <= inputs, (file, action)


def test_the_publishing_job_uses_trusted_publishing_and_no_token() -> None:
    release = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    text = (REPO / ".github" / "workflows" / "release.yml").read_text()
    publish = release["jobs"]["publish"]
    assert publish["permissions"]["id-token"] == "write"
    assert publish["environment"]["name"] == "pypi"
    uses = [s.get("uses", "") for s in publish["steps"]]
    assert uses.index(next(u for u in uses if "attest-build-provenance" in u)) < uses.index(
        next(u for u in uses if "gh-action-pypi-publish" in u)
    )
    steps = [s for s in publish["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    assert not ({"password", "user"} & set(steps[0].get("with") or {}))
    assert "secrets." not in text.replace("secrets.GITHUB_TOKEN", "")
    assert release["permissions"] == {}  # nothing by default; each job asks for its own
