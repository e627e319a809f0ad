"""The release checks: the sdist and wheel as ``python -m build`` makes them, installed the
ways users install agbom, with no checkout around.

``AGBOM_WHEEL=/path/agbom-X-py3-none-any.whl`` tests that wheel (the release workflow passes
the one it built, with its sdist beside it); otherwise the wheel and sdist are built from this
checkout once per session. Installing reaches the package index as pip is configured here
(pip's own configuration files and ``PIP_*`` variables are inherited).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.release.release_tools import REPO, Dist, base_python, install_env, make_venv


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    given = os.environ.get("AGBOM_WHEEL")
    if given:
        wheel = Path(given).resolve()
        sdists = sorted(wheel.parent.glob("agbom-*.tar.gz"))
        return Dist(wheel, sdists[-1] if sdists else None)
    out = tmp_path_factory.mktemp("dist")
    # The sdist first, then the wheel built from the unpacked sdist (build's default): the
    # wheel can hold only what the sdist carries.
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    (wheel,) = out.glob("agbom-*-py3-none-any.whl")
    (sdist,) = out.glob("agbom-*.tar.gz")
    return Dist(wheel, sdist)


@pytest.fixture(scope="session")
def wheel_venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A venv of the base interpreter holding the wheel and its dependencies, nothing else."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    make_venv(base_python(), venv)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(dist.wheel)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=install_env(),
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    yield venv
