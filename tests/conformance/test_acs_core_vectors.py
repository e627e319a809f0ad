"""The ACS-core members of ``agent-evidence-vectors`` (a corpus written elsewhere) against a
real ``agbom serve`` over HTTP: handshakes, fresh timestamps, real HMAC-SHA256 signatures.

One test per member. A member that passes today must keep passing; a member agbom fails for
a reason recorded in ``KNOWN_FAILURES`` is an expected failure with that reason; a member that
is not a Guardian's business, or is wrong, is skipped with the reason it does not apply
(``acs_core_vectors.classify``). ``python -m tests.conformance.run_vectors`` prints the table.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import trace_vectors
from tests.conformance.acs_core_vectors import (
    TRACE_OBSERVATIONS,
    IdMap,
    Outcome,
    Run,
    check_signer_against_corpus,
    classify,
    from_draft,
    is_draft_shape,
    iter_steps,
    load_corpus,
    run_corpus,
)
from tests.transports.served import Served, post

pytestmark = pytest.mark.network

MEMBERS, MANIFEST = load_corpus()

# Members agbom does not pass, and what the Guardian would have to change for them to pass.
_IBAC = (
    "agbom does not enforce intent (section 8.4 IBAC, OPTIONAL): a tool outside the session's "
    "committed Intent.parsed is not denied"
)
KNOWN_FAILURES: dict[str, str] = {
    "v661266c5c87cb206": _IBAC,
    "vc333473269d1b3a9": _IBAC,
}


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Outcome], Run]:
    runs: list[Run] = []
    done = run_corpus(tmp_path_factory.mktemp("acs-core"), runs)
    return {o.member_id: o for o in done}, runs[0]


@pytest.fixture(scope="module")
def outcomes(corpus_run: tuple[dict[str, Outcome], Run]) -> dict[str, Outcome]:
    return corpus_run[0]


def test_the_installed_corpus_is_the_one_its_manifest_describes() -> None:
    assert len(MEMBERS) == sum(MANIFEST["counts"].values()) == len(MANIFEST["vectors"])
    assert {m["id"] for m in MEMBERS} == {v["id"] for v in MANIFEST["vectors"]}


def test_the_client_signer_reproduces_every_key_and_mac_the_corpus_publishes() -> None:
    # Nine acs-f-13 members publish the signer's derived key and MAC: the driver's HKDF and
    # HMAC, written apart from agbom's, must reproduce them before anything it signs counts.
    assert check_signer_against_corpus(MEMBERS) == 9


def test_every_member_is_classified_with_a_reason() -> None:
    kinds = collections.Counter(classify(m).kind for m in MEMBERS)
    assert sum(kinds.values()) == len(MEMBERS)
    assert set(kinds) <= {"wire", "observation", "not_applicable", "wrong", "unmeasurable"}
    assert kinds["unmeasurable"] == MANIFEST["counts"]["indeterminate"]
    assert all(classify(m).reason for m in MEMBERS)


def test_the_draft_request_shape_is_refused_as_an_invalid_envelope(tmp_path: Path) -> None:
    """Members of acs-f-1..11 are written in a pre-0.1.0 draft (``acs: "0.1"``, ``hooks/*``,
    request_id beside params). agbom speaks the v0.1.0 envelope, whose top level is closed,
    so the driver translates them; sent as written they must be refused, not half-read."""
    drafts = [
        request
        for member in MEMBERS
        if "request" in member["payload"] or "steps" in member["payload"]
        for request in iter_steps(member["payload"])
        if is_draft_shape(request)
    ]
    assert len(drafts) == 43
    server = Served(db=tmp_path / "agbom.db", log=tmp_path / "serve.log").start()
    try:
        for request in drafts:
            answer = post(server.url, request)
            assert answer["error"]["code"] == -32600, answer
        # The same request translated is understood (it may then be refused for its session).
        translated = from_draft(drafts[0], IdMap(), None)
        assert post(server.url, translated)["error"]["code"] != -32600
    finally:
        server.stop()


def test_every_trace_observation_has_a_judge_and_a_step() -> None:
    assert set(trace_vectors.JUDGES) == set(trace_vectors.LABELS) == TRACE_OBSERVATIONS
    assert len(TRACE_OBSERVATIONS) == 34


@pytest.mark.parametrize("member_id", sorted(TRACE_OBSERVATIONS))
def test_the_trace_judge_gives_the_corpus_verdict_on_the_corpus_own_record(
    member_id: str, corpus_run: tuple[dict[str, Outcome], Run]
) -> None:
    """Each ACS-Trace member's own span or OCSF event, put in place of agbom's, gets the
    member's verdict from the judge that grades agbom's: a judge that passes every record
    would fail the reject members here."""
    run = corpus_run[1]
    assert run.trace is not None and run.trace.problem is None
    member = next(m for m in MEMBERS if m["id"] == member_id)
    passed, got = trace_vectors.JUDGES[member_id](trace_vectors.substitute(run.trace, member))
    assert passed is (member["kind"] == "accept"), got


def _traffic(outcome: Outcome) -> str:
    lines = []
    for sent, answer in zip(outcome.sent, outcome.answers, strict=False):
        lines.append(f"  > {sent.get('method')} {sent.get('params', {}).get('payload')}")
        lines.append(f"  < {answer}")
    return "\n".join(lines)


@pytest.mark.parametrize("member", MEMBERS, ids=[m["id"] for m in MEMBERS])
def test_member(member: dict[str, Any], outcomes: dict[str, Outcome]) -> None:
    cls = classify(member)
    if cls.kind not in ("wire", "observation"):
        pytest.skip(f"{cls.kind}: {cls.reason}")
    outcome = outcomes[member["id"]]
    if outcome.passed is None:
        pytest.skip(outcome.note)
    if not outcome.passed and member["id"] in KNOWN_FAILURES:
        pytest.xfail(f"{KNOWN_FAILURES[member['id']]} (got: {outcome.got})")
    assert outcome.passed, (
        f"{member['id']} ({member['family']}, {member['kind']}) expects {outcome.expected}, "
        f"agbom answered: {outcome.got}\n{outcome.note}\n{_traffic(outcome)}"
    )
