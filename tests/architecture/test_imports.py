"""The import structure of agbom/: the layer contracts hold and no import circle is added.

The contracts are in pyproject.toml (``[tool.importlinter]``) and are checked by
import-linter's own ``lint-imports``. The circles are read from grimp's import graph (the
graph import-linter checks), which counts every import: at module level, inside a function,
and under ``if TYPE_CHECKING:``. A circle through any of them is a circle in the design
even when Python can load it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import networkx as nx

ROOT = Path(__file__).resolve().parents[2]


def import_graph() -> grimp.ImportGraph:
    return grimp.build_graph("agbom", cache_dir=None)


def circles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The sets of modules that import each other round a circle, largest first."""
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module:
                edges.add_edge(module, imported)
    found = [frozenset(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    return sorted(found, key=lambda c: (-len(c), sorted(c)))


def test_the_import_contracts_are_kept() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command;"
            " sys.exit(lint_imports_command())",
            "--no-cache",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_import_circle_between_modules() -> None:
    found = circles(import_graph())
    assert found == [], "import circles in agbom/ (largest first):\n" + "\n".join(
        ", ".join(sorted(c)) for c in found
    )


def test_an_added_circle_is_found() -> None:
    graph = import_graph()
    top, bottom = "agbom.cli.scan_cmds", "agbom.inventory.model"
    # The model at the bottom importing a command at the top closes a circle through the
    # layers between them.
    assert graph.chain_exists(importer=top, imported=bottom)
    graph.add_import(importer=bottom, imported=top)
    found = circles(graph)
    assert len(found) == 1
    assert {top, bottom} <= found[0]


def test_the_documented_layers_are_the_contract() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [layers] = [
        c["layers"] for c in contracts["tool"]["importlinter"]["contracts"] if c["id"] == "layers"
    ]
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layers:[^>]*-->\n```\n(.*?)```", doc, re.DOTALL)
    assert block is not None, "docs/architecture.md lost its layer list"
    assert block.group(1).splitlines() == layers
