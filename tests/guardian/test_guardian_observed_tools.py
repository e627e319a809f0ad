"""Rule findings for tools outside the session's inventory are remembered per tool, rule set
and UTC day: every call still gets exactly the decision a fresh evaluation would give."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agbom.guardian import Guardian, build_guardian
from agbom.guardian import policies as policies_module
from agbom.rules import load_rules
from tests.guardian.acs import hello, new_session_id, request

BAN_PACK = """
pack: observed-bans
version: 1
rules:
  - id: BAN-DEPLOY
    kind: ban
    severity: high
    action: deny
    message: "{component.name} is banned"
    match:
      type: tool
      name: deploy
    exceptions:
      - match: {provider: partner}
        expires: "EXPIRES"
        reason: partner pilot
"""


def _packs(tmp_path: Path, name: str, expires: date) -> Path:
    packs = tmp_path / name
    packs.mkdir()
    (packs / "ban.yaml").write_text(BAN_PACK.replace("EXPIRES", expires.isoformat()))
    return packs


def _open(g: Guardian) -> str:
    sid = new_session_id()
    assert "result" in g.handle(hello(sid))
    assert "result" in g.handle(request("steps/sessionStart", {}, session_id=sid))
    return sid


def _call(g: Guardian, sid: str, tool: dict[str, Any], capability: Any = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"tool": tool, "arguments": {}}
    if capability is not None:
        payload["capability"] = capability
    answer = g.handle(request("steps/toolCallRequest", payload, session_id=sid))
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def test_repeated_calls_decide_alike_and_each_description_on_its_own(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", _packs(tmp_path, "p", date.today() + timedelta(days=30)))
    sid = _open(g)
    for _ in range(3):  # remembered or not, the banned tool is denied every time
        denied = _call(g, sid, {"name": "deploy"})
        assert denied["decision"] == "deny" and "BAN-DEPLOY" in denied["reason_codes"]
        assert "unknown_component" in denied["reason_codes"]
    # the same name from the excepted provider is its own description: allowed
    excepted = _call(g, sid, {"name": "deploy", "provider": "partner"})
    assert excepted["decision"] == "allow"
    assert _call(g, sid, {"name": "deploy"})["decision"] == "deny"
    # a description that is not plain strings is evaluated afresh, with the same result
    listed = _call(g, sid, {"name": "deploy"}, capability=["net.http"])
    assert listed["decision"] == "deny"
    assert _call(g, sid, {"name": "read_file"})["decision"] == "allow"
    # every decision is on the chain, remembered findings or not
    assert len(g.store.chain_entries(sid)) == 1 + 7
    g.store.close()


def test_a_new_rule_set_applies_to_the_next_call(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db")
    sid = _open(g)
    assert _call(g, sid, {"name": "deploy"})["decision"] == "allow"
    g.rules = load_rules(_packs(tmp_path, "p", date.today() + timedelta(days=30)))
    assert _call(g, sid, {"name": "deploy"})["decision"] == "deny"
    g.store.close()


def test_an_exception_that_expires_overnight_stops_applying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    today = datetime.now(UTC).date()
    g = build_guardian(tmp_path / "s.db", _packs(tmp_path, "p", today))
    sid = _open(g)
    partner = {"name": "deploy", "provider": "partner"}
    assert _call(g, sid, partner)["decision"] == "allow"  # remembered for today

    class Tomorrow(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Tomorrow:
            return cls.fromtimestamp(datetime.now(UTC).timestamp() + 86_400, tz)

    monkeypatch.setattr(policies_module, "datetime", Tomorrow)
    denied = _call(g, sid, partner)
    assert denied["decision"] == "deny" and "BAN-DEPLOY" in denied["reason_codes"]
    g.store.close()


def test_hostile_tool_names_do_not_grow_the_memory_past_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(policies_module, "MAX_REMEMBERED_TOOLS", 8)
    g = build_guardian(tmp_path / "s.db", _packs(tmp_path, "p", date.today() + timedelta(days=30)))
    sid = _open(g)
    for index in range(30):
        assert _call(g, sid, {"name": f"tool-{index}"})["decision"] == "allow"
        assert len(g.policies._observed_findings) <= 8
    assert _call(g, sid, {"name": "deploy"})["decision"] == "deny"
    g.store.close()
