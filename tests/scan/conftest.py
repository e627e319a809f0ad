"""Shared helpers for scan tests: write files into a tmp tree, find components by reader."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


@pytest.fixture
def asset() -> Callable[[str], Path]:
    """A file or folder under samples/; fails loudly when it is missing."""

    def get(name: str) -> Path:
        path = SAMPLES / name
        if not path.exists():
            raise FileNotFoundError(f"missing test asset {path}")
        return path

    return get


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """Write text (or JSON for dicts) at a path relative to tmp_path; returns the path."""

    def put(rel: str, content: Any, *, raw: bytes | None = None) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            path.write_bytes(raw)
        elif isinstance(content, (dict, list)):
            path.write_text(json.dumps(content), encoding="utf-8")
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return put
