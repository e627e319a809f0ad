"""Every ServerHello a real ``agbom serve`` sends passes the ACS handshake schema, and says in
its standard fields only what agbom does (issue 42 N2, N3).

The schema is the ACS one (``tests/protocol/vectors/handshake.json``, vendored byte for byte)
and the validator is ``jsonschema``'s draft 2020-12 one, which agbom does not use. The
hellos come from servers without keys, with an HMAC key, with an ML-DSA-65 or an Ed25519
signing key and with all three, answering unsigned and HMAC-signed hellos that offer no
profile, ``acs-crypto``, or ``acs-provenance`` from a deterministic producer.

``signature_algorithms_supported`` is, in the schema's words, what the Guardian "can verify on
incoming requests": HMAC-SHA256 when it holds a secret, else nothing. The signing keys' own
algorithms go in the extension member ``agbom_signatures`` (Ed25519 is not a registered
name, so it may not appear in the standard field at all), and a request signed with a
registered algorithm agbom does not verify is refused for that reason, naming what is
verified.
"""

from __future__ import annotations

import base64
import copy
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from dilithium_py.ml_dsa import ML_DSA_65
from jsonschema import Draft202012Validator

from tests.conformance.acs_core_vectors import session_key, signed, verifies
from tests.evidence import independent
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post, run_cli

pytestmark = pytest.mark.network

SCHEMA = Path(__file__).resolve().parents[1] / "protocol" / "vectors" / "handshake.json"
SECRET = b"server-hello-schema-test-secret-0123456789"
KEY_ID = "k1"
REGISTERED = {
    "HMAC-SHA256", "ECDSA-P256", "RSA-PSS-SHA256", "ML-DSA-65", "ML-DSA-44", "ML-DSA-87",
    "SLH-DSA-128s", "SLH-DSA-128f", "ML-DSA-65+ECDSA-P256", "ML-DSA-65+RSA-PSS-SHA256",
}  # fmt: skip
"""§10.1's registry, as the vendored schema's enum has it (checked below)."""


def server_hello_validator() -> Draft202012Validator:
    document = orjson.loads(SCHEMA.read_bytes())
    schema = {"$defs": document["$defs"], "$ref": "#/$defs/ServerHello"}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _signing_key(folder: Path, algorithm: str) -> Path:
    prefix = folder / algorithm
    done = run_cli("keys", "generate", "-a", algorithm, "--out", str(prefix))
    assert done.returncode == 0, done.stderr
    return prefix.with_suffix(".key")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    folder = tmp_path_factory.mktemp("hellos")
    secret = folder / "secret"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    hmac_flags = ["--secret-file", str(secret), "--key-id", KEY_ID]
    ml, ed = _signing_key(folder, "ML-DSA-65"), _signing_key(folder, "Ed25519")
    configs = {
        "no key": [],
        "hmac": hmac_flags,
        "ml-dsa-65": ["--signing-key", str(ml)],
        "ed25519": ["--signing-key", str(ed)],
        "hmac, ed25519 then ml-dsa-65": [
            *hmac_flags, "--signing-key", str(ed), "--signing-key", str(ml),
        ],
    }  # fmt: skip
    started: dict[str, Served] = {}
    try:
        for name, extra in configs.items():
            tag = name.replace(" ", "").replace(",", "-")
            started[name] = Served(
                db=folder / f"{tag}.db", log=folder / f"{tag}.log", extra=extra
            ).start()
        yield started
    finally:
        for server in started.values():
            server.stop()


OFFERS: dict[str, dict[str, Any]] = {
    "no profile": {"provenance_producer": "none", "profiles_supported": []},
    "acs-crypto": {"provenance_producer": "none", "profiles_supported": ["acs-core", "acs-crypto"]},
    "acs-provenance": {
        "provenance_producer": "deterministic",
        "profiles_supported": ["acs-core", "acs-provenance"],
    },
}


def _hellos(servers: dict[str, Served]) -> Iterator[tuple[str, Served, dict[str, Any], bool]]:
    """(label, server, the answer, whether the hello was HMAC-signed) for each combination."""
    for name, server in servers.items():
        hmac = "hmac" in name
        for offer, fields in OFFERS.items():
            for sign in (False, True) if hmac else (False,):
                sid = f"hello-{uuid.uuid4()}"
                message = hello(sid, **fields)
                if sign:
                    message = signed(message, session_key(SECRET, sid), KEY_ID)
                answer = post(server.url, message)
                label = f"{name} / {offer}{' / signed' if sign else ''}"
                if sign and "acs-crypto" not in answer["result"]["profiles_accepted"]:
                    # An HMAC-signed hello is answered with HMAC, outside acs-crypto (whose
                    # answers the ML-DSA-65 key signs: docs/evidence.md).
                    assert verifies(answer, session_key(SECRET, sid)), label
                yield label, server, answer, sign


