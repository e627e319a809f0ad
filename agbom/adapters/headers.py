"""Hook context carried as HTTP headers (stdlib only: thin mode imports this).

A command hook gets context from its environment (``OSCOVA_HOOK_*``, ``--agent-id``); over HTTP
the same context travels as headers: Oscova's HTTP handlers send ``X-Oscova-Hook-*`` themselves,
and thin mode forwards its environment and options the same way. The server turns the headers
back into the ``env`` mapping the adapters read, so both paths decide on identical input.
"""

from __future__ import annotations

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
}
ENV_TO_HEADER = {env: header for header, env in HEADER_TO_ENV.items()}
# Thin mode passes this so the server answers with the client's failure mode.
FAIL_OPEN_HEADER = "x-agbom-fail-open"
EXIT_CODE_HEADER = "x-agbom-exit-code"
MAX_HEADER_VALUE = 512


def env_from_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """The adapter ``env`` for an HTTP hook request's headers (unknown headers are ignored)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    env: dict[str, str] = {}
    for name, value in items:
        var = HEADER_TO_ENV.get(name.lower())
        if var and value and len(value) <= MAX_HEADER_VALUE:
            env[var] = value
    return env


def headers_from_env(env: Mapping[str, str]) -> dict[str, str]:
    """The headers thin mode sends for the hook context in ``env``."""
    out: dict[str, str] = {}
    for var, header in ENV_TO_HEADER.items():
        value = env.get(var)
        if value and len(value) <= MAX_HEADER_VALUE and "\n" not in value and "\r" not in value:
            out[header] = value
    return out


def fail_open_from_headers(headers: Mapping[str, str], default: bool) -> bool:
    """The failure mode a thin client asked for, else ``default``."""
    value = headers.get(FAIL_OPEN_HEADER)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes")
