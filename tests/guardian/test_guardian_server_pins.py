"""Server approvals in a Guardian without ``--osv``/``--lock``: with nothing approved, an
AgBOM, a tool call and a wrapped ``tools/list`` of an MCP server cost one store lookup and do
not load the signals (the scanner's modules, which ``agbom hook`` must not pay for); once the
server is approved in the store, the same Guardian judges drift from its pin (only an
expansion denies: docs/scan.md, Capability expansion)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

SCRIPT = r"""
import sys
from pathlib import Path
from agbom.guardian import build_guardian
from agbom.store import open_store
from tests.guardian.acs import request
from tests.guardian.test_guardian_pipeline import ok, open_session

tool = {"id": "read", "type": "tool", "name": "read_file", "version": "1", "provider": "fs",
        "capability": "fs.read", "description": "Read a file", "inputSchema": {"type": "object"}}
server = {"id": "fs", "type": "mcp_server", "name": "filesystem", "version": "1.0",
          "endpoint": None, "tools": ["read"]}
agbom = {"agent": {"id": "agent-1"}, "components": [tool, server]}
renamed = {"agent": {"id": "agent-1"}, "components": [{**tool, "name": "read"}, server]}
call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "read_file"}}
listed = {"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "other"}]}}
db = Path(sys.argv[1])
g = build_guardian(db)
sid = open_session(g)
out = []
def decide(method, payload, **meta):
    return ok(g.handle(request(method, payload, session_id=sid, **meta)))["decision"]
out.append(decide("agbom/snapshot", {"agbom": renamed}))
out.append(decide("protocols/MCP/tools/call", call))
out.append(decide("protocols/MCP/tools/list", listed, mcp_server="fs"))
out.append("agbom.guardian.signals" in sys.modules or "agbom.scan" in sys.modules)
with open_store(str(db)) as store:
    definitions = [{"name": "read_file", "description": "Read a file",
                    "inputSchema": {"type": "object"}}]
    store.approve_server("fs", pin={"definitions": definitions}, actor="test")
out.append(decide("agbom/snapshot", {"agbom": renamed}))
out.append(decide("agbom/snapshot", {"agbom": agbom}))
out.append(decide("protocols/MCP/tools/list", listed, mcp_server="fs"))
print(__import__("json").dumps(out))
"""


def test_nothing_approved_loads_no_signals_then_an_approval_pins(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "g.db")],
        capture_output=True,
        timeout=300,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr.decode()
    got = orjson.loads(done.stdout.splitlines()[-1])
    # Once approved: the same definition under a new name that says nothing new is a cosmetic
    # drift, recorded and allowed (AGB-LOCK-009, issue 46); a tool set that lost read_file
    # and gained an unknown tool is an expansion, denied.
    assert got == ["allow", "allow", "allow", False, "allow", "allow", "deny"], got
