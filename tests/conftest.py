"""Fixtures shared by every test folder: the throwaway PostgreSQL cluster.

The cluster starts only when a test asks for it (``pg_cluster``, ``pg_url``), once per test
session, and is removed at the end. Without PostgreSQL binaries those tests skip, except
under ``CI=true``, where a missing server is a failure: CI must run the PostgreSQL tests.
"""

from __future__ import annotations

import compileall
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import agbom
from tests.pgcluster import ClusterUnavailable, PgCluster

# Who approvals made by the tests are recorded as: a CI container runs as root, often without
# a git user.email, and agbom then refuses to record "root" (agbom/cli/decisions.py). Every
# child process inherits it; tests of that refusal clear it.
os.environ.setdefault("AGBOM_ACTOR", "agbom-tests")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile agbom's modules to bytecode once, as an installed package has them.

    The suite starts ``agbom`` as a subprocess hundreds of times (the CLI, hooks, servers). An
    editable install under ``PYTHONDONTWRITEBYTECODE=1`` (set on some CI machines) would compile
    every module each process imports from source, every time: a third of the time of the
    CLI-heavy test files. The files are the interpreter's own cache (never packaged: the
    sdist's MANIFEST excludes them, the wheel copies sources only).
    """
    compileall.compile_dir(Path(agbom.__file__).parent, quiet=1)


def _require_postgres(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A running PostgreSQL cluster of this test session (superuser over 127.0.0.1)."""
    try:
        cluster = PgCluster()
    except ClusterUnavailable as exc:
        _require_postgres(str(exc))
    try:
        cluster.init()
        cluster.start()
    except BaseException:
        cluster.destroy()
        raise
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """The URL of a fresh, empty database, dropped after the test."""
    name = pg_cluster.create_database()
    try:
        yield pg_cluster.url(name)
    finally:
        pg_cluster.drop_database(name)
