"""Hook context carried as HTTP headers, and the hook size limit (stdlib only: thin imports it).

A command hook gets context from its environment (``OSCOVA_HOOK_*``, ``--agent-id``); over HTTP
the same context travels as headers: Oscova's HTTP handlers send ``X-Oscova-Hook-*`` themselves,
and thin mode forwards its environment and options the same way. The server turns the headers
back into the ``env`` mapping the adapters read, so both paths decide on identical input.
"""

# Not typing.TYPE_CHECKING, and collections.abc only where a function needs it: thin mode
# imports this module on every event, and collections.abc loads all of collections.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

OSCOVA_VARS = (
    "EVENT_NAME",
    "RUN_ID",
    "SCHEMA_VERSION",
    "TIMESTAMP",
    "USER_ID",
    "AGENT_ID",
    "CHAT_THREAD_ID",
    "TASK_ID",
    "TASK_RUN_ID",
    "EXECUTION_KIND",
)
# header (lower case) → environment variable
HEADER_TO_ENV = {
    **{f"x-oscova-hook-{v.lower().replace('_', '-')}": f"OSCOVA_HOOK_{v}" for v in OSCOVA_VARS},
    "x-agbom-agent-id": "AGBOM_AGENT_ID",
    "x-agbom-hook-id": "AGBOM_HOOK_ID",
    # Who is asking (agbom/adapters/identity.py): a claim, checked by the server where it can.
    "x-agbom-user": "AGBOM_USER",
    "x-agbom-uid": "AGBOM_UID",
    "x-agbom-host": "AGBOM_HOST",
    # The event of a host whose payloads do not name it (Copilot's camelCase events).
    "x-agbom-hook-event": "AGBOM_HOOK_EVENT",
}
ENV_TO_HEADER = {env: header for header, env in HEADER_TO_ENV.items()}
# Thin mode passes its failure mode; the server's own setting wins (see fail_open_from_headers).
FAIL_OPEN_HEADER = "x-agbom-fail-open"
# Every /hooks answer carries both: thin mode takes an answer without them for a failure, not
# for a decision (a stray HTTP server answering "200 {}" is not an allow).
EXIT_CODE_HEADER = "x-agbom-exit-code"
RUNTIME_HEADER = "x-agbom-runtime"
MAX_HEADER_VALUE = 512

MAX_EVENT_BYTES = 1024 * 1024
"""The largest hook event decided, in every mode: standalone, thin and ``POST /hooks/RUNTIME``.

One number, so that thin mode refuses locally exactly what the server would refuse: an event
over it is denied whatever the failure mode (padding an event must never turn a deny into a
"server unreachable" that ``--fail-open`` allows). It does not follow ``--max-body-bytes``,
which bounds ``/acs`` bodies. 1 MiB is what the server always accepted on ``/hooks`` by
default; it also bounds the memory one connection can pin.
"""
TOO_LARGE_CODE = "event_too_large"


def too_large_reason() -> str:
    """The one-line reason given for an event over :data:`MAX_EVENT_BYTES`, in every mode."""
    return f"event larger than {MAX_EVENT_BYTES} bytes (denied whatever the failure mode)"


def env_from_headers(
    headers: "Mapping[str, str] | Iterable[tuple[str, str]]",
) -> dict[str, str]:
    """The adapter ``env`` for an HTTP hook request's headers (unknown headers are ignored)."""
    from collections.abc import Mapping

    items = headers.items() if isinstance(headers, Mapping) else headers
    env: dict[str, str] = {}
    for name, value in items:
        var = HEADER_TO_ENV.get(name.lower())
        if var and value and len(value) <= MAX_HEADER_VALUE:
            env[var] = value
    return env


def headers_from_env(env: "Mapping[str, str]") -> dict[str, str]:
    """The headers thin mode sends for the hook context in ``env``."""
    out: dict[str, str] = {}
    for var, header in ENV_TO_HEADER.items():
        value = env.get(var)
        if value and len(value) <= MAX_HEADER_VALUE and "\n" not in value and "\r" not in value:
            out[header] = value
    return out


def fail_open_from_headers(headers: "Mapping[str, str]", server_fail_open: bool) -> bool:
    """The failure mode for one hook request: the server's, or stricter if the client asks.

    A client may turn a fail-open server fail-closed for its own requests, never the other way
    round: any client can send the header, and a fail-closed server must stay fail-closed.
    """
    if not server_fail_open:
        return False
    value = headers.get(FAIL_OPEN_HEADER)
    if value is None:
        return True
    return value.strip().lower() in ("1", "true", "yes")
