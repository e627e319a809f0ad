"""``--vex FILE`` on ``scan`` and ``check``: VEX statements read with the OSV export, the
findings they suppress listed as suppressed, and ``scan -f openvex`` (docs/vex.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from agbom.display import visible

EXIT_USAGE = 2


def vex_option() -> Any:
    """``--vex FILE`` (repeatable): OpenVEX or CycloneDX VEX documents."""
    return typer.Option(
        None,
        "--vex",
        metavar="FILE",
        help="VEX statements (OpenVEX or CycloneDX VEX) about the --osv matches: a "
        "not_affected statement with a justification suppresses the finding, which is still "
        "listed, as suppressed, with the statement's author. Repeatable; a later file speaks "
        "last.",
    )


def load_vex(paths: Sequence[Path] | None, osv: Path | None) -> list[Any] | None:
    """The statements of every ``--vex`` file, or ``None``; a bad file exits 2."""
    if not paths:
        return None
    if osv is None:
        raise typer.BadParameter("--vex states what --osv matched: give --osv too",
                                 param_hint="--vex")  # fmt: skip
    from agbom.advisories.vex import VexError, read_vex

    try:
        return read_vex(paths)
    except VexError as exc:
        typer.echo(f"agbom: error: --vex {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def apply_statements(agbom: Any, statements: Sequence[Any] | None) -> Any:
    if statements is None:
        return agbom
    from agbom.advisories.vex import apply_vex

    return apply_vex(agbom, statements)


def suppressed_findings(ruleset: Any, agbom: Any, findings: Sequence[Any]) -> list[Any]:
    """The findings the rules would make without the VEX statements and do not make with
    them, each marked with the statement that suppresses it."""
    from agbom.advisories.vex import mark_suppressed
    from agbom.inventory import ComponentGraph

    return mark_suppressed(agbom, findings, lambda bare: ruleset.evaluate(ComponentGraph(bare)))


def openvex_author(author: str | None) -> str:
    """Who an exported OpenVEX document says it is from: ``--vex-author``, else the person
    agbom records decisions under, else ``agbom``."""
    if author is not None and author.strip():
        return author.strip()[:256]
    from agbom.cli.decisions import known_actor

    return known_actor(None) or "agbom"
