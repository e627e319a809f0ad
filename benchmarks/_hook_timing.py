"""What the hook benchmarks share: the command to run, a served Guardian, one timed run.

Both benchmarks time ``agbom hook`` as a host runs it, one process per event, against
``python -c pass`` in the same run. An installed package carries compiled bytecode (pip
compiles it at install); a source tree under ``PYTHONDONTWRITEBYTECODE=1`` (set on some CI
machines) would compile agbom's modules on every event instead, which measures the checkout,
not the hook. :func:`compile_bytecode` writes it first, as pip would.
"""

from __future__ import annotations

import compileall
import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "adapters"))

from hook_helpers import agbom_command, free_port, wait_serving  # noqa: E402

import agbom  # noqa: E402

__all__ = ["agbom_command", "compile_bytecode", "free_port", "served", "timed_run"]


def compile_bytecode() -> None:
    """Compile agbom's modules to ``__pycache__``, as an installation has them."""
    compileall.compile_dir(Path(agbom.__file__).parent, quiet=1)


@contextlib.contextmanager
def served(db: Path) -> Iterator[str]:
    """``agbom serve`` on a free loopback port, as started with no option; yields its URL."""
    port = free_port()
    server = subprocess.Popen(
        [*agbom_command(), "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)],
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
