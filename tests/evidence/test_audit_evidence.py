"""Signed chain heads and evidence bundles: a recorded session replayed into a real SQLite
store, sealed and bundled through the CLI, then checked by a verifier that holds only the
file and the public key: agbom's own ``audit verify --bundle`` and an independent one
(rfc8785 + hashlib for the chain, PyNaCl / dilithium-py for the signatures)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agbom.evidence import BundleKeys, EvidenceInvalid, KeySet, verify_bundle
from tests.evidence import independent
from tests.transports.served import run_cli

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "samples" / "sessions" / "coding-agent.jsonl"
SESSION_ID = json.loads(SESSION.read_text().splitlines()[1])["params"]["metadata"]["session_id"]


def _replayed(folder: Path) -> Path:
    db = folder / "s.db"
    done = run_cli("replay", str(SESSION), "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The replayed session, never sealed (tests that seal it use their own copy)."""
    return _replayed(tmp_path_factory.mktemp("store"))


def keypair(tmp_path: Path, algorithm: str) -> tuple[Path, Path, bytes]:
    tmp_path.mkdir(exist_ok=True)
    done = run_cli("keys", "generate", "-a", algorithm, "--out", str(tmp_path / algorithm))
    assert done.returncode == 0, done.stderr
    public = tmp_path / f"{algorithm}.pub"
    return tmp_path / f"{algorithm}.key", public, independent.raw_public_key(public.read_bytes())[1]


def independently_valid(bundle: dict[str, Any], exporter: bytes, guardian: bytes) -> bool:
    head = bundle.get("head", {})
    return (
        independent.acs_signature_verifies(bundle, exporter)
        and independent.acs_signature_verifies(head, guardian)
        and independent.chain_recomputes(bundle.get("chain", []), head.get("chain_hash"))
        and head.get("entry_count") == len(bundle.get("chain", []))
    )


@pytest.mark.parametrize("algorithm", ["ML-DSA-65", "Ed25519"])
def test_seal_signs_the_stored_chain_head(tmp_path: Path, algorithm: str) -> None:
    store = _replayed(tmp_path)  # sealing stores the head: not the shared store
    private, public, raw = keypair(tmp_path, algorithm)
    done = run_cli("audit", "seal", SESSION_ID, "--db", str(store), "--signing-key", str(private))
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout)
    entries = json.loads(run_cli("audit", "export", SESSION_ID, "--db", str(store)).stdout)
    assert head["chain_hash"] == entries[-1]["entry_hash"] and head["entry_count"] == len(entries)
    assert independent.acs_signature_verifies(head, raw)
    assert independent.chain_recomputes(entries, head["chain_hash"])
    (tmp_path / "head.json").write_bytes(done.stdout)
    ok = run_cli("verify", str(tmp_path / "head.json"), "--public-key", str(public))
    assert ok.returncode == 0, ok.stderr
    moved = dict(head, entry_count=head["entry_count"] - 1)
    assert not independent.acs_signature_verifies(moved, raw)
    (tmp_path / "moved.json").write_text(json.dumps(moved))
    bad = run_cli("verify", str(tmp_path / "moved.json"), "--public-key", str(public))
    assert bad.returncode == 1 and b"signature_mismatch" in bad.stderr


@pytest.mark.parametrize("algorithm", ["ML-DSA-65", "Ed25519"])
def test_a_bundle_verifies_offline_with_only_the_public_key(
    store: Path, tmp_path: Path, algorithm: str
) -> None:
    private, public, raw = keypair(tmp_path, algorithm)
    guardian, guardian_pub, guardian_raw = keypair(tmp_path / "g", algorithm)
    out = tmp_path / "evidence.json"
    done = run_cli(
        "audit", "export", SESSION_ID, "--db", str(store), "--bundle", str(out),
        "--signing-key", str(private), "--head-key", str(guardian),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_text())
    assert independently_valid(bundle, raw, guardian_raw)
    # What the decisions relied on is in it: the AgBOM the snapshot entry names, and the
    # approval history of the skill digest the skillRegister entry names.
    named = {e["agbom_hash"] for e in bundle["chain"] if "agbom_hash" in e}
    assert named and named <= {v["agbom_hash"] for v in bundle["agbom_versions"]}
    assert all(v["document"]["components"] for v in bundle["agbom_versions"])
    skill = next(e["skill"] for e in bundle["chain"] if "skill" in e)
    assert [a["digest"] for a in bundle["approvals"]] == [f"{skill['algorithm']}:{skill['value']}"]
    store.rename(store.with_suffix(".gone"))  # offline: no store
    try:
        ok = run_cli(
            "audit", "verify", "--bundle", str(out),
            "--guardian-key", str(guardian_pub), "--exporter-key", str(public),
        )  # fmt: skip
    finally:
        store.with_suffix(".gone").rename(store)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count(b"ok  ") == 5


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from leaves(child, (*path, index))
    else:
        yield path


def changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and value:
        return value[:-1] + ("1" if value[-1] != "1" else "2")
    return "x"


