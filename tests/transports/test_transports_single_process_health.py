"""``agbom serve --single-process`` reports a store that cannot write on /healthz (503) and
sees it recover by itself, as the decision process does. A real server on 127.0.0.1."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.guardian.acs import hello, request
from tests.store.unwritable import unwritable
from tests.transports.served import Served, open_session, post, run_cli

pytestmark = pytest.mark.network


def test_single_process_health_is_503_while_the_store_cannot_write(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    digest = "sha256:" + "c" * 64
    made = run_cli("skills", "approve", "x", "--digest", digest, "--reason", "r", "--db", str(db))
    assert made.returncode == 0, made.stderr  # a store with its files on disk
    with unwritable(db):
        # Started while the files cannot be written: SQLite opens the store read-only.
        server = Served(db=db, log=tmp_path / "serve.log", extra=["--single-process"]).start()
        try:
            with httpx.Client(timeout=30) as http:
                statuses = set()
                for _ in range(10):  # bounded
                    answer = post(server.url, hello("ro-session"), client=http)
                    assert "error" in answer, answer  # the handshake cannot be stored
                    statuses.add(http.get(f"{server.url}/healthz").status_code)
                    time.sleep(0.05)
                assert statuses == {503}, statuses
        except BaseException:
            server.stop()
            raise
    try:
        with httpx.Client(timeout=30) as http:
            # No request needed: the server probes the store and sees it writable again.
            deadline = time.monotonic() + 30
            while http.get(f"{server.url}/healthz").status_code != 200:
                assert time.monotonic() < deadline, "not healthy 30 s after the store was writable"
                time.sleep(0.1)
            sid = open_session(server.url, client=http)
            step = request("steps/userMessage", {"content": "y"}, session_id=sid)
            assert post(server.url, step, client=http)["result"]["decision"] == "allow"
    finally:
        server.stop()
