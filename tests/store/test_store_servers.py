"""Server approvals with their tool-set pins: the contract both backends keep."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from agbom.scan.lock import canonical_tool, tool_set_pin
from agbom.store import Store, StoreError


def _pin(*tools: dict[str, Any]) -> dict[str, Any]:
    canonical = [canonical_tool(t, "test") for t in tools]
    pin = tool_set_pin(canonical)
    pin["definitions"] = canonical
    return pin


SEARCH = {"name": "search", "description": "Search the web", "inputSchema": {"type": "object"}}
FETCH = {"name": "fetch", "description": "Fetch a page", "inputSchema": {"type": "object"}}


def test_approve_then_read_back_on_any_handle(store_factory: Callable[[], Store]) -> None:
    writer, reader = store_factory(), store_factory()
    at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    approved = writer.approve_server(
        "Web", pin=_pin(SEARCH, FETCH), actor="alice", reason="reviewed", purl="pkg:npm/web@1.2",
        version="1.2", now=at,
    )  # fmt: skip
    assert approved.approved and approved.value == _pin(FETCH, SEARCH)["value"]
    seen = reader.server_pin("web")  # another handle, another case
    assert seen is not None and seen == approved
    assert seen.decided_by == "alice" and seen.decided_at == at and seen.reason == "reviewed"
    assert seen.purl == "pkg:npm/web@1.2" and seen.version == "1.2"
    assert [d["name"] for d in seen.pin["definitions"]] == ["fetch", "search"]
    assert [p.server for p in reader.server_pins_for(["WEB", "other"])] == ["Web"]
    assert reader.server_pins_for([]) == [] and reader.server_pin("other") is None


def test_revoke_keeps_the_row_and_history_says_everything(store: Store) -> None:
    store.approve_server("web", pin=_pin(SEARCH), actor="alice")
    store.approve_server("web", pin=_pin(SEARCH, FETCH), actor="bob", reason="new tool")
    revoked = store.revoke_server("WEB", actor="carol", reason="rug pull")
    assert not revoked.approved and revoked.status == "revoked"
    assert revoked.value == _pin(SEARCH, FETCH)["value"]  # what was revoked
    assert [p.status for p in store.server_pins_for(["web"])] == ["revoked"]
    history = store.server_history("web")
    assert [(h["from_status"], h["to_status"], h["actor"]) for h in history] == [
        (None, "approved", "alice"),
        ("approved", "approved", "bob"),
        ("approved", "revoked", "carol"),
    ]
    assert history[0]["pin"]["value"] == _pin(SEARCH)["value"]
    assert history[2]["reason"] == "rug pull" and history[2]["pin"]["count"] == 2
    with pytest.raises(StoreError, match="not approved"):
        store.revoke_server("web", actor="carol")
    with pytest.raises(StoreError, match="not approved"):
        store.revoke_server("never", actor="carol")
    assert len(store.server_history()) == 3


def test_bad_input_is_refused_and_changes_nothing(store: Store) -> None:
    good = _pin(SEARCH)
    lying = {**good, "value": _pin(FETCH)["value"]}
    for bad in (
        {"server": "", "pin": good, "actor": "a"},
        {"server": "x" * 600, "pin": good, "actor": "a"},
        {"server": "web", "pin": {"value": good["value"]}, "actor": "a"},  # no definitions
        {"server": "web", "pin": lying, "actor": "a"},
        {"server": "web", "pin": {"definitions": [SEARCH, SEARCH]}, "actor": "a"},
        {"server": "web", "pin": {"definitions": [{"description": "nameless"}]}, "actor": "a"},
        {"server": "web", "pin": good, "actor": ""},
        {"server": "web", "pin": good, "actor": "a", "reason": "r" * 5000},
    ):
        with pytest.raises(StoreError):
            store.approve_server(**bad)
    assert store.list_server_pins() == [] and store.server_history() == []


def test_the_pin_is_recomputed_from_the_definitions(store: Store) -> None:
    stored = store.approve_server("web", pin={"definitions": [FETCH, SEARCH]}, actor="a")
    assert stored.value == _pin(SEARCH, FETCH)["value"]
    assert stored.pin["tools"] == _pin(SEARCH, FETCH)["tools"]


def test_history_is_append_only(store: Store, backend: str) -> None:
    store.approve_server("web", pin=_pin(SEARCH), actor="alice")
    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(store.location)
        try:
            for sql in (
                "UPDATE server_pin_history SET actor = 'x'",
                "DELETE FROM server_pin_history",
            ):
                with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                    conn.execute(sql)
        finally:
            conn.close()
    else:
        import psycopg

        with psycopg.connect(store._url, autocommit=True) as conn:  # type: ignore[attr-defined]
            for sql in (
                "UPDATE server_pin_history SET actor = 'x'",
                "DELETE FROM server_pin_history",
                "TRUNCATE server_pin_history",
            ):
                with pytest.raises(psycopg.Error, match="append-only"):
                    conn.execute(sql)
    assert [h["actor"] for h in store.server_history("web")] == ["alice"]


def test_list_is_by_name(store: Store) -> None:
    for name in ("zeta", "Alpha", "mid"):
        store.approve_server(name, pin=_pin(SEARCH), actor="a")
    assert [p.server for p in store.list_server_pins()] == ["Alpha", "mid", "zeta"]
