"""A mixed client workload against ``agbom serve``, and the checks that the store reflects it.

Used by the crash-safety and concurrency tests (short, in CI) and by
``benchmarks/crash_safety.py`` (long). Clients stream steps, register and load skills over
HTTP; approvers run ``agbom skills approve`` as real subprocesses. Everything a client *heard*
is logged, so that afterwards the store can be checked against it.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.guardian.acs import hello, request
from tests.transports.served import run_cli


@dataclass(frozen=True)
class Heard:
    """One decision a client received: it must be in the store, exactly as answered."""

    session_id: str
    request_id: str
    method: str
    decision: str
    chain_hash: str
    skill: tuple[str, str] | None = None


@dataclass(frozen=True)
class Span:
    """When a request was sent and when it ended (``time.monotonic``), and how."""

    start: float
    end: float
    reason: str = ""  # an error answer's ``data.reason``
    body: str = ""


@dataclass
class Log:
    """Every request a client sent ends in exactly one of: a decision it heard (``heard``), a
    hello answered (``hellos``), an error answer (``errors``) or a transport failure (no
    answer: ``failures``). ``sent`` counts them all independently, so the totals must add up.
    """

    heard: list[Heard] = field(default_factory=list)
    registered: list[tuple[str, str]] = field(default_factory=list)
    approved: list[tuple[str, str]] = field(default_factory=list)
    claimed: set[tuple[str, str]] = field(default_factory=set)  # taken by an approver
    approve_failures: list[str] = field(default_factory=list)
    errors: list[Span] = field(default_factory=list)
    failures: list[Span] = field(default_factory=list)
    sent: int = 0
    hellos: int = 0
    crashed: list[str] = field(default_factory=list)  # a client thread that died, and why
    latencies: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def client_errors(self) -> list[str]:
        return [span.body for span in self.errors]

    @property
    def transport_failures(self) -> int:
        return len(self.failures)

    def unaccounted(self) -> int:
        """Requests sent that ended in none of the four outcomes (0 when the totals add up)."""
        with self.lock:
            ended = len(self.heard) + self.hellos + len(self.errors) + len(self.failures)
            return self.sent - ended


JSON_CONTENT = {"Content-Type": "application/json"}  # the server refuses any other body type


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Client(threading.Thread):
    """One agent: a session, then steps, skill registrations and loads until told to stop."""

    def __init__(self, url: Callable[[], str], log: Log, stop: threading.Event, seed: int):
        super().__init__(daemon=True)
        self.url, self.log, self.stop, self.rng = url, log, stop, random.Random(seed)
        self.sid = f"w-{uuid.uuid4()}"
        self.http = httpx.Client(timeout=20)
        self.started = False
        self.began = 0.0  # when the request being answered was sent

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """POST one request; its reply, or ``None`` (counted) when no answer came back. The
        caller records the reply as exactly one outcome (see :class:`Log`)."""
        self.began = began = time.monotonic()
        with self.log.lock:
            self.log.sent += 1
        try:
            reply = self.http.post(
                f"{self.url()}/acs", content=orjson.dumps(message), headers=JSON_CONTENT
            )
        except httpx.HTTPError:
            with self.log.lock:
                self.log.failures.append(Span(began, time.monotonic()))
            time.sleep(0.05)
            return None
        with self.log.lock:
            self.log.latencies.append(time.monotonic() - began)
        return orjson.loads(reply.content)

    def ensure_session(self) -> bool:
        if self.started:
            return True
        reply = self.send(hello(self.sid))
        if reply is None:
            return False
        if "error" in reply:
            self.note_error(reply)
            return False
        with self.log.lock:
            self.log.hellos += 1
        reply = self.send(request("steps/sessionStart", {}, session_id=self.sid))
        if reply is None:
            return False
        if "error" in reply:
            self.note_error(reply)
            # A sessionStart whose answer was lost in a crash may have committed: that is fine.
            self.started = self.reason(reply) == "session_already_started"
            return self.started
        self.record(reply, "steps/sessionStart", None)
        self.started = True
        return True

    @staticmethod
    def reason(reply: dict[str, Any]) -> str:
        data = reply.get("error", {}).get("data")
        return str(data.get("reason", "")) if isinstance(data, dict) else ""

    def note_error(self, reply: dict[str, Any]) -> None:
        span = Span(self.began, time.monotonic(), self.reason(reply), orjson.dumps(reply).decode())
        with self.log.lock:
            self.log.errors.append(span)

    def record(self, reply: dict[str, Any], method: str, skill: tuple[str, str] | None) -> None:
        result = reply["result"]
        heard = Heard(
            self.sid,
            result["request_id"],
            method,
            result["decision"],
            result["chain_hash"],
            skill,
        )
        with self.log.lock:
            self.log.heard.append(heard)

    def run(self) -> None:
        try:
            self.stream()
        except Exception as exc:  # noqa: BLE001 - reported by the test, not lost in a thread
            with self.log.lock:
                self.log.crashed.append(f"{type(exc).__name__}: {exc}")
        finally:
            self.http.close()

    def stream(self) -> None:
        while not self.stop.is_set():
            if not self.ensure_session():
                time.sleep(0.05)
                continue
            roll = self.rng.random()
            skill: tuple[str, str] | None = None
            if roll < 0.6:
                method = "steps/userMessage"
                payload: dict[str, Any] = {"content": f"step {self.rng.random()}"}
            elif roll < 0.8:
                method = "steps/skillRegister"
                name = f"skill-{uuid.uuid4().hex[:10]}"
                skill = (name, digest_of(name))
                payload = {
                    "skill_id": name,
                    "definition": {
                        "ref": f"skills/{name}",
                        "digest": {"algorithm": "sha256", "value": skill[1]},
                    },
                    "declared_capabilities": [],
                }
            else:
                with self.log.lock:
                    pool = list(self.log.approved) or list(self.log.registered)
                if not pool:
                    continue
                skill = self.rng.choice(pool)
                method = "steps/skillLoad"
                payload = {
                    "skill_id": skill[0],
                    "digest": {"algorithm": "sha256", "value": skill[1]},
                    "load_trigger": "user",
                    "load_path": [{"skill_id": skill[0]}],
                }
            reply = self.send(request(method, payload, session_id=self.sid))
            if reply is None:
                continue
            if "error" in reply:
                self.note_error(reply)
                time.sleep(0.05)  # as after no answer: do not spin while the Guardian is down
                continue
            self.record(reply, method, skill)
            if method == "steps/skillRegister":
                with self.log.lock:
                    self.log.registered.append(skill)  # type: ignore[arg-type]


class Approver(threading.Thread):
    """Approves registered skills with the real CLI, as a platform team would."""

    def __init__(self, db: Path, log: Log, stop: threading.Event):
        super().__init__(daemon=True)
        self.db, self.log, self.stop = db, log, stop

    def run(self) -> None:
        while not self.stop.is_set():
            with self.log.lock:
                todo = [s for s in self.log.registered if s not in self.log.claimed]
                if todo:
                    self.log.claimed.add(todo[0])  # each pair is approved by one approver, once
            if not todo:
                time.sleep(0.05)
                continue
            skill, value = todo[0]
            done = run_cli(
                "skills",
                "approve",
                skill,
                "--digest",
                f"sha256:{value}",
                "--db",
                str(self.db),
                "--reason",
                "workload",
            )
            with self.log.lock:
                if done.returncode == 0:
                    self.log.approved.append((skill, value))
                else:
                    self.log.approve_failures.append(done.stderr.decode(errors="replace"))


def child_pids(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (an ``agbom serve``'s decision process)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # it exited meanwhile
        state, parent = text[text.rindex(")") + 2 :].split()[:2]  # the name may hold ") "
        if int(parent) == pid and state not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def decision_pid(front_pid: int, *, other_than: int | None = None, timeout: float = 60) -> int:
    """The pid of the decision process of the ``agbom serve`` at ``front_pid`` (waiting for a
    new one when ``other_than`` names the last)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [pid for pid in child_pids(front_pid) if pid != other_than]
        if len(found) == 1:
            return found[0]
        assert time.monotonic() < deadline, f"decision processes of {front_pid}: {found}"
        time.sleep(0.02)


