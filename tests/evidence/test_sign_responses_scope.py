"""``--sign-responses non-allow``: ServerHellos, errors and non-ALLOW decisions are signed,
an ALLOW is not; checked with dilithium-py on a Guardian built as ``agbom serve`` builds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agbom.evidence import SigningKey, write_key_pair
from agbom.guardian import GuardianConfig, build_guardian
from tests.evidence import independent
from tests.evidence.test_wire_signatures import _response_verifies
from tests.guardian.acs import digest, hello, request
from tests.transports.served import run_cli


def test_non_allow_signs_hellos_errors_and_denials_only(tmp_path: Path) -> None:
    key = SigningKey.generate("ML-DSA-65")
    write_key_pair(key, tmp_path / "g")
    _, raw = independent.raw_public_key((tmp_path / "g.pub").read_bytes())
    config = GuardianConfig(signing_keys=(str(tmp_path / "g.key"),), sign_responses="non-allow")
    guardian = build_guardian(tmp_path / "agbom.db", config=config)
    sid = "scope-1"
    answer = guardian.handle(hello(sid, profiles_supported=["acs-crypto"]))
    assert _response_verifies(answer, raw)
    start = guardian.handle(
        request("steps/sessionStart", {"session_reason": "new"}, session_id=sid)
    )
    assert start["result"]["decision"] == "allow" and "signature" not in start["result"]
    # A skill load never registered nor approved: denied, and the denial is signed.
    load = {
        "skill_id": "acme/unknown",
        "digest": digest(),
        "load_trigger": "user",
        "load_path": [{"skill_id": "acme/unknown"}],
        "digest_verified": True,
    }
    denied = guardian.handle(request("steps/skillLoad", load, session_id=sid))
    assert denied["result"]["decision"] == "deny"
    assert _response_verifies(denied, raw), denied
    malformed = guardian.handle(request("steps/toolCallRequest", {"nope": 1}, session_id=sid))
    assert "error" in malformed and _response_verifies(malformed, raw)
    guardian.store.close()


def test_the_scope_needs_a_key_and_a_known_value(tmp_path: Path) -> None:
    db = str(tmp_path / "agbom.db")
    alone = run_cli("serve", "--db", db, "--port", "0", "--sign-responses", "non-allow")
    assert alone.returncode == 2 and b"--sign-responses needs --signing-key" in alone.stderr
    key = SigningKey.generate("Ed25519")
    write_key_pair(key, tmp_path / "g")
    bad = run_cli(
        "serve", "--db", db, "--port", "0", "--signing-key", str(tmp_path / "g.key"),
        "--sign-responses", "some",
    )  # fmt: skip
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr


@pytest.mark.parametrize("scope", ["all", "non-allow"])
def test_every_answer_verifies_or_is_unsigned_never_wrongly_signed(
    tmp_path: Path, scope: str
) -> None:
    key = SigningKey.generate("Ed25519")
    write_key_pair(key, tmp_path / "g")
    _, raw = independent.raw_public_key((tmp_path / "g.pub").read_bytes())
    config = GuardianConfig(signing_keys=(str(tmp_path / "g.key"),), sign_responses=scope)
    guardian = build_guardian(tmp_path / "agbom.db", config=config)
    sid = "scope-2"
    answers = [
        guardian.handle(hello(sid)),
        guardian.handle(request("steps/sessionStart", {"session_reason": "new"}, session_id=sid)),
        guardian.handle(request("steps/sessionEnd", {"reason": "completed"}, session_id=sid)),
    ]
    for answer in answers:
        slot = answer.get("result") or answer.get("error")
        if scope == "all" or "signature" in slot:
            assert _response_verifies(answer, raw), answer
    assert guardian.store.signed_head(sid) is not None
    guardian.store.close()
