"""The backend-independent store contract tests of tests/store, run on PostgreSQL.

Each imported test takes the ``store`` fixture, which tests/store_pg/conftest.py makes a
PostgresStore. Tests that open a SQLite file themselves (they take ``db_path``) stay SQLite's.
"""

from __future__ import annotations

import inspect

import test_store_chain
import test_store_chain_batch
import test_store_gitops
import test_store_inventory
import test_store_skills

# PostgreSQL text cannot hold a NUL character: such an id is refused (test_pg_store.py).
_SQLITE_ONLY = {"test_text_with_a_nul_takes_the_one_by_one_path_and_is_kept_exactly"}

for _module in (
    test_store_chain,
    test_store_chain_batch,
    test_store_gitops,
    test_store_inventory,
    test_store_skills,
):
    for _name, _test in vars(_module).items():
        if not _name.startswith("test_") or not callable(_test):
            continue
        if _name in _SQLITE_ONLY or "db_path" in inspect.signature(_test).parameters:
            continue
        globals()[f"{_name}__{_module.__name__.removeprefix('test_store_')}"] = _test
