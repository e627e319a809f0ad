"""Issue 13 item 14: what an agent or a file controls cannot drive the terminal.

A crafted session registers a skill whose id, ref, capabilities and agent id carry ESC, CR,
LF, a C1 control, a bidi override and a zero-width space; a crafted tree holds a skill, an MCP
server and a folder with the same characters. Every table and one-line message is read from a
real `agbom` process: no raw control byte may reach it, each row stays one line, and the
characters show as escapes. JSON stays exact.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agbom.display import visible

SESSION = "7f1c2a9e-5b3d-4e8f-9a61-0c2d4e6f8a11"
DIGEST = "d462f8a17fcb2ae41b4d866b51db4f9ced12971cb8ec1d306543c5f3be2bb5fd"
# A forged second row after an erase-line and carriage return, then a hidden tail.
EVIL_ID = "evil\x1b[2K\rskill-code-review  sha256:0000  approved\nfake\u202eweiver\u200b\x9b"
EVIL_AGENT = "agent\x1b[31mRED"
# Raw bytes no person-facing output may hold: C0 but LF (which ends rows), DEL, C1 in UTF-8,
# bidi controls, zero-width characters, line and paragraph separators, the BOM.
RAW = re.compile(
    rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa0-\xa9]"
    rb"|\xef\xbb\xbf"
)


def _agbom(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "AGBOM_DEBUG": "0"},
    )


def _request(index: int, method: str, payload: dict[str, object]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": method,
        "id": index,
        "params": {
            "acs_version": "0.1.0",
            "request_id": f"00000000-0000-4000-8000-{index:012d}",
            "timestamp": f"2026-11-30T10:00:0{index}Z",
            "metadata": {"agent_id": EVIL_AGENT, "session_id": SESSION, "turn_id": "t1"},
            "payload": payload,
        },
    }


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store holding the hostile registration. The wire refuses such ids now (-32602
    invalid_identifier, tests/protocol/test_identifiers.py), so it is written through the
    store, as a record kept from before that or written by another tool would be."""
    from agbom.store import Digest, open_store

    db = tmp_path / "t.db"
    with open_store(str(db)) as opened:
        opened.record_registration(
            skill_id=EVIL_ID,
            digest=Digest.parse(f"sha256:{DIGEST}"),
            ref="ref\x1b]0;pwned\x07\r\nX",
            declared_capabilities=["fs.read\x1b[8m", "net\r\nhttp"],
            composition={},
            provenance=None,
            agent_id=EVIL_AGENT,
            tenant_id=None,
        )
    return db


def _assert_no_raw_controls(out: bytes) -> None:
    hit = RAW.search(out)
    if hit is not None:
        around = out[max(0, hit.start() - 40) : hit.end() + 40]
        pytest.fail(f"raw control {hit.group()!r} at {hit.start()}: {around!r}")


@pytest.mark.parametrize("command", [["skills", "pending"], ["skills", "list"]])
def test_skill_tables_escape_what_the_agent_registered(store: Path, command: list[str]) -> None:
    proc = _agbom(*command, "--db", str(store))
    assert proc.returncode == 0, proc.stderr
    _assert_no_raw_controls(proc.stdout + proc.stderr)
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 2, lines  # the header and one row: nothing forged, nothing hidden
    row = lines[1]
    assert row.startswith(visible(EVIL_ID) + "  ")
    assert "\\x1b[2K\\rskill-code-review" in row and "\\u202e" in row and "\\u200b" in row
    assert "fs.read\\x1b[8m,net\\r\\nhttp" in row
    assert f"sha256:{DIGEST}  pending" in row


def test_skill_show_and_history_escape_every_field(store: Path) -> None:
    proc = _agbom("skills", "show", EVIL_ID, "--db", str(store))
    assert proc.returncode == 0, proc.stderr
    _assert_no_raw_controls(proc.stdout + proc.stderr)
    text = proc.stdout.decode()
    assert "ref           ref\\x1b]0;pwned\\x07\\r\\nX\n" in text
    assert f"(first by {visible(EVIL_AGENT)})" in text
    history = _agbom("skills", "history", EVIL_ID, "--db", str(store))
    _assert_no_raw_controls(history.stdout + history.stderr)
    assert len(history.stdout.decode().splitlines()) == 2


