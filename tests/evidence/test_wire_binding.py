"""A signed ServerHello or error names the session and request it answers, under the
signature, and an acs-crypto session whose key the Guardian was restarted without is refused
rather than answered with another key (issue 39 D4), through a real ``agbom serve``."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tests.evidence.test_wire_signatures import _keys, _response_verifies
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post

pytestmark = pytest.mark.network


def test_a_signed_hello_and_error_name_their_session_and_request(tmp_path: Path) -> None:
    ed_key, ed_raw = _keys(tmp_path, "Ed25519", "guardian-ed")
    server = Served(tmp_path / "s.db", tmp_path / "s.log", extra=["--signing-key", str(ed_key)])
    server.start()
    try:
        message = hello("bound-a")
        answer = post(server.url, message)
        binding = answer["result"]["agbom_binding"]
        assert binding == {"session_id": "bound-a", "request_id": message["params"]["request_id"]}
        assert _response_verifies(answer, ed_raw)
        # Replayed into another handshake it says whose it is; rewritten, it no longer verifies.
        moved = copy.deepcopy(answer)
        moved["result"]["agbom_binding"]["session_id"] = "bound-b"
        assert not _response_verifies(moved, ed_raw)
        step = request("steps/turnEnd", {"turn_id": "t"}, session_id="never-opened")
        error = post(server.url, step)
        assert error["error"]["data"]["agbom_binding"] == {
            "session_id": "never-opened",
            "request_id": step["params"]["request_id"],
        }
        assert _response_verifies(error, ed_raw)
    finally:
        server.stop()


def test_a_crypto_session_after_a_restart_without_its_key_is_refused(tmp_path: Path) -> None:
    ml_key, ml_raw = _keys(tmp_path, "ML-DSA-65", "guardian-ml")
    ed_key, ed_raw = _keys(tmp_path, "Ed25519", "guardian-ed")
    both = ["--signing-key", str(ml_key), "--signing-key", str(ed_key)]
    server = Served(tmp_path / "s.db", tmp_path / "s.log", extra=both).start()
    try:
        answer = post(server.url, hello("crypto-r", profiles_supported=["acs-crypto"]))
        assert "acs-crypto" in answer["result"]["profiles_accepted"]
        start = request("steps/sessionStart", {}, session_id="crypto-r")
        started = post(server.url, start)
        assert started["result"]["signature"]["algorithm"] == "ML-DSA-65"
        assert _response_verifies(started, ml_raw)
        server.stop()
        server.extra = ["--signing-key", str(ed_key)]  # the ML-DSA key is gone
        server.start()
        step = request("steps/userMessage", {"content": "hi"}, session_id="crypto-r")
        refused = post(server.url, step)
        assert refused["error"]["data"]["reason"] == "signing_key_unavailable", refused
        assert "signature" not in refused["error"]  # no other key answers in its place
        # A session that is not acs-crypto is still served, signed with Ed25519.
        post(server.url, hello("plain-r"))
        plain = post(server.url, request("steps/sessionStart", {}, session_id="plain-r"))
        assert plain["result"]["decision"] == "allow"
        assert _response_verifies(plain, ed_raw)
    finally:
        server.stop()
