"""Lean hook forwarder (filled in by the adapters work)."""

from __future__ import annotations


def main(args: list[str]) -> int:
    raise SystemExit("agbom: error: thin hook mode is not available yet")
