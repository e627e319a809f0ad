"""Deterministic content checks over a skill's files (placeholder; filled in below)."""

CHECKS: tuple[str, ...] = ()
