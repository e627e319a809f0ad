"""Files the review page keeps: written whole or not at all, readable by the owner only."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_private(path: Path, data: bytes, *, prefix: str) -> None:
    """Replace ``path`` with ``data`` atomically (a temporary file beside it, fsynced, then
    renamed over it), mode 0600 from the start, so no reader sees it half written or open."""
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=folder)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
