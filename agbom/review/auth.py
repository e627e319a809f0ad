"""Sign-in, sessions and CSRF protection for the review page.

- A reviewer signs in with their token (``agbom reviewers add``), or is named by a reverse
  proxy's identity header, which is honoured only when the operator passed
  ``--reviewer-header NAME`` and only for names listed in the reviewers file.
- A session is a random id in an ``HttpOnly; SameSite=Strict; Path=/ui`` cookie (``Secure``
  over HTTPS), kept in this process's memory: bounded in number, idle and absolute lifetime,
  ended when the reviewer leaves the file or their token changes.
- Every state-changing request must come from this origin (``Sec-Fetch-Site`` and ``Origin``,
  one of which browsers always send on a POST) and carry the session's synchronizer token.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from agbom.review.reviewers import Reviewer, ReviewerDirectory

SESSION_COOKIE = "agbom_review"
LOGIN_COOKIE = "agbom_review_login"
MAX_SESSIONS = 4096
IDLE_S = 2 * 3600.0
LIFETIME_S = 12 * 3600.0


@dataclass(slots=True)
class ReviewSession:
    session_id: str
    name: str
    token_sha256: str | None
    via_proxy: bool
    csrf: str
    created: float
    used: float


class Sessions:
    """Reviewer sessions of this process, least recently used dropped first past the cap."""

    def __init__(self, directory: ReviewerDirectory, *, clock: object = time.monotonic) -> None:
        self.directory = directory
        self._clock = clock
        self._table: OrderedDict[str, ReviewSession] = OrderedDict()

    def _now(self) -> float:
        return float(self._clock())  # type: ignore[operator]

    def create(self, reviewer: Reviewer, *, via_proxy: bool) -> ReviewSession:
        now = self._now()
        session = ReviewSession(
            session_id=secrets.token_urlsafe(32),
            name=reviewer.name,
            token_sha256=reviewer.token_sha256,
            via_proxy=via_proxy,
            csrf=secrets.token_urlsafe(32),
            created=now,
            used=now,
        )
        self._table[session.session_id] = session
        while len(self._table) > MAX_SESSIONS:
            self._table.popitem(last=False)
        return session

    def get(self, session_id: str | None) -> tuple[ReviewSession, Reviewer] | None:
        """The live session and its reviewer as the file says now, or None."""
        if not session_id or len(session_id) > 128:
            return None
        session = self._table.get(session_id)
        if session is None:
            return None
        now = self._now()
        reviewer = self.directory.by_name(session.name)
        if (
            now - session.used > IDLE_S
            or now - session.created > LIFETIME_S
            or reviewer is None
            or (not session.via_proxy and reviewer.token_sha256 != session.token_sha256)
        ):
            self._table.pop(session_id, None)
            return None
        session.used = now
        self._table.move_to_end(session_id)
        return session, reviewer

    def end(self, session_id: str | None) -> None:
        if session_id:
            self._table.pop(session_id, None)


def csrf_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def cross_site(
    headers: Iterable[tuple[str, str]], *, own_origin: str, allowed_origins: frozenset[str]
) -> str | None:
    """Why a state-changing request must be refused as cross-site, or None.

    A browser sends ``Sec-Fetch-Site`` (modern ones) and ``Origin`` (every one) with a form
    POST; a request with neither is not from a page we served and is refused too.
    """
    fetch_site = origin = None
    for name, value in headers:
        if name == "sec-fetch-site":
            fetch_site = value.strip().lower()
        elif name == "origin":
            origin = value.strip().lower().rstrip("/")
    if fetch_site is not None and fetch_site != "same-origin":
        return f"a {fetch_site} request cannot change anything here"
    if origin is not None:
        if origin != own_origin and origin not in allowed_origins:
            return "a request from another origin cannot change anything here"
    elif fetch_site is None:
        return "the request says neither its Origin nor its Sec-Fetch-Site"
    return None
