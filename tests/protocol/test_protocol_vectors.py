"""Every value in the ACS interop vectors, reproduced byte for byte."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from agbom.protocol import (
    canonical_bytes,
    derive_session_key,
    entry_hash,
    link_entry,
    request_hash,
    sign_envelope,
    signing_input,
    verify_chain,
    verify_envelope,
)


def test_request_hash_canonical_form(chain_vectors: Any) -> None:
    case = chain_vectors["request_hash"]
    assert canonical_bytes(case["params"]) == case["canonical"].encode("utf-8")
    assert request_hash(case["params"]) == case["hash"]


def test_request_hash_ignores_signature(chain_vectors: Any) -> None:
    case = chain_vectors["request_hash"]
    signed = {**case["params"], "signature": {"algorithm": "HMAC-SHA256", "value": "x"}}
    assert request_hash(signed) == case["hash"]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_chain_entry(chain_vectors: Any, index: int) -> None:
    case = chain_vectors["chain"][index]
    assert canonical_bytes(case["entry"]) == case["canonical_content"].encode("utf-8")
    assert entry_hash(case["entry"], case["previous_hash"]) == case["entry_hash"]


def test_chain_links_and_verifies(chain_vectors: Any) -> None:
    stored: list[dict[str, Any]] = []
    previous = None
    for case in chain_vectors["chain"]:
        entry = link_entry(case["entry"], previous)
        assert entry["previous_hash"] == case["previous_hash"]
        assert entry["entry_hash"] == case["entry_hash"]
        stored.append(entry)
        previous = entry["entry_hash"]
    assert verify_chain(stored) is None
    assert verify_chain(stored, expected_head=chain_vectors["chain"][-1]["entry_hash"]) is None


def test_session_key(envelope_vectors: Any) -> None:
    key = derive_session_key(
        bytes.fromhex(envelope_vectors["ikm_hex"]), envelope_vectors["session_id"]
    )
    assert key.hex() == envelope_vectors["session_key_hex"]


@pytest.mark.parametrize("kind", ["request", "response"])
def test_signing_input(envelope_vectors: Any, kind: str) -> None:
    case = envelope_vectors[kind]
    assert signing_input(case["signed"]) == case["signing_input"].encode("utf-8")


@pytest.mark.parametrize("kind", ["request", "response"])
def test_sign_reproduces_vector(envelope_vectors: Any, kind: str) -> None:
    key = bytes.fromhex(envelope_vectors["session_key_hex"])
    signed = envelope_vectors[kind]["signed"]
    slot = "params" if kind == "request" else "result"
    unsigned = copy.deepcopy(signed)
    del unsigned[slot]["signature"]
    before = copy.deepcopy(unsigned)
    out = sign_envelope(unsigned, key, envelope_vectors["key_id"])
    assert out == signed
    assert out[slot]["signature"]["value"] == signed[slot]["signature"]["value"]
    assert unsigned == before  # the input is not modified
    verify_envelope(signed, key)


@pytest.mark.parametrize("kind", ["request", "response"])
def test_vector_signature_is_hmac_of_signing_input(envelope_vectors: Any, kind: str) -> None:
    import hashlib
    import hmac

    key = bytes.fromhex(envelope_vectors["session_key_hex"])
    case = envelope_vectors[kind]
    mac = hmac.new(key, case["signing_input"].encode("utf-8"), hashlib.sha256).digest()
    slot = "params" if kind == "request" else "result"
    assert base64.b64encode(mac).decode() == case["signed"][slot]["signature"]["value"]
