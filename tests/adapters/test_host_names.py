"""Every host's names for the same tool meet in one vocabulary (agbom/adapters/names.py), and
each host adapter turns its event into the same ACS step for the same action."""

from __future__ import annotations

import host_events as ev
import pytest

from agbom.adapters import get_adapter, names


@pytest.mark.parametrize(
    ("host", "name"),
    [
        ("cursor", "Shell"),
        ("codex", "Bash"),
        ("gemini-cli", "run_shell_command"),
        ("copilot", "bash"),
        ("copilot", "powershell"),
        ("opencode", "bash"),
    ],
)
def test_every_shell_is_bash(host: str, name: str) -> None:
    assert names.builtin(host, name) == names.Tool(name="Bash", host_name=name)


def test_unknown_names_are_kept_and_cleaned() -> None:
    assert names.builtin("cursor", "FancyTool").name == "FancyTool"
    assert names.builtin("codex", "x\x00y\n").name == "x?y?"
    assert len(names.builtin("codex", "a" * 10_000).name) == names.MAX_NAME


def test_mcp_names() -> None:
    assert names.split_double_underscore("mcp__crm__lookup") == ("crm", "lookup")
    assert names.split_double_underscore("mcp__plugin_p_srv__t") == ("plugin_p_srv", "t")
    assert names.split_double_underscore("mcp__crm") is None
    assert names.split_single_underscore("mcp_crm_lookup_all", "mcp_") == ("crm", "lookup_all")
    assert names.split_single_underscore("my_crm_lookup", "", ["my", "my_crm"]) == (
        "my_crm",
        "lookup",
    )
    assert names.split_single_underscore("read", "") is None


def test_shell_arguments_put_the_command_line_under_command() -> None:
    assert names.shell_arguments({"command_line": "ls", "cwd": "/"}) == {
        "command": "ls",
        "cwd": "/",
    }
    assert names.shell_arguments({"command": ["rm", "-rf", "a b"]}) == {"command": "rm -rf 'a b'"}


EVENTS = {
    "cursor": ev.cursor_shell("s", "rm -rf build"),
    "codex": ev.codex_tool("s", "Bash", {"command": "rm -rf build"}),
    "gemini-cli": ev.gemini_tool("s", "run_shell_command", {"command": "rm -rf build"}),
    "copilot": ev.copilot_tool("s", "bash", {"command": "rm -rf build"}),
    "windsurf": ev.windsurf("pre_run_command", "s", {"command_line": "rm -rf build"}),
    "opencode": ev.opencode_tool("s", "bash", {"command": "rm -rf build"}),
}


@pytest.mark.parametrize("host", list(EVENTS))
def test_the_same_shell_command_is_the_same_step_on_every_host(host: str) -> None:
    import json

    call = get_adapter(host).translate(json.loads(EVENTS[host]), env={})  # type: ignore[attr-defined]
    assert call.method == "steps/toolCallRequest"
    assert call.payload["tool"] == {"name": "Bash"}
    assert call.payload["arguments"]["command"] == {"value": "rm -rf build"}
    assert call.payload["raw_command"] == "rm -rf build"
    assert [c["id"] for c in call.components] == ["tool:Bash"]
    assert call.session_id == "s" and call.agent_id == host
