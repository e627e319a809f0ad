"""Hearing that approvals changed, for readers that keep something built from them (the OPA
bundle an ``agbom serve`` replica serves, agbom/transports/bundle.py).

PostgreSQL announces every approval change (``NOTIFY agbom_approvals`` in the same
transaction, agbom/store/postgres/approvals.py), so a listener hears of a change made on any
replica as soon as it is visible. SQLite announces nothing: its readers poll.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agbom.store.interface import Store


class ChangeFeed(Protocol):
    """Blocks until approvals may have changed, or a time-out passes."""

    def wait(self, timeout: float) -> bool:
        """True when something may have changed (a notification, or a reconnection after
        which anything may have), False when ``timeout`` passed in silence."""
        ...

    def close(self) -> None: ...


def approval_changes(store: Store) -> ChangeFeed | None:
    """A feed of ``store``'s approval changes, or None when the backend announces none."""
    url = getattr(store, "url", None)
    if not isinstance(url, str) or not url.startswith(("postgres://", "postgresql://")):
        return None
    from agbom.store.postgres.notifications import ApprovalListener

    return ApprovalListener(url)
