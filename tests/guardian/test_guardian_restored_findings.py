"""A session restored from the store knows its AgBOM's rule findings.

A Guardian that restarts, or a replica that restores a session another one appended to, used
to restore the session's AgBOM without its findings: the next ``agbom/changed`` then took
every finding of the changed component for a new one, and the findings of the components it
did not touch were gone for the rest of the session. Here the same steps are sent to a
Guardian that keeps the session in memory and to one restored from the store between each
step (a new Guardian on the same SQLite file), and the answers must be the same.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from agbom.guardian import build_guardian
from tests.guardian.acs import hello, new_session_id, request

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "agboms" / "multi-agent.json"


def _decided(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    result = reply["result"]
    return {k: result.get(k) for k in ("decision", "reason_codes", "policy_data")}


def _steps(document: dict[str, Any], sid: str) -> list[dict[str, Any]]:
    warned = next(c for c in document["components"] if c["id"] == "peer-hotels")
    other = next(c for c in document["components"] if c["id"] != "peer-hotels")
    return [
        request("agbom/changed", {"changed": [{**warned, "description": "v2"}]}, session_id=sid),
        request("agbom/changed", {"changed": [{**other, "description": "v2"}]}, session_id=sid),
        request("agbom/changed", {"changed": [{**warned, "description": "v3"}]}, session_id=sid),
    ]


def test_a_restored_session_answers_changes_as_the_one_that_stayed_in_memory(
    tmp_path: Path,
) -> None:
    document = json.loads(SAMPLE.read_text())
    answers: dict[str, list[dict[str, Any]]] = {}
    for restarted in (False, True):
        db = tmp_path / f"restarted-{restarted}.db"
        guardian = build_guardian(db, with_default_rules=True)
        sid = new_session_id()
        for message in (hello(sid), request("steps/sessionStart", {}, session_id=sid)):
            assert "result" in guardian.handle(message)
        snapshot = request("agbom/snapshot", {"agbom": copy.deepcopy(document)}, session_id=sid)
        first = _decided(guardian.handle(snapshot))
        assert first["decision"] == "allow", first
        rules = [f["rule_id"] for f in first["policy_data"]["agbom"]["findings"]]
        assert "AGB-HYG-004" in rules  # peer-hotels has no registration provenance: a warning
        got = [first]
        for step in _steps(document, sid):
            if restarted:
                guardian.store.close()
                guardian = build_guardian(db, with_default_rules=True)  # restores the session
            got.append(_decided(guardian.handle(step)))
        guardian.store.close()
        answers[str(restarted)] = got
    assert answers["True"] == answers["False"]
    # Changing the warned component again finds nothing new: its warning is not news.
    assert all(a["decision"] == "allow" for a in answers["True"])
    assert all(a["policy_data"] is None for a in answers["True"][1:]), answers["True"]