def test_every_changed_value_fails_both_verifiers(store: Path, tmp_path: Path) -> None:
    """One value changed anywhere (chain, head, AgBOM document, approvals, signatures):
    agbom's verifier and the independent one both refuse it."""
    private, public, raw = keypair(tmp_path, "Ed25519")
    guardian, guardian_pub, guardian_raw = keypair(tmp_path / "g", "Ed25519")
    out = tmp_path / "evidence.json"
    run_cli(
        "audit", "export", SESSION_ID, "--db", str(store), "--bundle", str(out),
        "--signing-key", str(private), "--head-key", str(guardian),
    )  # fmt: skip
    bundle = json.loads(out.read_text())
    keys = BundleKeys(KeySet.from_files([guardian_pub]), KeySet.from_files([public]))
    assert verify_bundle(bundle, keys)
    paths = list(leaves(bundle))
    assert len(paths) > 100
    for path in paths:
        tampered = copy.deepcopy(bundle)
        holder = tampered
        for part in path[:-1]:
            holder = holder[part]
        holder[path[-1]] = changed(holder[path[-1]])
        assert not independently_valid(tampered, raw, guardian_raw), path
        with pytest.raises(EvidenceInvalid):
            verify_bundle(tampered, keys)


def test_a_rewritten_chain_resigned_as_a_whole_still_fails_against_the_published_head(
    store: Path, tmp_path: Path
) -> None:
    """The case HMAC cannot catch (ACS §8.6): the Guardian drops a DENY and recomputes the
    chain. Without the private key it cannot make a head the public key accepts."""
    private, public, raw = keypair(tmp_path, "ML-DSA-65")
    guardian, guardian_pub, guardian_raw = keypair(tmp_path / "g", "ML-DSA-65")
    out = tmp_path / "evidence.json"
    run_cli(
        "audit", "export", SESSION_ID, "--db", str(store), "--bundle", str(out),
        "--signing-key", str(private), "--head-key", str(guardian),
    )  # fmt: skip
    bundle = json.loads(out.read_text())
    chain = [e for e in bundle["chain"] if e.get("decision") != "deny"]
    previous = None
    for entry in chain:  # a consistent forward recompute
        entry["previous_hash"] = previous
        content = {k: v for k, v in entry.items() if k not in ("entry_hash", "previous_hash")}
        import hashlib

        digest = hashlib.sha256(independent.jcs(content))
        if previous:
            digest.update(bytes.fromhex(previous))
        entry["entry_hash"] = previous = digest.hexdigest()
    assert independent.chain_recomputes(chain, previous)
    forged = dict(bundle, chain=chain, head=dict(bundle["head"], chain_hash=previous,
                                                 entry_count=len(chain)))  # fmt: skip
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    assert not independently_valid(forged, raw, guardian_raw)
    roles = ["--guardian-key", str(guardian_pub), "--exporter-key", str(public)]
    bad = run_cli("audit", "verify", "--bundle", str(tmp_path / "forged.json"), *roles)
    assert bad.returncode == 1 and b"Traceback" not in bad.stderr
    # Base64 value cut: malformed, also refused.
    cut = copy.deepcopy(bundle)
    cut["signature"]["value"] = base64.b64encode(b"short").decode()
    (tmp_path / "cut.json").write_text(json.dumps(cut))
    bad = run_cli("audit", "verify", "--bundle", str(tmp_path / "cut.json"), *roles)
    assert bad.returncode == 1 and b"signature_malformed" in bad.stderr


def test_wrong_key_missing_key_and_unsealable_session_are_clear_errors(
    store: Path, tmp_path: Path
) -> None:
    private, public, _ = keypair(tmp_path, "Ed25519")
    guardian, guardian_pub, _ = keypair(tmp_path / "g", "Ed25519")
    _other_private, other_public, _ = keypair(tmp_path, "ML-DSA-65")
    out = tmp_path / "evidence.json"
    run_cli(
        "audit", "export", SESSION_ID, "--db", str(store), "--bundle", str(out),
        "--signing-key", str(private), "--head-key", str(guardian),
    )  # fmt: skip
    roles = ["--guardian-key", str(guardian_pub), "--exporter-key", str(other_public)]
    wrong = run_cli("audit", "verify", "--bundle", str(out), *roles)
    assert wrong.returncode == 1 and b"signature_key_unknown" in wrong.stderr
    nokey = run_cli("audit", "verify", "--bundle", str(out))
    assert nokey.returncode == 2 and b"--guardian-key" in nokey.stderr
    # One --public-key for a bundle: the roles must be said.
    untold = run_cli("audit", "verify", "--bundle", str(out), "--public-key", str(public))
    assert untold.returncode == 2 and b"by role" in untold.stderr
    # Without a head the Guardian signed, the exporter's own would attest nothing.
    fresh = run_cli(
        "audit", "export", SESSION_ID, "--db", str(store), "--bundle", str(tmp_path / "f.json"),
        "--signing-key", str(private),
    )  # fmt: skip
    assert fresh.returncode == 1 and b"head_unsigned" in fresh.stderr
    unsigned = run_cli("audit", "export", SESSION_ID, "--db", str(store), "--bundle", str(out))
    assert unsigned.returncode == 2 and b"--signing-key" in unsigned.stderr
    none = run_cli("audit", "seal", "no-such-session", "--db", str(store), "--key", str(private))
    assert none.returncode == 1 and b"no audit chain" in none.stderr
