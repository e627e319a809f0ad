"""Inventory commands: ``agbom export``, ``agbom graph`` and ``agbom diff``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.bom_signing import bom_signer, sign_format_option, sign_option, signed_bom
from agbom.cli.common import (
    choice,
    exporter_for,
    load_agbom_input,
    output_format,
    output_option,
    write_output,
)
from agbom.display import table, to_terminal, visible
from agbom.errors import AgbomError

_EXPORT_FORMATS_HELP = (
    "Output format: cyclonedx-json, cyclonedx-xml (CycloneDX 1.6 or 1.7; a version may be "
    "given as cyclonedx-json@1.7), spdx-json (SPDX 3.0.1 JSON-LD) or agbom-json (the canonical "
    "AgBOM with its hash). Default: what the -o name says (x.cdx.json, x.cdx.xml, "
    "x.spdx.json), else cyclonedx-json."
)


def export_cmd(
    agbom_file: Path = typer.Argument(
        ..., metavar="AGBOM.json", help="AgBOM document, snapshot payload or JSON-RPC request."
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        metavar="FORMAT",
        help=_EXPORT_FORMATS_HELP,
        show_default=False,
    ),
    spec_version: str | None = typer.Option(
        None, "--spec-version", help="CycloneDX spec version: 1.6 (default) or 1.7."
    ),
    output: Path | None = output_option(),
    timestamp: str | None = typer.Option(
        None,
        "--timestamp",
        help="Creation time recorded in the document (ISO 8601 with a timezone). Default: the "
        "AgBOM's generated_at, else $SOURCE_DATE_EPOCH, else now.",
    ),
    sign: Path | None = sign_option(),
    sign_format: str = sign_format_option(),
) -> None:
    """Export an AgBOM as schema-valid, reproducible CycloneDX JSON or XML, or SPDX 3.0.1."""
    from agbom.export import FORMATS

    fmt = output_format(
        fmt,
        output,
        default="cyclonedx-json",
        formats=FORMATS,
        json_formats=("cyclonedx-json", "spdx-json", "agbom-json"),
        plain_json="cyclonedx-json",
    )
    # a bad format or timestamp fails before any reading
    exporter = exporter_for(fmt, spec_version, timestamp=timestamp)
    key = bom_signer(sign, fmt, sign_format)
    agbom = load_agbom_input(agbom_file)
    data = exporter.export(agbom)
    if key is not None:
        name = output.name if output is not None and str(output) != "-" else agbom_file.name
        data = signed_bom(data, key, sign_format, name=name)
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
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        metavar="[mermaid|dot|json]",
        help="Output format. Default: what the -o name says (x.mmd, x.dot, x.json), else mermaid.",
        show_default=False,
    ),
    output: Path | None = output_option(),
) -> None:
    """Print the component graph (agent -> components -> what they use)."""
    from agbom.export import render_graph
    from agbom.export.graph import GRAPH_FORMATS

    fmt = choice(
        output_format(
            fmt, output, default="mermaid", formats=GRAPH_FORMATS, json_formats=("json",)
        ),
        GRAPH_FORMATS,
        "--format",
    )
    write_output(render_graph(load_agbom_input(agbom_file), fmt), output)


def _table(diff: Any, *, tty: bool) -> str:
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
    # ids and names come from the AgBOMs: the table escapes every cell
    return table(("CHANGE", "TYPE", "ID", "DETAIL"), rows, tty=tty) + "\n"


def diff_cmd(
    old: Path = typer.Argument(
        ..., metavar="OLD", help="The earlier AgBOM, or a lock file (agbom lock)."
    ),
    new: Path = typer.Argument(..., metavar="NEW", help="The later AgBOM."),
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        metavar="[table|json]",
        help="Output format. Default: json when the -o name ends in .json, else table.",
        show_default=False,
    ),
    output: Path | None = output_option(),
) -> None:
    """Show what changed between two AgBOMs, flagging version/digest changes of skills,
    tools and MCP servers under the same id (artifact_changes).

    Exit status, as diff(1): 0 no differences, 1 differences, 2 trouble (unreadable or
    invalid input).
    """
    from agbom.inventory import compute_diff

    formats = ("table", "json")
    fmt = choice(
        output_format(fmt, output, default="table", formats=formats, json_formats=("json",)),
        formats,
        "--format",
    )
    from agbom.scan.lock import is_lock_file

    if is_lock_file(old):  # agbom diff LOCK NEW: drift from an `agbom lock` file
        from agbom.cli.lock_cmds import lock_diff

        lock_diff(old, new, fmt, output)
        return
    try:
        diff = compute_diff(load_agbom_input(old), load_agbom_input(new))
    except AgbomError as exc:
        exc.exit_code = 2  # type: ignore[attr-defined]  # diff(1): 2 means trouble
        raise
    if fmt == "json":
        body = orjson.dumps(diff.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        write_output(body, output)
    else:
        write_output(_table(diff, tty=to_terminal(output)), output)
    if not diff.empty:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("export")(export_cmd)
    app.command("graph")(graph_cmd)
    app.command("diff")(diff_cmd)
