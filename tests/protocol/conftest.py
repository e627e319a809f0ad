"""Fixtures for the protocol tests: the ACS interop vectors copied into vectors/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

VECTORS = Path(__file__).parent / "vectors"


def load_vectors(name: str) -> Any:
    """Load a vectors file, failing loudly when it is missing."""
    path = VECTORS / name
    if not path.is_file():
        pytest.fail(f"missing test vectors {path}")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def chain_vectors() -> Any:
    return load_vectors("chain-vectors.json")


@pytest.fixture(scope="session")
def envelope_vectors() -> Any:
    return load_vectors("envelope-vectors.json")
