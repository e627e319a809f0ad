"""Tests of what only the PostgreSQL store has (the shared contract runs in tests/store, once
per backend): ``store`` is a PostgresStore on a fresh database of the throwaway cluster
(tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agbom.store.postgres import PostgresStore


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore.open(pg_url) as opened:
        yield opened
