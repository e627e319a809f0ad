"""Fixtures for the export tests: sample AgBOMs from samples/ and hand-built ones."""

from __future__ import annotations

import json
from typing import Any

import pytest
from export_samples import SAMPLES, every_type_document

from agbom.inventory import AgBOM


@pytest.fixture
def asset():
    """Load a sample file by relative name; fails loudly when it is missing."""

    def load(name: str) -> Any:
        path = SAMPLES / name
        if not path.is_file():
            pytest.fail(f"missing test asset {path}")
        return json.loads(path.read_text(encoding="utf-8"))

    return load


@pytest.fixture
def every_type() -> AgBOM:
    return AgBOM.from_document(every_type_document())


@pytest.fixture
def empty() -> AgBOM:
    return AgBOM.from_document({"components": []})
