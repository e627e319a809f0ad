"""Make a store's files unwritable for a while, in a way that also stops root.

Root ignores file modes, so as root the files get the immutable attribute (``chattr +i``, on
file systems that have it: ext4, xfs, btrfs); other users get ``chmod a-w``. Either way a
connection opened meanwhile can only open the database read-only, as after a read-only
remount or a mistaken chmod. A test that needs this is skipped where neither works.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def store_files(db: Path) -> list[Path]:
    """The database and whichever of its ``-wal`` and ``-shm`` files exist."""
    return [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]


def _chattr(flag: str, paths: list[Path]) -> bool:
    done = subprocess.run(
        ["chattr", flag, *map(str, paths)], capture_output=True, check=False, timeout=30
    )
    return done.returncode == 0


@contextmanager
def unwritable(db: Path) -> Iterator[list[Path]]:
    """The store's files cannot be written inside the block; yields the files."""
    paths = store_files(db)
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in paths}
        for p in paths:
            p.chmod(stat.S_IMODE(modes[p]) & ~0o222)
        try:
            yield paths
        finally:
            for p, mode in modes.items():
                p.chmod(stat.S_IMODE(mode))
        return
    if shutil.which("chattr") is None or not _chattr("+i", paths):
        _chattr("-i", paths)
        pytest.skip("root, and the files cannot be made immutable (chattr +i) here")
    try:
        yield paths
    finally:
        assert _chattr("-i", paths), f"chattr -i {paths} failed"
