"""Inventory commands: ``agbom export``, ``agbom graph`` and ``agbom diff``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import load_agbom_input, output_option, write_output
from agbom.display import visible
from agbom.errors import AgbomError

_EXPORT_FORMATS_HELP = (
    "Output format: cyclonedx-json, cyclonedx-xml (CycloneDX 1.6 or 1.7; a version may be "
    "given as cyclonedx-json@1.7), spdx-json (SPDX 3.0.1 JSON-LD) or agbom-json (the canonical "
    "AgBOM with its hash)."
)


def export_cmd(
    agbom_file: Path = typer.Argument(
        ..., metavar="AGBOM.json", help="AgBOM document, snapshot payload or JSON-RPC request."
    ),
    fmt: str = typer.Option("cyclonedx-json", "--format", "-f", help=_EXPORT_FORMATS_HELP),
    spec_version: str | None = typer.Option(
        None, "--spec-version", help="CycloneDX spec version: 1.6 (default) or 1.7."
    ),
    output: Path | None = output_option(),
) -> None:
    """Export an AgBOM as schema-valid, reproducible CycloneDX JSON or XML, or SPDX 3.0.1."""
    from agbom.export import get_exporter

    exporter = get_exporter(fmt, spec_version)  # bad format fails before any reading
    agbom = load_agbom_input(agbom_file)
    data = exporter.export(agbom)
    write_output(data, output)
    if output is not None and str(output) != "-":
        typer.echo(
            visible(f"agbom: wrote {exporter.name} ({len(agbom)} components) to {output}"),
            err=True,
        )


def graph_cmd(
    agbom_file: Path = typer.Argument(
        ..., metavar="AGBOM.json", help="AgBOM document, snapshot payload or JSON-RPC request."
    ),
    fmt: str = typer.Option(
        "mermaid", "--format", "-f", help="Output format: mermaid, dot or json."
    ),
    output: Path | None = output_option(),
) -> None:
    """Print the component graph (agent -> components -> what they use)."""
    from agbom.export import render_graph
    from agbom.export.graph import GRAPH_FORMATS

    if fmt not in GRAPH_FORMATS:
        raise typer.BadParameter(
            f"{fmt!r} is not one of {', '.join(GRAPH_FORMATS)}", param_hint="--format"
        )
    write_output(render_graph(load_agbom_input(agbom_file), fmt), output)


def _table(diff: Any) -> str:
    rows: list[tuple[str, str, str, str]] = []
    rows.extend(("added", c.type.value, c.id, c.name) for c in diff.added)
    rows.extend(("removed", "", cid, "") for cid in diff.removed)
    rows.extend(("changed", c.type.value, c.id, c.name) for c in diff.changed)
    rows.extend(
        (f"{a.field} changed", a.component_type.value, a.component_id, f"{a.old} -> {a.new}")
        for a in diff.artifact_changes
    )
    if diff.header is not None:
        rows.append(("header changed", "", "", ""))
    if not rows:
        return "no differences\n"
    rows = [(visible(a), visible(b), visible(c), visible(d)) for a, b, c, d in rows]
    header = ("CHANGE", "TYPE", "ID", "DETAIL")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3]
        for row in [header, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def diff_cmd(
    old: Path = typer.Argument(..., metavar="OLD", help="The earlier AgBOM."),
    new: Path = typer.Argument(..., metavar="NEW", help="The later AgBOM."),
    fmt: str = typer.Option("table", "--format", "-f", help="Output format: table or json."),
    output: Path | None = output_option(),
) -> None:
    """Show what changed between two AgBOMs, flagging version/digest changes of skills,
    tools and MCP servers under the same id (artifact_changes).

    Exit status, as diff(1): 0 no differences, 1 differences, 2 trouble (unreadable or
    invalid input).
    """
    from agbom.inventory import compute_diff

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"{fmt!r} is not one of table, json", param_hint="--format")
    try:
        diff = compute_diff(load_agbom_input(old), load_agbom_input(new))
    except AgbomError as exc:
        exc.exit_code = 2  # type: ignore[attr-defined]  # diff(1): 2 means trouble
        raise
    if fmt == "json":
        body = orjson.dumps(diff.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        write_output(body, output)
    else:
        write_output(_table(diff), output)
    if not diff.empty:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("export")(export_cmd)
    app.command("graph")(graph_cmd)
    app.command("diff")(diff_cmd)
