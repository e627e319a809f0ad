"""``agbom`` run as a child process, the way a CI job or a shell runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_agbom(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m agbom ARGS`` in ``cwd``, to completion, with text output captured."""
    return subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "AGBOM_DEBUG": "0"},
        timeout=300,
        check=False,
    )
