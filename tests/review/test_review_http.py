"""The review page over plain HTTP against a real ``agbom serve``: sign-in, headers, CSRF,
roles, bounds, the proxy header, and the page being off unless configured."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.review.reviewing import (
    add_reviewer,
    cli_status,
    load,
    pair_fields,
    register,
    skill_folder,
    version_of,
)
from tests.transports.served import Served, run_cli

pytestmark = pytest.mark.network

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, str]]]:
    root = tmp_path_factory.mktemp("review-http")
    reviewers = root / "reviewers.json"
    tokens = {
        "alice": add_reviewer(reviewers, "alice", "approver"),
        "bob": add_reviewer(reviewers, "bob", "viewer"),
    }
    done = run_cli(
        "reviewers",
        "add",
        "proxy-pat",
        "--role",
        "approver",
        "--no-token",
        "--file",
        str(reviewers),
    )
    assert done.returncode == 0 and done.stdout == b""
    served = Served(
        db=root / "agbom.db",
        log=root / "serve.log",
        extra=["--reviewers-file", str(reviewers), "--reviewer-header", "X-Forwarded-User"],
    ).start()
    try:
        yield served, tokens
    finally:
        served.stop()


def signed_in(served: Served, token: str) -> tuple[httpx.Client, str]:
    """A client holding a session cookie, and that session's CSRF token."""
    client = httpx.Client(base_url=served.url, timeout=30)
    form = client.get("/ui/login")
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert nonce is not None
    answer = client.post(
        "/ui/login",
        data={"csrf": nonce.group(1), "token": token},
        headers={"origin": served.url, "sec-fetch-site": "same-origin"},
    )
    assert answer.status_code == 303, answer.text
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
    page = client.get("/ui/queue")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    return client, csrf.group(1)


def decide(client: httpx.Client, served: Served, **fields: str) -> httpx.Response:
    headers = {"origin": served.url, "sec-fetch-site": "same-origin"}
    return client.post("/ui/skill/decide", data=fields, headers=headers)


def test_pages_need_a_reviewer_and_carry_a_strict_csp(server, tmp_path: Path) -> None:
    served, tokens = server
    anonymous = httpx.get(f"{served.url}/ui/queue", timeout=30)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/ui/login"
    assert anonymous.headers["content-security-policy"] == CSP
    wrong = httpx.Client(base_url=served.url, timeout=30)
    nonce = re.search(r'name="csrf" value="([^"]+)"', wrong.get("/ui/login").text)
    assert nonce is not None
    refused = wrong.post(
        "/ui/login",
        data={"csrf": nonce.group(1), "token": tokens["alice"] + "x"},
        headers={"origin": served.url},
    )
    assert refused.status_code == 401 and "agbom_review=" not in refused.headers.get(
        "set-cookie", ""
    )
    client, _ = signed_in(served, tokens["alice"])
    for path in ("/ui/queue", "/ui/fleet", "/ui/decisions"):
        answer = client.get(path)
        assert answer.status_code == 200
        assert answer.headers["content-security-policy"] == CSP
        assert answer.headers["x-frame-options"] == "DENY"
        assert "<script>" not in answer.text and " style=" not in answer.text
        assert "http://" not in answer.text.replace(served.url, "")  # nothing from elsewhere
    static = re.search(r'src="(/ui/static/review\.[0-9a-f]{16}\.js)"', client.get("/ui/queue").text)
    assert static is not None
    script = client.get(static.group(1))
    assert script.status_code == 200 and "immutable" in script.headers["cache-control"]
    assert client.get("/ui/static/review.js").status_code == 404  # only the hashed names


