"""The shared statements are written once with sqlite3's ``?`` placeholders and turned into
psycopg's style by ``pyformat_sql``; a literal ``%`` must survive that, on a real server."""

from __future__ import annotations

import sqlite3

import psycopg

from agbom.store._shared import pyformat_sql

# A literal % in a LIKE pattern, a modulo and two placeholders.
STATEMENT = "SELECT ? LIKE 'ab%', 7 % 3, ?"


def test_a_literal_percent_and_the_placeholders_mean_the_same_on_both_drivers(
    pg_url: str,
) -> None:
    params = ("abc", "x%y")
    expected = sqlite3.connect(":memory:").execute(STATEMENT, params).fetchone()
    with psycopg.connect(pg_url) as conn:
        got = conn.execute(pyformat_sql(STATEMENT), params).fetchone()
    assert got is not None
    assert (bool(got[0]), got[1], got[2]) == (bool(expected[0]), expected[1], expected[2])
    assert got == (True, 1, "x%y")
