"""Invariants of the ACS method table."""

from __future__ import annotations

import pytest

from agbom._schema import load_schema
from agbom.protocol import (
    ACS_VERSION,
    MCP_METHOD,
    METHODS,
    STEP_NAMES,
    Disposition,
    lookup,
    version_supported,
)

A, D, M, ASK, DEFER = (
    Disposition.ALLOW,
    Disposition.DENY,
    Disposition.MODIFY,
    Disposition.ASK,
    Disposition.DEFER,
)

EXPECTED = {
    "steps/sessionStart": {A, D},
    "steps/agentTrigger": {A, D, M},
    "steps/turnStart": {A, D},
    "steps/userMessage": {A, D, M},
    "steps/agentResponse": {A, D, M},
    "steps/knowledgeRetrieval": {A, D, M},
    "steps/memoryContextRetrieval": {A, D, M},
    "steps/memoryStore": {A, D, M},
    "steps/toolCallRequest": {A, D, M, ASK, DEFER},
    "steps/toolCallResult": {A, D, M},
    "steps/preCompact": {A, D},
    "steps/postCompact": {A, M},
    "steps/subagentStart": {A, D},
    "steps/subagentStop": {A},
    "steps/skillRegister": {A, D},
    "steps/skillLoad": {A, D},
    "steps/skillUnload": {A},
    "steps/turnEnd": {A},
    "steps/sessionEnd": {A},
    "agbom/snapshot": {A, D},
    "agbom/changed": {A, D},
    "system/ping": {A},
    "handshake/hello": set(),
}


def test_all_nineteen_steps_are_present() -> None:
    steps = [name for name in METHODS if name.startswith("steps/")]
    assert len(steps) == 19 == len(STEP_NAMES)
    assert set(steps) == {f"steps/{n}" for n in STEP_NAMES}


def test_table_is_exactly_the_expected_methods() -> None:
    assert set(METHODS) == set(EXPECTED)


@pytest.mark.parametrize(("method", "allowed"), sorted(EXPECTED.items()))
def test_dispositions(method: str, allowed: set[Disposition]) -> None:
    spec = lookup(method)
    assert spec is not None and spec.name == method
    assert spec.allowed == frozenset(allowed)
    for d in Disposition:
        assert spec.allows(d) == (d in allowed)
        assert spec.allows(d.value) == (d in allowed)


def test_ping_and_handshake_are_outside_sessions_and_the_chain() -> None:
    for name in ("system/ping", "handshake/hello"):
        spec = METHODS[name]
        assert not spec.audited and not spec.needs_session
    for name, spec in METHODS.items():
        if name not in ("system/ping", "handshake/hello"):
            assert spec.audited and spec.needs_session, name


def test_postcompact_may_not_deny() -> None:
    assert not METHODS["steps/postCompact"].allows("deny")


def test_every_payload_schema_is_shipped() -> None:
    for spec in (*METHODS.values(), MCP_METHOD):
        assert spec.payload_schema is not None
        assert load_schema(spec.payload_schema)["$schema"].startswith(
            "http://json-schema.org/draft-07"
        )


def test_step_schema_names_are_kebab_case() -> None:
    assert METHODS["steps/memoryContextRetrieval"].payload_schema == (
        "step-memory-context-retrieval.json"
    )
    assert METHODS["agbom/snapshot"].payload_schema == "agbom-snapshot.json"


def test_content_bearing_hooks() -> None:
    bearing = {n for n, s in METHODS.items() if s.content_bearing}
    assert "steps/toolCallRequest" in bearing and "steps/userMessage" in bearing
    assert "steps/sessionStart" not in bearing and "agbom/snapshot" not in bearing


@pytest.mark.parametrize(
    "method",
    [
        "protocols/MCP/tools/call",
        "protocols/MCP/initialize",
        "protocols/MCP/notifications/resources/updated",
        "wrapped:mcp-2025-06-18/tools/call",
        "wrapped:mcp-1/resources/read",
    ],
)
def test_wrapped_mcp_gets_all_five(method: str) -> None:
    spec = lookup(method)
    assert spec is MCP_METHOD
    assert spec.allowed == frozenset(Disposition)
    assert spec.audited and spec.content_bearing


@pytest.mark.parametrize(
    "method",
    [
        "protocols/MCP/",
        "protocols/A2A/message/send",
        "wrapped:a2a-0.2/message/send",
        "wrapped:mcp-2025/",
        "wrapped:mcp-/tools/call",
        "steps/unknownHook",
        "steps/toolcallrequest",
        "trace/span",
        "system/pong",
        "",
    ],
)
def test_unknown_methods(method: str) -> None:
    assert lookup(method) is None


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ("0.1.0", True),
        ("0.1.3", True),
        ("0.2.0", True),
        ("0.10.7", True),
        ("1.0.0", False),
        ("0.1", False),
        ("0.1.0-rc1", False),
        ("v0.1.0", False),
        ("00.1.0", False),
        ("", False),
    ],
)
def test_version_supported(version: str, ok: bool) -> None:
    assert version_supported(version) is ok


def test_own_version_is_supported() -> None:
    assert version_supported(ACS_VERSION)
