"""``LISTEN agbom_approvals`` on a connection of its own (see agbom/store/notifications.py)."""

from __future__ import annotations

import time

import psycopg

from agbom.store.interface import StoreError
from agbom.store.postgres._base import APPROVALS_CHANNEL, Connection, connect_once

BURST_S = 0.05
"""After one notification, how long to gather the rest of a burst (an import of many
approvals, a migration) so that they cost one rebuild, not one each."""


class ApprovalListener:
    """A :class:`~agbom.store.notifications.ChangeFeed` over PostgreSQL notifications.

    The connection is opened on the first :meth:`wait` and again after any failure; every
    (re)connection answers True, since changes made while nobody listened were not heard.
    """

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn: Connection | None = None

    def wait(self, timeout: float) -> bool:
        try:
            if self._conn is None:
                conn = connect_once(self._url)
                conn.execute(f"LISTEN {APPROVALS_CHANNEL}")
                self._conn = conn
                return True
            heard = any(True for _ in self._conn.notifies(timeout=timeout, stop_after=1))
            if heard:
                # (after the first generator has ended: two at once on one connection block)
                for _ in self._conn.notifies(timeout=BURST_S):
                    pass
            return heard
        except (psycopg.Error, StoreError):
            # The database went away: drop the connection, wait a little, and say "changed",
            # so the reader rebuilds (or keeps what it has) and the next wait reconnects.
            self.close()
            time.sleep(min(timeout, 1.0))
            return True

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None
