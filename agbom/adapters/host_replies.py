"""Wire replies of the hosts added beside Claude Code: Cursor, Codex CLI, Gemini CLI, GitHub
Copilot CLI, Windsurf and opencode (standard library only: thin mode imports it).

Like :mod:`agbom.adapters.replies`, every builder returns ``(body, exit_code)``, and the full
adapters use the same builders as thin mode's failure answers, so a failure answered here and
one answered in process are the same bytes. Each host's facts (what blocks, what an allow
looks like, which events can block) are in ``shared/reference/hook-wire-formats-hosts.md``
and docs/hosts/.
"""

from agbom.adapters import wire_json

CURSOR = "cursor"
CODEX = "codex"
GEMINI = "gemini-cli"
COPILOT = "copilot"
WINDSURF = "windsurf"
OPENCODE = "opencode"
HOSTS = (CURSOR, CODEX, GEMINI, COPILOT, WINDSURF, OPENCODE)

# Hosts whose skill loads the hook process reads (agbom/adapters/host_skills.py), and the
# bytes without which an event cannot name their skill tool (a look before any parse).
SKILL_MARKERS = {GEMINI: b'"activate_skill"', OPENCODE: b'"skill"'}
SKILL_HOSTS = frozenset(SKILL_MARKERS)
# The exit codes each host's replies use; thin mode takes any other for a foreign answer.
EXIT_CODES = {
    CURSOR: frozenset({0, 2}),
    CODEX: frozenset({0, 2}),
    GEMINI: frozenset({0, 2}),
    COPILOT: frozenset({0, 2}),
    WINDSURF: frozenset({0, 2}),
    OPENCODE: frozenset({0}),
}
# Where each host names the event in its input (Copilot's camelCase payloads name none).
EVENT_KEYS = {WINDSURF: ("agent_action_name",), OPENCODE: ("hook_event_name",)}
DEFAULT_EVENT_KEYS = ("hook_event_name",)
# Copilot's event, for payloads that do not name it: the hook's environment (command hooks,
# set by 'agbom hook install copilot') or the X-Agbom-Hook-Event header (HTTP hooks).
EVENT_ENV = "AGBOM_HOOK_EVENT"

# Events a failure blocks (fail-closed): the ones the host lets a hook stop.
BLOCKING = {
    CURSOR: frozenset(
        {
            "preToolUse",
            "beforeShellExecution",
            "beforeMCPExecution",
            "beforeReadFile",
            "beforeSubmitPrompt",
            "subagentStart",
        }
    ),
    CODEX: frozenset({"PreToolUse", "UserPromptSubmit"}),
    GEMINI: frozenset({"BeforeTool", "BeforeAgent"}),
    COPILOT: frozenset({"preToolUse", "PreToolUse"}),
    WINDSURF: frozenset(
        {
            "pre_run_command",
            "pre_mcp_tool_use",
            "pre_read_code",
            "pre_write_code",
            "pre_user_prompt",
        }
    ),
    OPENCODE: frozenset({"tool.execute.before"}),
}
CURSOR_PERMISSION_EVENTS = frozenset(
    {"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "subagentStart"}
)
CURSOR_PROMPT_EVENT = "beforeSubmitPrompt"

MAX_MESSAGE = 2_000
EMPTY: tuple[bytes, int] = (b"", 0)

Reply = tuple[bytes, int]


def _dumps(obj: object) -> bytes:
    return wire_json.dumps(obj)


def _clip(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(str(text).split()) or "agbom: denied"  # a reason is never empty (Codex)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- Cursor --------------------------------------------------------------------------------------


def cursor_allow(event: str | None) -> Reply:
    """``{"permission":"allow"}`` at a permission event, ``{"continue":true}`` at the prompt
    gate, ``{}`` elsewhere."""
    if event in CURSOR_PERMISSION_EVENTS:
        return _dumps({"permission": "allow"}), 0
    if event == CURSOR_PROMPT_EVENT:
        return _dumps({"continue": True}), 0
    return b"{}", 0


def cursor_refuse(event: str | None, message: str, *, permission: str = "deny") -> Reply:
    """A deny (or ask) at a permission event; ``continue: false`` and exit 2 at the prompt
    gate; exit 2 with no body when the event is unknown (Cursor blocks on exit 2)."""
    text = _clip(message)
    if event in CURSOR_PERMISSION_EVENTS:
        body = {"permission": permission, "user_message": text, "agent_message": text}
        return _dumps(body), 0
    if event == CURSOR_PROMPT_EVENT:
        return _dumps({"continue": False, "user_message": text}), 2
    return b"", 2


# -- Codex CLI -----------------------------------------------------------------------------------


def codex_deny(event: str | None, message: str) -> Reply:
    """Codex's blocking answers, with nothing it does not know (its parser refuses unknown
    keys, an empty reason, ``ask`` and a bare ``allow``, and lets the call through)."""
    text = _clip(message)
    if event == "PreToolUse":
        out = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            }
        }
        return _dumps(out), 0
    if event == "UserPromptSubmit":
        return _dumps({"decision": "block", "reason": text}), 0
    return b"", 2  # exit 2 with the reason on stderr blocks whatever it was


