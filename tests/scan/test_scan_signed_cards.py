"""Signed A2A Agent Cards (``agbom scan --keys``) and Agent Skills discovery indexes: real
keys, real JWS over the JCS form of the card, the CLI end to end."""

# ruff: noqa: E501 - fixture entries read better on one line

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from joserfc import jws
from joserfc.jwk import ECKey, OKPKey, RSAKey

from agbom.scan.signatures import signing_payload
from tests.cli_process import run_agbom

CARD: dict[str, Any] = {
    "name": "Travel Planner",
    "description": "Plans trips.",
    "version": "2.1.0",
    "supportedInterfaces": [
        {"url": "https://travel.example.com/a2a/v1", "protocolBinding": "JSONRPC",
         "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True},
    "securitySchemes": {"oauth": {"type": "oauth2", "flows": {}}},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "plan", "name": "Plan trip", "description": "Builds an itinerary",
                "tags": ["travel"]}],
}  # fmt: skip


def _sign(card: dict[str, Any], key: Any, alg: str, kid: str | None) -> dict[str, Any]:
    header: dict[str, Any] = {"alg": alg, "typ": "JOSE"}
    if kid is not None:
        header["kid"] = kid
    with warnings.catch_warnings():  # "EdDSA" is superseded by "Ed25519": both still seen
        warnings.simplefilter("ignore")
        compact = jws.serialize_compact(header, signing_payload(card), key, algorithms=[alg])
    protected, _, signature = compact.split(".")
    return {**card, "signatures": [{"protected": protected, "signature": signature}]}


@pytest.fixture(scope="module")
def keys() -> dict[str, Any]:
    return {
        "ec": ECKey.generate_key("P-256", parameters={"kid": "ec-1"}),
        "ed": OKPKey.generate_key("Ed25519", parameters={"kid": "ed-1"}),
        "rsa": RSAKey.generate_key(2048, parameters={"kid": "rsa-1"}),
        "stranger": ECKey.generate_key("P-256", parameters={"kid": "stranger"}),
    }


def _write_jwks(path: Path, *public: Any) -> Path:
    path.write_text(json.dumps({"keys": [k.as_dict(private=False) for k in public]}))
    return path


def _cards(root: Path, cards: dict[str, dict[str, Any]]) -> None:
    for name, card in cards.items():
        folder = root / name / ".well-known"
        folder.mkdir(parents=True)
        doc = {**card}
        url = f"https://{name}.example.com/a2a/v1"
        doc["supportedInterfaces"] = [{**card["supportedInterfaces"][0], "url": url}]
        (folder / "agent-card.json").write_text(json.dumps(doc))


def _fixup(card: dict[str, Any], name: str) -> dict[str, Any]:
    url = f"https://{name}.example.com/a2a/v1"
    return {**card, "supportedInterfaces": [{**card["supportedInterfaces"][0], "url": url}]}


def _signature_of(report: dict[str, Any], name: str) -> dict[str, Any] | None:
    for component in report["agbom"]["components"]:
        if component["id"] == f"a2a:https://{name}.example.com/a2a/v1":
            found: dict[str, Any] | None = component.get("signature")
            return found
    raise AssertionError(f"no peer {name}")


