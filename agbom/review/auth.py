"""Sign-in, sessions and CSRF protection for the review page.

- A reviewer signs in with their token (``agbom reviewers add``), or is named by a reverse
  proxy's identity header, which is honoured only when the operator passed
  ``--reviewer-header NAME`` and only for names listed in the reviewers file.
- A session is kept nowhere but in its cookie (``HttpOnly; SameSite=Strict; Path=/ui``,
  ``Secure`` over HTTPS): a record of the reviewer's name, their role and credential when
  they signed in, the sign-in time, the last refresh, the expiry and a random id, signed
  with HMAC-SHA256 under a key derived from the secret file (:mod:`agbom.review.secret`).
  Every replica given the same file accepts it, and a restart keeps it. Each request checks
  the record against the reviewers file as it is now, so removing a reviewer, a new token
  or another role ends the session at once, on every replica reading that file.
- Every state-changing request must come from this origin (``Sec-Fetch-Site`` and ``Origin``,
  one of which browsers always send on a POST) and carry the session's CSRF token: an HMAC
  of the session id under a key of its own, which any replica can recompute.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from agbom.review.reviewers import Reviewer, ReviewerDirectory, ReviewersError, Role, check_name
from agbom.review.secret import SecretSource, SigningKeys

SESSION_COOKIE = "agbom_review"
LOGIN_COOKIE = "agbom_review_login"
IDLE_S = 2 * 3600  # unused this long: over
LIFETIME_S = 12 * 3600  # after sign-in: over, whatever the use
REFRESH_S = 300  # a session in use gets a re-signed cookie this often (its idle clock)
CLOCK_SKEW_S = 60  # replicas' clocks may differ this much
MAX_COOKIE_CHARS = 512  # a real one is about 300
_VERSION = "v1"
_PROXY = "proxy"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


@dataclass(frozen=True, slots=True)
class ReviewSession:
    """A verified session record. ``csrf`` is the token its forms carry; ``cookie`` is set
    on the answer when not None (a new sign-in, or a refresh of the idle clock)."""

    session_id: str
    name: str
    role: Role
    credential: str
    via_proxy: bool
    issued: int
    seen: int
    expires: int
    csrf: str
    cookie: str | None = None


class Sessions:
    """Signs session cookies and checks them against the secret and the reviewers file."""

    def __init__(
        self,
        directory: ReviewerDirectory,
        source: SecretSource,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.source = source
        self._clock = clock

    def _now(self) -> int:
        return int(self._clock())

    @staticmethod
    def _credential(keys: SigningKeys, reviewer: Reviewer, via_proxy: bool) -> str:
        """What the session was signed in with, so a new token ends the old sessions; a
        keyed fingerprint, so the cookie does not carry the token's hash."""
        if via_proxy:
            return _PROXY
        assert reviewer.token_sha256 is not None
        return _b64(_mac(keys.credential, reviewer.token_sha256.encode())[:16])

    def _sign(self, keys: SigningKeys, record: dict[str, Any]) -> str:
        payload = _VERSION + "." + _b64(orjson.dumps(record))
        return payload + "." + _b64(_mac(keys.session, payload.encode()))

    @staticmethod
    def _csrf(keys: SigningKeys, session_id: str) -> str:
        return _b64(_mac(keys.csrf, session_id.encode()))

    def create(self, reviewer: Reviewer, *, via_proxy: bool) -> ReviewSession | None:
        """A new session for ``reviewer`` with its cookie; None while there is no usable key."""
        keys = self.source.keys()
        if not keys:
            return None
        now = self._now()
        record = {
            "sid": secrets.token_urlsafe(18),
            "name": reviewer.name,
            "role": str(reviewer.role),
            "cred": self._credential(keys[0], reviewer, via_proxy),
            "iat": now,
            "seen": now,
            "exp": now + LIFETIME_S,
        }
        return self._session(keys[0], record, self._sign(keys[0], record))

    def _session(
        self, keys: SigningKeys, record: dict[str, Any], cookie: str | None
    ) -> ReviewSession:
        return ReviewSession(
            session_id=record["sid"],
            name=record["name"],
            role=Role(record["role"]),
            credential=record["cred"],
            via_proxy=record["cred"] == _PROXY,
            issued=record["iat"],
            seen=record["seen"],
            expires=record["exp"],
            csrf=self._csrf(keys, record["sid"]),
            cookie=cookie,
        )

    def _verified(self, cookie: str, keys: list[SigningKeys]) -> tuple[int, dict[str, Any]] | None:
        """The record in a cookie signed with one of ``keys`` (and which one), else None.
        Nothing in the cookie is parsed before its signature is checked."""
        parts = cookie.split(".")
        if len(parts) != 3 or parts[0] != _VERSION:
            return None
        try:
            given = _unb64(parts[2])
        except (binascii.Error, ValueError):
            return None
        signed = f"{parts[0]}.{parts[1]}".encode("ascii")
        found = None
        for index, key in enumerate(keys):  # every key, so the time says nothing of which
            if hmac.compare_digest(_mac(key.session, signed), given) and found is None:
                found = index
        if found is None:
            return None
        try:
            record = orjson.loads(_unb64(parts[1]))
            if not isinstance(record, dict) or set(record) != {
                "sid",
                "name",
                "role",
                "cred",
                "iat",
                "seen",
                "exp",
            }:
                return None
            check_name(record["name"])
            Role(record["role"])
            for key_name in ("sid", "cred"):
                if not isinstance(record[key_name], str) or not 1 <= len(record[key_name]) <= 64:
                    return None
            for key_name in ("iat", "seen", "exp"):
                if type(record[key_name]) is not int:
                    return None
        except (binascii.Error, ValueError, orjson.JSONDecodeError, ReviewersError):
            return None
        return found, record

    def get(self, cookie: str | None) -> tuple[ReviewSession, Reviewer] | None:
        """The live session of this cookie and its reviewer as the file says now, or None:
        a missing, oversized, tampered, foreign-key or expired cookie is no session."""
        if not cookie or len(cookie) > MAX_COOKIE_CHARS or not cookie.isascii():
            return None
        keys = self.source.keys()
        verified = self._verified(cookie, keys) if keys else None
        if verified is None:
            return None
        index, record = verified
        now = self._now()
        if (
            record["iat"] > now + CLOCK_SKEW_S
            or record["seen"] < record["iat"]
            or now >= min(record["exp"], record["iat"] + LIFETIME_S)
            or now >= record["seen"] + IDLE_S
        ):
            return None
        reviewer = self.directory.by_name(record["name"])
        if reviewer is None or str(reviewer.role) != record["role"]:
            return None
        via_proxy = record["cred"] == _PROXY
        if not via_proxy and reviewer.token_sha256 is None:
            return None
        expected = self._credential(keys[index], reviewer, via_proxy)
        if not hmac.compare_digest(expected.encode(), record["cred"].encode()):
            return None
        refreshed = None
        if index != 0 or now - record["seen"] >= REFRESH_S:
            # Re-signed with the current key: the idle clock restarts, and a rotation moves
            # every session in use onto the new secret.
            record = {**record, "seen": max(now, record["seen"])}
            if index != 0:
                record["cred"] = self._credential(keys[0], reviewer, via_proxy)
            refreshed = self._sign(keys[0], record)
        return self._session(keys[0], record, refreshed), reviewer

    def csrf_matches(self, session: ReviewSession, given: str | None) -> bool:
        """Whether ``given`` is this session's CSRF token under any accepted key (a page
        rendered before a rotation still posts)."""
        if given is None or len(given) > 128:
            return False
        ok = False
        for keys in self.source.keys():
            ok |= csrf_matches(self._csrf(keys, session.session_id), given)
        return ok

    def login_token(self, nonce: str) -> str | None:
        """The sign-in form's CSRF token for the nonce in its cookie (None: no usable key)."""
        keys = self.source.keys()
        return _b64(_mac(keys[0].login, nonce.encode())) if keys else None

    def login_matches(self, nonce: str | None, given: str | None) -> bool:
        if not nonce or len(nonce) > 128 or given is None or len(given) > 128:
            return False
        ok = False
        for keys in self.source.keys():
            ok |= csrf_matches(_b64(_mac(keys.login, nonce.encode())), given)
        return ok


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