# -- Gemini CLI ----------------------------------------------------------------------------------


def gemini_deny(event: str | None, message: str) -> Reply:
    """``{"decision":"deny","reason":..}`` (BeforeTool: the tool is not run and the model is
    told why; BeforeAgent: the prompt is dropped); exit 2 with stderr when the event is
    unknown."""
    if event is None:
        return b"", 2
    return _dumps({"decision": "deny", "reason": _clip(message)}), 0


# -- GitHub Copilot CLI --------------------------------------------------------------------------


def copilot_permission(decision: str, message: str) -> Reply:
    """``preToolUse``'s flat answer: ``permissionDecision`` deny (a reason is required) or
    ask."""
    body = {"permissionDecision": decision, "permissionDecisionReason": _clip(message)}
    return _dumps(body), 0


# -- opencode ------------------------------------------------------------------------------------


def opencode_allow() -> Reply:
    return _dumps({"decision": "allow"}), 0


def opencode_deny(message: str) -> Reply:
    """What agbom's opencode plugin turns into a thrown error (the tool is not run)."""
    return _dumps({"decision": "deny", "reason": _clip(message)}), 0


# -- failures ------------------------------------------------------------------------------------


def event_name(runtime: str, raw: bytes) -> str | None:
    """The host's event name in ``raw``; None when it names none (Copilot's camelCase
    payloads) or cannot be read."""
    try:
        doc = wire_json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    for key in EVENT_KEYS.get(runtime, DEFAULT_EVENT_KEYS):
        value = doc.get(key)
        if isinstance(value, str):
            return value
    return None


def failure(runtime: str, reason: str, *, fail_open: bool, event: str | None) -> Reply:
    """The reply to a failure: per the failure mode at an event that can block, "no
    decision" at one that cannot, and the host's blocking exit code when the event is
    unknown (it might have been one that blocks)."""
    message = f"agbom: {reason}"
    blocking = event is None or event in BLOCKING[runtime]
    if runtime == CURSOR:
        if fail_open or not blocking:
            return cursor_allow(event)
        return cursor_refuse(event, message)
    if runtime == OPENCODE:
        return opencode_allow() if fail_open or not blocking else opencode_deny(message)
    if fail_open or not blocking:
        return EMPTY
    if runtime == CODEX:
        return codex_deny(event, message)
    if runtime == GEMINI:
        return gemini_deny(event, message)
    if runtime == COPILOT:
        # Exit 2 denies a preToolUse whatever the body says; the body names the reason.
        return copilot_permission("deny", message)[0], 2
    if runtime == WINDSURF:
        return b"", 2  # the reason goes to stderr
    raise ValueError(f"unknown runtime {runtime!r}")


def answer_problem(runtime: str, doc: object) -> str | None:
    """Why a JSON answer of the server is not this host's reply (None when it is one)."""
    if runtime == OPENCODE and (
        not isinstance(doc, dict) or doc.get("decision") not in ("allow", "deny")
    ):
        return "no opencode decision in the body"
    return None
