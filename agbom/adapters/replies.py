"""Wire replies for each runtime, built with the standard library only.

Thin mode (``agbom hook RUNTIME --server URL``) starts one process per tool call and must answer
even when the server is down, so the reply builders it needs live here, apart from anything that
imports the Guardian, typer or even :mod:`dataclasses`. The full adapters use the same builders,
so a failure answered by thin mode and one answered in process are byte for byte the same.

Every builder returns ``(body, exit_code)``: ``body`` is exactly what goes to stdout or into the
HTTP response body.
"""

from agbom.adapters import host_replies, wire_json

OSCOVA = "oscova"
MEERKAT = "meerkat"
CLAUDE_CODE = "claude-code"
# Cursor, Codex, Gemini CLI, Copilot, Windsurf, opencode: their replies are in host_replies.
RUNTIMES = (OSCOVA, MEERKAT, CLAUDE_CODE, *host_replies.HOSTS)

# Oscova: exit codes the command handler contract gives meaning to.
OSCOVA_EXIT_ALLOW = 0
OSCOVA_EXIT_DENY = 2
OSCOVA_EXIT_DEFERRAL_UNSUPPORTED = 3

# Events whose decision cannot stop anything: they are recorded, and always answered allow.
OSCOVA_OBSERVE_ONLY = frozenset({"TaskComplete", "TaskFailed", "SessionStart", "PostToolUse"})
MEERKAT_OBSERVE_ONLY = frozenset(
    {
        "runtime_input_accepted",
        "runtime_input_rejected",
        "runtime_input_deduplicated",
        "peer_ingress_committed",
        "peer_egress_committed",
        "interaction_completed",
        "run_completed",
        "run_failed",
    }
)
# Claude Code events a failure or a deny can block (exit code 2 blocks them).
CLAUDE_BLOCKING = frozenset(
    {"PreToolUse", "UserPromptSubmit", "UserPromptExpansion", "ConfigChange"}
)

# Claude Code events the hook reads something on the user's machine for (the skill a Skill
# call, a typed /name or a ConfigChange names; the session's inventory at SessionStart).
_CLAUDE_LOCAL_MARKERS = (b'"Skill"', b"UserPromptExpansion", b"ConfigChange", b"SessionStart")


def claude_needs_local_read(raw: bytes) -> bool:
    """Whether the Claude Code event ``raw`` may need a local read (a cheap byte test, made
    before thin mode imports anything for it)."""
    if any(marker in raw for marker in _CLAUDE_LOCAL_MARKERS):
        return True
    if b"UserPromptSubmit" not in raw:
        return False
    return _prompt_starts_with_slash(raw)


_SPACE_BYTES = b" \t\n\r\x0b\x0c"  # what a bytes pattern's \s matches


def _prompt_starts_with_slash(raw: bytes) -> bool:
    """Whether ``raw`` holds ``"prompt"``, a colon, a quote, then ``/`` (each after any
    whitespace): a typed ``/name`` that may load a skill. Scanned by hand, not with :mod:`re`,
    which would cost every prompt event its import; one pass over ``raw``, since each run of
    whitespace is skipped once, after the one marker it follows."""
    marker = b'"prompt"'
    at = raw.find(marker)
    while at >= 0:
        i = at + len(marker)
        for expected in b':"/':
            while i < len(raw) and raw[i] in _SPACE_BYTES:
                i += 1
            if i >= len(raw) or raw[i] != expected:
                break
            i += 1
        else:
            return True
        at = raw.find(marker, at + 1)
    return False


# Meerkat refuses a command or HTTP response larger than ``payload_max_bytes`` (128 KiB default).
MEERKAT_MAX_REPLY_BYTES = 128 * 1024
# Claude Code caps output strings at 10,000 characters.
CLAUDE_MAX_TEXT = 10_000
MAX_MESSAGE = 2_000
MEERKAT_REASON_CODES = frozenset(
    {"policy_violation", "safety_violation", "schema_violation", "timeout", "runtime_error"}
)
DEFAULT_HOOK_ID = "agbom"

Reply = tuple[bytes, int]


def _dumps(obj: object) -> bytes:
    return wire_json.dumps(obj)


