"""Guardian layer: the ACS decision pipeline over the store, the rules and the inventory."""

from __future__ import annotations

from pathlib import Path

from agbom.guardian.config import GuardianConfig, Mode
from agbom.guardian.core import Guardian
from agbom.guardian.decision import Decision, PolicyReference, clamp
from agbom.protocol import KeyRing

__all__ = [
    "Decision",
    "Guardian",
    "GuardianConfig",
    "Mode",
    "PolicyReference",
    "build_guardian",
    "clamp",
]


def build_guardian(
    db: Path | str,
    rules: Path | str | None = None,
    *,
    mode: str = "enforce",
    secret_file: Path | str | None = None,
    config: GuardianConfig | None = None,
) -> Guardian:
    """Open the store, compile the rules and return a ready Guardian (the entry points' helper)."""
    from dataclasses import replace

    from agbom.rules import load_rules
    from agbom.store import SqliteStore

    ruleset = load_rules(Path(rules) if rules is not None else None)
    store = SqliteStore.open(db)
    keyring = KeyRing.from_file(secret_file) if secret_file is not None else None
    base = config or GuardianConfig()
    return Guardian(
        store=store,
        rules=ruleset,
        config=replace(base, mode=Mode(mode)),
        keyring=keyring,
    )
