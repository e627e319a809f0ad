"""toolCallRequest finds its tool by id or by name, from an index that follows the inventory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agbom.guardian import GuardianConfig, build_guardian
from tests.guardian.acs import request
from tests.guardian.test_guardian_pipeline import ok, open_session


def tool(tool_id: str, name: str, capability: str = "fs.read") -> dict[str, Any]:
    return {
        "id": tool_id,
        "type": "tool",
        "name": name,
        "version": "1",
        "provider": "local",
        "capability": capability,
        "registration_provenance": {"origin": "system"},
    }


def call(name: str) -> dict[str, Any]:
    return {"tool": {"name": name}, "arguments": {}}


def test_lookup_by_name_follows_every_new_inventory(tmp_path: Path) -> None:
    g = build_guardian(tmp_path / "s.db", config=GuardianConfig(strict_inventory=True))
    sid = open_session(g)
    agbom = {"agent": {"id": "agent-1"}, "components": [tool("t1", "read_file")]}
    assert (
        ok(g.handle(request("agbom/snapshot", {"agbom": agbom}, session_id=sid)))["decision"]
        == "allow"
    )
    assert (
        ok(g.handle(request("steps/toolCallRequest", call("read_file"), session_id=sid)))[
            "decision"
        ]
        == "allow"
    )
    assert (
        ok(g.handle(request("steps/toolCallRequest", call("write_file"), session_id=sid)))[
            "decision"
        ]
        == "deny"
    )
    # A change adds the tool: the next lookup by name sees it (the index is rebuilt).
    changed = {"added": [tool("t2", "write_file")], "removed": [], "changed": []}
    assert ok(g.handle(request("agbom/changed", changed, session_id=sid)))["decision"] == "allow"
    assert (
        ok(g.handle(request("steps/toolCallRequest", call("write_file"), session_id=sid)))[
            "decision"
        ]
        == "allow"
    )
    # ... and a removal takes it away again.
    removed = {"added": [], "removed": ["t1"], "changed": []}
    assert ok(g.handle(request("agbom/changed", removed, session_id=sid)))["decision"] == "allow"
    assert (
        ok(g.handle(request("steps/toolCallRequest", call("read_file"), session_id=sid)))[
            "decision"
        ]
        == "deny"
    )
    g.store.close()
