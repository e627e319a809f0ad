"""Standalone ``agbom hook`` skips typer for a well-formed command line, and answers the same."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hook_helpers import run_hook

from agbom.adapters.standalone import parse


def claude(event: str, session: str, **fields: object) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/tmp/{session}.jsonl",
            "cwd": "/tmp",
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
    )


def _untimed(stderr: str) -> str:
    return re.sub(r" \(\d+(?:\.\d+)? ms\)", "", stderr)  # the decision's own duration


@pytest.mark.parametrize(
    "tool", ["Read", "mcp__files__read_file"], ids=["built-in tool", "tool of an MCP server"]
)
def test_a_well_formed_standalone_hook_imports_none_of_the_heavy_modules(
    tmp_path: Path, tool: str
) -> None:
    # typer and pydantic are the CLI's; networkx is needed only for cycles and shortest paths
    # (an MCP server and its tool make none); sqlite-utils (and click with it) is not used to
    # open the store; the scan layer is not needed to compile the rule pack's content checks.
    probe = (
        "import sys\n"
        "from agbom.cli import main\n"
        "rc = main(['hook', 'claude-code', '--db', sys.argv[1], '--fail-closed'])\n"
        "heavy = ('typer', 'pydantic', 'click', 'networkx', 'sqlite_utils', 'agbom.scan')\n"
        "print(rc, sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    event = claude("PreToolUse", str(uuid.uuid4()), tool_name=tool, tool_input={"path": "/"})
    for _ in range(2):  # a new session, then the same session restored from the store
        proc = subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path / "h.db")],
            input=event.encode(),
            capture_output=True,
            timeout=120,
            check=False,
        )
        reply, loaded = proc.stdout.decode().strip().splitlines()
        assert loaded == "0 []", proc.stderr
        assert json.loads(reply) == {}, reply  # allowed: Claude Code's own flow goes on


def test_fast_path_and_typer_path_answer_alike(tmp_path: Path, rules_dir: Path) -> None:
    # A repeated flag is valid for typer (the last one wins) but not taken by the fast path:
    # the same events through both, each with a store of its own, get the same answers.
    session = str(uuid.uuid4())
    events = [
        claude("PreToolUse", session, tool_name="Bash", tool_input={"command": "rm -rf /"}),
        claude("PreToolUse", session, tool_name="Read", tool_input={"file_path": "/etc/hosts"}),
        "{not json",
    ]
    answers = {}
    for name, extra in (("fast", []), ("typer", ["--fail-open", "--fail-closed"])):
        args = ["claude-code", "--db", str(tmp_path / f"{name}.db"), "--rules", str(rules_dir)]
        answers[name] = [
            (r.code, r.stdout, _untimed(r.stderr))
            for r in (run_hook([*args, *extra], e) for e in events)
        ]
    assert answers["fast"] == answers["typer"]
    denied = json.loads(answers["fast"][0][1])["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny"
    assert answers["fast"][1][:2] == (0, b"{}\n")


@pytest.mark.parametrize(
    "args",
    [
        ["claude-code", "--help"],
        ["claude-code", "-h"],
        ["claude-code", "--bogus"],
        ["claude-code", "--db"],  # no value
        ["claude-code", "--db", "--observe"],  # a value that is an option
        ["claude-code", "--db", "a", "--db", "b"],  # repeated
        ["claude-code", "--observe", "--observe"],
        ["claude-code", "--no-default-rules"],  # no rules at all: typer's usage error
        ["claude-code", "--timeout", "soon"],
        ["claude-code", "extra"],
        ["nobody"],
        [],
        ["claude-code", "--db="],
        ["claude-code", "--"],
    ],
)
def test_anything_but_a_plain_command_line_is_left_to_typer(args: list[str]) -> None:
    assert parse(args, {}) is None


def test_plain_command_lines_are_read_as_typer_reads_them() -> None:
    opts = parse(
        ["--db=/s.db", "meerkat", "--rules", "/r", "--no-default-rules", "--fail-open"],
        {"AGBOM_AGENT_ID": "bot"},
    )
    assert opts is not None
    assert (opts["runtime"], opts["db"], opts["rules"]) == ("meerkat", "/s.db", Path("/r"))
    assert (opts["no_default_rules"], opts["fail_open"], opts["agent_id"]) == (True, True, "bot")
    from_env = parse(["oscova", "--timeout", "2"], {"AGBOM_DB": "/e.db", "AGBOM_RULES": "/p"})
    assert from_env is not None
    assert (from_env["db"], from_env["rules"]) == ("/e.db", Path("/p"))
    assert parse(["oscova", "--db", "/given"], {"AGBOM_DB": "/e.db"})["db"] == "/given"  # type: ignore[index]
    assert parse(["oscova"], {"AGBOM_DB": ""}) is None  # an empty variable: typer decides


def test_usage_errors_still_read_as_typer_writes_them(tmp_path: Path) -> None:
    bogus = run_hook(["claude-code", "--db", str(tmp_path / "x.db"), "--bogus"], b"{}")
    assert bogus.code == 2
    assert "--bogus" in bogus.stderr
    assert not (tmp_path / "x.db").exists()
    alone = run_hook(["claude-code", "--no-default-rules"], b"{}")
    assert alone.code == 2
    assert "needs --rules DIR" in alone.stderr
    helped = run_hook(["claude-code", "--help"], b"")
    assert helped.code == 0
    assert "--fail-open" in helped.stdout.decode()


def test_mode_observe_is_the_spelling_and_observe_its_alias(
    tmp_path: Path, rules_dir: Path
) -> None:
    # One spelling with serve and replay: --mode enforce|observe; --observe (older hook
    # configs) is a hidden alias. Both paths (fast and typer) read it alike.
    assert parse(["claude-code", "--mode", "observe"])["observe"] is True  # type: ignore[index]
    assert parse(["claude-code", "--mode=enforce"])["observe"] is False  # type: ignore[index]
    assert parse(["claude-code", "--observe"])["observe"] is True  # type: ignore[index]
    for bad in (["--mode", "watch"], ["--mode", "observe", "--observe"], ["--mode"]):
        assert parse(["claude-code", *bad]) is None  # typer's to answer
    # An unapproved skill load: denied when enforcing, recorded and allowed when observing.
    skill = tmp_path / ".claude" / "skills" / "x"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: x\ndescription: says hello\n---\n# x\n")
    event = claude(
        "PreToolUse",
        str(uuid.uuid4()),
        tool_name="Skill",
        tool_input={"skill": "x"},
        cwd=str(tmp_path),
    )
    answers = {}
    for name, flags in (
        ("enforce", ["--mode", "enforce"]),
        ("observe", ["--mode", "observe"]),
        ("alias", ["--observe"]),
        ("typer", ["--mode", "observe", "--fail-open", "--fail-closed"]),  # not the fast path
    ):
        args = ["claude-code", "--db", str(tmp_path / f"{name}.db"), "--rules", str(rules_dir)]
        reply = run_hook([*args, *flags], event)
        answers[name] = (reply.code, reply.stdout)
    assert answers["observe"] == answers["alias"] == answers["typer"]
    assert answers["enforce"] != answers["observe"]  # the mode is really applied
    help_text = run_hook(["claude-code", "--help"], "").stdout.decode()
    assert "--mode [enforce|observe]" in help_text and "--observe" not in help_text
    for bad in (["--mode", "watch"], ["--observe", "--mode", "enforce"]):
        refused = run_hook(["claude-code", "--db", str(tmp_path / "x.db"), *bad], event)
        assert refused.code == 2 and "--mode" in refused.stderr, refused.stderr
