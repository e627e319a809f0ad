"""``agbom keys generate`` / ``keys export`` through the real CLI; the files are read back by
independent code (DER prefixes, PyNaCl, dilithium-py), not by agbom."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from tests.evidence import independent
from tests.transports.served import run_cli

ALGORITHMS = ("ML-DSA-65", "Ed25519")


def generate(tmp_path: Path, algorithm: str, name: str = "k") -> tuple[Path, Path, str]:
    done = run_cli("keys", "generate", "--algorithm", algorithm, "--out", str(tmp_path / name))
    assert done.returncode == 0, done.stderr
    return tmp_path / f"{name}.key", tmp_path / f"{name}.pub", done.stdout.decode().strip()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_generate_writes_a_0600_pkcs8_key_and_its_spki_public_key(
    tmp_path: Path, algorithm: str
) -> None:
    private, public, key_id = generate(tmp_path, algorithm)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----\n")
    kind, raw = independent.raw_public_key(public.read_bytes())
    seed_kind, seed = independent.private_seed(private.read_bytes())
    assert kind == seed_kind == algorithm
    # The public key file is the one the private key's seed derives (FIPS 204 / RFC 8032).
    assert independent.public_from_seed(algorithm, seed) == raw
    # The key id is the documented hash of the SPKI DER.
    import hashlib

    der = independent.pem_body(public.read_bytes())
    assert key_id == "sha256:" + hashlib.sha256(der).hexdigest()[:32]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_generate_never_prints_the_private_key(tmp_path: Path, algorithm: str) -> None:
    done = run_cli("keys", "generate", "-a", algorithm, "--out", str(tmp_path / "k"))
    _kind, seed = independent.private_seed((tmp_path / "k.key").read_bytes())
    shown = done.stdout + done.stderr
    assert b"PRIVATE KEY-----" not in shown
    for form in (seed.hex().encode(), base64.b64encode(seed), base64.b64encode(seed)[:20]):
        assert form not in shown
    exported = run_cli("keys", "export", str(tmp_path / "k.key"))
    assert exported.returncode == 0, exported.stderr
    assert b"PRIVATE" not in exported.stdout and base64.b64encode(seed)[:20] not in exported.stdout


def test_generate_refuses_to_overwrite_either_file(tmp_path: Path) -> None:
    private, public, _ = generate(tmp_path, "Ed25519")
    before = (private.read_bytes(), public.read_bytes())
    again = run_cli("keys", "generate", "-a", "ML-DSA-65", "--out", str(tmp_path / "k"))
    assert again.returncode == 1
    assert b"exists" in again.stderr and b"Traceback" not in again.stderr
    assert (private.read_bytes(), public.read_bytes()) == before
    # Only the .pub left over: still refused, and no .key is created beside it.
    (tmp_path / "p.pub").write_bytes(b"someone's file")
    third = run_cli("keys", "generate", "-a", "Ed25519", "--out", str(tmp_path / "p"))
    assert third.returncode == 1
    assert not (tmp_path / "p.key").exists()
    assert (tmp_path / "p.pub").read_bytes() == b"someone's file"


def test_generate_refuses_a_symlink_in_place_of_the_key(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep")
    os.symlink(target, tmp_path / "s.key")
    done = run_cli("keys", "generate", "-a", "Ed25519", "--out", str(tmp_path / "s"))
    assert done.returncode == 1
    assert target.read_bytes() == b"keep"


def test_an_unknown_algorithm_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("keys", "generate", "-a", "RSA", "--out", str(tmp_path / "k"))
    assert done.returncode == 2
    assert b"ML-DSA-65, Ed25519" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_a_private_key_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    private, _public, _ = generate(tmp_path, "Ed25519")
    private.chmod(mode)
    bom = tmp_path / "bom.json"
    bom.write_text(json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1}))
    done = run_cli("sign", str(bom), "--key", str(private))
    assert done.returncode == 1
    assert f"mode {mode:04o}".encode() in done.stderr and b"chmod 600" in done.stderr
    assert done.stdout == b""


def test_export_prints_a_jwks_of_every_key(tmp_path: Path) -> None:
    _, mldsa_pub, mldsa_id = generate(tmp_path, "ML-DSA-65", "m")
    _, ed_pub, ed_id = generate(tmp_path, "Ed25519", "e")
    done = run_cli("keys", "export", str(mldsa_pub), str(ed_pub))
    assert done.returncode == 0, done.stderr
    keys = json.loads(done.stdout)["keys"]
    assert [k["kid"] for k in keys] == [mldsa_id, ed_id]

    def unb64url(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    assert keys[0]["kty"] == "AKP" and keys[0]["alg"] == "ML-DSA-65"
    assert unb64url(keys[0]["pub"]) == independent.raw_public_key(mldsa_pub.read_bytes())[1]
    assert keys[1]["kty"] == "OKP" and keys[1]["crv"] == "Ed25519"
    assert unb64url(keys[1]["x"]) == independent.raw_public_key(ed_pub.read_bytes())[1]
