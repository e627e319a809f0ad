"""The review page's sessions on several ``agbom serve`` replicas, with nothing sticky: real
processes on 127.0.0.1 sharing one store, one reviewers file and one ``--ui-secret-file``.
A sign-in on one replica is good on the others and after a restart; another secret, a
tampered cookie and a removed reviewer are refused."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.review.reviewing import (
    add_reviewer,
    cli_status,
    pair_fields,
    register,
    skill_folder,
    version_of,
)
from tests.transports.served import Served, run_cli

pytestmark = pytest.mark.network


@dataclass
class Cluster:
    root: Path
    reviewers: Path
    secret: Path
    tokens: dict[str, str]
    a: Served
    b: Served

    def replica(self, name: str, secret: Path | None) -> Served:
        extra = ["--reviewers-file", str(self.reviewers)]
        if secret is not None:
            extra += ["--ui-secret-file", str(secret)]
        return Served(db=self.root / "agbom.db", log=self.root / f"{name}.log", extra=extra)


def make_secret(path: Path) -> Path:
    done = run_cli("reviewers", "secret", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""  # the secret is never printed
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("review-replicas")
    reviewers = root / "reviewers.json"
    tokens = {
        "alice": add_reviewer(reviewers, "alice", "approver"),
        "carol": add_reviewer(reviewers, "carol", "approver"),
    }
    secret = make_secret(root / "ui.secret")
    extra = ["--reviewers-file", str(reviewers), "--ui-secret-file", str(secret)]
    a = Served(db=root / "agbom.db", log=root / "a.log", extra=extra).start()
    try:
        b = Served(db=root / "agbom.db", log=root / "b.log", extra=extra).start()
        try:
            yield Cluster(root, reviewers, secret, tokens, a, b)
        finally:
            b.stop()
    finally:
        a.stop()


def same_origin(served: Served) -> dict[str, str]:
    return {"origin": served.url, "sec-fetch-site": "same-origin"}


def sign_in(served: Served, token: str, *, post_to: Served | None = None) -> str:
    """The session cookie of a sign-in whose form came from ``served`` and was posted to
    ``post_to`` (another replica, when given)."""
    target = post_to or served
    form = httpx.get(f"{served.url}/ui/login", timeout=30)
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert nonce is not None
    answer = httpx.post(
        f"{target.url}/ui/login",
        data={"csrf": nonce.group(1), "token": token},
        headers={
            **same_origin(target),
            "cookie": f"agbom_review_login={form.cookies['agbom_review_login']}",
        },
        timeout=30,
    )
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/ui/queue"
    cookie = answer.cookies.get("agbom_review")
    assert cookie is not None and len(cookie) < 512
    return cookie


def get(served: Served, path: str, cookie: str) -> httpx.Response:
    return httpx.get(
        f"{served.url}{path}", headers={"cookie": f"agbom_review={cookie}"}, timeout=30
    )


def csrf_of(served: Served, cookie: str) -> str:
    page = get(served, "/ui/queue", cookie)
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


def decide(served: Served, cookie: str, **fields: str) -> httpx.Response:
    return httpx.post(
        f"{served.url}/ui/skill/decide",
        data=fields,
        headers={**same_origin(served), "cookie": f"agbom_review={cookie}"},
        timeout=30,
    )


def test_a_sign_in_on_one_replica_decides_on_another(cluster: Cluster, tmp_path: Path) -> None:
    a, b = cluster.a, cluster.b
    version = version_of("replica-skill", skill_folder(tmp_path / "s", {"SKILL.md": "hi\n"}))
    register(a.url, version, agent_id="agent-r", capabilities=[])
    cookie = sign_in(a, cluster.tokens["alice"])
    csrf = csrf_of(a, cookie)  # the token in the page replica A rendered
    queue = get(b, "/ui/queue", cookie)
    assert queue.status_code == 200 and "alice" in queue.text and "replica-skill" in queue.text
    fields = {"action": "approve", **pair_fields("replica-skill", version.digest)}
    assert decide(b, cookie, **fields, reason="read on B").status_code == 403  # no CSRF token
    assert cli_status(a.db, "replica-skill", version.digest)["record"]["status"] == "pending"
    done = decide(b, cookie, **fields, reason="read on B", csrf=csrf)
    assert done.status_code == 303, done.text
    status = cli_status(a.db, "replica-skill", version.digest)
    assert status["record"]["status"] == "approved" and status["record"]["decided_by"] == "alice"
    assert status["history"][-1]["actor"] == "alice" and status["history"][-1]["source"] == "ui"
    # A sign-in form served by B can be posted to A: the login token is no replica's own.
    other = sign_in(b, cluster.tokens["alice"], post_to=a)
    assert get(b, "/ui/fleet", other).status_code == 200


def test_a_restart_keeps_the_session(cluster: Cluster) -> None:
    cookie = sign_in(cluster.a, cluster.tokens["alice"])
    csrf = csrf_of(cluster.a, cookie)
    cluster.a.stop()
    cluster.a.start()  # a new process (and port), the same secret file
    assert csrf_of(cluster.a, cookie) == csrf
    assert get(cluster.a, "/ui/queue", cookie).status_code == 200


def test_another_secret_or_none_refuses_the_cookie(cluster: Cluster) -> None:
    cookie = sign_in(cluster.a, cluster.tokens["alice"])
    csrf = csrf_of(cluster.a, cookie)
    for name, secret in (
        ("other", make_secret(cluster.root / "other.secret")),
        ("own", None),  # without --ui-secret-file: a secret of its own process
    ):
        stranger = cluster.replica(name, secret).start()
        try:
            refused = get(stranger, "/ui/queue", cookie)
            assert refused.status_code == 303 and refused.headers["location"] == "/ui/login"
            fields = {"action": "revoke", **pair_fields("x", "sha256:" + "0" * 64)}
            answer = decide(stranger, cookie, **fields, reason="no", csrf=csrf)
            assert answer.status_code == 403 and "sign in first" in answer.text
        finally:
            stranger.stop()
        if secret is None:
            assert "replicas need --ui-secret-file" in stranger.logs()


def test_a_tampered_cookie_is_refused(cluster: Cluster) -> None:
    cookie = sign_in(cluster.a, cluster.tokens["alice"])
    assert get(cluster.b, "/ui/queue", cookie).status_code == 200
    version, payload, mac = cookie.split(".")
    changed = payload[:-3] + ("A" if payload[-3] != "A" else "B") + payload[-2:]
    for bad in (f"{version}.{changed}.{mac}", f"{version}.{payload}.{mac[::-1]}", cookie * 3):
        refused = get(cluster.b, "/ui/queue", bad)
        assert refused.status_code == 303 and refused.headers["location"] == "/ui/login"


def test_a_removed_reviewer_is_refused_at_once_on_every_replica(cluster: Cluster) -> None:
    cookie = sign_in(cluster.b, cluster.tokens["carol"])
    assert get(cluster.a, "/ui/queue", cookie).status_code == 200
    removed = run_cli("reviewers", "remove", "carol", "--file", str(cluster.reviewers))
    assert removed.returncode == 0, removed.stderr
    for replica in (cluster.a, cluster.b):
        refused = get(replica, "/ui/queue", cookie)
        assert refused.status_code == 303 and refused.headers["location"] == "/ui/login"


def test_unsafe_secret_files_are_one_line_at_start(tmp_path: Path) -> None:
    reviewers = tmp_path / "reviewers.json"
    add_reviewer(reviewers, "alice", "approver")
    secret = make_secret(tmp_path / "ui.secret")
    db = str(tmp_path / "agbom.db")
    secret.chmod(0o644)
    exposed = run_cli(
        "serve", "--reviewers-file", str(reviewers), "--ui-secret-file", str(secret), "--db", db
    )
    assert exposed.returncode == 1 and exposed.stderr.decode().count("\n") == 1
    assert b"readable or writable by others" in exposed.stderr
    assert secret.read_text().split()[0].encode() not in exposed.stderr
    weak = tmp_path / "weak.secret"
    weak.write_text("0123456789abcdef\n")
    weak.chmod(0o600)
    short = run_cli(
        "serve", "--reviewers-file", str(reviewers), "--ui-secret-file", str(weak), "--db", db
    )
    assert short.returncode == 1 and b"at least 32 random bytes" in short.stderr
    alone = run_cli("serve", "--ui-secret-file", str(weak), "--db", db)
    assert alone.returncode == 2 and b"needs --reviewers-file" in alone.stderr
