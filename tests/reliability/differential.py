"""A differential state machine (issue 39): random sessions go to a Guardian that holds them in
memory for their whole life (the reference) and to Guardians that lose them at random points,
and every answer must be the same.

The subjects, each on its own store, as the reference is:

* ``restarted``: a Guardian thrown away at random points and built again on its store (what a
  restart of ``agbom serve`` leaves: the store and nothing else);
* ``evicted``: a Guardian whose memory bound holds one session, so that serving one session
  pushes every other out of memory (restored from the store when next used).

Sessions mix inventory snapshots, skill registrations and loads against approvals, provenance
(user messages, tool outputs, agent responses, ids never delivered, cycles), re-declarations
of a delivered id under another origin, large steps (more Provenance objects than a chain
entry once recorded), acs-provenance sessions and signed sessions, and calls judged by flow
rules (an unfiltered deny, a ``source``-filtered deny, the default pack's warnings) as
toolCallRequests and as wrapped MCP ``tools/call``.

Used by tests/reliability/test_reliability_differential.py (derandomized, on SQLite and on
PostgreSQL) and benchmarks/differential_soak.py (longer, random).
"""

from __future__ import annotations

import copy
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    rule,
)

from agbom.guardian import Guardian, GuardianConfig, build_guardian
from agbom.protocol.signatures import sign_envelope
from agbom.store import Digest
from tests.guardian.acs import ALL_METHODS, FILTERED_PACK, digest, one_tool_agbom, request

REPO = Path(__file__).resolve().parents[2]
STRICT = REPO / "agbom" / "rules" / "packs" / "flow-strict.yaml"
FILTERED = FILTERED_PACK.replace("SINK", "deploy")
AGBOM = {
    "agent": {"id": "agent-1"},
    "components": [
        one_tool_agbom(name, capability)["components"][0]
        for name, capability in (
            ("Bash", "process.execute"),
            ("fetch_url", "net.http"),
            ("deploy", "cloud.deploy"),
        )
    ],
}
SKILLS = ("deployer", "reader", "writer")
APPROVED = {("deployer", "a"): ["fs.read"], ("reader", "b"): ["fs.read", "net.http"]}
ORIGINS = ("user_input", "system", "tool_output", "retrieved", "agent_generated", "external")
LARGE = 1_100  # objects in a large step: more than a chain entry recorded before issue 39

StoreFactory = Callable[[str], str]
"""Makes a fresh store for a name (a SQLite path or a PostgreSQL URL)."""


@dataclass
class Session:
    sid: str
    signed: bool
    profile: bool
    ids: list[str] = field(default_factory=list)  # provenance ids delivered
    closed: bool = False


