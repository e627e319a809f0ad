"""Drive the ACS-core members of the public ``agent-evidence-vectors`` corpus against agbom.

The corpus is read from the installed package (``agent_evidence_vectors.heldout``), never from
a copy in this repository: nobody here wrote it, and that is the point of running it.

Every member is classified by what it needs:

* ``wire``: a request (or a short sequence) that an Observed Agent sends to a Guardian. It is
  translated into a v0.1.0 envelope, given fresh timestamps and real HMAC-SHA256 signatures,
  sent over HTTP to a real ``agbom serve``, and agbom's answer is compared with the member's
  ``expected`` verdict and registry code.
* ``observation``: the member describes something a Guardian produces (a response signature,
  a chain entry, a sealed chain, an ACS-Trace span or OCSF event). The same exchange is
  driven against agbom and agbom's own artifact is judged by the member's rule (the trace
  members in ``trace_vectors``).
* ``not_applicable``: an obligation of another party (the Observed Agent, the framework, a
  trace reader, an approver), a profile agbom does not implement, or deployment state that
  never travels on the wire. The reason says which.
* ``wrong``: the member contradicts the specification it cites or another member.
* ``unmeasurable``: the corpus itself says the property cannot be measured.

Opaque identifiers (session ids, request ids) are renamed per member through a map that keeps
equality inside the member, the renaming the corpus's own held-out suite applies
(``suites/acs-core.json``: ``opaque``), so that members sharing ``s-0001`` and the same
``request_id`` do not collide in one Guardian's store.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import itertools
import json
import re
import secrets
import subprocess
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import rfc8785

from tests.transports.served import Served, agbom_command, run_cli

SUITE = "acs-core"
DEFAULT_AGENT_ID = "agent-acs-vectors"  # the agent id the corpus's newer members use
CORE_KEY_ID = "k1"  # the key id every acs-f-1..9 member names
REGISTRY = {
    "SESSION_REFUSED": -32000,
    "UNSUPPORTED_VERSION": -32001,
    "PROVENANCE_REQUIRED": -32002,
    "CAPABILITY_NOT_NEGOTIATED": -32003,
    "SIGNATURE_INVALID": -32004,
    "REPLAY_DETECTED": -32005,
    "TIMESTAMP_OUT_OF_WINDOW": -32006,
    "CHAIN_MISMATCH": -32007,
}
# The ClientHello the corpus itself sends (acs-f-9): two methods, no profiles, HTTP only.
CLIENT_METHODS = ["steps/toolCallRequest", "steps/toolCallResult"]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_rpc_ids = itertools.count(1)


# --------------------------------------------------------------------------------------------
# The corpus


def load_corpus() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every member document and the manifest, through the package's own loader.

    The loader recomputes the corpus digest over the member files; a digest that differs from
    the manifest's means the installed corpus is not the one the manifest describes.
    """
    from agent_evidence_vectors import heldout

    suite = heldout.load_suite(SUITE)
    members, manifest, digest = heldout.load_public(suite)
    if digest != manifest["corpusDigest"]:
        raise RuntimeError(
            f"installed {SUITE} corpus digest {digest} differs from its manifest's "
            f"{manifest['corpusDigest']}"
        )
    if manifest.get("codeRegistry") != REGISTRY:
        raise RuntimeError("the corpus's error-code registry is not the one this driver knows")
    return [m["document"] for m in members], manifest


# --------------------------------------------------------------------------------------------
# Classification


@dataclass(frozen=True)
class Classification:
    kind: str  # wire | observation | not_applicable | wrong | unmeasurable
    reason: str
    deployment: str = "core"  # which Guardian configuration the member runs against


_NA = "not_applicable"
_OA = "an obligation of the Observed Agent, not the Guardian"
_READER = (
    "a trace reader's verdict (reader_report) over span or OCSF streams the member gives; "
    "agbom emits ACS-Trace records and reads none, so there is no reader to grade"
)
_OA_TRACE = f"{_OA}: a record in the Observed Agent's own trace stream"
_CRYPTO = (
    "a relying party's judgement of an ACS-Crypto artifact whose ML-DSA-65 signature is a "
    "placeholder (value AAAA): no Guardian request is graded; agbom's own ACS-Crypto answers "
    "are verified in tests/evidence"
)

