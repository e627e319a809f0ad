"""The Overview's decision charts (issue 45 item 5): decisions by disposition per day and the
rules that denied most, from the counters every append keeps (agbom/store/_decision_counts.py).

Each test compares the charts with the chain entries counted again here, from what the store
holds, after entries went in by every path that appends: the Guardian's single appends and
batches (refused entries among them), on chosen days (the store's clock set to the day),
entries as mappings and as JSON text, entries that are no decision; on PostgreSQL also rows
written straight into ``chain_entries`` (as ``store migrate`` copies them, which its trigger
counts), some of them no JSON it can read. Two handles (two replicas) append at once; a
store from before the counters gets them counted from its entries when it is opened."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson
import pytest

from agbom.protocol.methods import Disposition
from agbom.store import ChainAppend, ChainConflict, DuplicateRequest, Store, open_store
from agbom.store import _shared as shared
from agbom.store._decision_counts import DISPOSITIONS, MAX_CODES, MAX_RULE, TOP_RULES
from agbom.store._fleet_logic import CHART_DAYS
from tests.store.store_helpers import store_at_version

TODAY = datetime.now(UTC).date()
RULES = [f"AGB-{n:03d}" for n in range(14)] + ["skill_not_approved", "flow_withheld"]


def recount(store: Store, today: date = TODAY) -> tuple[list[dict[str, Any]], list[Any]]:
    """The two charts as their definition gives them, from every stored entry."""
    days = [today - timedelta(days=n) for n in range(CHART_DAYS - 1, -1, -1)]
    window = {d.isoformat() for d in days}
    decided: Counter[tuple[str, str]] = Counter()
    denied: Counter[str] = Counter()
    for recorded_at, text in _entries(store):
        day = recorded_at[:10]
        try:
            entry = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        decision = entry.get("decision") if isinstance(entry, dict) else None
        if day not in window or decision not in DISPOSITIONS:
            continue
        decided[(day, decision)] += 1
        codes = entry.get("reason_codes")
        if decision == "deny" and isinstance(codes, list):
            for code in codes[:MAX_CODES]:
                if isinstance(code, str) and code and not code.startswith("warn:"):
                    denied[code[:MAX_RULE]] += 1
    by_day = [
        {"day": d.isoformat(), **{k: decided[(d.isoformat(), k)] for k in DISPOSITIONS}}
        for d in days
    ]
    top = sorted(denied.items(), key=lambda item: (-item[1], item[0].encode()))[:TOP_RULES]
    return by_day, [{"rule": r, "count": n} for r, n in top]


def _entries(store: Store) -> list[tuple[str, str]]:
    with store._write() as conn:  # type: ignore[attr-defined]
        return [tuple(r) for r in conn.execute("SELECT recorded_at, entry FROM chain_entries")]


def write_rows(store: Store, rows: list[tuple[str, int, str, str]]) -> None:
    """``(session_id, seq, entry text, recorded_at)`` written straight into the table, one
    statement each."""
    mark = "?" if type(store).__name__ == "SqliteStore" else "%s"
    sql = (
        "INSERT INTO chain_entries (session_id, seq, entry, entry_hash, recorded_at) "
        f"VALUES ({mark}, {mark}, {mark}, 'h', {mark})"
    )
    with store._write() as conn:  # type: ignore[attr-defined]
        for row in rows:
            conn.execute(sql, row)


@pytest.fixture
def on_day(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[date], None]]:
    """Set the day the store records appends on (its clock for ``recorded_at``)."""

    def set_day(day: date) -> None:
        stamp = f"{day.isoformat()}T12:00:00.000000Z"
        monkeypatch.setattr(shared, "utc_timestamp", lambda ts=None: stamp)

    yield set_day


def an_entry(rng: random.Random, n: int) -> dict[str, Any]:
    decision = rng.choice([*DISPOSITIONS, "deny", "deny", "allow"])
    entry: dict[str, Any] = {"entry_id": str(n), "decision": decision}
    if rng.random() < 0.8:
        codes = rng.sample(RULES, rng.randint(1, 3))
        if rng.random() < 0.3:
            codes.append("warn:" + rng.choice(RULES))
        entry["reason_codes"] = codes
    return entry


ODD_ENTRIES = [
    '{"decision": 5, "reason_codes": ["AGB-001"]}',  # not a disposition
    '{"decision": ["deny"], "reason_codes": ["AGB-001"]}',
    '{"decision": "deny", "reason_codes": "AGB-002"}',  # codes not a list
    '{"decision": "deny", "reason_codes": [1, {"a": 1}, "", "AGB-003"]}',
    '{"decision": "allow", "reason_codes": ["AGB-005"]}',  # an allow's codes are not denials
    '{"step_type": "sessionStart"}',  # no decision
    '{"decision": "DENY"}',
]


class Chains:
    """Appends to sessions of the store, each remembering its head."""

    def __init__(self, store: Store) -> None:
        self.store, self.heads, self.n = store, dict[str, str | None](), 0

    def append(self, sid: str, entry: Any) -> ChainAppend:
        self.n += 1
        key = f"{sid}-{self.n}"
        append = ChainAppend(sid, entry, key, self.heads.get(sid), key, None)
        self.heads[sid] = key
        return append

    def one(self, sid: str, entry: Any) -> None:
        a = self.append(sid, entry)
        self.store.append_entry(
            sid, entry=a.entry, entry_hash=a.entry_hash, previous_hash=a.previous_hash,
            request_id=a.request_id, nonce=None,
        )  # fmt: skip

    def batch(self, entries: list[tuple[str, Any]]) -> list[Any]:
        return self.store.append_entries([self.append(sid, e) for sid, e in entries])


def assert_charts_are_the_entries(store: Store) -> dict[str, Any]:
    charts = store.fleet_charts()
    by_day, top = recount(store)
    assert charts["decisions_by_day"] == by_day
    assert charts["top_denied_rules"] == top
    return charts


def test_the_dispositions_are_the_protocols() -> None:
    assert DISPOSITIONS == tuple(d.value for d in Disposition)


def test_single_appends_and_batches_on_many_days(
    store: Store, on_day: Callable[[date], None]
) -> None:
    rng = random.Random(7)
    chains = Chains(store)
    for n in range(240):
        on_day(TODAY - timedelta(days=rng.randint(-2, CHART_DAYS + 5)))  # some out of the window
        sid = f"s-{n % 9}"
        if n % 3:
            chains.one(sid, an_entry(rng, n))
        else:
            entries = [
                (f"s-{(n + i) % 9}", an_entry(rng, n + i)) for i in range(rng.randint(2, 12))
            ]
            assert all(isinstance(o, int) for o in chains.batch(entries))
    on_day(TODAY)
    for n, text in enumerate(ODD_ENTRIES):
        chains.one(f"odd-{n % 2}", text)  # as JSON text, not a mapping
    chains.batch([("odd-0", orjson.loads(t)) for t in ODD_ENTRIES])
    long_code, many = "R" * (MAX_RULE + 40), [f"M{n:02d}" for n in range(MAX_CODES + 8)]
    chains.batch([("long", {"decision": "deny", "reason_codes": [long_code]})] * 60)
    chains.batch([("many", {"decision": "deny", "reason_codes": many})] * 50)
    charts = assert_charts_are_the_entries(store)
    rules = [r["rule"] for r in charts["top_denied_rules"]]
    assert rules[0] == long_code[:MAX_RULE]  # cut, and counted once per entry
    assert f"M{MAX_CODES:02d}" not in rules  # past the codes counted per entry
    assert "AGB-005" not in rules  # an allow's codes
    assert sum(charts["decisions_by_day"][-1][k] for k in DISPOSITIONS) > 100


def test_refused_appends_count_nothing(store: Store) -> None:
    """A replayed request id refused in a batch (on PostgreSQL the batch statement fails
    first and the entries go in one by one), a stale head refused alone."""
    chains = Chains(store)
    deny = {"decision": "deny", "reason_codes": ["AGB-013"]}
    assert all(isinstance(o, int) for o in chains.batch([("a", deny), ("b", deny), ("a", deny)]))
    replay = ChainAppend("a", deny, "a-x", chains.heads["a"], "a-1", None)  # a-1: taken
    fresh = chains.append("b", deny)
    outcomes = store.append_entries([replay, fresh])
    assert isinstance(outcomes[0], DuplicateRequest) and isinstance(outcomes[1], int)
    with pytest.raises(ChainConflict):
        store.append_entry(
            "a", entry=deny, entry_hash="stale", previous_hash="not-the-head",
            request_id="stale", nonce=None,
        )  # fmt: skip
    charts = assert_charts_are_the_entries(store)
    assert charts["decisions_by_day"][-1]["deny"] == 4
    assert charts["top_denied_rules"] == [{"rule": "AGB-013", "count": 4}]


def test_an_entry_with_a_nul_is_stored_and_counted(store: Store) -> None:
    """A NUL in an entry (which PostgreSQL's jsonb cannot hold) neither refuses the append
    nor loses the entry's count."""
    entry = {"decision": "deny", "reason_codes": ["AGB-001", "nul\x00in a code"], "x": "\x00"}
    seq = store.append_entry(
        "nul", entry=entry, entry_hash="n1", previous_hash=None, request_id="r", nonce=None
    )
    assert seq == 1 and store.chain_entries("nul")[0]["x"] == "\x00"
    charts = store.fleet_charts()
    assert charts["decisions_by_day"][-1]["deny"] == 1
    assert {"rule": "AGB-001", "count": 1} in charts["top_denied_rules"]


def test_rows_copied_into_postgresql_are_counted(pg_url: str) -> None:
    """``store migrate`` writes rows straight into ``chain_entries``; the trigger counts
    them, and a row that is no JSON PostgreSQL can read is stored and not counted."""
    store = open_store(pg_url)
    rng = random.Random(11)
    rows = []
    for n in range(300):
        day = TODAY - timedelta(days=rng.randint(0, CHART_DAYS + 3))
        text = orjson.dumps(an_entry(rng, n)).decode()
        if n % 29 == 0:
            text = '{"decision": "deny", "reason_codes": ["AGB-004"]'  # no JSON
        elif n % 31 == 0:
            text = ODD_ENTRIES[n % len(ODD_ENTRIES)]
        rows.append((f"copy-{n % 7}", n + 1, text, f"{day}T03:00:00.000000Z"))
    try:
        write_rows(store, rows)
        assert_charts_are_the_entries(store)
    finally:
        store.close()


def test_two_handles_appending_at_once(store_factory: Callable[[], Store]) -> None:
    """Two handles (two replicas on PostgreSQL, each its own counter rows) append batches to
    sessions of their own at once; every entry is counted once."""
    handles = [store_factory(), store_factory()]
    errors: list[BaseException] = []

    def appends(store: Store, name: str) -> None:
        rng, chains = random.Random(name), Chains(store)
        try:
            for b in range(15):
                outcomes = chains.batch([(name, an_entry(rng, n)) for n in range(8)])
                assert all(isinstance(o, int) for o in outcomes)
                chains.one(name + "-single", an_entry(rng, b))
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    threads = [
        threading.Thread(target=appends, args=(h, f"replica-{i}")) for i, h in enumerate(handles)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    charts = assert_charts_are_the_entries(handles[0])
    assert sum(charts["decisions_by_day"][-1][k] for k in DISPOSITIONS) == 2 * 15 * 9


def test_the_migration_counts_the_entries_already_stored(
    store_factory: Callable[[], Store], store_location: str
) -> None:
    """A store of the schema before the counters (made by the store's own migrations), its
    entries written as they were then, gets them counted when it is opened, and counts its
    appends from then on."""
    postgres = store_location.startswith("postgresql")
    before = 7 if postgres else 13
    store_at_version(store_location, before)
    rng = random.Random(3)
    rows = []
    for n in range(300):
        day = TODAY - timedelta(days=rng.randint(0, CHART_DAYS))
        rows.append((f"m-{n % 17}", n + 1, orjson.dumps(an_entry(rng, n)).decode(), f"{day}"))
    rows += [(f"odd-{n}", 1, text, f"{TODAY}") for n, text in enumerate(ODD_ENTRIES)]
    rows.append(("m-bad", 1, '{"decision": "deny", "reason_codes": ["AGB-1"]', f"{TODAY}"))
    rows.append(("m-nul", 1, '{"decision": "deny", "reason_codes": ["AGB-1\\u0000"]}', "x"))
    mark = "%s" if postgres else "?"
    insert = (
        "INSERT INTO chain_entries (session_id, seq, entry, entry_hash, recorded_at) "
        f"VALUES ({mark}, {mark}, {mark}, 'h', {mark})"
    )
    if postgres:
        import psycopg

        with psycopg.connect(store_location) as conn:
            for row in rows:
                conn.execute(insert, row)
    else:
        with sqlite3.connect(store_location) as conn:
            conn.executemany(insert, rows)
        conn.close()
    store = store_factory()
    assert store.schema_version > before + 1  # every migration since, the counters' among them
    charts = assert_charts_are_the_entries(store)
    assert sum(r["deny"] for r in charts["decisions_by_day"]) > 50
    Chains(store).one("after", {"decision": "ask"})
    assert assert_charts_are_the_entries(store)["decisions_by_day"][-1]["ask"] >= 1


@pytest.mark.parametrize("offset", [0, 1])
def test_the_window_is_the_last_thirty_days(
    store: Store, on_day: Callable[[date], None], offset: int
) -> None:
    on_day(TODAY - timedelta(days=CHART_DAYS - 1 + offset))
    Chains(store).one("w", {"decision": "deny", "reason_codes": ["AGB-1"]})
    charts = store.fleet_charts()
    assert len(charts["decisions_by_day"]) == CHART_DAYS
    assert charts["decisions_by_day"][0]["day"] == (TODAY - timedelta(days=29)).isoformat()
    assert sum(r["deny"] for r in charts["decisions_by_day"]) == (1 if offset == 0 else 0)
    assert charts["top_denied_rules"] == ([{"rule": "AGB-1", "count": 1}] if offset == 0 else [])
