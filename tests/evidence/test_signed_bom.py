"""``agbom sign`` / ``agbom verify`` on a real CycloneDX export: the JSF-signed BOM is still
valid CycloneDX 1.6 (cyclonedx-python-lib's strict validator), its JSF signature checks out
by an independent JSF computation (rfc8785 + PyNaCl / dilithium-py), and the DSSE envelope
verifies with securesystemslib's DSSE code (the in-toto project's), offline with the key."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from tests.evidence import independent
from tests.transports.served import run_cli

ROOT = Path(__file__).resolve().parents[2]
AGBOM = ROOT / "samples" / "agboms" / "coding-agent.json"


@pytest.fixture(scope="module")
def bom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bom") / "agbom.cdx.json"
    done = run_cli("export", str(AGBOM), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def keypair(tmp_path: Path, algorithm: str) -> tuple[Path, Path, bytes]:
    done = run_cli("keys", "generate", "-a", algorithm, "--out", str(tmp_path / "k"))
    assert done.returncode == 0, done.stderr
    public = tmp_path / "k.pub"
    return tmp_path / "k.key", public, independent.raw_public_key(public.read_bytes())[1]


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jsf_valid(signed: dict[str, Any], public: bytes, algorithm: str) -> bool:
    """JSF 0.82 from its definition: JCS of the object with signature.value removed."""
    sig = signed.get("signature")
    if not isinstance(sig, dict) or not isinstance(sig.get("value"), str):
        return False
    if algorithm == "Ed25519":
        if sig.get("algorithm") != "Ed25519" or unb64url(sig["publicKey"]["x"]) != public:
            return False
    elif sig.get("algorithm") != "urn:agbom:jsf:ML-DSA-65" or sig.get("keyId") != (
        independent.key_id(public)
    ):
        return False
    data = independent.jcs({**signed, "signature": {k: v for k, v in sig.items() if k != "value"}})
    return independent.verifies(algorithm, public, unb64url(sig["value"]), data)


@pytest.mark.parametrize("algorithm", ["Ed25519", "ML-DSA-65"])
def test_a_jsf_signed_bom_is_valid_cyclonedx_and_verifies_independently(
    bom: Path, tmp_path: Path, algorithm: str
) -> None:
    private, public, raw = keypair(tmp_path, algorithm)
    out = tmp_path / "signed.cdx.json"
    done = run_cli("sign", str(bom), "--key", str(private), "-o", str(out))
    assert done.returncode == 0, done.stderr
    signed = json.loads(out.read_text())
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(out.read_text()) is None
    assert {k: v for k, v in signed.items() if k != "signature"} == json.loads(bom.read_text())
    assert jsf_valid(signed, raw, algorithm)
    ok = run_cli("verify", str(out), "--public-key", str(public))
    assert ok.returncode == 0, ok.stderr
    # One changed value anywhere in the components: both checks refuse it.
    tampered = copy.deepcopy(signed)
    tampered["components"][0]["name"] += "x"
    assert not jsf_valid(tampered, raw, algorithm)
    (tmp_path / "tampered.json").write_text(json.dumps(tampered))
    bad = run_cli("verify", str(tmp_path / "tampered.json"), "--public-key", str(public))
    assert bad.returncode == 1 and b"signature_mismatch" in bad.stderr


def test_an_embedded_key_that_is_not_trusted_proves_nothing(bom: Path, tmp_path: Path) -> None:
    private, _public, _ = keypair(tmp_path, "Ed25519")
    other = tmp_path / "o"
    other.mkdir()
    _, other_public, _ = keypair(other, "Ed25519")
    out = tmp_path / "signed.cdx.json"
    run_cli("sign", str(bom), "--key", str(private), "-o", str(out))
    bad = run_cli("verify", str(out), "--public-key", str(other_public))
    assert bad.returncode == 1 and b"signature_key_unknown" in bad.stderr


def test_a_dsse_envelope_verifies_with_securesystemslib(bom: Path, tmp_path: Path) -> None:
    private, public, raw = keypair(tmp_path, "Ed25519")
    out = tmp_path / "bom.dsse.json"
    done = run_cli("sign", str(bom), "--key", str(private), "--format", "dsse", "-o", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    keyid = document["signatures"][0]["keyid"]
    assert keyid == independent.key_id(raw)
    key = SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})
    envelope = Envelope.from_dict(copy.deepcopy(document))
    assert keyid in envelope.verify([key], 1)
    statement = json.loads(envelope.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://cyclonedx.org/bom"
    assert statement["predicate"] == json.loads(bom.read_text())
    digest = hashlib.sha256(independent.jcs(statement["predicate"])).hexdigest()
    assert statement["subject"] == [{"name": bom.name, "digest": {"sha256": digest}}]
    ok = run_cli("verify", str(out), "--public-key", str(public))
    assert ok.returncode == 0, ok.stderr
    # A changed payload byte: securesystemslib and agbom both refuse it.
    payload = bytearray(base64.b64decode(document["payload"]))
    payload[len(payload) // 2] ^= 0x01
    tampered = dict(document, payload=base64.b64encode(bytes(payload)).decode())
    from securesystemslib.exceptions import VerificationError

    with pytest.raises(VerificationError):
        Envelope.from_dict(copy.deepcopy(tampered)).verify([key], 1)
    (tmp_path / "tampered.json").write_text(json.dumps(tampered))
    bad = run_cli("verify", str(tmp_path / "tampered.json"), "--public-key", str(public))
    assert bad.returncode == 1


def test_an_ml_dsa_dsse_envelope_verifies_with_dilithium_py(bom: Path, tmp_path: Path) -> None:
    private, public, raw = keypair(tmp_path, "ML-DSA-65")
    out = tmp_path / "bom.dsse.json"
    done = run_cli("sign", str(bom), "--key", str(private), "-f", "dsse", "-o", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    envelope = Envelope.from_dict(copy.deepcopy(document))  # its PAE, not agbom's
    sig = base64.b64decode(document["signatures"][0]["sig"])
    assert independent.verifies("ML-DSA-65", raw, sig, envelope.pae())
    envelope.payload_type = "application/json"
    assert not independent.verifies("ML-DSA-65", raw, sig, envelope.pae())
    assert run_cli("verify", str(out), "--public-key", str(public)).returncode == 0


def test_sign_refuses_what_is_not_a_cyclonedx_bom(tmp_path: Path) -> None:
    private, _public, _ = keypair(tmp_path, "Ed25519")
    done = run_cli("sign", str(AGBOM), "--key", str(private))
    assert done.returncode == 1 and b"not a CycloneDX JSON BOM" in done.stderr
    assert done.stdout == b""