# Members whose expectation is not a Guardian's answer, keyed by id; each reason says why.
NOT_APPLICABLE: dict[str, str] = {
    # acs-f-3
    # acs-f-4: approvals are Guardian-side deployment state issued out of band.
    "v100f74962fbb8b94": "the approval (issued for agent-A) is deployment state held beside "
    "the request, never on the wire; agbom's approvals are for skills, not per-call grants",
    "vff6b4d46f470f2ad": "the approval (issued for agent-A) is deployment state held beside "
    "the request, never on the wire; agbom's approvals are for skills, not per-call grants",
    "vfcab242ddb38d018": "an approver's answer to the Guardian (Approvers MUST NOT return "
    "ASK); agbom relays no approver traffic",
    # acs-f-5: what the Observed Agent does when no decision arrives.
    "v564ff5d8d344bea2": f"{_OA}: a host hook that fired nothing and wrote no audit event",
    "va0ee5d0830b0490b": f"{_OA}: the fail-open step's audit event is written by the agent",
    "va8eebd3334b97257": f"{_OA}: reading a proxy's HTML 504 page as no decision",
    "vfdd68340c2094962": f"{_OA}: the fail-open step's audit event is written by the agent",
    # acs-f-6
    "v0c6dcb9ff13af3c9": "a framework obligation (fire toolCallRequest for every escaping "
    "action); a Guardian cannot see a hook that never fired",
    "va00ef569d09bf7d5": f"{_OA}: an unreachable trace sink changing the applied disposition",
    "v221edeb22c4e8634": _CRYPTO,
    "v4f75a079844635af": _CRYPTO,
    # acs-f-8
    "va2fea96983583972": "who populated provenance (deterministic code or an LLM) is not "
    "visible on the wire; the Guardian sees only the fields",
    "vd57793caa251dec6": "a framework obligation (trust = minimum over derived_from) on a "
    "provenance record; no request carries it",
    # acs-f-10: relying-party judgements about heads; agbom is not the party presented to.
    "v53ef0aaa91303587": _CRYPTO,
    "vd8ac84523a5a038c": _CRYPTO,
    "v2a61a2c85f8b6aec": "a relying party's judgement of a claim (non-repudiation) made with "
    "an HMAC head; no Guardian request or artifact is graded",
    "v855c3b68b325eec1": "a relying party's judgement of a claim (integrity, to a key-holder) "
    "made with an HMAC head; no Guardian request or artifact is graded",
    # acs-f-13: operator configuration records, not requests.
    "v09451dcf233c2115": "an operator's key configuration record (a label derived from the "
    "secret); agbom takes the label from the operator and never computes one",
    "v2aa5e37455fda245": "an operator's key configuration record; agbom takes the label from "
    "the operator and never computes one",
    # acs-f-15..19 (ACS-Trace): agbom's own spans and OCSF events are judged in
    # trace_vectors.py (TRACE_OBSERVATIONS); these are the members about something else.
    # acs-f-15: the agent's own log, readers, and failure events agbom never emits.
    "v1e4a323dafeda46e": "what an acs.decision.failure event's acs.failure.detail may hold; "
    "agbom emits no acs.decision.failure event (a request it refuses gets a JSON-RPC error "
    "and no span or OCSF event, docs/telemetry.md), so it has no such detail to judge",
    "v43ef9dfd999c84e8": "what an acs.decision.failure event's acs.failure.detail may hold; "
    "agbom emits no acs.decision.failure event (a request it refuses gets a JSON-RPC error "
    "and no span or OCSF event, docs/telemetry.md), so it has no such detail to judge",
    **dict.fromkeys(
        (
            "v55187b175296fcc8",
            "v663664f03dec5517",
            "vc190a6c639182d4e",
            "vc8e379465f4a677b",
            "v83363b5d7f051859",
            "v7d14727c84d2020d",
            "vc1100bbd3f8f6a5f",
            # acs-f-19
            "v0035b4504ed79b9d",
            "v5d50c302e4834fad",
            "v71d2a298de4428f3",
            "vd5116e55bb3e8050",
        ),
        _READER,
    ),
    "v57106f0a71dd1d62": f"{_OA}: decision failures in the deployment's own log",
    "v5855843136b72a87": f"{_OA}: decision failures in the deployment's own log",
    "v8b8bb4f181c906e6": f"{_OA}: decision failures in the deployment's own log",
    # acs-f-16: the Observed Agent's schema check of a response it received.
    "vfacb1e4dabfd1d80": f"{_OA}: whether it accepts a response that fails the response "
    "schema (an empty policy_id) is its own validation verdict",
    "v4f2144a08f62c639": f"{_OA}: whether it accepts a response that fails the response "
    "schema (an empty policy_id) is its own validation verdict",
    # acs-f-17: findings agbom's records cannot contain.
    "v13ec89c059e7e71d": "an authorizations entry for a policy reference with neither "
    "policy_id nor policy_name; every reference agbom writes has a policy_id (its rule "
    "pack's name, or agbom), so the entry this member grades never arises",
    "ve0b07adbd63ede48": "an authorizations entry for a policy reference with neither "
    "policy_id nor policy_name; every reference agbom writes has a policy_id (its rule "
    "pack's name, or agbom), so the entry this member grades never arises",
    "vd4df6378ea74234d": "a decision that arrived after the agent's timeout under fail-open "
    "(finding_info.types late_decision_fail_open); agbom answers each step once and never "
    "learns whether the agent had stopped waiting, so it records no late decision",
    "vf08f4493cfae6ceb": "a decision that arrived after the agent's timeout under fail-open "
    "(finding_info.types late_decision_fail_open); agbom answers each step once and never "
    "learns whether the agent had stopped waiting, so it records no late decision",
    # acs-f-19: the substitution event on the agent's span.
    "v0d2892bb1e77fcb0": f"{_OA_TRACE}: the acs.decision.substituted event on its step span",
    "vc292f5a9ed89dacd": f"{_OA_TRACE}: the acs.decision.substituted event on its step span",
}
TRACE_FAMILIES = frozenset(f"acs-f-{n}" for n in range(15, 20))
# ACS-Trace members judged on agbom's own spans (agbom serve --otlp-endpoint, to a real
# OTLP/HTTP receiver) and OCSF events (agbom audit export --format ocsf): trace_vectors.py.
TRACE_OBSERVATIONS = frozenset(
    {
        "v6b9826ebb2401bb8",  # acs-f-15: a refused replay emits no failure event
        "v7cdac6c8af6db2fe",
        "v4cfeaa01784088e3",  # acs-f-16: span shapes
        "ve7274cd800b89ef2",
        "veed45c58b4e3a95b",
        "vf53a8639739cf0ca",
        "v4f1f941aca13438d",
        "vc0ee2db9cf47e0c1",
        "v3a740f95d71db4bb",
        "v9d271115ecc2144a",
        "v142a717729cabcc7",
        "v36627efbb93cdb48",
        "v934c6c4f64dc3142",
        "vbf0b0f4b67a00b59",
        "v9c3c0467f619607e",
        "v8a5f343c721f2f14",
        "v1bf79e310bf7ab30",  # acs-f-17: decision findings
        "va216214d32d8d5f7",
        "v28a228c72a0a72e8",
        "vb2374eaafd283548",
        "vd4d655cdc5da676f",
        "v31ce9cd718b96f51",
        "vf0317aa29d78b3c1",
        "v573876edff0016da",
        "vac8eb35a1249aefc",
        "v37ab95af193da84e",  # acs-f-18: an allowed message step
        "v0118a9be95bc651c",
        "v0e394a2a77fc7e8d",
        "va26320f07c64f16d",
        "vc5e61899449daf41",
        "vdddfe7d991c3f2cc",
        "v85f225380d40f147",
        "vc97666f6b2388930",
        "v95efcfe1aeba3995",  # acs-f-19: no substitution event on a Guardian span
    }
)
FAMILY_NOT_APPLICABLE: dict[str, str] = {
    "acs-f-11": f"{_OA}: the startup posture when handshake/hello gets no ServerHello",
    "acs-f-12": f"{_OA}: applying (or substituting for) a MODIFY it received, and recording "
    "that in its own log or trace; agbom's Guardian side of section 6.5 is issue 12 item 4",
}
_REUSES_REQUEST_ID = (
    "reuses request_id 11111111-1111-4111-8111-111111111111 for every step of one "
    "session, which section 10.3 (and this corpus's own acs-f-2 member vef655ce2a45f618b) "
    "requires a Guardian to refuse with -32005 from the second step on; with distinct ids "
    "the member still turns on a per-turn call budget that is deployment policy and never "
    "travels on the wire"
)
WRONG: dict[str, str] = dict.fromkeys(
    ("v10351021bf6e46b1", "v448a61c91554a125", "v699f3f41215849ca"), _REUSES_REQUEST_ID
)
# Members run against the key configuration of their own `verifier` block.
OBSERVATIONS = {
    "v25f01d8fe1e91bf5",  # acs-f-8: chain_hash inside the signed set
    "v7b0b32fb369136c1",
    "v3c03d4e4ce213e9c",  # acs-f-6: request_hash in every entry (ACS-Audit)
    "v8557c978bf12ca55",
    "v6daaec0f6f0c8a14",  # acs-f-6: the seal chains off the last published head
    "v986429a577e03404",
    "v7b0219cc72681b5a",  # acs-f-13: the response is signed under the label the request named
    "vb3c19387fb98e20f",
}