def test_decisions_need_the_token_the_origin_and_the_approver_role(server, tmp_path: Path) -> None:
    served, tokens = server
    version = version_of("http-target", skill_folder(tmp_path / "s", {"SKILL.md": "hello\n"}))
    register(served.url, version, agent_id="agent-h", capabilities=[])
    alice, csrf = signed_in(served, tokens["alice"])
    fields = {
        "action": "approve",
        **pair_fields("http-target", version.digest),
        "reason": "ok",
    }
    assert decide(alice, served, **fields).status_code == 403  # no token
    assert decide(alice, served, **fields, csrf=csrf + "x").status_code == 403
    cross = alice.post(
        "/ui/skill/decide", data={**fields, "csrf": csrf}, headers={"origin": "http://evil.example"}
    )
    assert cross.status_code == 403
    sibling = alice.post(
        "/ui/skill/decide", data={**fields, "csrf": csrf}, headers={"sec-fetch-site": "same-site"}
    )
    assert sibling.status_code == 403
    neither = alice.post("/ui/skill/decide", data={**fields, "csrf": csrf})
    assert neither.status_code == 403
    bob, bob_csrf = signed_in(served, tokens["bob"])
    assert decide(bob, served, **fields, csrf=bob_csrf).status_code == 403
    assert cli_status(served.db, "http-target", version.digest)["record"]["status"] == "pending"
    # Bounds: a missing reason, a reason over 4096 characters, an unknown action, a huge form.
    assert decide(alice, served, **{**fields, "reason": " "}, csrf=csrf).status_code == 400
    assert decide(alice, served, **{**fields, "reason": "r" * 4097}, csrf=csrf).status_code == 400
    assert decide(alice, served, **{**fields, "action": "bless"}, csrf=csrf).status_code == 400
    assert decide(alice, served, **fields, csrf=csrf, pad="x" * 70_000).status_code == 413
    expired = decide(alice, served, **fields, csrf=csrf, expires="2001-01-01T00:00:00Z")
    assert expired.status_code == 400
    assert cli_status(served.db, "http-target", version.digest)["record"]["status"] == "pending"
    done = decide(alice, served, **fields, csrf=csrf, expires="30d", agents="agent-h, agent-z")
    assert done.status_code == 303
    record = cli_status(served.db, "http-target", version.digest)["record"]
    assert record["status"] == "approved" and record["decided_by"] == "alice"
    assert record["scope"]["agents"] == ["agent-h", "agent-z"] and record["expires_at"]
    revoked = decide(alice, served, **{**fields, "action": "revoke", "reason": "pulled"}, csrf=csrf)
    assert revoked.status_code == 303
    assert cli_status(served.db, "http-target", version.digest)["record"]["status"] == "revoked"


def test_the_proxy_header_names_listed_reviewers_only(server) -> None:
    served, _ = server
    named = httpx.get(
        f"{served.url}/ui/queue", headers={"x-forwarded-user": "proxy-pat"}, timeout=30
    )
    assert named.status_code == 200 and "proxy-pat" in named.text
    stranger = httpx.get(
        f"{served.url}/ui/queue", headers={"x-forwarded-user": "mallory"}, timeout=30
    )
    assert stranger.status_code == 403
    # The proxy-only reviewer has no token, so without the header there is no way in.
    assert httpx.get(f"{served.url}/ui/queue", timeout=30).status_code == 303


def test_the_page_is_off_without_a_reviewers_file(tmp_path: Path) -> None:
    served = Served(db=tmp_path / "agbom.db", log=tmp_path / "serve.log").start()
    try:
        assert httpx.get(f"{served.url}/ui/queue", timeout=30).status_code == 404
        assert httpx.get(f"{served.url}/ui/login", timeout=30).status_code == 404
        assert httpx.get(f"{served.url}/", timeout=30).status_code == 404
        assert "review page" not in served.logs()
    finally:
        served.stop()


def test_serve_prints_the_page_url_and_root_leads_there(server) -> None:
    served, _ = server
    assert f"agbom: review page on {served.url}/ui/" in served.logs()
    root = httpx.get(f"{served.url}/", timeout=30)
    assert root.status_code == 303 and root.headers["location"] == "/ui/"
    # Followed, it ends on the sign-in form of the page.
    landed = httpx.get(f"{served.url}/", timeout=30, follow_redirects=True)
    assert landed.status_code == 200 and str(landed.url) == f"{served.url}/ui/login"
    assert 'name="token"' in landed.text


def test_a_proxy_header_without_the_file_or_a_missing_file_is_one_line(tmp_path: Path) -> None:
    alone = run_cli("serve", "--reviewer-header", "X-User", "--db", str(tmp_path / "a.db"))
    assert alone.returncode == 2 and b"needs --reviewers-file" in alone.stderr
    missing = run_cli(
        "serve", "--reviewers-file", str(tmp_path / "none.json"), "--db", str(tmp_path / "a.db")
    )
    assert missing.returncode == 1
    assert missing.stderr.decode().count("\n") == 1 and b"does not exist" in missing.stderr


