"""Whether another user could have put in place, or changed, a file agbom trusts.

The store decides which skills may load; a reviewers file says who may approve; a key signs
or verifies. Each is trusted only if no other user could have written it: as ssh treats
``~/.ssh`` and gpg its home folder, agbom refuses such a file, or a folder leading to it,
that belongs to another user (root excepted) or that its group or others may write. One
line says what is wrong and how to fix it (docs/store.md, "Who may write the store").

- A file: it belongs to you or to root, and its group and others may not write it (a
  secret: nor read it).
- A store's folders, from the store's own folder up to where your files start (your home
  folder, or ``$XDG_DATA_HOME``; ``/`` for a store outside both), each belong to you or to
  root, and no one else may write them. SQLite creates files beside the store (``-wal``,
  ``-shm``, ``-journal``): whoever can write the store's folder can plant one, so that
  folder may not be shared even when its sticky bit is set. A folder higher up may be
  shared when sticky (``/tmp``): then no one else can rename or remove what is yours in it.
  Folders above your home folder are the system's and are not looked at, as ssh does not.
- A group may write when it is your own private group (named as you, with no other member,
  your primary group), as Debian's ssh allows for ``umask 002`` users.

Standard library only: the hook's start-up path imports it.
"""

from __future__ import annotations

import os
import stat

# pathlib and collections.abc where a function needs them, not at the top: the thin hook
# imports this module (for its token file) on every event, and pathlib alone loads re,
# fnmatch and urllib.parse. Not typing.TYPE_CHECKING either (typing is an import too).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

__all__ = ["file_problem", "store_path_problem"]

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _who(uid: int) -> str:
    import pwd

    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _me() -> str:
    import pwd

    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _private_group(gid: int, uid: int) -> bool:
    """Whether ``gid`` is ``uid``'s own group: its primary group, named as the user, with no
    other member."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return (
        user.pw_gid == gid
        and group.gr_name == user.pw_name
        and not set(group.gr_mem) - {user.pw_name}
    )


def _owner_problem(info: os.stat_result, label: str, path: object) -> str | None:
    uid = os.geteuid()
    if info.st_uid in (uid, 0):
        return None
    chown = "chown -R" if stat.S_ISDIR(info.st_mode) else "chown"
    return (
        f"{label} {path} belongs to {_who(info.st_uid)}, not to you, so that user could have "
        f"put or changed what it holds; move it away, or if you trust it: "
        f"sudo {chown} {_me()} {path}"
    )


def _writers_problem(
    info: os.stat_result, label: str, path: object, fix: str, *, sticky_ok: bool
) -> str | None:
    mode = info.st_mode
    if sticky_ok and mode & stat.S_ISVTX:
        return None
    if mode & stat.S_IWOTH:
        writers = "others"
    elif mode & stat.S_IWGRP and not _private_group(info.st_gid, os.geteuid()):
        writers = "its group"
    else:
        return None
    return (
        f"{label} {path} is writable by {writers} (mode {stat.S_IMODE(mode):04o}); "
        f"chmod {fix} {path}"
    )


def file_problem(info: os.stat_result, label: str, path: object, *, secret: bool) -> str | None:
    """What is wrong with a file agbom would trust (``info`` from ``fstat`` of the opened
    file, or ``stat``), or None; ``label`` names it ("private key"). A ``secret`` may not be
    read by its group or others either."""
    problem = _owner_problem(info, label, path)
    if problem is not None:
        return problem
    if not secret:
        return _writers_problem(info, label, path, "go-w", sticky_ok=False)
    if info.st_mode & 0o077:
        return (
            f"{label} {path} is readable or writable by others "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); chmod 600 it"
        )
    return None


def _trust_root(path: Path, environ: Mapping[str, str]) -> Path:
    """Where the folders to check stop: the home folder or the data folder holding ``path``,
    else ``/``."""
    from pathlib import Path

    roots = [environ.get("HOME") or os.path.expanduser("~")]
    data = environ.get("XDG_DATA_HOME") or ""
    if os.path.isabs(data):
        roots.append(data)
    for root in roots:
        resolved = Path(os.path.realpath(root))
        if path == resolved or resolved in path.parents:
            return resolved
    return Path(path.anchor or "/")


def _folders(path: Path, environ: Mapping[str, str]) -> Iterator[Path]:
    """The folders holding ``path``, its own first, up to the trust root."""
    stop = _trust_root(path, environ)
    for folder in path.parents:
        yield folder
        if folder == stop:
            return


def _chain_problem(path: Path, environ: Mapping[str, str]) -> str | None:
    for index, folder in enumerate(_folders(path, environ)):
        try:
            info = os.stat(folder)
        except FileNotFoundError:
            continue  # not made yet: whoever opens the store says so
        except OSError as exc:
            return f"cannot check the folder {folder}: {exc.strerror or exc}"
        own = index == 0  # the store's own folder: never shared, sticky or not
        problem = _owner_problem(info, "the folder", folder) or _writers_problem(
            info, "the folder", folder, "700" if own else "go-w", sticky_ok=not own
        )
        if problem is not None:
            return problem
    return None


def store_path_problem(path: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """What makes the SQLite store at ``path`` untrustworthy, or None: the file and the files
    SQLite keeps beside it, when they exist, and every folder from the store's own up to the
    trust root, both as the path is written and as its links resolve."""
    from pathlib import Path

    env = os.environ if environ is None else environ
    written = Path(os.path.abspath(path))
    resolved = Path(os.path.realpath(path))
    for chain in dict.fromkeys((written, resolved)):
        problem = _chain_problem(chain, env)
        if problem is not None:
            return problem
    for suffix in ("", *SQLITE_SIDE_FILES):
        name = f"{resolved}{suffix}"
        try:
            info = os.stat(name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"cannot check {name}: {exc.strerror or exc}"
        problem = file_problem(info, "the file", name, secret=False)
        if problem is not None:
            return problem
    return None
