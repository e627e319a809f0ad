"""What the hook benchmarks share: the installation timed, a served Guardian, one timed run.

Both benchmarks time the hook as a host runs it, one process per event, against
``python -c pass`` with the same interpreter in the same run. :class:`Install` is the agbom
installation of an interpreter (``--python``; this one by default): a wheel install in a fresh
venv and the checkout's editable install start differently (the editable install's import
finder loads modules in ``site``, which both the anchor and the hook pay), so each is timed as
itself. The command timed is the one ``agbom hook install`` writes into a host's
configuration: ``agbom-hook`` where it is installed (bin/agbom-hook), ``agbom hook``
otherwise; :attr:`Install.console` is ``agbom hook`` through the entry point's script, timed
beside it.

An installed package carries compiled bytecode (pip compiles it at install); a source tree
under ``PYTHONDONTWRITEBYTECODE=1`` (set on some CI machines) would compile agbom's modules on
every event instead, which measures the checkout, not the hook.
:meth:`Install.compile_bytecode` writes it first, as pip would.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "adapters"))

from hook_helpers import free_port, wait_serving  # noqa: E402

__all__ = ["Install", "add_python_option", "free_port", "served", "timed_run"]

LAUNCHER = "agbom-hook"


class Install:
    """The agbom installation of the interpreter ``python``: the commands beside it."""

    def __init__(self, python: str) -> None:
        # Not resolved: a venv's python is a link to the base interpreter, outside the venv.
        self.python = str(Path(python).absolute())
        bindir = Path(self.python).parent
        script = bindir / "agbom"
        self.agbom = [str(script)] if script.is_file() else [self.python, "-m", "agbom"]
        self.console = [*self.agbom, "hook"]
        """``agbom hook``, through the entry point's generated script."""
        launcher = bindir / LAUNCHER
        usable = os.name == "posix" and launcher.is_file() and os.access(launcher, os.X_OK)
        self.hook = [str(launcher)] if usable else self.console
        """What ``agbom hook install`` writes for a host, before ``HOST --server URL``."""
        self.anchor = [self.python, "-c", "pass"]

    def describe(self) -> str:
        where = subprocess.run(
            [
                self.python,
                "-P",  # not the current folder's agbom (a checkout) but the installed one
                "-c",
                "import agbom, os, sys; "
                "print(sys.version.split()[0], os.path.dirname(agbom.__file__))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        version, _, package = where.partition(" ")
        return f"{self.python} {version}, agbom at {package}; the hook: {' '.join(self.hook)}"

    def compile_bytecode(self) -> None:
        """Compile the installed agbom's modules to ``__pycache__``, as pip does at install
        (nothing to do for a wheel install, which pip compiled)."""
        subprocess.run(
            [
                self.python,
                "-P",
                "-c",
                "import agbom, compileall, os; "
                "compileall.compile_dir(os.path.dirname(agbom.__file__), quiet=1)",
            ],
            check=True,
        )


def add_python_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter of the agbom installation to time, e.g. a venv holding the "
        "wheel (default: this one)",
    )


@contextlib.contextmanager
def served(db: Path, install: Install) -> Iterator[str]:
    """``agbom serve`` of ``install`` on a free loopback port, as started with no option;
    yields its URL."""
    port = free_port()
    server = subprocess.Popen(
        [*install.agbom, "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_serving(port, server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def timed_run(
    cmd: list[str], stdin: bytes = b"", *, env: dict[str, str] | None = None, expect: int = 0
) -> float:
    """Milliseconds from start to exit of ``cmd``; stops the benchmark on another exit code."""
    started = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, check=False, env=env)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != expect:
        raise SystemExit(f"{cmd}: exit {proc.returncode}: {proc.stderr.decode()[:300]}")
    return elapsed