def test_the_page_works_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    """Same page, same store path, on the PostgreSQL backend: the definition kept at
    registration, the diff, and a decision that the next load honours."""
    reviewers = tmp_path / "reviewers.json"
    token = add_reviewer(reviewers, "alice", "approver")
    served = Served(
        db=pg_url,  # type: ignore[arg-type]
        log=tmp_path / "serve.log",
        extra=["--reviewers-file", str(reviewers)],
    ).start()
    try:
        old = version_of("pg-skill", skill_folder(tmp_path / "v1", {"SKILL.md": "one\n"}))
        new = version_of("pg-skill", skill_folder(tmp_path / "v2", {"SKILL.md": "one\ntwo\n"}))
        register(served.url, old, agent_id="agent-pg", capabilities=[])
        approved = run_cli(
            "skills",
            "approve",
            "pg-skill",
            "--digest",
            old.digest,
            "--db",
            pg_url,
            "--by",
            "carol",
            "--reason",
            "first",
        )
        assert approved.returncode == 0, approved.stderr
        register(served.url, new, agent_id="agent-pg", capabilities=[])
        client, csrf = signed_in(served, token)
        assert "pg-skill" in client.get("/ui/queue").text
        page = client.get("/ui/skill", params={"id": "pg-skill", "digest": new.digest}).text
        assert '<span class="add">+two</span>' in page and "matches the digest" in page
        fields = {
            "action": "approve",
            **pair_fields("pg-skill", new.digest),
            "reason": "diff read",
            "csrf": csrf,
        }
        assert decide(client, served, **fields).status_code == 303
        assert load(served.url, new, agent_id="agent-pg")["result"]["decision"] == "allow"
        history = cli_status(pg_url, "pg-skill", new.digest)["history"]
        assert history[-1]["actor"] == "alice" and history[-1]["source"] == "ui"
    finally:
        served.stop()


def _queue_ids(html: str) -> list[str]:
    return re.findall(r'<a href="/ui/skill\?id=([^&"]+)&amp;digest=', html)


def test_the_queue_filters_and_sorts_and_the_log_filters(server, tmp_path: Path) -> None:
    served, tokens = server
    for name in ("sort-b", "sort-a", "sort-c"):
        version = version_of(name, skill_folder(tmp_path / name, {"SKILL.md": f"{name}\n"}))
        register(served.url, version, agent_id=f"agent-{name}", capabilities=["net.http"])
    client, _ = signed_in(served, tokens["alice"])
    up = _queue_ids(
        client.get("/ui/queue", params={"q": "sort-", "sort": "skill_id", "order": "asc"}).text
    )
    assert up == ["sort-a", "sort-b", "sort-c"]
    down = _queue_ids(
        client.get("/ui/queue", params={"q": "SORT-", "sort": "skill_id", "order": "desc"}).text
    )
    assert down == ["sort-c", "sort-b", "sort-a"]
    by_agent = _queue_ids(client.get("/ui/queue", params={"q": "agent-sort-b"}).text)
    assert by_agent == ["sort-b"]
    assert (
        _queue_ids(client.get("/ui/queue", params={"q": "sort-", "status": "approved"}).text) == []
    )
    assert client.get("/ui/queue", params={"sort": "digest; drop"}).status_code == 400
    assert client.get("/ui/queue", params={"q": "x" * 2000}).status_code == 400
    # The decision log: each unapproved registration was denied approval_pending.
    log = client.get(
        "/ui/decisions",
        params={"decision": "deny", "reason": "approval_pending", "agent": "agent-sort-a"},
    )
    assert log.status_code == 200
    rows = re.findall(r'href="/ui/explain\?session=([^&"]+)&amp;entry=([^"]+)"', log.text)
    assert len(rows) == 1
    assert (
        client.get(
            "/ui/decisions",
            params={"decision": "allow", "reason": "approval_pending", "agent": "agent-sort-a"},
        ).text.count("/ui/explain?")
        == 0
    )
    explained = client.get("/ui/explain", params={"session": rows[0][0], "entry": rows[0][1]})
    assert explained.status_code == 200 and "steps/skillRegister" in explained.text
    assert "approval_pending" in explained.text
    missing = client.get("/ui/explain", params={"session": rows[0][0], "entry": "999"})
    assert missing.status_code == 404
