"""A restored session decides exactly as the live one (issue 39): random sessions through a
Guardian that holds them, one restarted at random points and one whose memory bound evicts
every session but the one it serves, on SQLite and on PostgreSQL; every answer must agree
(tests/reliability/differential.py). Derandomized here; benchmarks/differential_soak.py runs
it longer, with random seeds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.reliability.differential import Differential

CI = settings(
    max_examples=25,
    stateful_step_count=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_restarted_and_evicted_sessions_decide_as_live_ones_on_sqlite() -> None:
    machine = type("OnSqlite", (Differential,), {"store_factory": None})
    machine.TestCase.settings = CI
    machine.TestCase().runTest()


@pytest.fixture
def pg_factory(pg_cluster) -> Iterator[type]:  # noqa: ANN001
    made: list[str] = []

    def factory(name: str) -> str:
        database = pg_cluster.create_database(prefix=f"diff_{name}_")
        made.append(database)
        return pg_cluster.url(database)

    yield factory
    for database in made:
        pg_cluster.drop_database(database)


def test_restarted_and_evicted_sessions_decide_as_live_ones_on_postgresql(pg_factory) -> None:  # noqa: ANN001
    machine = type("OnPostgres", (Differential,), {"store_factory": staticmethod(pg_factory)})
    machine.TestCase.settings = settings(CI, max_examples=8)
    machine.TestCase().runTest()
