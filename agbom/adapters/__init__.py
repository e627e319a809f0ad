"""Hook handlers for agent runtimes that do not speak ACS (Oscova, Meerkat, Claude Code, and the
hosts Cursor, Codex CLI, Gemini CLI, GitHub Copilot CLI, Windsurf and opencode).

Each runtime's events are mapped onto ACS steps and decided by the same Guardian, rules,
approvals and audit chain as ACS requests. This package's ``__init__`` stays import-light:
thin mode (:mod:`agbom.adapters.thin`) is imported through it on every hook process start, so
the adapters themselves are only loaded by :func:`get_adapter`.
"""

import sys

# Not typing.TYPE_CHECKING: thin mode imports this package on every hook process start, and
# importing typing is about a millisecond of it. Type checkers take the name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agbom.adapters.interface import Adapter

_IMPLEMENTATIONS = {
    "oscova": ("agbom.adapters.oscova", "OscovaAdapter"),
    "meerkat": ("agbom.adapters.meerkat", "MeerkatAdapter"),
    "claude-code": ("agbom.adapters.claude_code", "ClaudeCodeAdapter"),
    # One row per host: its translation module (event -> ACS steps, decision -> reply).
    "cursor": ("agbom.adapters.cursor", "CursorAdapter"),
    "codex": ("agbom.adapters.codex", "CodexAdapter"),
    "gemini-cli": ("agbom.adapters.gemini_cli", "GeminiCliAdapter"),
    "copilot": ("agbom.adapters.copilot", "CopilotAdapter"),
    "windsurf": ("agbom.adapters.windsurf", "WindsurfAdapter"),
    "opencode": ("agbom.adapters.opencode", "OpencodeAdapter"),
}
ADAPTERS: tuple[str, ...] = tuple(_IMPLEMENTATIONS)
_cache: "dict[str, Any]" = {}

_LAZY = {
    "Adapter": "agbom.adapters.interface",
    "AdapterError": "agbom.adapters.interface",
    "HookReply": "agbom.adapters.interface",
    "MalformedEvent": "agbom.adapters.interface",
    "StepCall": "agbom.adapters.interface",
    "Verdict": "agbom.adapters.interface",
    "OscovaAdapter": "agbom.adapters.oscova",
    "MeerkatAdapter": "agbom.adapters.meerkat",
    "ClaudeCodeAdapter": "agbom.adapters.claude_code",
    "env_from_headers": "agbom.adapters.headers",
}

__all__ = ["ADAPTERS", "get_adapter", *_LAZY]


def get_adapter(name: str) -> "Adapter":
    """The adapter for runtime ``name`` (one of :data:`ADAPTERS`); AdapterError otherwise."""
    adapter = _cache.get(name)
    if adapter is None:
        try:
            module, cls = _IMPLEMENTATIONS[name]
        except KeyError:
            from agbom.adapters.interface import AdapterError

            raise AdapterError(
                f"unknown hook runtime {name!r} (known: {', '.join(ADAPTERS)})"
            ) from None
        adapter = _cache[name] = getattr(_module(module), cls)()
    return adapter  # type: ignore[no-any-return]


def __getattr__(attr: str) -> "Any":
    module = _LAZY.get(attr)
    if module is None:
        raise AttributeError(f"module 'agbom.adapters' has no attribute {attr!r}")
    return getattr(_module(module), attr)


def _module(name: str) -> "Any":
    """The module ``name``, imported by the built-in ``__import__``: :mod:`importlib` would be
    one more import on every hook process start."""
    __import__(name)
    return sys.modules[name]
