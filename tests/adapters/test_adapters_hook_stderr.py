"""What a hook handler writes to stderr for people quotes agent text: no raw control bytes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adapters.hook_helpers import run_hook


def test_an_event_name_with_escape_sequences_is_shown_escaped(tmp_path: Path) -> None:
    event = {"schema_version": 1, "hook_event_name": "X\x1b[2J\r\nfake\u202e", "event": {}}
    run = run_hook(["oscova", "--db", str(tmp_path / "h.db")], json.dumps(event))
    assert run.code == 2
    assert "\x1b" not in run.stderr and "\r" not in run.stderr and "\u202e" not in run.stderr
    assert "X\\x1b[2J\\r\\nfake\\u202e" in run.stderr
    assert run.stderr.count("\n") == 1  # one line: a CR or LF in agent text makes no row
    assert json.loads(run.stdout)["decision"] == "deny"
