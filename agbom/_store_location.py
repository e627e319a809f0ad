"""Where the store is when no ``--db`` says: one rule for the CLI and the hook (docs/store.md).

``$AGBOM_DB`` when set, else the user's data folder, ``$XDG_DATA_HOME/agbom/agbom.db``
(``~/.local/share/agbom/agbom.db`` when ``XDG_DATA_HOME`` is unset or not absolute). Never
the working folder: a runtime runs hooks in the project folder, and ``agbom skills approve``
run there must reach the store the hook decides with. Standard library only (the hook's
start-up path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV = "AGBOM_DB"
# The working folder's store file earlier versions opened by default: noticed, never opened.
LEGACY = "agbom.db"


def data_store(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user store file (not created)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or ""
    if base and os.path.isabs(base):
        root = Path(base)
    else:
        home = env.get("HOME") or os.path.expanduser("~")
        root = Path(home) / ".local" / "share"
    return root / "agbom" / "agbom.db"


def default_store(environ: Mapping[str, str] | None = None) -> str:
    """The store a command opens without ``--db``: ``$AGBOM_DB``, else :func:`data_store`."""
    env = os.environ if environ is None else environ
    return env.get(ENV) or str(data_store(env))


def prepare_folder(location: str) -> None:
    """Create the per-user data folder (0700) when ``location`` is the default file in it."""
    path = Path(location)
    if path == data_store():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
