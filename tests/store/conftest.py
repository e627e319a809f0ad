"""Fixtures for store tests: every backend behind the same ``store`` fixture.

A test that takes ``store`` (or ``store_factory``) is a contract test: it runs once per
backend, ``[sqlite]`` on a real file under tmp_path and ``[postgresql]`` on a fresh database
of the throwaway cluster (tests/conftest.py; skipped without PostgreSQL binaries, a failure
under CI=true). A test that also takes ``db_path``, or is marked ``sqlite_only``, is about the
SQLite file itself (WAL, permissions, old schema versions) and runs on SQLite only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agbom.store import Store, open_store

BACKENDS = ("sqlite", "postgresql")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: a store test about SQLite itself (not run on PostgreSQL)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    sqlite_only = "db_path" in metafunc.fixturenames or any(
        mark.name == "sqlite_only" for mark in metafunc.definition.iter_markers()
    )
    metafunc.parametrize("backend", ["sqlite"] if sqlite_only else list(BACKENDS))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "agbom.db"


@pytest.fixture
def store_location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where this test's store lives: a new SQLite file, or a new PostgreSQL database."""
    if backend == "sqlite":
        return str(tmp_path / "agbom.db")
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def store_factory(store_location: str) -> Iterator[Callable[[], Store]]:
    """Open another handle on this test's store (as another Guardian replica or the CLI
    would); every handle is closed at the end."""
    opened: list[Store] = []

    def another() -> Store:
        handle = open_store(store_location)
        opened.append(handle)
        return handle

    yield another
    for handle in opened:
        handle.close()


@pytest.fixture
def store(store_factory: Callable[[], Store]) -> Store:
    return store_factory()
