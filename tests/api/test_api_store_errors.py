"""A value the store refuses is a 400 with its reason on a real ``agbom serve``, never a 500.

The read API checks ids before it asks the store (tests/api/test_api_openapi.py's fuzzer
covers that); whatever the store still refuses (:class:`agbom.store.StoreValueError`)
becomes ``400 invalid_value`` in one place, the app's exception handlers
(agbom/transports/http.py), and nothing reaches the log as a traceback.

Each input here is one that schemathesis found answering 500 (issue 38 item 0: a skill id
that is only a space, ``GET /v1/skills/%20``), kept so that it stays fixed whatever seed a
later fuzzing run draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agbom.store import open_store
from tests.transports.served import Served

DIGEST = "sha256:" + "ab" * 32
TOKEN = "api-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("store-errors")
    with open_store(folder / "s.db"):
        pass
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "token").chmod(0o600)
    server = Served(
        db=folder / "s.db",
        log=folder / "serve.log",
        extra=["--api-token-file", str(folder / "token")],
    ).start()
    try:
        yield server
    finally:
        server.stop()


# Found by schemathesis (issue 38 item 0), and the same blank id on every route that looks
# one up: the store's check_text refuses an id that is only white space.
BLANK_IDS = [
    "/v1/skills/%20",
    "/v1/skills/%20%20%20",
    f"/v1/skills/%20/approvals/{DIGEST}",
    f"/v1/skills/%20%20/approvals/{DIGEST}",
]


@pytest.mark.parametrize("path", BLANK_IDS)
def test_a_value_the_store_refuses_is_a_400_with_its_reason(served: Served, path: str) -> None:
    answer = httpx.get(served.url + path, headers=AUTH, timeout=30)
    assert answer.status_code == 400, (answer.status_code, answer.text)
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert body["error"] == "invalid_value"
    assert body["message"] == "skill_id must be a non-empty string"
    assert "Traceback" not in served.logs()


def test_the_refusal_still_needs_the_token(served: Served) -> None:
    answer = httpx.get(served.url + "/v1/skills/%20", timeout=30)
    assert answer.status_code == 401
    assert answer.json()["error"] == "unauthorized"


def test_the_server_keeps_answering_after_a_refused_value(served: Served) -> None:
    for _ in range(3):
        assert httpx.get(served.url + "/v1/skills/%20", headers=AUTH, timeout=30).status_code == 400
    assert httpx.get(served.url + "/healthz", timeout=30).json() == {"status": "ok"}
    missing = httpx.get(served.url + "/v1/skills/acme%2Fnone", headers=AUTH, timeout=30)
    assert missing.status_code == 404
    assert "Traceback" not in served.logs()
    assert "Exception in ASGI application" not in served.logs()


def test_a_store_that_cannot_answer_is_a_503_with_one_line_in_the_log(tmp_path: Path) -> None:
    """Any other store error is ``503 store_unavailable``: the front opens its own store
    handle on the first read, and here the file was replaced by one that is no store (the
    decision process keeps the one it opened at start)."""
    db = tmp_path / "s.db"
    with open_store(db):
        pass
    server = Served(db=db, log=tmp_path / "serve.log").start()
    try:
        junk = tmp_path / "junk"
        junk.write_bytes(b"not a database\n" * 512)
        junk.replace(db)
        answer = httpx.get(server.url + "/v1/skills/acme%2Fx", timeout=30)
        assert answer.status_code == 503, answer.text
        assert answer.json() == {
            "error": "store_unavailable",
            "message": "the store cannot answer now",
        }
    finally:
        server.stop()
    log = server.logs()
    lines = [line for line in log.splitlines() if "store error" in line]
    assert len(lines) == 1, log
    assert lines[0].startswith(f"agbom: store error on /v1/skills/acme/x: store {db}: "), log
    assert "Traceback" not in log