def test_signature_outcomes(tmp_path: Path, keys: dict[str, Any]) -> None:
    plain = {n: _fixup(CARD, n) for n in ("good-ec", "good-ed", "good-rsa", "tampered",
                                           "stranger", "unsigned", "alg-none", "nokid")}  # fmt: skip
    signed = {
        "good-ec": _sign(plain["good-ec"], keys["ec"], "ES256", "ec-1"),
        "good-ed": _sign(plain["good-ed"], keys["ed"], "Ed25519", "ed-1"),
        "good-rsa": _sign(plain["good-rsa"], keys["rsa"], "PS256", "rsa-1"),
        "tampered": {**_sign(plain["tampered"], keys["ec"], "ES256", "ec-1"), "version": "9"},
        "stranger": _sign(plain["stranger"], keys["stranger"], "ES256", "stranger"),
        "unsigned": plain["unsigned"],
        "nokid": _sign(plain["nokid"], keys["ed"], "Ed25519", None),
    }
    none_header = jws.serialize_compact({"alg": "ES256", "kid": "ec-1"}, b"{}", keys["ec"])
    protected = none_header.split(".")[0]
    # an "alg: none" header in place of the real one
    signed["alg-none"] = {
        **plain["alg-none"],
        "signatures": [{"protected": "eyJhbGciOiJub25lIiwia2lkIjoiZWMtMSJ9", "signature": ""},
                       {"protected": protected, "signature": "AAAA"}],
    }  # fmt: skip
    for name, card in signed.items():
        folder = tmp_path / "tree" / name / ".well-known"
        folder.mkdir(parents=True)
        (folder / "agent-card.json").write_text(json.dumps(card, ensure_ascii=False))
    jwks = _write_jwks(tmp_path / "keys.json", keys["ec"], keys["ed"], keys["rsa"])
    proc = run_agbom("scan", "tree", "--keys", str(jwks), "-f", "json", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    status = {name: (_signature_of(report, name) or {}).get("status") for name in signed}
    assert status == {
        "good-ec": "valid",
        "good-ed": "valid",
        "good-rsa": "valid",
        "tampered": "invalid",
        "stranger": "unknown_key",
        "unsigned": "unsigned",
        "alg-none": "invalid",
        "nokid": "valid",
    }
    assert _signature_of(report, "good-ec")["key_id"] == "ec-1"  # type: ignore[index]
    rules = {(f["rule_id"], f["components"][0].split("//")[1].split(".")[0])
             for f in report["findings"] if f["rule_id"].startswith("AGB-SIG")}  # fmt: skip
    assert rules == {("AGB-SIG-001", "tampered"), ("AGB-SIG-001", "alg-none"),
                     ("AGB-SIG-002", "stranger"), ("AGB-SIG-003", "unsigned")}  # fmt: skip
    # without --keys nothing is claimed about signatures
    bare = json.loads(run_agbom("scan", "tree", "-f", "json", cwd=tmp_path).stdout)
    assert all("signature" not in c for c in bare["agbom"]["components"])
    assert not [f for f in bare["findings"] if f["rule_id"].startswith("AGB-SIG")]


def test_a_key_folder_and_rules_that_require_signatures(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    (tmp_path / "keys").mkdir()
    _write_jwks(tmp_path / "keys" / "partners.json", keys["ec"])
    (tmp_path / "keys" / "single.json").write_text(json.dumps(keys["ed"].as_dict(private=False)))
    cards = {"a": _sign(_fixup(CARD, "a"), keys["ed"], "EdDSA", "ed-1"), "b": _fixup(CARD, "b")}
    for name, card in cards.items():
        (tmp_path / "tree" / name).mkdir(parents=True)
        (tmp_path / "tree" / name / "agent-card.json").write_text(json.dumps(card))
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "require.yaml").write_text(
        "pack: require\nrules:\n  - id: TEAM-SIGNED\n    kind: hygiene\n    severity: high\n"
        "    action: deny\n    message: 'unsigned or unverified card {component.name}'\n"
        "    match: {type: a2a_peer, signature: [unsigned, unknown_key, invalid]}\n"
    )
    proc = run_agbom("scan", "tree", "--keys", "keys", "--rules", "packs", "--no-default-rules",
                  "-f", "json", "--fail-on", "high", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [f["components"] for f in findings] == [["a2a:https://b.example.com/a2a/v1"]]


@pytest.mark.parametrize("kind", ["private", "oct", "missing", "garbage", "empty"])
def test_unusable_key_files_are_usage_errors(
    tmp_path: Path, keys: dict[str, Any], kind: str
) -> None:
    target = tmp_path / "keys.json"
    if kind == "private":
        target.write_text(json.dumps({"keys": [keys["ec"].as_dict(private=True)]}))
    elif kind == "oct":
        target.write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}))
    elif kind == "garbage":
        target.write_text("{nope")
    elif kind == "empty":
        target.write_text('{"keys": []}')
    (tmp_path / "tree").mkdir()
    proc = run_agbom("scan", "tree", "--keys", "keys.json", "-o", "out.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "out.json").exists()
    if kind == "private":
        assert '"d"' not in proc.stderr and keys["ec"].as_dict(private=True)["d"] not in proc.stderr


# -- discovery indexes -----------------------------------------------------------------------


def _skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: Publishes {name}.\n---\n\n# {name}\n\nSteps.\n"


def _site(root: Path, skills: dict[str, str], entries: list[dict[str, Any]]) -> Path:
    base = root / "site" / ".well-known" / "agent-skills"
    for name, text in skills.items():
        (base / name).mkdir(parents=True)
        (base / name / "SKILL.md").write_text(text)
    base.mkdir(parents=True, exist_ok=True)
    (base / "index.json").write_text(json.dumps({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": entries,
    }))  # fmt: skip
    return base


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def test_index_digests_are_kept_beside_the_folder_digest(tmp_path: Path) -> None:
    texts = {"pdf-tools": _skill_md("pdf-tools"), "changed": _skill_md("changed"),
             "unlisted": _skill_md("unlisted"), "packed": _skill_md("packed")}  # fmt: skip
    archive = b"not really a tarball, but bytes with a digest"
    entries = [
        {"name": "pdf-tools", "type": "skill-md", "description": "d",
         "url": "/.well-known/agent-skills/pdf-tools/SKILL.md", "digest": f"sha256:{_sha(texts['pdf-tools'])}"},
        {"name": "changed", "type": "skill-md", "description": "d",
         "url": "changed/SKILL.md", "digest": f"sha256:{_sha('an older SKILL.md')}"},
        {"name": "packed", "type": "archive", "description": "d",
         "url": "/.well-known/agent-skills/packed.tar.gz", "digest": f"sha256:{_sha(archive).upper()}"},
    ]  # fmt: skip
    base = _site(tmp_path, texts, entries)
    (base / "packed.tar.gz").write_bytes(archive)
    report = json.loads(run_agbom("scan", "site", "-f", "json", cwd=tmp_path).stdout)
    skills = {c["name"]: c for c in report["agbom"]["components"] if c["type"] == "skill"}
    pdf = skills["pdf-tools"]
    assert pdf["index_digest"]["value"] == _sha(texts["pdf-tools"])
    assert pdf["index_digest"]["matches"] is True
    # two digests of two things: the folder digest is not the SKILL.md digest
    assert pdf["definition"]["digest"]["value"] != pdf["index_digest"]["value"]
    assert skills["changed"]["index_digest"]["matches"] is False
    assert skills["changed"]["index_digest_mismatch"] is True
    assert skills["packed"]["index_digest"]["matches"] is True  # the archive's own bytes
    assert (
        skills["unlisted"]["index_digest"]["problem"] == "skill not listed in the discovery index"
    )
    flagged = [f["components"] for f in report["findings"] if f["rule_id"] == "AGB-SIG-004"]
    assert flagged == [["skill:changed"]]


def test_an_index_url_never_reaches_outside_the_site(tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("outside")
    entries = [{"name": "leak", "type": "archive", "url": "../../../outside.txt",
                "digest": f"sha256:{_sha('outside')}"}]  # fmt: skip
    _site(tmp_path, {"leak": _skill_md("leak")}, entries)
    report = json.loads(run_agbom("scan", "site", "-f", "json", cwd=tmp_path).stdout)
    (skill,) = [c for c in report["agbom"]["components"] if c["type"] == "skill"]
    assert skill["index_digest"]["matches"] is None
    assert "index_digest_mismatch" not in skill


def test_a_broken_index_is_reported_not_trusted(tmp_path: Path) -> None:
    base = _site(tmp_path, {"x": _skill_md("x")}, [])
    (base / "index.json").write_text("{broken")
    report = json.loads(run_agbom("scan", "site", "-f", "json", cwd=tmp_path).stdout)
    (skill,) = [c for c in report["agbom"]["components"] if c["type"] == "skill"]
    assert skill["index_digest"]["problem"].startswith("discovery index not valid JSON")
