"""``GET /v1/bundles/agbom.tar.gz`` on a real ``agbom serve``: ETag and 304, long polling as
OPA's bundle service API has it, the token, the header bounds; and two PostgreSQL replicas,
where an approval made through one store connection changes the other replica's bundle.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from agbom.transports.bundle import (
    BUNDLE_PATH,
    LONG_POLL_MEDIA_TYPE,
    MAX_HEADER_CHARS,
    MAX_WAIT_S,
    etag_matches,
    requested_wait,
)
from tests.bundle.rego import BundleEngine, bundle_members
from tests.transports.served import Served, run_cli

TOKEN = "bundle-token-0123456789"
SKILL, DIGEST = "acme/pdf-tools", "sha256:" + "ab" * 32
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ALLOW = "data.agbom.skill_load.allow"


def _skills(db: str, *args: str) -> None:
    done = run_cli("skills", *args, "--db", db, "--reason", "reviewed in the bundle tests")
    assert done.returncode == 0, done.stderr


def _serve(db: str, folder: Path, name: str) -> Served:
    token = folder / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    return Served(
        db=db,  # type: ignore[arg-type]
        log=folder / f"{name}.log",
        extra=["--api-token-file", str(token)],
    ).start()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    db = str(tmp_path / "s.db")
    _skills(db, "deny", "acme/other", "--digest", DIGEST)  # creates the store
    server = _serve(db, tmp_path, "serve")
    try:
        yield server
    finally:
        server.stop()


def _get(server: Served, **headers: str) -> httpx.Response:
    return httpx.get(server.url + BUNDLE_PATH, headers={**AUTH, **headers}, timeout=90)


def _poll_in_thread(server: Served, etag: str, wait: int) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []

    def poll() -> None:
        answers.append(_get(server, **{"If-None-Match": etag, "Prefer": f"wait={wait}"}))

    thread = threading.Thread(target=poll)
    thread.start()
    return thread, answers


def test_etag_304_and_a_long_poll_that_ends_with_the_approval(served: Served) -> None:
    first = _get(served)
    assert first.status_code == 200
    assert first.headers["content-type"] == "application/gzip"
    revision = orjson.loads(bundle_members(first.content)[".manifest"])["revision"]
    etag = first.headers["etag"]
    assert etag == f'"{revision}"'
    asked = {"skill_id": SKILL, "digest": DIGEST, "agent_id": "bot-1"}
    assert BundleEngine(first.content).query(ALLOW, asked) is False

    same = _get(served, **{"If-None-Match": etag})
    assert same.status_code == 304 and same.content == b""
    assert same.headers["etag"] == etag
    assert _get(served, **{"If-None-Match": f'"other", W/{etag}'}).status_code == 304

    # Nothing changes: the long poll ends in a 304 that tells OPA the server long-polls.
    quiet = _get(served, **{"If-None-Match": etag, "Prefer": "wait=1"})
    assert quiet.status_code == 304
    assert quiet.headers["content-type"] == LONG_POLL_MEDIA_TYPE

    # An approval while OPA waits: the poll answers with the new bundle, which allows it.
    thread, answers = _poll_in_thread(served, etag, wait=40)
    _skills(str(served.db), "approve", SKILL, "--digest", DIGEST)
    thread.join(60)
    (changed,) = answers
    assert changed.status_code == 200, changed.text
    assert changed.headers["content-type"] == LONG_POLL_MEDIA_TYPE
    assert changed.headers["etag"] != etag
    assert BundleEngine(changed.content).query(ALLOW, asked) is True

    _skills(str(served.db), "revoke", SKILL, "--digest", DIGEST)
    thread, answers = _poll_in_thread(served, changed.headers["etag"], wait=40)
    thread.join(60)
    assert answers[0].status_code == 200
    assert BundleEngine(answers[0].content).query(ALLOW, asked) is False


def test_the_bundle_needs_the_token_and_bounds_its_headers(served: Served) -> None:
    url = served.url + BUNDLE_PATH
    for headers in ({}, {"Authorization": "Bearer wrong-token-0000000"}):
        refused = httpx.get(url, headers=headers, timeout=30)
        assert refused.status_code == 401
        assert b"skills" not in refused.content and "etag" not in refused.headers
    long_tag = '"' + "a" * MAX_HEADER_CHARS + '"'
    too_long = _get(served, **{"If-None-Match": long_tag})
    assert too_long.status_code == 400
    assert too_long.json()["error"] == "header_too_long"
    assert _get(served, Prefer="wait=" + "1" * MAX_HEADER_CHARS).status_code == 400


def test_the_bundle_carries_the_bans_of_the_packs_the_server_decides_with(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "s.db")
    _skills(db, "deny", "acme/other", "--digest", DIGEST)
    packs = Path(__file__).resolve().parents[2] / "rules" / "example-bans.yaml"
    server = Served(db=db, log=tmp_path / "serve.log", extra=["--rules", str(packs)])  # type: ignore[arg-type]
    server.start()
    try:
        body = httpx.get(server.url + BUNDLE_PATH, timeout=90).content
    finally:
        server.stop()
    bans = orjson.loads(bundle_members(body)["agbom/data.json"])["bans"]
    assert {"EX-BAN-001", "EX-BAN-002", "EX-BAN-003"} <= {b["id"] for b in bans}
    assert {b["pack"] for b in bans} >= {"example-bans"}


def test_header_parsing() -> None:
    assert requested_wait(None) is None
    assert requested_wait("respond-async") is None
    assert requested_wait("wait=5") == 5
    assert requested_wait("respond-async, wait=7") == 7
    assert requested_wait("wait=999999") == MAX_WAIT_S
    assert requested_wait("wait=-3") is None
    assert etag_matches("*", '"x"')
    assert etag_matches('"a", "x"', '"x"')
    assert not etag_matches('"xx"', '"x"')


def test_an_approval_through_another_connection_changes_a_replicas_bundle_on_postgresql(
    pg_url: str, tmp_path: Path
) -> None:
    _skills(pg_url, "deny", "acme/other", "--digest", DIGEST)  # creates the store
    replicas = [_serve(pg_url, tmp_path, f"replica{i}") for i in range(2)]
    try:
        before = [_get(r) for r in replicas]
        assert before[0].headers["etag"] == before[1].headers["etag"]  # one store, one bundle
        etag = before[0].headers["etag"]
        # Long polls on both; the approval comes from the CLI, through a connection of its
        # own. wait=8 is under the replicas' 10 s refresh: only NOTIFY can end these polls
        # with a 200.
        polls = [_poll_in_thread(r, etag, wait=8) for r in replicas]
        _skills(pg_url, "approve", SKILL, "--digest", DIGEST)
        for thread, _ in polls:
            thread.join(60)
        after = [answers[0] for _, answers in polls]
        assert [a.status_code for a in after] == [200, 200], [r.logs() for r in replicas]
        assert after[0].headers["etag"] == after[1].headers["etag"] != etag
        asked = {"skill_id": SKILL, "digest": DIGEST}
        assert BundleEngine(after[1].content).query(ALLOW, asked) is True

        polls = [_poll_in_thread(r, after[0].headers["etag"], wait=8) for r in replicas]
        _skills(pg_url, "revoke", SKILL, "--digest", DIGEST)
        for thread, _ in polls:
            thread.join(60)
        revoked = [answers[0] for _, answers in polls]
        assert [a.status_code for a in revoked] == [200, 200]
        assert BundleEngine(revoked[0].content).query(ALLOW, asked) is False
    finally:
        for replica in replicas:
            replica.stop()
