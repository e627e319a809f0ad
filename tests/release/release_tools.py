"""Helpers of the release checks (a plain module: conftest names collide across folders)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


@dataclass(frozen=True)
class Dist:
    """The built wheel, and the sdist it was built from (when there is one)."""

    wheel: Path
    sdist: Path | None


def base_python() -> str:
    """The interpreter this test venv was made from: new venvs must not see its packages."""
    return str(getattr(sys, "_base_executable", None) or sys.executable)


def install_env() -> dict[str, str]:
    """The environment for pip, pipx, uv and pre-commit: this user's, with the package index
    configuration it has (pip.conf, ``PIP_*``, CA bundles), minus this test venv."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env


def clean_env(home: Path, bin_dir: Path | None = None) -> dict[str, str]:
    """A user with nothing of this checkout: HOME ``home``, PATH the system's (and ``bin_dir``),
    no PYTHONPATH, no store or rules of this session; pip's configuration still applies."""
    env = install_env()
    for name in ("AGBOM_DB", "AGBOM_RULES", "AGBOM_REVIEWERS", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    env["HOME"] = str(home)
    env["PATH"] = os.pathsep.join(
        [*([str(bin_dir)] if bin_dir else []), "/usr/local/bin", "/usr/bin", "/bin"]
    )
    env["AGBOM_ACTOR"] = "release-check@example.com"
    env["COLUMNS"] = "200"
    return env


def make_venv(python: str, venv: Path) -> None:
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(proc: subprocess.Popen[bytes], url: str, timeout: float = 90.0) -> httpx.Response:
    """GET ``url`` until it answers 200; fails if ``proc`` exits first or time runs out."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode} before {url} answered")
        try:
            response = httpx.get(url, timeout=5)
            if response.status_code == 200:
                return response
            last = response.status_code
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer 200 within {timeout} s (last: {last})")


def copy_samples(into: Path) -> Path:
    """The repository's samples in ``into/samples`` (nothing else of the checkout)."""
    target = into / "samples"
    shutil.copytree(SAMPLES, target)
    return target


def tracked_files(folder: str) -> list[str]:
    """Files of the checkout under ``folder`` that git tracks or would add (not ignored), as
    paths relative to the repository; every file there when this is no git checkout."""
    done = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", folder],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0 and done.stdout.strip():
        return sorted(line for line in done.stdout.splitlines() if (REPO / line).is_file())
    return sorted(
        str(p.relative_to(REPO))
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def find_python(minor: str) -> str | None:
    """An interpreter of Python ``minor`` (pyenv's, else on PATH) that really runs."""
    candidates = sorted(Path.home().glob(f".pyenv/versions/{minor}.*/bin/python{minor}"))
    candidates += [Path(p) for p in [shutil.which(f"python{minor}")] if p]
    for candidate in candidates:
        done = subprocess.run(
            [str(candidate), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip() == minor:
            return str(candidate)
    return None


def deploy_block(first_line: str) -> str:
    """The ```yaml block of docs/deploying.md whose first line is ``first_line``."""
    doc = (REPO / "docs" / "deploying.md").read_text("utf-8")
    (found,) = re.findall(r"```yaml\n(" + re.escape(first_line) + r"\n.*?)```", doc, flags=re.S)
    return str(found)


def deployment_args() -> list[str]:
    """The container arguments of docs/deploying.md's Kubernetes Deployment."""
    documents = list(yaml.safe_load_all(deploy_block("# agbom-guardian.yaml")))
    (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args: list[str] = container["args"]
    return args
