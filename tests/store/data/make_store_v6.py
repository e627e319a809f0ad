"""How store-v6.sql and store-v6-answers.json were made: with agbom's store at schema 6.

Run it with the code of commit ed3e265 (store schema 6) on the path, e.g.
``git archive ed3e265 agbom | tar -x -C /tmp/v6 && cd /tmp/v6 && python THIS OUT.sql``.
It cannot run against a newer agbom: that is the point of the files it wrote.
"""

import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from agbom.inventory import AgBOM
from agbom.store import SCHEMA_VERSION, SqliteStore

assert SCHEMA_VERSION == 6
out = Path(sys.argv[1])
db = Path("/tmp/v6code/v6.db")
for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
    p.unlink(missing_ok=True)
t0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(i):
    return t0 + timedelta(minutes=i)


def tool(i, cap="fs.read", **extra):
    return {
        "id": f"tool-{i:02d}",
        "type": "tool",
        "name": f"tool-{i}",
        "version": "1.0.0",
        "capability": cap,
        "provider": "local",
        **extra,
    }


with SqliteStore.open(db) as store:
    # session a: an AgBOM that grows, changes, shrinks, and gets a component back
    header = {"agent": {"id": "agent-a", "name": "Agent A"}, "agbom_version": "0.1"}
    comps = [tool(i) for i in range(6)]

    def save(sid, agent, doc, n, **kw):
        return store.save_agbom_version(
            sid, agent_id=agent, document=doc, agbom_hash=f"sha256:{n:064x}", now=at(n), **kw
        )

    n = 0

    def nxt():
        global n
        n += 1
        return n

    save(
        "a", "agent-a", {**header, "components": comps}, nxt(), change={"method": "agbom/snapshot"}
    )
    comps[2] = tool(2, "fs.write")
    save("a", "agent-a", {**header, "components": comps}, nxt(), change={"method": "agbom/changed"})
    # refused: drops tool-04, changes tool-01
    refused = [c for c in comps if c["id"] != "tool-04"]
    refused[1] = tool(1, "net.egress")
    save(
        "a",
        "agent-a",
        {**header, "components": refused},
        nxt(),
        change={"decision": "deny"},
        accepted=False,
    )
    comps = [c for c in comps if c["id"] != "tool-05"]
    save("a", "agent-a", {**header, "components": comps}, nxt())
    comps.append(tool(5))  # back again, same identity
    comps[0] = {**tool(0), "version": "2.0.0"}  # new identity
    save("a", "agent-a", {**header, "components": comps}, nxt())
    # floats, a non-ASCII key and text, an integer version
    odd = {
        "id": "tool-07",
        "type": "tool",
        "name": "métrique",
        "version": 3,
        "weights": [1.0, 0.5, 1e21],
        "ключ": "значение",
    }
    save("a", "agent-a", {**header, "components": comps + [odd]}, nxt())
    # session b: the Guardian's path (AgBOM.to_document), then another agent, then empty
    agbom = AgBOM.from_document(
        {"agent": {"id": "agent-b"}, "components": [tool(i) for i in range(3)]}
    )
    save("b", "agent-b", agbom.to_document(), nxt())
    save("b", "agent-c", agbom.to_document(), nxt())
    save("b", "agent-c", {"agent": {"id": "agent-c"}, "components": []}, nxt())
    # session c: documents the Guardian never sends: components out of order, duplicates,
    # malformed entries, no components at all
    save(
        "c",
        "agent-x",
        {
            "agent": {"id": "agent-x"},
            "components": [tool(3), tool(1), tool(1, "x"), "junk", {"id": 5}],
        },
        nxt(),
    )
    save("c", "agent-x", {"agent": {"id": "agent-x"}, "note": "no components"}, nxt())
    save("c", "agent-x", {"components": [tool(9)]}, nxt(), accepted=False)
conn = sqlite3.connect(db)
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
lines = list(conn.iterdump())
conn.close()
out.write_text(
    "-- A store written by agbom's store at schema version 6 (tests/store/test_store_v7.py).\n"
    + "\n".join(lines)
    + "\n"
)
print(len(lines), "lines")

# What the v6 store answers, recorded for the migration test to compare against.
with SqliteStore.open(db) as store:
    expected = {
        "versions": [
            store.agbom_version(s, v)
            for s, v in sqlite3.connect(db).execute(
                "SELECT session_id, version FROM agbom_versions ORDER BY 1, 2"
            )
        ],
        "current": {s: store.agbom_version(s) for s in ("a", "b", "c")},
        "latest_for_agent": {
            a: store.latest_agbom_for_agent(a) for a in ("agent-a", "agent-b", "agent-c", "agent-x")
        },
        "components": store.list_components(),
        "tools_named_tool_1": store.list_components(type="tool", name="tool-1*"),
        "agents": store.list_agents(),
    }
Path(str(out).replace(".sql", "-answers.json")).write_bytes(
    orjson.dumps(expected, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
)
