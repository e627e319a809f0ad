"""An OSV database for a long-running process: loaded once, reloaded on SIGHUP.

``agbom serve --osv PATH`` is meant to hold one :class:`LiveAdvisories`: requests read
:attr:`LiveAdvisories.database` (one attribute read: the swap is atomic), SIGHUP re-reads the
export in the background and swaps it in only when it loaded completely; a bad export keeps
the previous database and is reported, never an empty one (fail closed).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from agbom.advisories.osv import AdvisoryError, OsvDatabase, load_osv


class LiveAdvisories:
    """The current database for ``path`` and its reloads."""

    def __init__(self, path: Path, *, report: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.database: OsvDatabase = load_osv(path)  # the first load must succeed
        self.generation = 1
        self._report = report or (lambda _message: None)
        self._lock = threading.Lock()  # one reload at a time

    def reload(self) -> bool:
        """Load the export again; swap it in when it is usable. True when swapped."""
        with self._lock:
            try:
                fresh = load_osv(self.path)
            except AdvisoryError as exc:
                self._report(f"OSV reload failed, keeping the loaded database: {exc}")
                return False
            self.database = fresh
            self.generation += 1
            self._report(f"OSV database reloaded: {len(fresh)} advisories from {self.path}")
            return True

    def install_sighup(self) -> None:
        """Reload on SIGHUP, off the signal handler (loading takes seconds)."""

        def handler(_signum: int, _frame: FrameType | None) -> None:
            threading.Thread(target=self.reload, name="osv-reload", daemon=True).start()

        signal.signal(signal.SIGHUP, handler)

    def annotate(self, agbom: Any) -> Any:
        """``agbom`` with the current database's matches (see :func:`agbom.advisories.annotate`)."""
        from agbom.advisories import annotate

        return annotate(agbom, self.database)
