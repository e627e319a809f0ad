"""Names shared by the layer that attaches supply-chain signals to components (scan) and the
one that matches them (rules): both import them from here, the layer below them."""

from __future__ import annotations

CONTENT_CHECKS: tuple[str, ...] = (
    "download-to-shell",
    "vendor-installer",
    "decode-and-execute",
    "secret-exfiltration",
    "hidden-after-blank-lines",
    "invisible-characters",
    "blank-characters",
    "instruction-override",
    "hide-from-user",
    "executable-outside-scripts",
    "symlink",
    "obfuscated-code",
    "reverse-shell",
    "persistence",
    "privilege-escalation",
    "file-tampering",
    "credential-access",
    "data-exfiltration",
    "cryptominer",
    "untrusted-install",
    "typosquat-package",
    "hidden-instructions",
    "authority-abuse",
    "goal-manipulation",
    "role-impersonation",
    "prompt-exfiltration",
    "mcp-plaintext-secret",
    "mcp-insecure-endpoint",
    "mcp-unpinned-server",
    "cited-attack",
)
"""The deterministic checks of a skill's content (``agbom/scan/content.py``), the names a
finding in ``content_findings`` carries and a rule's ``content:`` accepts."""

DRIFT_CLASSES: tuple[str, ...] = ("cosmetic", "narrowing", "expansion")
"""The classes of a change of a pinned surface (``agbom/scan/expansion.py``), narrowest
first: what a drift's ``class`` holds and a rule's ``tools_drift: {class: ...}`` accepts."""