def wait_healthy(url: str, *, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"{url} did not become healthy"
        time.sleep(0.02)


def check_store(db: Path | str, log: Log) -> dict[str, int]:
    """Everything a client heard is in the store as answered, exactly once; chains verify;
    approvals are recorded exactly once. ``db`` is a SQLite path or a PostgreSQL URL. Returns
    counts for the report."""
    from agbom.store import Digest, open_store

    by_session: dict[str, dict[str, dict[str, Any]]] = {}
    with open_store(db, create=False) as store:
        for heard in log.heard:
            if heard.session_id not in by_session:
                entries = store.chain_entries(heard.session_id)
                by_session[heard.session_id] = {e["step_id"]: e for e in entries}
                step_ids = [e["step_id"] for e in entries]
                assert len(step_ids) == len(set(step_ids)), f"a step stored twice: {heard}"
            entry = by_session[heard.session_id].get(heard.request_id)
            assert entry is not None, f"answered but not stored: {heard}"
            assert entry["entry_hash"] == heard.chain_hash, heard
            assert entry["decision"] == heard.decision, heard
        for skill, value in log.approved:
            digest = Digest("sha256", value)
            record = store.get_skill(skill, digest)
            assert record is not None and str(record.status) == "approved", (skill, record)
            approvals = [h for h in store.history(skill, digest) if h["to_status"] == "approved"]
            assert len(approvals) == 1, (skill, approvals)
        approved = set(log.approved)
        for heard in log.heard:
            if heard.method == "steps/skillLoad" and heard.decision == "allow":
                # An allowed load must match an approval that exists in the store now.
                record = store.get_skill(heard.skill[0], Digest("sha256", heard.skill[1]))
                assert record is not None and str(record.status) == "approved", heard
                assert heard.skill in approved or record.decided_by, heard
    verify = run_cli("audit", "verify", "--db", str(db))
    assert verify.returncode == 0, verify.stdout.decode() + verify.stderr.decode()
    return {
        "heard": len(log.heard),
        "sessions": len(by_session),
        "approved": len(log.approved),
        "transport_failures": log.transport_failures,
    }