def classify(member: Mapping[str, Any]) -> Classification:
    mid, family, payload = member["id"], member["family"], member["payload"]
    if member["expected"]["verdict"] == "unmeasurable":
        return Classification("unmeasurable", member["expected"]["unmeasurableBecause"])
    if mid in WRONG:
        return Classification("wrong", WRONG[mid])
    if mid in NOT_APPLICABLE:
        return Classification(_NA, NOT_APPLICABLE[mid])
    if mid in TRACE_OBSERVATIONS:
        return Classification(
            "observation", "agbom's own ACS-Trace span or OCSF event, judged by the member's rule"
        )
    if family in TRACE_FAMILIES:  # every ACS-Trace member is named in one table or another
        raise AssertionError(f"ACS-Trace member {mid} ({family}) is not classified")
    if family in FAMILY_NOT_APPLICABLE:
        return Classification(_NA, FAMILY_NOT_APPLICABLE[family])
    if family == "acs-f-13":
        verifier = payload.get("verifier") or payload.get("observed_agent") or {}
        ids = tuple(sorted(verifier.get("configured_key_ids", ())))
        kind = "observation" if mid in OBSERVATIONS else "wire"
        return Classification(kind, "signature key and key_id handling", "+".join(ids))
    if family == "acs-f-14":
        return Classification(
            "observation", "request_id_ref resolution is recorded in the Guardian's audit record"
        )
    if mid in OBSERVATIONS:
        return Classification("observation", "a property of agbom's own responses and chain")
    if family == "acs-f-9" and "approver_capability" in payload:
        return Classification(
            "wire",
            "needs the policy to escalate to ASK and the agent declared unable to answer ASK",
            "ask-incapable",
        )
    if "request" in payload or "steps" in payload:
        return Classification("wire", "a request an Observed Agent sends to the Guardian")
    raise AssertionError(f"member {mid} ({family}) is not classified")


# --------------------------------------------------------------------------------------------
# Signing, independent of agbom's implementation: RFC 8785 from the rfc8785 package, RFC 5869
# written out here. The acs-f-13 members publish derived keys and MACs, and
# `check_signer_against_corpus` reproduces them with this code before anything is sent.


