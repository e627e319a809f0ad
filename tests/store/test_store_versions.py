"""Content-addressed AgBOM versions (store schema 8): what a version stores, that it reads
back exactly as it was given, that the fleet index answers as before, and the migration of
stores written before."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agbom.inventory import AgBOM, Component
from agbom.store import SCHEMA_VERSION, AgbomDocument, SqliteStore, Store, StoreError

DATA = Path(__file__).parent / "data"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def tool(i: int, capability: str = "fs.read", **extra: Any) -> dict[str, Any]:
    return {
        "id": f"tool-{i:03d}",
        "type": "tool",
        "name": f"tool-{i}",
        "version": "1.0.0",
        "provider": "local",
        "capability": capability,
        **extra,
    }


def agbom_of(*components: dict[str, Any], agent: str = "agent-1") -> AgBOM:
    return AgBOM.from_document({"agent": {"id": agent}, "components": list(components)})


def replaced(agbom: AgBOM, data: dict[str, Any]) -> AgBOM:
    """``agbom`` with one component replaced, sharing every other Component object (as an
    ``agbom/changed`` builds it)."""
    components = dict(agbom.components)
    old = components[data["id"]]
    components[data["id"]] = Component(id=old.id, type=old.type, data=data)
    return AgBOM(components, agbom.header)


def sorted_text(document: Any) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


def save(store: Store, session: str, document: Any, n: int, **kw: Any) -> int:
    return store.save_agbom_version(
        session,
        agent_id=kw.pop("agent_id", "agent-1"),
        document=document,
        agbom_hash=f"sha256:{n:064x}",
        now=T0 + timedelta(minutes=n),
        **kw,
    )


# -- every backend: an AgbomDocument is the document it stands for ------------------------------


def test_an_agbom_document_reads_back_as_to_document(store: Store) -> None:
    first = agbom_of(*(tool(i) for i in range(5)))
    second = replaced(first, tool(2, "fs.write"))
    assert save(store, "s", AgbomDocument(first), 1) == 1
    assert save(store, "s", AgbomDocument(second), 2) == 2
    refused = replaced(second, tool(3, "net.egress"))
    assert save(store, "s", AgbomDocument(refused), 3, accepted=False) == 3
    for version, agbom in ((1, first), (2, second), (3, refused)):
        stored = store.agbom_version("s", version)
        assert stored is not None
        assert stored["document"] == agbom.to_document()
        assert sorted_text(stored["document"]) == sorted_text(agbom.to_document())
    current = store.agbom_version("s")
    assert current is not None and current["version"] == 2


def test_agbom_document_is_the_mapping_to_document_builds() -> None:
    agbom = agbom_of(tool(1), tool(0))
    view = AgbomDocument(agbom)
    assert dict(view) == agbom.to_document()
    assert list(view) == list(agbom.to_document())
    assert len(view) == len(agbom.to_document())
    with pytest.raises(KeyError):
        view["nope"]


# -- SQLite: what a change stores ---------------------------------------------------------------


def _counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {
            "components": conn.execute("SELECT COUNT(*) FROM agbom_components").fetchone()[0],
            "component_bytes": conn.execute(
                "SELECT COALESCE(SUM(LENGTH(body)), 0) FROM agbom_components"
            ).fetchone()[0],
            "members": conn.execute("SELECT COUNT(*) FROM agbom_members").fetchone()[0],
            "open": conn.execute(
                "SELECT COUNT(*) FROM agbom_members WHERE until_version IS NULL"
            ).fetchone()[0],
            "version_bytes": conn.execute(
                "SELECT SUM(COALESCE(LENGTH(header), 0) + COALESCE(LENGTH(document), 0)) "
                "FROM agbom_versions"
            ).fetchone()[0],
        }
    finally:
        conn.close()


@pytest.mark.parametrize("as_agbom", [True, False], ids=["AgbomDocument", "dict"])
def test_a_one_component_change_stores_one_component_and_two_index_rows(
    db_path: Path, as_agbom: bool
) -> None:
    first = agbom_of(*(tool(i) for i in range(500)))
    second = replaced(first, tool(250, "fs.write"))
    with SqliteStore.open(db_path) as store:
        save(store, "s", AgbomDocument(first) if as_agbom else first.to_document(), 1)
        before = _counts(db_path)
        save(store, "s", AgbomDocument(second) if as_agbom else second.to_document(), 2)
        after = _counts(db_path)
        # A version saved again with nothing changed stores no component and no index row.
        save(store, "s", AgbomDocument(second) if as_agbom else second.to_document(), 3)
        again = _counts(db_path)
    assert before["components"] == before["members"] == before["open"] == 500
    changed_bytes = len(sorted_text(tool(250, "fs.write")))
    assert after["components"] - before["components"] == 1
    assert after["component_bytes"] - before["component_bytes"] == changed_bytes
    assert after["members"] - before["members"] == 1  # one opened (and one closed)
    assert after["open"] == 500
    assert after["version_bytes"] - before["version_bytes"] < 100  # the header only
    assert {k: again[k] for k in ("components", "members", "open")} == {
        k: after[k] for k in ("components", "members", "open")
    }


def test_a_refused_change_stores_only_its_differences(db_path: Path) -> None:
    first = agbom_of(*(tool(i) for i in range(300)))
    components = dict(replaced(first, tool(7, "net.egress")).components)
    del components["tool-008"]
    refused = AgBOM(components, first.header)
    with SqliteStore.open(db_path) as store:
        save(store, "s", AgbomDocument(first), 1)
        save(store, "s", AgbomDocument(refused), 2, accepted=False)
        stored = store.agbom_version("s", 2)
        current = store.agbom_version("s")
        rows = store._require().execute("SELECT COUNT(*) FROM agbom_refused_members").fetchone()
    assert rows[0] == 2  # tool-007 changed, tool-008 left out
    assert stored is not None and stored["document"] == refused.to_document()
    assert current is not None and current["version"] == 1


def test_handles_that_write_the_same_session_in_turn_stay_exact(
    store_factory: Callable[[], Store],
) -> None:
    one, two = store_factory(), store_factory()
    agbom = agbom_of(*(tool(i) for i in range(20)))
    versions = [agbom]
    for n in range(1, 9):
        writer = one if n % 3 else two  # each handle's memory of the session goes stale
        save(writer, "s", AgbomDocument(agbom), n)
        agbom = replaced(agbom, tool(n % 20, f"cap-{n}"))
        versions.append(agbom)
    for n, expected in enumerate(versions[:-1], start=1):
        stored = two.agbom_version("s", n)
        assert stored is not None and stored["document"] == expected.to_document()
    rows = one.list_components(type="tool")
    assert len(rows) == 20 and all(row["sessions"] == 1 for row in rows)


def test_documents_the_guardian_never_sends_are_kept_whole(store: Store) -> None:
    odd = [
        {"agent": {"id": "a"}, "components": [tool(2), tool(1)]},  # out of id order
        {"agent": {"id": "a"}, "components": [tool(1), tool(1, "x")]},  # a repeated id
        {"agent": {"id": "a"}, "components": [tool(1), "junk", {"id": 5}]},  # malformed
        {"agent": {"id": "a"}, "note": "no components"},
        {"agent": {"id": "a"}, "components": [{**tool(1), "weights": [1.0, 2.5], "ключ": "з"}]},
    ]
    for n, document in enumerate(odd, start=1):
        save(store, "s", document, n)
    for n, document in enumerate(odd, start=1):
        stored = store.agbom_version("s", n)
        assert stored is not None and sorted_text(stored["document"]) == sorted_text(document)
    # The well-formed components still index the fleet (the first of each id).
    names = [(r["component_id"], r["name"]) for r in store.list_components()]
    assert names == [("tool-001", "tool-1"), ("tool-002", "tool-2")]


def test_a_component_too_large_or_not_json_is_refused(store: Store) -> None:
    with pytest.raises(StoreError):
        save(store, "s", {"components": [{"id": "x", "type": "tool", "bad": object()}]}, 1)
    assert store.agbom_version("s") is None


# -- the fleet index against a reference built as schema 6 built it -----------------------------


def _reference_index(history: list[tuple[str, str, dict[str, Any], bool, str]]) -> list[dict]:
    """list_components as schema 6 computed it: one row per component per accepted version."""
    rows: list[tuple[str, str, str, str, str | None, str, str]] = []
    first: dict[tuple[str, str, str, str, str | None], str] = {}
    for session, agent, document, accepted, at in history:
        if not accepted:
            continue
        seen: set[str] = set()
        for c in document["components"]:
            if c["id"] in seen:
                continue
            seen.add(c["id"])
            name = c.get("name") if isinstance(c.get("name"), str) and c.get("name") else c["id"]
            version = None if c.get("version") is None else str(c["version"])
            key = (session, c["id"], c["type"], name, version)
            first.setdefault(key, at)
            rows.append((session, agent, c["id"], c["type"], name, version, first[key], at))  # type: ignore[arg-type]
    grouped: dict[tuple[str, str, str, str | None], list[Any]] = {}
    for session, agent, cid, ctype, name, version, first_seen, at in rows:  # type: ignore[misc]
        grouped.setdefault((ctype, cid, name, version), []).append((session, agent, first_seen, at))
    out = []
    for (ctype, cid, name, version), items in grouped.items():
        out.append(
            {
                "component_id": cid,
                "type": ctype,
                "name": name,
                "version": version,
                "agents": sorted({agent for _, agent, _, _ in items}),
                "sessions": len({session for session, _, _, _ in items}),
                "first_seen": min(f for _, _, f, _ in items),
                "last_seen": max(a for _, _, _, a in items),
            }
        )
    return sorted(out, key=lambda r: (r["type"], r["name"], r["component_id"], r["version"] or ""))


_step = st.tuples(
    st.sampled_from(["change", "add", "remove", "refuse", "agent", "resend"]),
    st.integers(min_value=0, max_value=7),
    st.sampled_from(["fs.read", "fs.write", "net.egress"]),
    st.sampled_from(["1.0.0", "2.0.0"]),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(st.tuples(st.sampled_from(["s1", "s2"]), _step), max_size=14))
def test_every_version_reads_back_exactly_and_the_index_answers_as_schema_6_did(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, tuple[str, int, str, str]]]
) -> None:
    path = tmp_path_factory.mktemp("v8") / "agbom.db"
    current = {s: agbom_of(tool(0), tool(1), tool(2)) for s in ("s1", "s2")}
    agents = {"s1": "agent-1", "s2": "agent-2"}
    saved: list[tuple[str, int, dict[str, Any]]] = []
    history: list[tuple[str, str, dict[str, Any], bool, str]] = []
    with SqliteStore.open(path) as store:
        n = 0
        for session in ("s1", "s2"):
            n += 1
            version = save(
                store, session, AgbomDocument(current[session]), n, agent_id=agents[session]
            )
            saved.append((session, version, current[session].to_document()))
            history.append(
                (
                    session,
                    agents[session],
                    current[session].to_document(),
                    True,
                    store.agbom_version(session, version)["created_at"],
                )
            )  # type: ignore[index]
        for session, (kind, i, capability, version_str) in steps:
            agbom = current[session]
            components = dict(agbom.components)
            cid = f"tool-{i:03d}"
            if kind == "remove":
                if cid not in components or len(components) == 1:
                    continue
                del components[cid]
                candidate = AgBOM(components, agbom.header)
            elif kind in ("change", "add", "refuse"):
                data = tool(i, capability, version=version_str)
                components[cid] = Component(id=cid, type=agbom_of(data).get(cid).type, data=data)  # type: ignore[union-attr]
                candidate = AgBOM(components, agbom.header)
            else:
                candidate = agbom
            if kind == "agent":
                agents[session] = "agent-3" if agents[session] != "agent-3" else "agent-1"
            accepted = kind != "refuse"
            as_dict = kind == "resend"
            document: Any = candidate.to_document() if as_dict else AgbomDocument(candidate)
            n += 1
            version = save(store, session, document, n, agent_id=agents[session], accepted=accepted)
            stored = store.agbom_version(session, version)
            assert stored is not None
            saved.append((session, version, candidate.to_document()))
            history.append(
                (session, agents[session], candidate.to_document(), accepted, stored["created_at"])
            )
            if accepted:
                current[session] = candidate
        for session, version, expected in saved:
            stored = store.agbom_version(session, version)
            assert stored is not None
            assert sorted_text(stored["document"]) == sorted_text(expected)
        index = store.list_components()
    assert index == _reference_index(history)


# -- the migration of stores written before schema 8 --------------------------------------------


def test_a_schema_6_store_migrates_and_answers_exactly_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript((DATA / "store-v6.sql").read_text())
    old_texts = {
        (s, v): text
        for s, v, text in conn.execute("SELECT session_id, version, document FROM agbom_versions")
    }
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == 6
    conn.close()
    answers = orjson.loads((DATA / "store-v6-answers.json").read_bytes())
    with SqliteStore.open(path, create=False) as store:
        assert store.schema_version == SCHEMA_VERSION
        for (session, version), text in old_texts.items():
            stored = store.agbom_version(session, version)
            assert stored is not None
            assert sorted_text(stored["document"]) == text.encode()
        assert [
            store.agbom_version(r["session_id"], r["version"]) for r in answers["versions"]
        ] == answers["versions"]
        assert {s: store.agbom_version(s) for s in answers["current"]} == answers["current"]
        assert {a: store.latest_agbom_for_agent(a) for a in answers["latest_for_agent"]} == answers[
            "latest_for_agent"
        ]
        assert store.list_components() == answers["components"]
        assert store.list_components(type="tool", name="tool-1*") == answers["tools_named_tool_1"]
        assert store.list_agents() == answers["agents"]
        tables = {
            row[0]
            for row in store._require().execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert "components" not in tables and "agbom_versions_v6" not in tables
    # A store migrated once opens as it is.
    with SqliteStore.open(path, create=False) as store:
        assert store.list_components() == answers["components"]


def test_a_schema_6_version_that_is_not_sorted_json_is_kept_whole(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript((DATA / "store-v6.sql").read_text())
    # Written by hand, not by agbom: members out of order, spaces. It must read back as-is.
    conn.execute(
        "INSERT INTO agbom_versions VALUES ('hand', 1, 'agent-h', "
        '\'{"components": [{"type": "tool", "id": "t"}], "agent": {"id": "h"}}\', '
        "'sha256:00', NULL, '2026-03-02T00:00:00Z', 1)"
    )
    conn.commit()
    conn.close()
    with SqliteStore.open(path, create=False) as store:
        stored = store.agbom_version("hand", 1)
        assert stored is not None
        assert stored["document"] == {
            "components": [{"type": "tool", "id": "t"}],
            "agent": {"id": "h"},
        }
        assert [r["component_id"] for r in store.list_components(name="t")] == ["t"]


def test_a_store_newer_than_this_agbom_is_still_refused(db_path: Path) -> None:
    with SqliteStore.open(db_path):
        pass
    conn = sqlite3.connect(db_path)
    conn.execute(
        "INSERT INTO schema_version VALUES (?, '2030-01-01T00:00:00Z')", (SCHEMA_VERSION + 1,)
    )
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this agbom supports"):
        SqliteStore.open(db_path)


def _index_rows(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return (
            conn.execute(
                "SELECT session_id, component_id, since_version, until_version, key, agent_id, "
                "type, name, version_str, first_seen, last_seen FROM agbom_members "
                "ORDER BY session_id, component_id, since_version"
            ).fetchall()
            + conn.execute(
                "SELECT key, body, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL "
                "FROM agbom_components ORDER BY key"
            ).fetchall()
        )
    finally:
        conn.close()


def test_a_version_prepared_ahead_is_stored_exactly_as_one_that_was_not(tmp_path: Path) -> None:
    """Store.prepare_document (the bulk thread's part of a big snapshot: stored forms, bodies
    written ahead, a first version's index rows) changes nothing a reader sees: the same
    versions into two stores, one prepared ahead and one not, give identical rows, documents
    and fleet answers, first versions and later ones (changed, renamed, removed, re-added)."""
    first = agbom_of(*(tool(i) for i in range(40)), tool(99, name="ü-tool"))
    second = replaced(first, {**tool(3), "version": "2.0.0"})
    third = AgBOM({k: v for k, v in second.components.items() if k != "tool-007"}, second.header)
    fourth = agbom_of(*(tool(i) for i in range(40)))
    prepared = SqliteStore.open(tmp_path / "prepared.db")
    plain = SqliteStore.open(tmp_path / "plain.db")
    for store, ahead in ((prepared, True), (plain, False)):
        for n, agbom in enumerate((first, second, third, fourth), start=1):
            for session in ("s-1", "s-2"):
                document = AgbomDocument(agbom)
                if ahead:
                    bulk = store.reopen()  # as the bulk thread: a handle of its own
                    bulk.prepare_document(document)
                    bulk.close()
                    assert document.prestored_in == store.location
                save(store, session, document, n)
    try:
        assert _index_rows(tmp_path / "prepared.db") == _index_rows(tmp_path / "plain.db")
        for n in range(1, 5):
            assert sorted_text(prepared.agbom_version("s-1", n)["document"]) == sorted_text(
                plain.agbom_version("s-1", n)["document"]
            )
        assert prepared.list_components() == plain.list_components()
    finally:
        prepared.close()
        plain.close()


def test_bodies_written_ahead_for_another_database_are_written_again(tmp_path: Path) -> None:
    """A document prepared against one store and saved into another (a replica on another
    file) does not skip writing its bodies there: the version reads back whole."""
    agbom = agbom_of(*(tool(i) for i in range(5)))
    elsewhere = SqliteStore.open(tmp_path / "a.db")
    here = SqliteStore.open(tmp_path / "b.db")
    try:
        document = AgbomDocument(agbom)
        elsewhere.prepare_document(document)
        save(here, "s-1", document, 1)
        assert sorted_text(here.agbom_version("s-1", 1)["document"]) == sorted_text(
            agbom.to_document()
        )
    finally:
        elsewhere.close()
        here.close()
