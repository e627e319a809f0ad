"""The container image: Containerfile built with buildah and smoke-tested inside (issue 43).

Built as CI builds it (``buildah bud --isolation chroot``: no container runtime or cgroups),
on the base scripts/test-prerequisites makes from Debian's packages under the public base's
name. Then, with ``buildah run --isolation chroot`` as the image's own user: ``agbom
--version``, a scan of the samples (the same report as this checkout's agbom gives), and
``agbom serve`` answering the image's own health check on /healthz, on SQLite and on a
PostgreSQL store. Needs root, podman and buildah; where they cannot be had the tests skip,
except under CI=true, where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agbom
from tests.pgcluster import PgCluster
from tests.release.release_tools import REPO, SAMPLES, deployment_args, free_port

BASE = "docker.io/library/debian:bookworm-slim"
IMAGE = "localhost/agbom:release-test"
MAX_BYTES = 250_000_000


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason} (scripts/test-prerequisites sets it up)", pytrace=False)
    pytest.skip(reason)


def _run(*command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def image() -> dict[str, Any]:
    """Builds the image; returns its configuration (``podman image inspect``)."""
    if os.geteuid() != 0:
        _unavailable("building the image with buildah --isolation chroot needs root")
    for tool in ("podman", "buildah"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed")
    if _run("podman", "image", "exists", BASE).returncode != 0:
        _unavailable(f"the base image {BASE} is missing")
    command = [
        "buildah", "bud", "--isolation", "chroot", "--format", "docker", "--layers",
        "--build-arg", f"VERSION={agbom.__version__}", "-t", IMAGE, "-f", "Containerfile",
    ]  # fmt: skip
    # A TLS-inspecting proxy's CA, which pip is told to trust here, goes in as a build secret.
    cert = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if cert:
        command += ["--secret", f"id=pip-cert,src={cert}"]
    done = subprocess.run(
        [*command, str(REPO)], capture_output=True, text=True, timeout=1800, check=False
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    inspected = _run("podman", "image", "inspect", IMAGE)
    assert inspected.returncode == 0, inspected.stderr
    config: dict[str, Any] = json.loads(inspected.stdout)[0]
    return config


@pytest.fixture
def container(image: dict[str, Any]) -> Iterator[str]:
    made = _run("buildah", "from", "--pull-never", IMAGE)
    assert made.returncode == 0, made.stderr
    name = made.stdout.strip()
    try:
        yield name
    finally:
        _run("buildah", "rm", name)


def inside(container: str, script: str, *env: str, timeout: float = 300) -> str:
    """Runs ``sh -c script`` in ``container`` as the image's user; its output, or fails."""
    options = [item for pair in env for item in ("--env", pair)]
    done = _run(
        "buildah", "run", "--isolation", "chroot", *options, container, "--", "sh", "-c", script,
        timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, (script, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def test_the_image_is_small_labelled_and_runs_agbom_as_a_user(image: dict[str, Any]) -> None:
    size = int(image["Size"])
    print(f"image size: {size / 1e6:.1f} MB")  # docs/deploying.md quotes it
    assert size < MAX_BYTES, f"{size / 1e6:.1f} MB"
    config = image["Config"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == agbom.__version__
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.source"] == "https://github.com/agbom/agbom"
    assert labels["org.opencontainers.image.base.name"] == BASE
    assert config["User"] == "agbom:agbom"
    assert config["Entrypoint"] == ["agbom"]
    assert "8787/tcp" in config["ExposedPorts"]
    assert image["Healthcheck"]["Test"][0] == "CMD"  # podman shows it beside Config


def test_inside_agbom_runs_as_a_user_without_a_compiler(container: str) -> None:
    out = inside(
        container,
        "id -u; agbom --version; "
        "for tool in gcc cc c++ g++ clang make ld as rustc; do command -v $tool || true; done; "
        # gcc-12-base (libgcc's copyright files) is no compiler; gcc-12, cpp-12 would be.
        "dpkg-query -W -f '${Package}\\n' "
        "| grep -E '^(gcc|g\\+\\+|cpp|clang|binutils)(-[0-9]+)?$|^make$' || true",
    )
    uid, version, *found = out.splitlines()
    assert uid != "0"
    assert version == f"agbom {agbom.__version__}"
    assert found == []


def test_inside_a_scan_of_the_samples_gives_the_checkout_s_report(container: str) -> None:
    copied = _run(
        "buildah", "copy", "--chown", "agbom:agbom", container, str(SAMPLES), "/home/agbom/samples"
    )
    assert copied.returncode == 0, copied.stderr
    ours = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", "samples", "-f", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": "1767225600"},
    )
    theirs = inside(
        container, "cd /home/agbom && agbom scan samples -f json", "SOURCE_DATE_EPOCH=1767225600"
    )
    expected, got = json.loads(ours.stdout), json.loads(theirs)
    assert got["summary"] == expected["summary"] and got["summary"]["components"] >= 50
    assert sorted(f["rule_id"] for f in got["findings"]) == sorted(
        f["rule_id"] for f in expected["findings"]
    )


def _serve_and_check_health(container: str, image: dict[str, Any], db: str) -> str:
    """``agbom serve`` in the container; the image's health check run there until it passes,
    then again after the server is stopped (it must fail: it was this server that answered)."""
    port = free_port()
    health = shlex.join(image["Healthcheck"]["Test"][1:])
    script = f"""
agbom serve --host 127.0.0.1 --port {port} --db "$AGBOM_DB" >/tmp/serve.log 2>&1 &
pid=$!
ok=0
for i in $(seq 1 300); do
  if {health}; then ok=1; break; fi
  kill -0 $pid 2>/dev/null || break
  sleep 0.3
done
kill $pid; wait $pid || true
if [ $ok = 1 ] && ! {health} 2>/dev/null; then echo healthy-then-gone; else cat /tmp/serve.log; fi
"""
    return inside(
        container,
        script,
        f"AGBOM_DB={db}",
        f"AGBOM_HEALTH_URL=http://127.0.0.1:{port}/healthz",
        timeout=240,
    )


def test_inside_serve_answers_the_image_health_check(container: str, image: dict[str, Any]) -> None:
    out = _serve_and_check_health(container, image, "/home/agbom/guardian.db")
    assert out.strip() == "healthy-then-gone", out


def test_inside_the_guardian_runs_on_postgresql(
    container: str, image: dict[str, Any], pg_cluster: PgCluster
) -> None:
    name = pg_cluster.create_database()
    try:
        out = _serve_and_check_health(container, image, pg_cluster.url(name))
        assert out.strip() == "healthy-then-gone", out
    finally:
        pg_cluster.drop_database(name)


def test_inside_serve_starts_with_the_kubernetes_deployment_s_arguments(
    container: str, image: dict[str, Any], pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """docs/deploying.md's Deployment arguments (network address, token file, allowed hosts,
    memory bound), on a free port, with its Secret's database URL: the health check passes."""
    port = free_port()
    args = [re.sub(r"^--port=\d+$", f"--port={port}", a) for a in deployment_args()]
    token_option = next(a for a in args if a.startswith("--api-token-file="))
    token = tmp_path / "token"
    token.write_text("0" * 64)
    copied = _run(
        "buildah", "copy", "--chown", "agbom:agbom", "--chmod", "0400", container,
        str(token), token_option.split("=", 1)[1],
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    health = shlex.join(image["Healthcheck"]["Test"][1:])
    name = pg_cluster.create_database()
    script = f"""
agbom {shlex.join(args)} >/tmp/serve.log 2>&1 &
pid=$!
for i in $(seq 1 300); do
  if {health}; then echo healthy; break; fi
  kill -0 $pid 2>/dev/null || break
  sleep 0.3
done
kill $pid; wait $pid || true
cat /tmp/serve.log
"""
    try:
        out = inside(
            container,
            script,
            f"AGBOM_DB={pg_cluster.url(name)}",
            f"AGBOM_HEALTH_URL=http://127.0.0.1:{port}/healthz",
            timeout=240,
        )
    finally:
        pg_cluster.drop_database(name)
    assert out.startswith("healthy\n"), out
