"""Forgery and replay against a real ``agbom serve --require-signatures`` on loopback.

Every forged, replayed or stale request is refused with the code the specification fixes
(-32004 signature, -32005 replay, -32006 clock skew) and leaves the session's chain exactly as
it was. Genuine requests in between still succeed and get signed answers.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agbom.protocol import KeyRing, sign_envelope, verify_envelope
from agbom.store import SqliteStore
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, KeyRing]]:
    folder = tmp_path_factory.mktemp("signed")
    secret = folder / "deployment.key"
    secret.write_bytes(bytes(range(64)))
    secret.chmod(0o600)
    server = Served(
        db=folder / "store.db",
        log=folder / "serve.log",
        extra=["--secret-file", str(secret), "--require-signatures"],
    ).start()
    yield server, KeyRing.from_file(secret)
    server.stop()


def _tip(db: Path, sid: str) -> Any:
    with SqliteStore.open(db) as store:
        return store.chain_tip(sid)


def _stamp(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _signed_session(server: Served, ring: KeyRing) -> tuple[str, bytes]:
    sid = f"sig-{uuid.uuid4()}"
    key = ring.session_key(sid)
    reply = post(server.url, sign_envelope(hello(sid), key, ring.key_id))
    verify_envelope(reply, key)
    started = post(
        server.url,
        sign_envelope(request("steps/sessionStart", {}, session_id=sid), key, ring.key_id),
    )
    verify_envelope(started, key)
    assert started["result"]["decision"] == "allow"
    return sid, key


def _message(sid: str, **extra: Any) -> dict[str, Any]:
    return request("steps/userMessage", {"content": "hello"}, session_id=sid, **extra)


def _tampered(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    signed = sign_envelope(_message(sid), key, ring.key_id)
    signed["params"]["payload"]["content"] = "rm -rf /"
    return signed


def _other_session_key(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    return sign_envelope(_message(sid), ring.session_key(f"other-{uuid.uuid4()}"), ring.key_id)


def _other_deployment(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    stranger = KeyRing(b"another deployment entirely!!", ring.key_id)
    return sign_envelope(_message(sid), stranger.session_key(sid), ring.key_id)


def _wrong_key_id(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    return sign_envelope(_message(sid), key, "not-the-key-id")


def _bad_algorithm(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    signed = sign_envelope(_message(sid), key, ring.key_id)
    signed["params"]["signature"]["algorithm"] = "none"
    return signed


def _garbage_value(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    signed = sign_envelope(_message(sid), key, ring.key_id)
    signed["params"]["signature"]["value"] = "!!not base64!!"
    return signed


def _signature_moved(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    donor = sign_envelope(_message(sid), key, ring.key_id)
    target = _message(sid)
    target["params"]["signature"] = donor["params"]["signature"]
    return target


def _empty_signature(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    unsigned = _message(sid)
    unsigned["params"]["signature"] = {}
    return unsigned


def _unsigned(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    return _message(sid)


def _stale(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    return sign_envelope(_message(sid, timestamp=_stamp(timedelta(minutes=-6))), key, ring.key_id)


def _future(sid: str, key: bytes, ring: KeyRing) -> dict[str, Any]:
    return sign_envelope(_message(sid, timestamp=_stamp(timedelta(minutes=6))), key, ring.key_id)


FORGERIES: dict[str, tuple[Callable[[str, bytes, KeyRing], dict[str, Any]], int]] = {
    "unsigned": (_unsigned, -32004),
    # A signature object outside the envelope schema (no fields, an algorithm not in the
    # ACS list) fails step (1), envelope shape, before step (2) looks at the MAC.
    "empty_signature": (_empty_signature, -32600),
    "payload_edited_after_signing": (_tampered, -32004),
    "signed_with_another_session_key": (_other_session_key, -32004),
    "signed_with_another_deployment_key": (_other_deployment, -32004),
    "wrong_key_id": (_wrong_key_id, -32004),
    "algorithm_none": (_bad_algorithm, -32600),
    "garbage_signature_value": (_garbage_value, -32004),
    "signature_moved_to_another_request": (_signature_moved, -32004),
    "timestamp_too_old": (_stale, -32006),
    "timestamp_in_the_future": (_future, -32006),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_forged_request_is_refused_and_writes_nothing(
    secured: tuple[Served, KeyRing], name: str
) -> None:
    server, ring = secured
    sid, key = _signed_session(server, ring)
    build, code = FORGERIES[name]
    before = _tip(server.db, sid)
    reply = post(server.url, build(sid, key, ring))
    assert reply["error"]["code"] == code, reply
    assert _tip(server.db, sid) == before
    # The session still works for the genuine client.
    genuine = post(server.url, sign_envelope(_message(sid), key, ring.key_id))
    verify_envelope(genuine, key)
    assert genuine["result"]["decision"] == "allow"
    assert _tip(server.db, sid)[0] == before[0] + 1


def test_replays_are_refused_and_write_nothing(secured: tuple[Served, KeyRing]) -> None:
    server, ring = secured
    sid, key = _signed_session(server, ring)
    original = sign_envelope(_message(sid, nonce=uuid.uuid4().hex), key, ring.key_id)
    assert post(server.url, original)["result"]["decision"] == "allow"
    tip = _tip(server.db, sid)
    # 1. the same bytes again
    again = post(server.url, copy.deepcopy(original))
    assert again["error"]["code"] == -32005
    # 2. a new JSON-RPC id, re-signed by the genuine key, same request_id
    renumbered = copy.deepcopy(original)
    renumbered["id"] = "fresh-id"
    del renumbered["params"]["signature"]
    assert post(server.url, sign_envelope(renumbered, key, ring.key_id))["error"]["code"] == -32005
    # 3. a new request_id but the same nonce
    same_nonce = _message(sid, nonce=original["params"]["nonce"])
    reply = post(server.url, sign_envelope(same_nonce, key, ring.key_id))
    assert (
        reply["error"]["code"] == -32005 and reply["error"]["data"]["reason"] == "duplicate_nonce"
    )
    # 4. a request of this session replayed into another session (signature binds the session)
    sid2, _ = _signed_session(server, ring)
    moved = copy.deepcopy(original)
    moved["params"]["metadata"]["session_id"] = sid2
    before2 = _tip(server.db, sid2)
    assert post(server.url, moved)["error"]["code"] == -32004
    assert _tip(server.db, sid2) == before2
    assert _tip(server.db, sid) == tip


def test_replay_is_refused_after_a_restart(tmp_path: Path) -> None:
    secret = tmp_path / "k"
    secret.write_bytes(b"k" * 32)
    secret.chmod(0o600)
    server = Served(
        db=tmp_path / "s.db",
        log=tmp_path / "serve.log",
        extra=["--secret-file", str(secret), "--require-signatures"],
    ).start()
    ring = KeyRing.from_file(secret)
    try:
        sid, key = _signed_session(server, ring)
        original = sign_envelope(_message(sid), key, ring.key_id)
        assert post(server.url, original)["result"]["decision"] == "allow"
        server.kill()
        server.start()
        tip = _tip(server.db, sid)
        assert post(server.url, original)["error"]["code"] == -32005
        assert _tip(server.db, sid) == tip
    finally:
        server.stop()
