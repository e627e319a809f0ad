"""``pipx install`` and ``uv tool install`` of the wheel, as docs/installing.md says (issue 43).

Each installs into folders of its own (no user's pipx or uv tools touched) and the installed
``agbom`` then runs from a folder with no checkout. pipx runs on Python 3.12 and uv on 3.13
where this machine has them (the classifiers promise 3.11 to 3.13; the clean-venv test runs
3.11), else on the base interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import agbom
from tests.release.release_tools import (
    Dist,
    base_python,
    clean_env,
    copy_samples,
    find_python,
    install_env,
)


def _check_installed(bin_dir: Path, home: Path) -> None:
    agbom_bin = bin_dir / "agbom"
    assert agbom_bin.is_file(), sorted(p.name for p in bin_dir.iterdir())
    env = clean_env(home, bin_dir)
    work = home / "work"
    work.mkdir(parents=True)
    copy_samples(work)
    version = subprocess.run(
        ["agbom", "--version"], cwd=work, env=env, capture_output=True, text=True, check=True
    )
    assert version.stdout.strip() == f"agbom {agbom.__version__}"
    scan = subprocess.run(
        ["agbom", "scan", "samples", "-o", "bom.cdx.json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert scan.returncode == 0, scan.stderr
    bom = json.loads((work / "bom.cdx.json").read_text())
    assert bom["bomFormat"] == "CycloneDX" and len(bom["components"]) >= 30


def test_pipx_install_of_the_wheel(dist: Dist, tmp_path: Path) -> None:
    python = find_python("3.12") or base_python()
    env = {
        **install_env(),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pipx", "install", "--python", python, str(dist.wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    _check_installed(tmp_path / "bin", tmp_path / "home")


def test_uv_tool_install_of_the_wheel(dist: Dist, tmp_path: Path) -> None:
    python = find_python("3.13") or base_python()
    env = {
        **install_env(),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        # The interpreter named here, never one uv would download.
        "UV_PYTHON_DOWNLOADS": "never",
    }
    # uv reads no pip.conf: a CA bundle pip is told to trust (a TLS-inspecting proxy) is
    # handed to uv the way uv takes one.
    if env.get("PIP_CERT") and not env.get("SSL_CERT_FILE"):
        env["SSL_CERT_FILE"] = env["PIP_CERT"]
    uv = Path(sys.executable).parent / "uv"
    command = [str(uv) if uv.exists() else "uv", "tool", "install", "--python", python]
    done = subprocess.run(
        [*command, str(dist.wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "agbom" in os.listdir(tmp_path / "uv-tools")
    _check_installed(tmp_path / "bin", tmp_path / "home")
