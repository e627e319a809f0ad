"""The Claude Code settings snippets in docs/adapters.md are valid JSON, and every hook that
can block is configured to block when it fails (not to let the action through)."""

from __future__ import annotations

import json
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
# The events whose hook can stop what follows (SessionStart cannot: exit 2 only shows stderr;
# ../shared/reference/hook-wire-formats-hosts.md 2.3).
BLOCKING_EVENTS = {"PreToolUse", "UserPromptSubmit", "UserPromptExpansion", "ConfigChange"}


def claude_snippets() -> list[dict]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Claude Code") : text.index("## The ACS reference shims")]
    blocks = re.findall(r"```json\n(.*?)```", section, flags=re.S)
    return [json.loads(block) for block in blocks if '"hooks"' in block]


def test_every_blocking_hook_fails_closed() -> None:
    snippets = claude_snippets()
    assert len(snippets) == 2  # command hooks and HTTP hooks
    checked = 0
    for snippet in snippets:
        for event, groups in snippet["hooks"].items():
            for group in groups:
                for hook in group["hooks"]:
                    if event in BLOCKING_EVENTS:
                        assert hook.get("onFailure") == "block", (event, hook)
                        checked += 1
                    if hook["type"] == "command":
                        assert hook["command"].startswith("/"), hook  # an absolute path
    assert checked == 5  # the four events of the command snippet, PreToolUse over HTTP
