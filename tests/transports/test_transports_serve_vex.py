"""``agbom serve --osv PATH --vex FILE`` through a real server on 127.0.0.1: a VEX
``not_affected`` statement with a justification (written by vexipy) keeps the critical
advisory from denying at ``agbom/snapshot``, the stored AgBOM records the statement and who
made it, and SIGHUP reloads the statements (a withdrawn one denies again)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from vexipy import Document, Statement, Vulnerability
from vexipy.component import Product
from vexipy.status import StatusJustification, StatusLabel

from tests.guardian.acs import request
from tests.transports.served import Served, open_session, post, run_cli

pytestmark = pytest.mark.network

FIXTURE = Path(__file__).parents[1] / "advisories" / "fixtures" / "osv"
CRITICAL = "GHSA-7q2m-agb1-fs01"
PURL = "pkg:npm/%40acme/mcp-filesystem@1.4.0"
AUTHOR = "Acme PSIRT"
AGBOM: dict[str, Any] = {
    "agent": {"id": "agent-1", "name": "coder"},
    "components": [
        {"id": "read", "type": "tool", "name": "read_file", "version": "1.0.0", "provider": "fs",
         "capability": "fs.read", "description": "Read a file under the roots",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"id": "fs", "type": "mcp_server", "name": "filesystem", "version": "1.4.0",
         "purl": PURL, "endpoint": None, "tools": ["read"]},
    ],
}  # fmt: skip


def _statement(path: Path, status: StatusLabel, **fields: Any) -> Path:
    document = Document(
        id="https://acme.example/vex/fs", author=AUTHOR, version=1,
        statements=[Statement(vulnerability=Vulnerability(name="CVE-2099-10001"),
                              products=[Product(id=PURL)], status=status, **fields)],
    )  # fmt: skip
    path.write_text(document.to_json(by_alias=True, exclude_none=True))
    return path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Path]]:
    vex = _statement(tmp_path / "fs.openvex.json", StatusLabel.NOT_AFFECTED,
                     justification=StatusJustification.VULNERABLE_CODE_NOT_PRESENT)  # fmt: skip
    server = Served(db=tmp_path / "store.db", log=tmp_path / "serve.log",
                    extra=["--osv", str(FIXTURE), "--vex", str(vex)]).start()  # fmt: skip
    yield server, vex
    server.stop()


def _snapshot(server: Served) -> tuple[str, Any]:
    sid = open_session(server.url)
    reply = post(server.url, request("agbom/snapshot", {"agbom": AGBOM}, session_id=sid))
    assert "error" not in reply, reply
    return sid, reply["result"]


def test_a_justified_statement_allows_and_the_stored_agbom_says_who(
    served: tuple[Served, Path],
) -> None:
    server, vex = served
    sid, result = _snapshot(server)
    assert result["decision"] == "allow", result
    stored = httpx.get(f"{server.url}/v1/sessions/{sid}/agbom", timeout=30).json()
    fs = next(c for c in stored["components"] if c["id"] == "fs")
    (match,) = [v for v in fs["vulnerabilities"] if v["id"] == CRITICAL]
    assert match["vex"]["author"] == AUTHOR and match["vex"]["suppresses"] is True
    assert match["vex"]["justification"] == "vulnerable_code_not_present"

    # The vendor withdraws it (now affected): after SIGHUP the same snapshot is denied.
    _statement(vex, StatusLabel.AFFECTED, action_statement="upgrade to 1.4.2")
    assert server.proc is not None
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 60
    while _snapshot(server)[1]["decision"] != "deny":
        assert time.monotonic() < deadline, server.logs()
        time.sleep(0.2)
    assert "VEX statement(s) reloaded" in server.logs()


def test_vex_without_osv_or_a_bad_file_is_one_line(tmp_path: Path) -> None:
    vex = _statement(tmp_path / "x.json", StatusLabel.NOT_AFFECTED,
                     justification=StatusJustification.COMPONENT_NOT_PRESENT)  # fmt: skip
    alone = run_cli("serve", "--db", str(tmp_path / "s.db"), "--vex", str(vex))
    assert alone.returncode == 2 and b"give --osv too" in alone.stderr
    (tmp_path / "bad.json").write_text("{}")
    bad = run_cli("serve", "--db", str(tmp_path / "s.db"), "--osv", str(FIXTURE),
                  "--vex", str(tmp_path / "bad.json"))  # fmt: skip
    assert bad.returncode == 2 and b"neither OpenVEX" in bad.stderr
    assert b"Traceback" not in bad.stderr