def _strip(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without what differs between two Guardians deciding alike: the chain hash
    (entries carry each Guardian's own timestamps), the time taken and the signature over
    them."""
    out = copy.deepcopy(answer)
    out.pop("id", None)
    out.get("params", {}).pop("signature", None)
    result = out.get("result")
    if isinstance(result, dict):
        for key in ("chain_hash", "signature"):
            result.pop(key, None)
        if isinstance(result.get("metadata"), dict):
            result["metadata"].pop("evaluation_duration_ms", None)
    out.pop("signature", None)
    return out


class Differential(RuleBasedStateMachine):
    """See the module docstring. ``store_factory`` is set by the test that runs it."""

    store_factory: StoreFactory | None = None
    sessions = Bundle("sessions")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="agbom-diff-"))
        (self.folder / "rules").mkdir()
        (self.folder / "rules" / "filtered.yaml").write_text(FILTERED)
        (self.folder / "rules" / "flow-strict.yaml").write_text(STRICT.read_text())
        self.secret = self.folder / "secret"
        self.secret.write_bytes(bytes(range(32)))
        self.secret.chmod(0o600)  # a key file others can read is refused
        factory = type(self).store_factory or (lambda name: str(self.folder / f"{name}.db"))
        self.stores = {name: factory(name) for name in ("reference", "restarted", "evicted")}
        self.guardians: dict[str, Guardian] = {name: self._build(name) for name in self.stores}
        for guardian in self.guardians.values():
            for (skill, sha), caps in APPROVED.items():
                guardian.store.set_status(
                    skill,
                    Digest.from_wire(digest(sha * 64)),
                    "approved",
                    actor="alice",
                    reason="reviewed",
                    capabilities=caps,
                )
        self.restarts = 0
        self.sent = 0

    def _build(self, name: str) -> Guardian:
        # Each Guardian has its own store file, so a denial's 'agbom skills approve --db FILE'
        # would differ; replicas share one store. A review page URL is the same for all.
        public_url = "https://agbom.example.test"
        config = (
            GuardianConfig(max_session_bytes=1, public_url=public_url)
            if name == "evicted"
            else GuardianConfig(public_url=public_url)
        )
        return build_guardian(
            self.stores[name],
            self.folder / "rules",
            with_default_rules=True,
            secret_file=self.secret,
            config=config,
        )

    def teardown(self) -> None:
        for guardian in self.guardians.values():
            guardian.store.close()

    # -- sending ---------------------------------------------------------------------------------

    def send(self, session: Session | None, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` to every Guardian; their answers must agree. Returns the reference's."""
        if session is not None and session.signed:
            ring = self.guardians["reference"].keyring
            assert ring is not None
            message = sign_envelope(message, ring.session_key(session.sid), ring.key_id)
        self.sent += 1
        answers = {
            name: guardian.handle(copy.deepcopy(message))
            for name, guardian in self.guardians.items()
        }
        reference = _strip(answers["reference"])
        for name, answer in answers.items():
            assert _strip(answer) == reference, (
                f"{name} answered {message.get('method')} otherwise than the reference",
                message,
                answer,
                answers["reference"],
            )
        return answers["reference"]

    def step(self, session: Session, method: str, payload: Any) -> dict[str, Any]:
        answer = self.send(session, request(method, payload, session_id=session.sid))
        if method == "steps/sessionEnd" and "result" in answer:
            session.closed = True
        return answer

    # -- provenance ------------------------------------------------------------------------------

    @staticmethod
    def _parents(data: st.DataObject, session: Session) -> list[str]:
        pool = [*session.ids[-8:], *session.ids[:4], "ghost", "p-cycle-a"]
        return data.draw(
            st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True), label="parents"
        )

    def _prov(
        self, data: st.DataObject, session: Session, origin: str | None = None, *, new: bool = True
    ) -> dict[str, Any]:
        origin = origin or data.draw(st.sampled_from(ORIGINS), label="origin")
        if new or not session.ids:
            pid = f"p{len(session.ids)}-{data.draw(st.integers(0, 9), label='salt')}"
            session.ids.append(pid)
        else:
            pid = data.draw(st.sampled_from(session.ids[-6:]), label="redeclared")
        out: dict[str, Any] = {"provenance_id": pid, "origin": origin}
        if origin == "agent_generated" or data.draw(st.integers(0, 3), label="derived") == 0:
            out["derived_from"] = self._parents(data, session)
        if data.draw(st.integers(0, 9), label="hint") == 0:
            out["trust"] = data.draw(st.sampled_from(["trusted", "untrusted"]), label="trust")
        return out

    # -- rules -----------------------------------------------------------------------------------

    @initialize(target=sessions)
    def first_session(self) -> Session:
        return self._open(signed=False, profile=True, start=True)

    @rule(target=sessions, signed=st.booleans(), profile=st.booleans(), start=st.booleans())
    def open_session(self, signed: bool, profile: bool, start: bool) -> Any:
        return multiple(self._open(signed=signed, profile=profile, start=start))

    def _open(self, *, signed: bool, profile: bool, start: bool) -> Session:
        session = Session(str(uuid.uuid4()), signed=signed, profile=profile)
        payload: dict[str, Any] = {
            "acs_versions_supported": ["0.1.0"],
            "methods_implemented": ALL_METHODS,
            "transports_supported": ["http", "stdio"],
            "provenance_producer": "deterministic",
        }
        if profile:
            payload["profiles_supported"] = ["acs-core", "acs-provenance"]
        answer = self.send(session, request("handshake/hello", payload, session_id=session.sid))
        assert "result" in answer, answer
        if start:
            self.step(session, "steps/sessionStart", {})
        return session

    @rule(session=sessions)
    def snapshot(self, session: Session) -> None:
        self.step(session, "agbom/snapshot", {"agbom": AGBOM})

    @rule(session=sessions, data=st.data())
    def user_message(self, session: Session, data: st.DataObject) -> None:
        if data.draw(st.integers(0, 5), label="plain") == 0:
            self.step(session, "steps/userMessage", {"content": "hi"})  # no provenance
            return
        part = {"type": "text", "value": "do it", "provenance": self._prov(data, session)}
        self.step(session, "steps/userMessage", {"content": [part]})

    @rule(session=sessions, data=st.data())
    def redeclare(self, session: Session, data: st.DataObject) -> None:
        """A delivered id sent again under another origin: it keeps what it was first."""
        origin = data.draw(st.sampled_from(["user_input", "system", "tool_output"]), label="as")
        part = {
            "type": "text",
            "value": "again",
            "provenance": self._prov(data, session, origin, new=False),
        }
        method = data.draw(st.sampled_from(["steps/userMessage", "steps/agentResponse"]))
        self.step(session, method, {"content": [part]})

    @rule(session=sessions, data=st.data())
    def tool_result(self, session: Session, data: st.DataObject) -> None:
        count = data.draw(st.integers(1, 3), label="outputs")
        outputs = [{"value": "out", "provenance": self._prov(data, session)} for _ in range(count)]
        self.step(
            session,
            "steps/toolCallResult",
            {"tool": {"name": "web_fetch"}, "exit_status": "success", "outputs": outputs},
        )

    @rule(session=sessions, data=st.data())
    def large_result(self, session: Session, data: st.DataObject) -> None:
        """More objects than a chain entry recorded before issue 39, the last of one origin."""
        origin = data.draw(st.sampled_from(["tool_output", "system"]), label="large origin")
        base = len(session.ids)
        outputs = [
            {"value": "o", "provenance": {"provenance_id": f"L{base}-{i}", "origin": origin}}
            for i in range(LARGE)
        ]
        session.ids.append(f"L{base}-{LARGE - 1}")
        self.step(
            session,
            "steps/toolCallResult",
            {"tool": {"name": "web_fetch"}, "exit_status": "success", "outputs": outputs},
        )

    @rule(session=sessions, data=st.data())
    def agent_response(self, session: Session, data: st.DataObject) -> None:
        part = {
            "type": "text",
            "value": "thinking",
            "provenance": self._prov(data, session, "agent_generated"),
        }
        self.step(session, "steps/agentResponse", {"content": [part]})

    @rule(session=sessions, data=st.data())
    def call(self, session: Session, data: st.DataObject) -> None:
        self._call(session, data)

    @rule(session=sessions, data=st.data())
    def output_then_call(self, session: Session, data: st.DataObject) -> None:
        """The shape of an injection: a tool's output, the agent's answer from it, a call."""
        self.tool_result(session, data)
        self.agent_response(session, data)
        self._call(session, data)

    def _call(self, session: Session, data: st.DataObject) -> None:
        tool = data.draw(st.sampled_from(["Bash", "fetch_url", "deploy", "read_file"]))
        arguments = {}
        names = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True)
        for name in data.draw(names, label="arguments"):
            item: dict[str, Any] = {"value": "x"}
            if data.draw(st.integers(0, 4), label="no provenance") or session.profile:
                item["provenance"] = self._prov(data, session, "agent_generated")
            arguments[name] = item
        if data.draw(st.booleans(), label="wrapped"):
            meta = {k: v["provenance"] for k, v in arguments.items() if "provenance" in v}
            params: dict[str, Any] = {
                "name": tool,
                "arguments": {k: v["value"] for k, v in arguments.items()},
            }
            if meta:
                params["_meta"] = {"acs/provenance": meta}
            message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
            self.step(session, "protocols/MCP/tools/call", message)
        else:
            self.step(
                session, "steps/toolCallRequest", {"tool": {"name": tool}, "arguments": arguments}
            )

    @rule(
        session=sessions,
        skill=st.sampled_from(SKILLS),
        sha=st.sampled_from("ab"),
        wide=st.booleans(),
    )
    def skill_register(self, session: Session, skill: str, sha: str, wide: bool) -> None:
        caps = ["fs.read", "process.execute"] if wide else ["fs.read"]
        payload = {
            "skill_id": skill,
            "definition": {"ref": f"skills/{skill}", "digest": digest(sha * 64)},
            "declared_capabilities": caps,
        }
        self.step(session, "steps/skillRegister", payload)

    @rule(session=sessions, skill=st.sampled_from(SKILLS), sha=st.sampled_from("ab"))
    def skill_load(self, session: Session, skill: str, sha: str) -> None:
        payload = {
            "skill_id": skill,
            "digest": digest(sha * 64),
            "load_trigger": "user",
            "load_path": [{"skill_id": skill}],
        }
        self.step(session, "steps/skillLoad", payload)

    @rule(session=consumes(sessions))
    def end(self, session: Session) -> None:
        self.step(session, "steps/sessionEnd", {"reason": "completed"})

    @rule()
    def restart(self) -> None:
        """The restarted subject loses everything but its store."""
        self.guardians["restarted"].store.close()
        self.guardians["restarted"] = self._build("restarted")
        self.restarts += 1

    @invariant()
    def evicted_holds_at_most_one_session(self) -> None:
        assert self.guardians["evicted"].memory_in_use()[0] <= 1
