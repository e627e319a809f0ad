"""Reading a file that agbom trusts: one that holds a secret (a signing key, the HMAC key of
``--secret-file``/``--keys-file``, the read API's token, the review page's secret), or one
that says who may do what (the reviewers file).

One rule for every such file, so that none is read more loosely than another: never through
a link (``O_NOFOLLOW``), never a FIFO or device (``O_NONBLOCK``, then a regular file only),
owned by you or root, written by its owner alone, and bounded in bytes; a secret is also
read by its owner alone (:mod:`agbom._ownership`). The checks are made on the file opened,
not on its name, so it cannot be swapped in between. Each caller names the file for its
messages and raises its own error.
"""

from __future__ import annotations

import os
import stat

from agbom._ownership import file_problem

# Not at run time, nor typing.TYPE_CHECKING: the thin hook reads its token file through this
# module on every event, and pathlib loads re, fnmatch and urllib.parse.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["read_private_file", "read_trusted_file"]


def read_private_file(path: Path | str, what: str, limit: int, error: type[Exception]) -> bytes:
    """The bytes of a file that holds a secret (``what`` names it in messages: "private key",
    "ui secret file"); ``error`` with a one-line reason when it breaks the rule above."""
    return _read(path, what, limit, error, secret=True)


def read_trusted_file(path: Path | str, what: str, limit: int, error: type[Exception]) -> bytes:
    """The bytes of a file that others may read but only its owner may write (the reviewers
    file: token hashes and roles); ``error`` with a one-line reason otherwise."""
    return _read(path, what, limit, error, secret=False)


def _read(
    path: Path | str, what: str, limit: int, error: type[Exception], *, secret: bool
) -> bytes:
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
        problem = file_problem(info, what, path, secret=secret)
        if problem is not None:
            raise error(problem)
        data = os.read(fd, limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(f"{what} {path} is over {limit} bytes")
    return data
