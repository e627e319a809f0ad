"""Reading a file that holds a secret (a signing key, the review page's secret).

One rule for every such file, so that none is read more loosely than another: never through
a link (``O_NOFOLLOW``), a regular file only, readable and writable by its owner alone, and
bounded in bytes. Each caller names the file for its messages and raises its own error.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["read_private_file"]


def read_private_file(path: Path, what: str, limit: int, error: type[Exception]) -> bytes:
    """The bytes of ``path`` (``what`` names it in messages: "private key", "ui secret
    file"); ``error`` with a one-line reason when it breaks the rule above."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise error(f"cannot open {what} {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{what} {path} is not a regular file")
        if info.st_mode & 0o077:
            raise error(
                f"{what} {path} is readable or writable by others "
                f"(mode {stat.S_IMODE(info.st_mode):04o}); chmod 600 it"
            )
        data = os.read(fd, limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(f"{what} {path} is over {limit} bytes")
    return data