def test_the_vendored_schema_names_the_registry() -> None:
    document = orjson.loads(SCHEMA.read_bytes())
    listed = document["$defs"]["ServerHello"]["properties"]["signature_algorithms_supported"]
    assert set(listed["items"]["enum"]) == REGISTERED
    assert "Ed25519" not in REGISTERED


def test_every_server_hello_passes_the_acs_schema_and_lists_only_what_is_verified(
    servers: dict[str, Served],
) -> None:
    validator = server_hello_validator()
    checked = []
    for label, _server, answer, _signed in _hellos(servers):
        assert "result" in answer, (label, answer)
        hello_result = answer["result"]
        problems = [e.message for e in validator.iter_errors(hello_result)]
        assert problems == [], (label, problems)
        has_secret = "hmac" in label
        # What the Guardian verifies on requests: HMAC with a secret, else nothing.
        assert hello_result["signature_algorithms_supported"] == (
            ["HMAC-SHA256"] if has_secret else []
        ), label
        extension = hello_result.get("agbom_signatures")
        if "ed25519" in label or "ml-dsa" in label:
            # Which key signs the answers is said in the extension member only.
            assert extension is not None, label
            assert extension["requests"] == (["HMAC-SHA256"] if has_secret else []), label
            assert extension["responses"][0] in ("ML-DSA-65", "Ed25519"), label
            assert extension["public_keys"] == "/v1/keys"
        else:
            assert extension is None, label
        checked.append(label)
    assert len(checked) == 21  # 5 servers x 3 offers, signed too where HMAC is held


def test_acs_crypto_is_accepted_only_with_an_ml_dsa_65_key(servers: dict[str, Served]) -> None:
    for label, _server, answer, _signed in _hellos(servers):
        accepted = answer["result"]["profiles_accepted"]
        wants = "acs-crypto" in label.split(" / ")[1]
        assert ("acs-crypto" in accepted) == (wants and "ml-dsa-65" in label), (label, accepted)


def _ml_dsa_signed(envelope: dict[str, Any]) -> dict[str, Any]:
    """``envelope`` signed by a client's own ML-DSA-65 key (dilithium-py), by the §10 rule."""
    public, private = ML_DSA_65.keygen()
    out = copy.deepcopy(envelope)
    value = ML_DSA_65.sign(private, independent.jcs(out))
    out["params"]["signature"] = {
        "algorithm": "ML-DSA-65",
        "value": base64.b64encode(value).decode("ascii"),
        "key_id": independent.key_id(bytes(public)),
    }
    return out


def test_a_request_signed_with_an_algorithm_not_verified_is_told_so(
    servers: dict[str, Served],
) -> None:
    """A client that signs with ML-DSA-65 (registered; agbom signs its answers with it but
    verifies no client key) gets -32004 ``signature_algorithm_unsupported`` with the list it
    should have read in the hello; the reason docs/evidence.md names."""
    for name in ("hmac", "hmac, ed25519 then ml-dsa-65"):
        server = servers[name]
        sid = f"ml-dsa-client-{uuid.uuid4()}"
        assert "result" in post(server.url, hello(sid))
        step = request("steps/sessionStart", {}, session_id=sid)
        error = post(server.url, _ml_dsa_signed(step))["error"]
        assert error["code"] == -32004, error
        assert error["data"]["reason"] == "signature_algorithm_unsupported", error
        assert error["data"]["signature_algorithms_supported"] == ["HMAC-SHA256"], error
        assert "ML-DSA-65" in error["data"]["message"]
    # Without a secret the hello listed nothing, and a signed step says so.
    server = servers["ml-dsa-65"]
    sid = f"ml-dsa-client-{uuid.uuid4()}"
    assert post(server.url, hello(sid))["result"]["signature_algorithms_supported"] == []
    step = request("steps/sessionStart", {}, session_id=sid)
    error = post(server.url, _ml_dsa_signed(step))["error"]
    assert error["code"] == -32004
    assert error["data"]["reason"] == "signing_not_configured"
    assert error["data"]["signature_algorithms_supported"] == []