def hkdf_sha256(secret: bytes, *, salt: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.new(salt or bytes(32), secret, hashlib.sha256).digest()
    out, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
    return out[:length]


def session_key(secret: bytes, session_id: str) -> bytes:
    return hkdf_sha256(secret, salt=b"", info=session_id.encode("utf-8"), length=32)


def mac(key: bytes, envelope: Mapping[str, Any], slot: str = "params") -> str:
    inner = {k: v for k, v in envelope[slot].items() if k != "signature"}
    data = rfc8785.dumps({**envelope, slot: inner})
    return base64.b64encode(hmac.new(key, data, hashlib.sha256).digest()).decode("ascii")


def signed(envelope: dict[str, Any], key: bytes, key_id: str) -> dict[str, Any]:
    out = copy.deepcopy(envelope)
    out["params"].pop("signature", None)
    value = mac(key, out)
    out["params"]["signature"] = {"algorithm": "HMAC-SHA256", "key_id": key_id, "value": value}
    return out


def verifies(envelope: Mapping[str, Any], key: bytes) -> bool:
    slot = "result" if "result" in envelope else "error" if "error" in envelope else "params"
    sig = envelope[slot].get("signature")
    if not isinstance(sig, Mapping) or not isinstance(sig.get("value"), str):
        return False
    return hmac.compare_digest(mac(key, envelope, slot), sig["value"])


def derivation_key(
    derivation: Mapping[str, Any],
    secrets_by_id: Mapping[str, bytes],
    sid: str,
    other_sid: Callable[[str], str],
) -> bytes:
    """The HMAC key a member's signer used, recomputed for the renamed session id."""
    secret = secrets_by_id[derivation["secret_key_id"]]
    if derivation["kdf"] == "none":
        return secret
    info = derivation["info_utf8"]
    info = other_sid(info) if info else ""
    salt_hex = derivation["salt_hex"]
    salt = other_sid(bytes.fromhex(salt_hex).decode()).encode() if salt_hex else b""
    return hkdf_sha256(secret, salt=salt, info=info.encode("utf-8"), length=derivation["length"])


def check_signer_against_corpus(members: list[dict[str, Any]]) -> int:
    """Recompute every acs-f-13 derived key and request MAC the corpus publishes."""
    checked = 0
    for member in members:
        payload = member["payload"]
        derivation = payload.get("signer_derivation")
        if not derivation:
            continue
        secrets_by_id = {k: bytes.fromhex(v) for k, v in payload["verifier"]["secret_hex"].items()}
        key = derivation_key(derivation, secrets_by_id, "", lambda s: s)
        assert key.hex() == derivation["derived_key_hex"], member["id"]
        assert (
            rfc8785.dumps(
                {
                    **payload["request"],
                    "params": {
                        k: v for k, v in payload["request"]["params"].items() if k != "signature"
                    },
                }
            ).decode()
            == payload["signed_input"]
        ), member["id"]
        assert mac(key, payload["request"]) == payload["request"]["params"]["signature"]["value"]
        checked += 1
    return checked


# --------------------------------------------------------------------------------------------
# Translation


class IdMap:
    """Fresh spellings for one member's opaque ids, equal where the member's are equal."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        if value not in self._seen:
            if _UUID.fullmatch(value):
                self._seen[value] = str(uuid.uuid4())
            else:  # keep the host's shape (s-0001): non-UUID session ids are part of the test
                self._seen[value] = f"{value}-{secrets.token_hex(4)}"
        return self._seen[value]


def fresh_timestamp(sent: str, reference: str | None) -> str:
    """``sent`` moved so that it stands to now as it stood to the member's Guardian clock."""
    offset = timedelta(0)
    if reference is not None:
        offset = _parse(sent) - _parse(reference)
    return (datetime.now(UTC) + offset).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def is_draft_shape(request: Mapping[str, Any]) -> bool:
    """The pre-JSON-RPC draft the acs-f-1..11 members use: ``acs: "0.1"``, ``hooks/*``, and
    request_id, timestamp and signature beside ``params`` rather than inside it."""
    return "acs" in request and "jsonrpc" not in request


def from_draft(request: Mapping[str, Any], ids: IdMap, clock: str | None) -> dict[str, Any]:
    """The same request as a v0.1.0 envelope. Only the spelling changes: the method keeps its
    hook, the version its major and minor, every id its equality, the time its distance from
    the Guardian's clock; tool arguments become the ``{value}`` items the hook schema has."""
    method = request["method"]
    if method.startswith("hooks/"):
        method = "steps/" + method.removeprefix("hooks/")
    version = request["acs"]
    version = version if version.count(".") == 2 else f"{version}.0"
    metadata = dict(request["metadata"])
    metadata["session_id"] = ids(metadata["session_id"])
    metadata.setdefault("agent_id", DEFAULT_AGENT_ID)
    if "turn_id" in metadata:
        metadata["turn_id"] = ids(metadata["turn_id"])
    if method == "handshake/hello":
        payload = dict(request["params"])
    else:
        tool = request["params"]["tool"]
        payload = {
            "tool": {"name": tool["name"]},
            "arguments": {k: {"value": v} for k, v in tool.get("arguments", {}).items()},
        }
    return {
        "jsonrpc": "2.0",
        "id": next(_rpc_ids),
        "method": method,
        "params": {
            "acs_version": version,
            "request_id": ids(request["request_id"]),
            "timestamp": fresh_timestamp(request["timestamp"], clock),
            "metadata": metadata,
            "payload": payload,
        },
    }


def from_v010(request: Mapping[str, Any], ids: IdMap) -> dict[str, Any]:
    """A member already in the v0.1.0 shape, with its ids renamed and its time made fresh."""
    out = copy.deepcopy(dict(request))
    out["id"] = next(_rpc_ids)
    params = out["params"]
    params.pop("signature", None)
    params["request_id"] = ids(params["request_id"])
    params["timestamp"] = fresh_timestamp(params["timestamp"], None)
    params["metadata"]["session_id"] = ids(params["metadata"]["session_id"])
    ref = params["payload"].get("request_id_ref")
    if ref is not None:
        params["payload"]["request_id_ref"] = ids(ref)
    return out


# --------------------------------------------------------------------------------------------
# Guardians


@dataclass
class Deployment:
    """One ``agbom serve`` configured with a set of keys, signatures required."""

    name: str
    keys: dict[str, bytes]
    workdir: Path
    extra: list[str] = field(default_factory=list)
    server: Served | None = None
    blocked: str | None = None  # why this configuration cannot be expressed with agbom serve

    def start(self, flags: set[str]) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        args = ["--require-signatures", *self.extra]
        if len(self.keys) == 1:
            ((key_id, secret),) = self.keys.items()
            path = self.workdir / "secret"
            path.write_bytes(secret)  # read raw, as the reference tools read a key file
            path.chmod(0o600)
            args += ["--secret-file", str(path)]
            if "--key-id" in flags:
                args += ["--key-id", key_id]
            elif key_id != "default":
                self.blocked = f"agbom serve has no --key-id, so key id {key_id!r} is unknown"
        else:
            path = self.workdir / "keys.json"
            path.write_text(json.dumps({k: f"hex:{v.hex()}" for k, v in self.keys.items()}))
            path.chmod(0o600)
            if "--keys-file" in flags:
                args += ["--keys-file", str(path)]
            else:
                self.blocked = "agbom serve has no --keys-file, so a rotation cannot be configured"
                first, secret = next(iter(self.keys.items()))
                (self.workdir / "secret").write_bytes(secret)
                (self.workdir / "secret").chmod(0o600)
                args += ["--secret-file", str(self.workdir / "secret")]
                if "--key-id" in flags:
                    args += ["--key-id", first]
        self.server = Served(
            db=self.workdir / "agbom.db", log=self.workdir / "serve.log", extra=args
        ).start()

    def stop(self, grace_s: float = 10) -> None:
        if self.server is not None:
            self.server.stop(grace_s)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def post(self, envelope: Any) -> dict[str, Any]:
        reply = httpx.post(
            f"{self.url}/acs",
            content=orjson.dumps(envelope),
            headers={"content-type": "application/json"},
            timeout=60,
        )
        if reply.status_code != 200:
            return {"http_status": reply.status_code, "body": reply.text[:200]}
        answer: dict[str, Any] = orjson.loads(reply.content)
        return answer

    def chain(self, session_id: str) -> list[dict[str, Any]]:
        assert self.server is not None
        done = run_cli("audit", "export", session_id, "--db", str(self.server.db))
        if done.returncode != 0:
            return []
        entries: list[dict[str, Any]] = orjson.loads(done.stdout)
        return entries


def serve_flags() -> set[str]:
    """The option names ``agbom serve --help`` lists (the one place flags are discovered)."""
    done = subprocess.run(
        [*agbom_command(), "serve", "--help"],
        capture_output=True,
        text=True,
        check=False,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    return set(re.findall(r"--[a-z][a-z0-9-]+", done.stdout))


# --------------------------------------------------------------------------------------------
# Outcomes


@dataclass
class Outcome:
    member_id: str
    family: str
    kind: str  # accept | reject | indeterminate (the member's own)
    classification: str
    expected: str
    got: str = "-"
    passed: bool | None = None  # None: not run
    note: str = ""
    sent: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)


def describe_expected(expected: Mapping[str, Any]) -> str:
    verdict = expected["verdict"]
    if expected.get("code"):
        return f"{verdict} {expected['code']} ({expected['codeValue']})"
    return verdict


def verdict_of(answer: Mapping[str, Any]) -> tuple[str, int | None, str]:
    """agbom's answer as (verdict, registry code, detail)."""
    if "error" in answer:
        error = answer["error"]
        reason = (error.get("data") or {}).get("reason", "")
        return "deny", error.get("code"), f"error {error.get('code')} {reason}".strip()
    if "result" in answer:
        result = answer["result"]
        decision = result.get("decision")
        if decision is None and "negotiated_version" in result:
            return "allow", None, "ServerHello"
        codes = ",".join(result.get("reason_codes") or [])
        return str(decision), None, f"{decision}" + (f" [{codes}]" if codes else "")
    return "none", None, f"no JSON-RPC answer: {answer}"


def matches(expected: Mapping[str, Any], answer: Mapping[str, Any]) -> bool:
    verdict, code, _ = verdict_of(answer)
    if expected["verdict"] == "allow":
        return verdict == "allow"
    if expected.get("codeValue") is not None:
        return code == expected["codeValue"]
    return verdict == "deny"


def iter_steps(payload: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    if "steps" in payload:
        for step in payload["steps"]:
            yield step["request"]
    else:
        yield payload["request"]


# --------------------------------------------------------------------------------------------
# Running members


class Run:
    """The Guardians a corpus run needs, started on demand and stopped together."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.flags = serve_flags()
        self.deployments: dict[str, Deployment] = {}
        self.core_secret = secrets.token_bytes(32)
        self.members: list[dict[str, Any]] = []
        self.trace: Any = None  # trace_vectors.TraceRecords, collected on first use

    def deployment(self, name: str, keys: Mapping[str, bytes] | None = None) -> Deployment:
        if name not in self.deployments:
            if keys is None:
                keys = {CORE_KEY_ID: self.core_secret}
            dep = Deployment(name, dict(keys), self.workdir / name.replace("+", "_"))
            dep.start(self.flags)
            self.deployments[name] = dep
        return self.deployments[name]

    def close(self) -> None:
        for dep in self.deployments.values():
            dep.stop()


def client_hello(session_id: str, methods: list[str], agent_id: str = DEFAULT_AGENT_ID) -> dict:
    """The corpus's own ClientHello (acs-f-9) for a session, plus any methods a translation
    needs beyond the two it declares."""
    return {
        "jsonrpc": "2.0",
        "id": next(_rpc_ids),
        "method": "handshake/hello",
        "params": {
            "acs_version": "0.1.0",
            "request_id": str(uuid.uuid4()),
            "timestamp": fresh_timestamp("2026-01-01T00:00:00Z", None),
            "metadata": {"agent_id": agent_id, "session_id": session_id},
            "payload": {
                "acs_versions_supported": ["0.1.0"],
                "methods_implemented": list(dict.fromkeys([*CLIENT_METHODS, *methods])),
                "provenance_producer": "none",
                "transports_supported": ["http"],
            },
        },
    }


def step(method: str, session_id: str, payload: Any, agent_id: str = DEFAULT_AGENT_ID) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": next(_rpc_ids),
        "method": method,
        "params": {
            "acs_version": "0.1.0",
            "request_id": str(uuid.uuid4()),
            "timestamp": fresh_timestamp("2026-01-01T00:00:00Z", None),
            "metadata": {"agent_id": agent_id, "session_id": session_id},
            "payload": payload,
        },
    }


EMAIL_CALL = {"tool": {"name": "email.send"}, "arguments": {"to": {"value": "ops@example.org"}}}


class Exchange:
    """Signed traffic for one member against one deployment, keeping what was said."""

    def __init__(self, dep: Deployment, outcome: Outcome, key_id: str | None = None) -> None:
        self.dep = dep
        self.outcome = outcome
        self.key_id = key_id or next(iter(dep.keys))
        if dep.blocked and dep.blocked not in outcome.note:
            outcome.note = f"{outcome.note}; {dep.blocked}"

    def key(self, session_id: str, key_id: str | None = None) -> bytes:
        return session_key(self.dep.keys[key_id or self.key_id], session_id)

    def send(self, envelope: dict[str, Any], *, sign: bool = True) -> dict[str, Any]:
        if sign:
            sid = envelope["params"]["metadata"]["session_id"]
            envelope = signed(envelope, self.key(sid), self.key_id)
        self.outcome.sent.append(envelope)
        answer = self.dep.post(envelope)
        self.outcome.answers.append(answer)
        return answer

    def prelude(self, envelope: dict[str, Any]) -> bool:
        """Send a step the translation added; on refusal record why the member did not run."""
        answer = self.send(envelope)
        verdict, _, detail = verdict_of(answer)
        if verdict != "allow":
            self.outcome.got = f"{envelope['method']} (added) refused: {detail}"
            self.outcome.passed = False
            return False
        return True


def run_member(run: Run, member: Mapping[str, Any]) -> Outcome:
    cls = classify(member)
    outcome = Outcome(
        member["id"],
        member["family"],
        member["kind"],
        cls.kind,
        describe_expected(member["expected"]),
        note=cls.reason,
    )
    if cls.kind not in ("wire", "observation"):
        return outcome
    runner = RUNNERS.get(member["family"], run_draft_wire)
    if member["id"] in OBSERVATION_RUNNERS:
        runner = OBSERVATION_RUNNERS[member["id"]]
    if member["id"] in TRACE_OBSERVATIONS:
        # Imported here: trace_vectors builds on this module's deployments and signer.
        from tests.conformance.trace_vectors import observe_trace

        runner = observe_trace
    runner(run, member, outcome)
    return outcome


def _intent_prelude(ex: Exchange, payload: Mapping[str, Any], sid: str) -> bool:
    """Intent travels in sessionStart (section 8.4); retrieved content in knowledgeRetrieval."""
    if "intent" in payload and not ex.prelude(
        step("steps/sessionStart", sid, {"intent": payload["intent"]})
    ):
        return False
    content = payload.get("observed_content")
    if content is not None:
        result = {
            "value": content["text"],
            "source_id": content["source_id"],
            "provenance": {
                "origin": content["origin"],
                "source_id": content["source_id"],
                "trust": content["trust"],
            },
        }
        kr = {"query": content["source_id"], "results": [result]}
        if not ex.prelude(step("steps/knowledgeRetrieval", sid, kr)):
            return False
    return True


def run_draft_wire(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-1, -2, -3, -8 (intent pair), -9: draft-shape requests, signed with key id k1."""
    payload = member["payload"]
    dep = run.deployment("core")
    ex = Exchange(dep, outcome, CORE_KEY_ID)
    ids = IdMap()
    envelopes = [from_draft(r, ids, payload.get("guardian_clock")) for r in iter_steps(payload)]
    sid = envelopes[0]["params"]["metadata"]["session_id"]
    extra = []
    if "intent" in payload:
        extra.append("steps/sessionStart")
    if "observed_content" in payload:
        extra.append("steps/knowledgeRetrieval")
    if envelopes[0]["method"] != "handshake/hello":
        if not ex.prelude(client_hello(sid, extra)):
            return
        if not _intent_prelude(ex, payload, sid):
            return
    state = payload.get("signature_state", "VALID")
    answers = [ex.send(apply_signature_state(ex, e, state, payload), sign=False) for e in envelopes]
    last = answers[-1]
    earlier_ok = all(verdict_of(a)[0] == "allow" for a in answers[:-1])
    outcome.got = "; ".join(verdict_of(a)[2] for a in answers)
    outcome.passed = earlier_ok and matches(member["expected"], last)


def apply_signature_state(
    ex: Exchange, envelope: dict[str, Any], state: str, payload: Mapping[str, Any]
) -> dict[str, Any]:
    sid = envelope["params"]["metadata"]["session_id"]
    key = ex.key(sid)
    if state == "VALID":
        return signed(envelope, key, ex.key_id)
    if state == "ABSENT":
        return envelope
    if state == "INVALID":  # well formed, 32 bytes, and wrong
        out = signed(envelope, key, ex.key_id)
        raw = bytearray(base64.b64decode(out["params"]["signature"]["value"]))
        raw[0] ^= 0x01
        out["params"]["signature"]["value"] = base64.b64encode(bytes(raw)).decode()
        return out
    if state == "COVERS_SUBSET":  # a MAC over the envelope with the named fields removed
        reduced = copy.deepcopy(envelope)
        for dotted in payload["signed_fields_omitted"]:
            *parents, leaf = dotted.split(".")
            holder = reduced["params"]
            for name in parents:
                holder = holder[name]
            holder.pop(leaf)
        value = mac(key, reduced)
        out = copy.deepcopy(envelope)
        out["params"]["signature"] = {
            "algorithm": "HMAC-SHA256",
            "key_id": ex.key_id,
            "value": value,
        }
        return out
    raise AssertionError(f"unknown signature_state {state}")


def _verifier_keys(payload: Mapping[str, Any]) -> dict[str, bytes]:
    holder = payload.get("verifier") or payload["observed_agent"]
    return {k: bytes.fromhex(holder["secret_hex"][k]) for k in holder["configured_key_ids"]}


def run_key_member(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-13 requests: signed by the member's own recipe (KDF, salt, info, length, secret)
    under the label it names, against a Guardian holding exactly the member's verifier keys."""
    payload = member["payload"]
    keys = _verifier_keys(payload)
    dep = run.deployment("+".join(sorted(keys)), keys)
    derivation = payload["signer_derivation"]
    ex = Exchange(dep, outcome, derivation["secret_key_id"])
    ids = IdMap()
    envelope = from_v010(payload["request"], ids)
    sid = envelope["params"]["metadata"]["session_id"]
    if not ex.prelude(client_hello(sid, [])):
        return
    key = derivation_key(derivation, keys, sid, ids)
    label = payload["request"]["params"]["signature"]["key_id"]
    label = ids(label) if label == payload["request"]["params"]["metadata"]["session_id"] else label
    out = copy.deepcopy(envelope)
    out["params"]["signature"] = {
        "algorithm": "HMAC-SHA256",
        "key_id": label,
        "value": mac(key, envelope),
    }
    answer = ex.send(out, sign=False)
    outcome.got = verdict_of(answer)[2]
    outcome.passed = matches(member["expected"], answer)


def observe_response_label(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-13 rotation pair: which label, and which secret, sign agbom's response."""
    payload = member["payload"]
    keys = _verifier_keys(payload)
    dep = run.deployment("+".join(sorted(keys)), keys)
    asked = payload["request"]["params"]["signature"]["key_id"]
    ex = Exchange(dep, outcome, asked)
    ids = IdMap()
    envelope = from_v010(payload["request"], ids)
    sid = envelope["params"]["metadata"]["session_id"]
    if not ex.prelude(client_hello(sid, [])):
        return
    answer = ex.send(envelope)
    slot = "result" if "result" in answer else "error"
    label = ((answer.get(slot) or {}).get("signature") or {}).get("key_id")
    good = label == asked and verifies(answer, ex.key(sid, asked))
    outcome.got = f"response signed under {label!r}" + ("" if good else " (not the request's)")
    member_label = payload["response"]["result"]["signature"]["key_id"]
    exhibits = label == member_label
    outcome.passed = good if member["kind"] == "accept" else (good and not exhibits)


def _core_session(run: Run, outcome: Outcome, methods: list[str]) -> tuple[Exchange, str] | None:
    ex = Exchange(run.deployment("core"), outcome, CORE_KEY_ID)
    sid = f"s-{secrets.token_hex(6)}"
    if not ex.prelude(client_hello(sid, methods)):
        return None
    return ex, sid


def observe_chain_hash_signed(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-8 pair: agbom's response carries chain_hash inside what its signature covers."""
    opened = _core_session(run, outcome, [])
    if opened is None:
        return
    ex, sid = opened
    answer = ex.send(step("steps/toolCallRequest", sid, EMAIL_CALL))
    result = answer.get("result") or {}
    key = ex.key(sid)
    tampered = copy.deepcopy(answer)
    covered = False
    if "chain_hash" in result:
        tampered["result"]["chain_hash"] = "0" * 64
        covered = verifies(answer, key) and not verifies(tampered, key)
    outcome.got = "chain_hash signed" if covered else f"chain_hash not covered: {result}"[:120]
    outcome.passed = covered


def observe_request_hash(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-6 ACS-Audit pair: every chain entry carries request_hash."""
    opened = _core_session(run, outcome, [])
    if opened is None:
        return
    ex, sid = opened
    ex.send(step("steps/toolCallRequest", sid, EMAIL_CALL))
    entries = ex.dep.chain(sid)
    ok = bool(entries) and all(
        re.fullmatch(r"[0-9a-f]{64}", str(e.get("request_hash", ""))) for e in entries
    )
    outcome.got = f"{len(entries)} entries, request_hash in all" if ok else f"entries: {entries}"
    outcome.passed = ok


def observe_seal(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-6 ACS-Core pair: three published heads, then sessionEnd; the seal must chain off
    the last head the Guardian published, not an earlier one."""
    opened = _core_session(run, outcome, ["steps/sessionEnd"])
    if opened is None:
        return
    ex, sid = opened
    heads = []
    for _ in range(3):
        answer = ex.send(step("steps/toolCallRequest", sid, EMAIL_CALL))
        if not verifies(answer, ex.key(sid)):
            outcome.got, outcome.passed = f"unsigned or refused step: {answer}"[:120], False
            return
        heads.append(answer["result"].get("chain_hash"))
    ex.send(step("steps/sessionEnd", sid, {"reason": "completed"}))
    entries = ex.dep.chain(sid)
    seal = next((e for e in entries if e.get("step_type") == "steps/sessionEnd"), None)
    previous = seal.get("previous_hash") if seal else None
    outcome.got = (
        "sealed off the last published head"
        if previous == heads[-1]
        else f"seal previous_hash {previous}; heads {heads}"
    )
    outcome.passed = previous == heads[-1]


def observe_request_ref(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-14: the sessions' toolCallRequests the member lists, then its toolCallResult; is
    an unresolved request_id_ref recorded in agbom's chain entry for the result?"""
    payload = member["payload"]
    dep = run.deployment("core")
    ex = Exchange(dep, outcome, CORE_KEY_ID)
    ids = IdMap()
    for session, records in payload["guardian_session_records"].items():
        sid = ids(session)
        if not ex.prelude(client_hello(sid, [])):
            return
        for record in records:
            request = step(record["method"], sid, EMAIL_CALL)
            request["params"]["request_id"] = ids(record["request_id"])
            if not ex.prelude(request):
                return
    envelope = from_v010(payload["request"], ids)
    # The member's result names no tool and gives outputs as an object; every hook draft
    # requires tool and an array of {value} items. The property turns on neither.
    result = envelope["params"]["payload"]
    result.setdefault("tool", EMAIL_CALL["tool"])
    if isinstance(result.get("outputs"), dict):
        result["outputs"] = [{"value": result["outputs"]}]
    answer = ex.send(envelope)
    verdict, _, detail = verdict_of(answer)
    sid = envelope["params"]["metadata"]["session_id"]
    ref = result["request_id_ref"]
    entry = next(
        (e for e in dep.chain(sid) if e.get("step_id") == envelope["params"]["request_id"]), None
    )
    text = json.dumps(entry) if entry else ""
    recorded = ref in text and "unresolved" in text
    outcome.got = f"{detail}; unresolved reference {'recorded' if recorded else 'not recorded'}"
    member_recorded = bool(payload["guardian_audit_record"])
    if member["kind"] == "accept":  # the decision is the deployment's policy
        outcome.passed = recorded == member_recorded and entry is not None
    else:
        outcome.passed = entry is not None and not (
            recorded == member_recorded and verdict == payload["guardian_decision"]
        )


ESCALATING_PACK = """\
pack: vectors-escalate
description: The policy acs-f-9 va200b64093301e14 assumes (records.lookup needs approval).
rules:
  - id: VEC-ASK-001
    kind: ban
    severity: high
    action: ask
    message: "{component.name} needs an approver"
    match: {type: tool, name: records.lookup}
"""


def run_ask_incapable(run: Run, member: Mapping[str, Any], outcome: Outcome) -> None:
    """acs-f-9: the policy escalates (a rule pack that asks for records.lookup) and the agent
    cannot answer ASK (``--no-ask``): the answer must be DEFER with timeout_decision deny, or
    DENY approver_unavailable, never ASK. An agent not so declared gets the ASK, so the
    member is not passed by a policy that never escalates."""
    payload = member["payload"]
    if "ask-incapable" not in run.deployments:
        rules = run.workdir / "ask-rules"
        rules.mkdir(parents=True, exist_ok=True)
        (rules / "escalate.yaml").write_text(ESCALATING_PACK)
        dep = Deployment(
            "ask-incapable",
            {CORE_KEY_ID: run.core_secret},
            run.workdir / "ask-incapable",
            extra=["--rules", str(rules), "--no-ask", DEFAULT_AGENT_ID],
        )
        dep.start(run.flags)
        run.deployments["ask-incapable"] = dep
    dep = run.deployments["ask-incapable"]
    ex = Exchange(dep, outcome, CORE_KEY_ID)
    answers = {}
    for agent in (f"{DEFAULT_AGENT_ID}-with-approver", DEFAULT_AGENT_ID):
        ids = IdMap()
        envelope = from_draft(payload["request"], ids, None)
        envelope["params"]["metadata"]["agent_id"] = agent
        sid = envelope["params"]["metadata"]["session_id"]
        if not ex.prelude(client_hello(sid, [], agent)):
            return
        answers[agent] = ex.send(envelope)
    control = (answers[f"{DEFAULT_AGENT_ID}-with-approver"].get("result") or {}).get("decision")
    result = answers[DEFAULT_AGENT_ID].get("result") or {}
    decision = result.get("decision")
    deferred = (
        decision == "defer"
        and (result.get("defer_details") or {}).get("timeout_decision") == "deny"
    )
    denied = decision == "deny" and "approver_unavailable" in (result.get("reason_codes") or [])
    outcome.got = (
        f"{verdict_of(answers[DEFAULT_AGENT_ID])[2]} (an agent with an approver: {control})"
    )
    outcome.passed = control == "ask" and (deferred or denied)


RUNNERS: dict[str, Callable[[Run, Mapping[str, Any], Outcome], None]] = {
    "acs-f-13": run_key_member,
}
OBSERVATION_RUNNERS: dict[str, Callable[[Run, Mapping[str, Any], Outcome], None]] = {
    "v25f01d8fe1e91bf5": observe_chain_hash_signed,
    "v7b0b32fb369136c1": observe_chain_hash_signed,
    "v3c03d4e4ce213e9c": observe_request_hash,
    "v8557c978bf12ca55": observe_request_hash,
    "v6daaec0f6f0c8a14": observe_seal,
    "v986429a577e03404": observe_seal,
    "va200b64093301e14": run_ask_incapable,
    "v7b0219cc72681b5a": observe_response_label,
    "vb3c19387fb98e20f": observe_response_label,
}
for _fid in (
    "v2d172bf817c9b0ca",
    "v317a035acc0101c3",
    "v47ac76a1803fdb29",
    "v650e4e7924e597b8",
    "vdea95625fa2056cf",
    "ve4913ae6f9a72e29",
):
    OBSERVATION_RUNNERS[_fid] = observe_request_ref


def run_corpus(workdir: Path, runs: list[Run] | None = None) -> list[Outcome]:
    """Every member's outcome; ``runs``, when given, receives the Run (for its records)."""
    members, _ = load_corpus()
    check_signer_against_corpus(members)
    run = Run(workdir)
    run.members = members
    if runs is not None:
        runs.append(run)
    try:
        return [run_member(run, m) for m in members]
    finally:
        run.close()
