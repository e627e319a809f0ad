"""A runtime pack and flow rules judging the same tool call (issue 42 item 12): the answer
cites the lineage ids the flow rules relied on whichever of them denies, and they are the ids
the step's chain entry records, over a real ``agbom serve --rules flow-strict --pack baseline``.

On main before the fix, the pack's denial was merged afresh and the answer carried no
``cited_provenance_ids`` at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from tests.guardian.acs import hello, request
from tests.guardian.test_guardian_flow import PROFILES, STRICT, injection_steps
from tests.transports.served import Served, post, run_cli

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("flow-pack")
    server = Served(
        folder / "s.db", folder / "serve.log", extra=["--rules", str(STRICT), "--pack", "baseline"]
    ).start()
    yield server
    server.stop()


def _call(served: Served, *, fetched: bool) -> tuple[str, dict[str, Any]]:
    sid = str(uuid.uuid4())
    assert (
        "acs-provenance"
        in post(served.url, hello(sid, profiles_supported=PROFILES))["result"]["profiles_accepted"]
    )
    assert post(served.url, request("steps/sessionStart", {}, session_id=sid))["result"]
    *before, call = injection_steps(sid, fetched=fetched)
    for step in before:
        assert post(served.url, step)["result"]["decision"] == "allow"
    return sid, post(served.url, call)["result"]


def _entry(served: Served, sid: str) -> dict[str, Any]:
    shown = run_cli("explain", "--session", sid, "--db", str(served.db), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    entry: dict[str, Any] = orjson.loads(shown.stdout)["entry"]
    return entry


def test_both_deny_and_the_answer_cites_what_the_entry_records(served: Served) -> None:
    sid, result = _call(served, fetched=True)
    assert result["decision"] == "deny"
    codes = result["reason_codes"]
    assert "AGB-FLOW-S01" in codes and "AGB-RUN-002" in codes, codes  # both fired
    assert result["cited_provenance_ids"][:3] == ["p9", "p7", "p3"]
    entry = _entry(served, sid)
    assert entry["decision"] == "deny"
    assert entry["lineage"]["cited"] == result["cited_provenance_ids"]


def test_the_pack_denies_what_the_flow_rules_allow_and_the_lineage_stays_cited(
    served: Served,
) -> None:
    """The command comes from the user's own message (the flow rule passes it), and the pack
    denies it as a download piped to a shell: the lineage it was judged on is still cited."""
    sid, result = _call(served, fetched=False)
    assert result["decision"] == "deny"
    assert "AGB-RUN-002" in result["reason_codes"]
    assert "AGB-FLOW-S01" not in result["reason_codes"]
    assert result["cited_provenance_ids"] == ["p9", "p7"]
    assert _entry(served, sid)["lineage"]["cited"] == ["p9", "p7"]
    verify = run_cli("audit", "verify", sid, "--db", str(served.db))
    assert verify.returncode == 0, verify.stderr