def test_one_line_messages_escape_what_they_quote(store: Path) -> None:
    approve = _agbom(
        "skills", "approve", EVIL_ID, "--digest", f"sha256:{DIGEST}", "--db", str(store)
    )
    # Refused as a usage error (such ids cannot be typed back faithfully), its id escaped.
    assert approve.returncode == 2, approve.stderr
    _assert_no_raw_controls(approve.stdout + approve.stderr)
    assert b"U+001B" in approve.stderr
    missing = _agbom("skills", "show", "gone\x1b[2J\r", "--db", str(store))
    assert missing.returncode != 0
    _assert_no_raw_controls(missing.stdout + missing.stderr)
    assert len(missing.stderr.splitlines()) == 1


def test_json_keeps_the_exact_text(store: Path) -> None:
    proc = _agbom("skills", "list", "--db", str(store), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    (record,) = json.loads(proc.stdout)
    assert record["skill_id"] == EVIL_ID
    assert record["declared_capabilities"] == ["fs.read\x1b[8m", "net\r\nhttp"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "scan"
    skill = root / "skills" / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(  # YAML escapes: the parsed strings hold the controls
        '---\nname: "evil\\e[2K\\rfake\\u202e"\n'
        'description: "desc\\e]0;title\\a\\r\\nX"\n---\nbody\n'
    )
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "srv\x1b[2K\rFAKE\nROW\u202e": {"command": "npx", "args": ["-y", "pkg", "--x=\x1b[31m"]},
        "b": {"command": "my\x1bcmd\r\nx"},
    }}))  # fmt: skip
    folder = root / "dir\x1b[1m\rX"
    folder.mkdir()
    (folder / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"c": {"command": "uvx", "args": ["x"]}}})
    )
    return root


def test_scan_table_escapes_ids_names_paths_and_messages(tree: Path) -> None:
    proc = _agbom("scan", str(tree))
    assert proc.returncode in (0, 1, 3), proc.stderr
    _assert_no_raw_controls(proc.stdout + proc.stderr)
    text = proc.stdout.decode()
    inventory, findings = text.split("\n\n", 1)
    assert len(inventory.splitlines()) == 1 + 4  # header + 3 servers + 1 skill
    assert "skill:evil\\x1b[2K\\rfake\\u202e" in inventory
    assert "dir\\x1b[1m\\rX/.mcp.json" in inventory
    assert "MCP server srv\\x1b[2K\\rFAKE\\nROW\\u202e runs" in findings
    # the spec finding (issue 41: a finding, no longer a file error) quotes the name, escaped
    specs = [line for line in findings.splitlines() if "scan.skill-spec" in line]
    assert specs and all("\\x1b" in line and "\x1b" not in line for line in specs)


def test_scan_json_keeps_the_exact_text(tree: Path) -> None:
    proc = _agbom("scan", str(tree), "--format", "json")
    report = json.loads(proc.stdout)
    names = {c["name"] for c in report["agbom"]["components"]}
    assert "srv\x1b[2K\rFAKE\nROW\u202e" in names


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, ünïcödé 😀 C:\\x", "plain text, ünïcödé 😀 C:\\x"),
        ("a\x1bb\rc\nd\te\x00f\x7fg", "a\\x1bb\\rc\\nd\\te\\x00f\\x7fg"),
        ("\x85\x9b", "\\x85\\x9b"),
        ("\u202e\u2066\u200b\u200d\ufeff\u2028", "\\u202e\\u2066\\u200b\\u200d\\ufeff\\u2028"),
        ("\ud800", "\\ud800"),
        ("\U000e0041", "\\U000e0041"),  # a tag character: invisible
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert visible(shown) == shown  # escapes are plain text
