"""agbom serve --pack baseline against the reference TypeScript Guardian's 53 published
decisions (issue 30): every difference is one agbom makes on purpose, and says why."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.reference_guardian import DELIBERATE, Outcome, load, replay
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post

pytestmark = pytest.mark.network

TWO_METHODS = ["steps/toolCallRequest", "steps/toolCallResult"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("reference-guardian")
    operator = load()["operator_data"]
    extra = ["--pack", "baseline"]
    for host in operator["egress_allow"]:
        extra += ["--egress-allow", host]
    for tool in operator["known_tools"]:
        extra += ["--known-tool", tool]
    server = Served(db=folder / "store.db", log=folder / "serve.log", extra=extra).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def outcomes(served: Served) -> list[Outcome]:
    def new_session() -> str:
        sid = str(uuid.uuid4())
        answer = post(served.url, hello(sid, methods=TWO_METHODS))
        assert "error" not in answer, answer
        return sid

    def decide(sid: str, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        answer = post(served.url, request(method, payload, session_id=sid))
        assert "error" not in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    return list(replay(decide, new_session))


def test_all_53_published_steps_are_decided(outcomes: list[Outcome]) -> None:
    assert len(outcomes) == 53


def test_every_difference_is_a_documented_choice(outcomes: list[Outcome]) -> None:
    differing = {o.case for o in outcomes if not o.agrees}
    undocumented = {
        f"{o.case}[{o.index}]: reference {o.wanted}, agbom {o.got} {o.detail}"
        for o in outcomes
        if not o.agrees and o.case not in DELIBERATE
    }
    assert not undocumented
    assert differing == set(DELIBERATE), set(DELIBERATE) - differing  # none went stale
    agreed = sum(o.agrees for o in outcomes)
    print(f"\nagreement with the reference Guardian: {agreed}/{len(outcomes)}")
    assert agreed == len(outcomes) - len(DELIBERATE)


def test_each_deny_names_its_rule_and_the_matched_span(outcomes: list[Outcome]) -> None:
    destructive = next(o for o in outcomes if o.case == "destructive_echoed")
    assert "AGB-RUN-001" in destructive.detail
    assert "'rm -rf /' at /arguments/command/value offset 5" in destructive.detail
    egress = next(o for o in outcomes if o.case == "egress_hex_ipv4")
    assert "AGB-RUN-004" in egress.detail and "destination 127.0.0.1" in egress.detail


def test_the_redactions_match_the_reference_text(outcomes: list[Outcome]) -> None:
    modified = [o for o in outcomes if o.wanted == "modify"]
    assert len(modified) == 5 and all(o.agrees for o in modified), modified


def test_without_the_pack_the_stock_bundle_cases_are_allowed(tmp_path: Path) -> None:
    # What issue 30 measured on main: the default pack allows destructive commands. (Since
    # issue 40 serve starts with the baseline runtime pack; --pack none is the old default.)
    server = Served(db=tmp_path / "store.db", log=tmp_path / "serve.log", extra=["--pack", "none"])
    server.start()
    try:
        sid = str(uuid.uuid4())
        post(server.url, hello(sid, methods=TWO_METHODS))
        payload = {
            "tool": {"name": "Bash"},
            "arguments": {"command": {"value": "rm -rf /"}},
            "raw_command": "rm -rf /",
        }
        answer = post(server.url, request("steps/toolCallRequest", payload, session_id=sid))
        assert answer["result"]["decision"] == "allow"
    finally:
        server.stop()
