"""handshake/hello through the Guardian over a real SQLite store: the clock window applies to
it as to any request (§10.3), its timestamp is read by the RFC 3339 grammar, and transports
it offers that agbom does not know are ignored."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agbom.guardian import Guardian, GuardianConfig, build_guardian
from agbom.protocol import KeyRing, verify_envelope
from tests.guardian.acs import hello, new_session_id, request

WEEK_AGO = (datetime.now(UTC) - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
KEY = b"k" * 32


@pytest.fixture
def guardian(tmp_path: Path) -> Iterator[Guardian]:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def error_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" in response, response
    return response["error"]


def stamped(message: dict[str, Any], timestamp: str) -> dict[str, Any]:
    message["params"]["timestamp"] = timestamp
    return message


def step(session_id: str, **extra: Any) -> dict[str, Any]:
    return request("steps/userMessage", {"content": "hi"}, session_id=session_id, **extra)


def test_an_old_unsigned_hello_is_refused_and_negotiates_nothing(guardian: Guardian) -> None:
    sid = new_session_id()
    error = error_of(guardian.handle(stamped(hello(sid), WEEK_AGO)))
    assert error["code"] == -32006 and error["data"]["skew_window_ms"] == 300_000
    # Nothing was negotiated: the session's next step is refused as having no handshake.
    assert error_of(guardian.handle(step(sid)))["data"]["reason"] == "no_handshake"


def test_an_old_signed_hello_is_refused_with_a_signed_error(tmp_path: Path) -> None:
    ring = KeyRing(KEY, "k1")
    g = Guardian(store=build_guardian(tmp_path / "s.db").store, rules=_rules(), keyring=ring)
    try:
        sid = new_session_id()
        response = g.handle(ring.sign(stamped(hello(sid), WEEK_AGO), sid, "k1"))
        assert error_of(response)["code"] == -32006
        verify_envelope(response, ring.session_key(sid, "k1"))  # raises if unsigned or wrong
    finally:
        g.store.close()


def test_the_window_the_operator_sets_admits_an_old_hello(tmp_path: Path) -> None:
    # The README's demo replays a recording over HTTP with --skew-window-ms 315360000000.
    g = build_guardian(tmp_path / "w.db", config=GuardianConfig(skew_window_ms=315_360_000_000))
    try:
        sid = new_session_id()
        assert "result" in g.handle(stamped(hello(sid), WEEK_AGO))
        assert g.handle(stamped(step(sid), WEEK_AGO))["result"]["decision"] == "allow"
    finally:
        g.store.close()


def test_a_hello_from_the_future_is_refused(guardian: Guardian) -> None:
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert error_of(guardian.handle(stamped(hello(new_session_id()), later)))["code"] == -32006


def lower_case_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dt%H:%M:%S.%fz")


def test_lower_case_t_and_z_at_the_current_time_are_decided(guardian: Guardian) -> None:
    sid = new_session_id()
    assert "result" in guardian.handle(stamped(hello(sid), lower_case_now()))
    assert guardian.handle(stamped(step(sid), lower_case_now()))["result"]["decision"] == "allow"


@pytest.mark.parametrize(
    "timestamp",
    [
        # What the schema's date-time format check lets through, but RFC 3339 does not.
        datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+0000"),
        datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f"),  # no offset: fails the format
    ],
)
def test_a_timestamp_outside_the_grammar_is_invalid_not_skewed(
    guardian: Guardian, timestamp: str
) -> None:
    sid = new_session_id()
    assert "result" in guardian.handle(hello(sid))
    for message in (stamped(step(sid), timestamp), stamped(hello(new_session_id()), timestamp)):
        error = error_of(guardian.handle(message))
        assert error["code"] == -32600, error
        assert error["data"]["reason"] in ("invalid_timestamp", "invalid_envelope")


@pytest.mark.parametrize("arrival", [None, "http"])
def test_an_unknown_transport_beside_a_known_one_is_ignored(tmp_path: Path, arrival: str) -> None:
    g = build_guardian(tmp_path / "t.db", transport=arrival)
    try:
        answer = g.handle(hello(new_session_id(), transports_supported=["grpc", "http"]))
        assert answer["result"]["selected_transport"] == "http", answer
    finally:
        g.store.close()


def test_a_hello_offering_only_unknown_transports_is_refused(guardian: Guardian) -> None:
    error = error_of(guardian.handle(hello(new_session_id(), transports_supported=["grpc"])))
    assert error["code"] == -32000 and error["data"]["reason"] == "no_common_transport"
    assert "'grpc'" in error["data"]["message"]


@pytest.mark.parametrize("offered", [[7], ["http", None], [], ["x" * 65], "http"])
def test_transports_that_are_not_names_are_still_invalid(guardian: Guardian, offered: Any) -> None:
    error = error_of(guardian.handle(hello(new_session_id(), transports_supported=offered)))
    assert error["code"] == -32602 and error["data"]["reason"] == "invalid_payload"


def _rules() -> Any:
    from agbom.rules import load_rules

    return load_rules(None, with_default=True)
