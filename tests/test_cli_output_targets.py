"""``-o`` into a pipe or a device writes into it; it never replaces it with a regular file
(as root, ``-o /dev/null`` once put a regular file in /dev)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
AGBOM = Path(sys.executable).parent / "agbom"


def test_output_into_a_fifo_keeps_the_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    done = subprocess.run(
        [str(AGBOM), "scan", str(SAMPLES / "manifests"), "--format", "json", "-o", str(fifo)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    reader.join(60)
    assert done.returncode in (0, 1), done.stderr  # 1: findings at or above --fail-on
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].lstrip().startswith(b"{")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary left behind


def test_output_into_a_directory_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(AGBOM), "scan", str(SAMPLES / "manifests"), "--format", "json", "-o", str(tmp_path)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and b"Traceback" not in done.stderr
    assert tmp_path.is_dir() and list(tmp_path.iterdir()) == []
