"""The Guardian's decision path is the documented list of stages, in order.

The list is the package docstring of ``agbom/guardian/__init__.py``. It must name one module
of ``agbom/guardian/stages/`` per stage, match the drawing in docs/architecture.md, and be
the order in which ``Guardian._handle`` calls the stages (each call is marked with its
stage's number and name).
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import agbom.guardian
from agbom.guardian.core import Guardian

ROOT = Path(__file__).resolve().parents[2]
STAGE = re.compile(r"^(\d+)\. ([a-z ]+) \(stages/(\w+)\.py\): \S", re.MULTILINE)


def documented_stages() -> list[tuple[int, str, str]]:
    doc = agbom.guardian.__doc__ or ""
    return [(int(n), name, module) for n, name, module in STAGE.findall(doc)]


def test_the_package_docstring_lists_the_stages_in_order() -> None:
    stages = documented_stages()
    assert len(stages) >= 8, stages
    assert [n for n, _, _ in stages] == list(range(1, len(stages) + 1))
    for _, name, module in stages:
        loaded = importlib.import_module(f"agbom.guardian.stages.{module}")
        assert loaded.__doc__ and "Guarantees" in loaded.__doc__, f"{name}: {module}.py"


def test_handle_runs_the_stages_in_the_documented_order() -> None:
    source = inspect.getsource(Guardian._handle)
    comments = re.findall(r"#(.*)$", source, re.MULTILINE)
    called = [
        (int(n), name)
        for comment in comments
        for n, name in re.findall(r"(\d+)\. ([a-z]+(?: [a-z]+)*)", comment)
    ]
    assert called == [(n, name) for n, name, _ in documented_stages()]


def test_the_drawing_in_docs_is_the_stage_list() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- stages:[^>]*-->\n```\n(.*?)```", doc, re.DOTALL)
    assert block is not None, "docs/architecture.md lost its pipeline drawing"
    drawn = [name.strip() for name in block.group(1).strip().split("──►")]
    assert drawn == [name for _, name, _ in documented_stages()]
