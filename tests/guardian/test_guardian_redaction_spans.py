"""MODIFY replaces only the credential's span (issue 30, defect 3); a field that cannot be
rewritten safely makes the step a DENY."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agbom.guardian import Guardian, build_guardian
from agbom.guardian.secrets import MAX_WALK_NODES
from tests.guardian.acs import hello, new_session_id, request

AWS = "AKIA" + "ABCDEFGHIJKLMNOP"  # the reference's own test key shape
LONG_GITHUB = "ghp_" + "A1b2" * 9  # GitHub's issued length


@pytest.fixture
def guardian(tmp_path: Path) -> Iterator[Guardian]:
    g = build_guardian(tmp_path / "store.db")
    yield g
    g.store.close()


def _session(g: Guardian) -> str:
    sid = new_session_id()
    assert "error" not in g.handle(hello(sid))
    return sid


def _decide(g: Guardian, method: str, payload: dict[str, Any]) -> dict[str, Any]:
    answer = g.handle(request(method, payload, session_id=_session(g)))
    assert "error" not in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def _bash(command: str) -> dict[str, Any]:
    return {
        "tool": {"name": "Bash"},
        "arguments": {"command": {"value": command}},
        "raw_command": command,
    }


def test_a_command_keeps_everything_but_the_key(guardian: Guardian) -> None:
    result = _decide(guardian, "steps/toolCallRequest", _bash(f"export K={AWS}"))
    assert result["decision"] == "modify"
    assert result["modifications"]["redactions"] == [
        {"path": "/arguments/command/value", "replacement": "export K=[REDACTED]"},
        {"path": "/raw_command", "replacement": "export K=[REDACTED]"},
    ]
    assert AWS not in str(result)


def test_a_multi_line_output_keeps_its_other_lines(guardian: Guardian) -> None:
    output = f"total 3\nTOKEN={LONG_GITHUB}\n-rw-r--r-- 1 me me 12 notes.txt"
    payload = {"tool": {"name": "Bash"}, "exit_status": "success", "outputs": [{"value": output}]}
    result = _decide(guardian, "steps/toolCallResult", payload)
    assert result["decision"] == "modify"
    (redaction,) = result["modifications"]["redactions"]
    assert redaction == {
        "path": "/outputs/0/value",
        "replacement": "total 3\nTOKEN=[REDACTED]\n-rw-r--r-- 1 me me 12 notes.txt",
    }


def test_two_secrets_in_one_field_are_both_replaced(guardian: Guardian) -> None:
    result = _decide(
        guardian, "steps/userMessage", {"content": f"a {AWS} b {LONG_GITHUB} c", "other": "x"}
    )
    assert result["modifications"]["redactions"] == [
        {"path": "/content", "replacement": "a [REDACTED] b [REDACTED] c"}
    ]


@pytest.mark.parametrize("token", ["ghp_ABCDEF123456", "ghp_abcdefgh1234"])
def test_short_github_tokens_are_redacted_as_the_reference_does(
    guardian: Guardian, token: str
) -> None:
    # The reference Guardian's published cases (result_secret_redacted, secret_in_command).
    result = _decide(guardian, "steps/toolCallRequest", _bash(f"echo {token}"))
    assert result["decision"] == "modify"
    assert {r["replacement"] for r in result["modifications"]["redactions"]} == {"echo [REDACTED]"}


def test_a_word_that_merely_starts_like_a_token_is_left_alone(guardian: Guardian) -> None:
    result = _decide(guardian, "steps/toolCallRequest", _bash("echo ghp_short ghp_notatoken_x"))
    assert result["decision"] == "allow"


def test_a_credential_in_an_object_key_is_denied_not_modified(guardian: Guardian) -> None:
    payload = {"tool": {"name": "Bash"}, "arguments": {AWS: {"value": "x"}}}
    result = _decide(guardian, "steps/toolCallRequest", payload)
    assert result["decision"] == "deny"
    assert "secret_unredactable" in result["reason_codes"]
    assert "key" in result["reasoning"] and AWS not in result["reasoning"]


def test_a_credential_in_the_tool_name_is_denied(guardian: Guardian) -> None:
    payload = {"tool": {"name": f"run-{AWS}"}, "arguments": {}}
    result = _decide(guardian, "steps/toolCallRequest", payload)
    assert result["decision"] == "deny"
    assert "/tool/name" in result["reasoning"]


def test_a_payload_too_large_to_search_is_denied(guardian: Guardian) -> None:
    outputs = [{"value": "clean"} for _ in range(MAX_WALK_NODES)]
    outputs.append({"value": f"TOKEN={AWS}"})
    payload = {"tool": {"name": "Bash"}, "exit_status": "success", "outputs": outputs}
    result = _decide(guardian, "steps/toolCallResult", payload)
    assert result["decision"] == "deny"
    assert "secret_unredactable" in result["reason_codes"]