def _clip(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- Oscova --------------------------------------------------------------------------------------


def oscova_allow() -> Reply:
    """``{"decision":"allow"}``, exit 0."""
    return _dumps({"decision": "allow"}), OSCOVA_EXIT_ALLOW


def oscova_deny(reason: str, message: str, *, exit_code: int = OSCOVA_EXIT_DENY) -> Reply:
    """A deny decision; ``reason`` is machine readable, ``message`` is shown to people."""
    body = {"decision": "deny", "reason": _clip(reason, 200), "message": _clip(message)}
    return _dumps(body), exit_code


# -- Meerkat -------------------------------------------------------------------------------------


def meerkat_empty() -> Reply:
    """``{}``: no decision (Meerkat proceeds). Meerkat needs at least this much on stdout."""
    return b"{}", 0


def meerkat_allow() -> Reply:
    """An explicit allow decision."""
    return _dumps({"decision": {"decision": "allow"}}), 0


def meerkat_deny(
    message: str,
    *,
    reason_code: str = "policy_violation",
    hook_id: str = DEFAULT_HOOK_ID,
    payload: object = None,
) -> Reply:
    """A typed Deny. Meerkat rejects unknown keys, so only its own keys are ever emitted.

    ``hook_id``, ``reason_code`` and ``message`` are required by Meerkat; ``payload`` is dropped
    when the reply would exceed the 128 KiB bound, and the message is clipped.
    """
    if reason_code not in MEERKAT_REASON_CODES:
        reason_code = "policy_violation"
    deny: dict[str, object] = {
        "decision": "deny",
        "hook_id": hook_id or DEFAULT_HOOK_ID,
        "reason_code": reason_code,
        "message": _clip(message),
    }
    if payload is not None:
        deny["payload"] = payload
    body = _dumps({"decision": deny})
    if len(body) > MEERKAT_MAX_REPLY_BYTES:
        deny.pop("payload", None)
        body = _dumps({"decision": deny})
    return body, 0


# -- Claude Code ---------------------------------------------------------------------------------


def claude_pass() -> Reply:
    """No opinion: Claude Code applies its own permission rules. ``{}``, exit 0."""
    return b"{}", 0


def claude_permission(event: str, decision: str, reason: str) -> Reply:
    """``hookSpecificOutput.permissionDecision`` (PreToolUse): allow, deny or ask."""
    out = {
        "hookSpecificOutput": {
            "hookEventName": event,
            "permissionDecision": decision,
            "permissionDecisionReason": _clip(reason, CLAUDE_MAX_TEXT),
        }
    }
    return _dumps(out), 0


def claude_block(reason: str) -> Reply:
    """Top-level ``decision: block`` (UserPromptSubmit, PostToolUse, Stop)."""
    return _dumps({"decision": "block", "reason": _clip(reason, CLAUDE_MAX_TEXT)}), 0


def claude_stop(reason: str) -> Reply:
    """``continue: false`` stops Claude whatever the event (used where nothing finer exists)."""
    return _dumps({"continue": False, "stopReason": _clip(reason, CLAUDE_MAX_TEXT)}), 0


def claude_notice(message: str) -> Reply:
    """A message shown to the user without changing the outcome."""
    return _dumps({"systemMessage": _clip(message, CLAUDE_MAX_TEXT)}), 0


# -- Failures (malformed input, server down, internal error) -------------------------------------


def event_name(runtime: str, raw: bytes) -> str | None:
    """The runtime's event name in ``raw``, or None when it cannot be read.

    Used to answer a failure the way that event expects (an observe-only event is never denied).
    """
    if runtime in host_replies.HOSTS:
        return host_replies.event_name(runtime, raw)
    try:
        doc = wire_json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    key = "point" if runtime == MEERKAT else "hook_event_name"
    value = doc.get(key)
    return value if isinstance(value, str) else None


def failure(
    runtime: str,
    reason: str,
    *,
    fail_open: bool,
    event: str | None = None,
    code: str = "agbom_failure",
    hook_id: str = DEFAULT_HOOK_ID,
) -> Reply:
    """The reply to a failure, per the runtime's semantics and the configured failure mode.

    ``reason`` is a short human description; ``code`` a machine-readable reason. An observe-only
    event is answered allow in both modes: its outcome cannot be changed anyway.
    """
    message = f"agbom: {reason}"
    if runtime == OSCOVA:
        if fail_open or event in OSCOVA_OBSERVE_ONLY:
            return oscova_allow()
        return oscova_deny(code, message)
    if runtime == MEERKAT:
        if fail_open or event in MEERKAT_OBSERVE_ONLY:
            return meerkat_empty()
        reason_code = "schema_violation" if code == "malformed_input" else "runtime_error"
        if code == "timeout":
            reason_code = "timeout"
        return meerkat_deny(message, reason_code=reason_code, hook_id=hook_id)
    if runtime == CLAUDE_CODE:
        if fail_open:
            return claude_pass()
        if event == "PreToolUse":
            return claude_permission("PreToolUse", "deny", message)
        if event in ("UserPromptSubmit", "UserPromptExpansion", "ConfigChange", "PostToolUse"):
            # (Never block Stop on a failure: a blocked Stop makes Claude keep working.)
            return claude_block(message)
        if event is None:
            # Unknown event shape: exit 2 blocks whatever it was, with the reason on stderr.
            return b"", 2
        return claude_pass()
    if runtime in host_replies.HOSTS:
        return host_replies.failure(runtime, reason, fail_open=fail_open, event=event)
    raise ValueError(f"unknown runtime {runtime!r}")
