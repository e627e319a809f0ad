"""What does a page of components across the fleet cost as the fleet grows?

Fills a store (SQLite by default, or ``--db postgresql://...``) through ``save_agbom_version``,
as the Guardian does: ``--agents`` agents, each with ``--history`` sessions (only the last is
its latest AgBOM), each AgBOM ``--per-agent`` components drawn from a pool of ``--pool``
distinct skills, MCP servers, models and peers (model-2 in every one), a third of the skills
approved; agents are developers on machines of three host platforms (``claude-code``,
``cursor``, ``codex``), a fifth of their AgBOMs keep a rule finding on two components. Then
times,
in the same run, ``fleet_components`` (the first page, a status filter, a search, a late
page), ``fleet_component_agents``, and the agents' calls (``fleet_agents``,
``fleet_agent_components``, ``fleet_agent_versions``) against the anchor ``list_agents``
(the Fleet page's own query): the figure to watch is the ratio, not the milliseconds. The
component calls read the fleet summary the store keeps as AgBOMs are saved (the agents'
calls and a host filter read the scan); ``--scan`` also times the first page read by the
scan the summary replaced (every agent's latest AgBOM, once: it takes seconds), and
``--rebuild`` the summary rebuilt from the stored versions (what the migration's backfill
and ``store migrate`` run).

Issue 45's scale (10,000 agents, about 100,000 distinct components in use, 1,000,000
decisions): ``--agents 10000 --per-agent 40 --pool 120000 --history 1 --decisions 1000000``
(``--decisions`` appends that many audit entries to the agents' latest sessions, in the
batches ``agbom serve`` commits, before the calls are timed).

Run: ``python benchmarks/bench_fleet_components.py [--agents N] [--per-agent N] [--pool N]
[--history N] [--repeat N] [--db LOCATION | --postgres]``; ``--postgres`` starts a throwaway
cluster (tests/pgcluster.py) for the run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agbom.store import Digest, Store, open_store  # noqa: E402


def component(i: int) -> dict[str, Any]:
    kind = i % 4
    if kind == 0:
        value = hashlib.sha256(f"skill-{i}".encode()).hexdigest()
        return {
            "id": f"skill-{i}",
            "type": "skill",
            "name": f"skill-{i}",
            "description": "d",
            "definition": {
                "ref": f"file://s{i}",
                "digest": {"algorithm": "sha256", "value": value},
            },
        }
    if kind == 1:
        return {
            "id": f"mcp-{i}",
            "type": "mcp_server",
            "name": f"server-{i}",
            "version": "1.0",
            "endpoint": None,
            "purl": f"pkg:npm/server-{i}",
            "tools": [],
        }
    if kind == 2:
        return {
            "id": f"model-{i}",
            "type": "model",
            "name": f"model-{i}",
            "version": "1",
            "provider": "p",
            "endpoint": None,
            "context_window": None,
        }
    return {
        "id": f"peer-{i}",
        "type": "a2a_peer",
        "endpoint": f"https://peer-{i}.example",
        "protocol_version": "1",
    }


HOSTS = ("claude-code", "cursor", "codex")


def agent_id(a: int) -> str:
    """Agent ``a`` as a developer on a machine with a host platform (a third each)."""
    return f"{HOSTS[a % 3]}/dev{a}@m{a}"


def fill(store: Store, agents: int, per_agent: int, pool: int, history: int) -> float:
    rng = random.Random(7)
    start = time.perf_counter()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for a in range(agents):
        for h in range(history):
            # model-2 is in every AgBOM: one component every agent holds (the worst case
            # of its agents' page, and of the refresh each save makes of its count)
            picked = sorted(set(rng.sample(range(pool), per_agent - 1)) | {2})
            document = {"agent": {"id": agent_id(a)}, "components": [component(i) for i in picked]}
            at += timedelta(seconds=1)
            # a fifth of the AgBOMs keep a warning on two of their components
            change = None
            if a % 5 == 0:
                named = [component(i)["id"] for i in picked[:2]]
                finding = {"rule_id": f"RULE-{a % 7}", "severity": ("low", "medium", "high")[a % 3],
                           "action": "warn", "components": named}  # fmt: skip
                change = {"method": "agbom/snapshot", "findings": [finding]}
            store.save_agbom_version(
                f"s-{a}-{h}",
                agent_id=agent_id(a),
                document=document,
                agbom_hash=f"sha256:{a}-{h}",
                now=at,
                change=change,
            )
    for i in range(0, pool, 12):  # a third of the skills approved
        value = hashlib.sha256(f"skill-{i}".encode()).hexdigest()
        store.set_status(f"skill-{i}", Digest("sha256", value), "approved", actor="bench")
    return time.perf_counter() - start


def decide(store: Store, agents: int, history: int, count: int) -> float:
    """``count`` decisions appended to the agents' latest sessions, as ``agbom serve``
    commits them (batches of 512: the pipelined commits' bound), each counted per day as
    the store counts every append: two allowed for each denied, a denial naming one or two
    of 40 rules. Seconds taken."""
    from agbom.store import ChainAppend

    rng = random.Random(11)
    heads: dict[str, tuple[int, str | None]] = {}
    start = time.perf_counter()
    for first in range(0, count, 512):
        batch = []
        for n in range(first, min(count, first + 512)):
            sid = f"s-{n % agents}-{history - 1}"  # agent n % agents's latest session
            seq, head = heads.get(sid, (0, None))
            entry: dict[str, Any] = {
                "entry_id": str(seq + 1), "step_id": f"r-{n}",
                "step_type": "steps/toolCallRequest", "request_hash": f"sha256:{n:064x}",
                "timestamp": "2026-03-20T10:00:00.000000Z", "decision": "allow",
            }  # fmt: skip
            if n % 3 == 0:
                entry["decision"] = "deny"
                entry["reason_codes"] = [f"RULE-{rng.randrange(40)}" for _ in range(1 + n % 2)]
            key = f"e-{n}"
            batch.append(ChainAppend(sid, entry, key, head, key, None))
            heads[sid] = (seq + 1, key)
        outcomes = store.append_entries(batch)
        assert all(isinstance(o, int) for o in outcomes), outcomes[:1]
    return time.perf_counter() - start


def timed(call: Callable[[], Any], repeat: int) -> float:
    call()  # warm
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


@contextlib.contextmanager
def where(db: str | None, postgres: bool) -> Iterator[str]:
    if postgres:
        from tests.pgcluster import running_cluster

        with running_cluster() as cluster:
            yield cluster.url(cluster.create_database("fleet"))
        return
    folder = tempfile.mkdtemp(prefix="agbom-fleet-")
    Path(folder).chmod(0o700)
    yield db or str(Path(folder) / "fleet.db")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--per-agent", type=int, default=40)
    parser.add_argument("--pool", type=int, default=10000)
    parser.add_argument("--history", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--decisions", type=int, default=0, help="audit entries to append")
    parser.add_argument("--db", default=None, help="a store location (default: a new SQLite file)")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL cluster")
    parser.add_argument("--scan", action="store_true", help="time the scan's first page once")
    parser.add_argument("--rebuild", action="store_true", help="time a rebuild of the summary")
    args = parser.parse_args()
    with where(args.db, args.postgres) as location, open_store(location) as store:
        seconds = fill(store, args.agents, args.per_agent, args.pool, args.history)
        total = store.fleet_components(limit=1)["total"]
        print(
            f"store {store.location}: {args.agents} agents x {args.history} sessions x "
            f"{args.per_agent} components, {total} distinct in use; filled in {seconds:.1f} s"
        )
        if args.decisions:
            seconds = decide(store, args.agents, args.history, args.decisions)
            print(f"{args.decisions} decisions appended in {seconds:.1f} s")
        from agbom.review.server_queue import server_queue

        anchor = timed(store.list_agents, args.repeat)
        cases = {
            "fleet_components() first page": lambda: store.fleet_components(),
            "fleet_components(status=unreviewed)": lambda: store.fleet_components(
                status="unreviewed"
            ),
            "fleet_components(search='server-1')": lambda: store.fleet_components(
                search="server-1"
            ),
            "fleet_components(offset=5000)": lambda: store.fleet_components(offset=5000),
            "fleet_component_agents(model-2)": lambda: store.fleet_component_agents(
                "model", "p/model-2", "1"
            ),
            "fleet_component_agents(model-2, page 50)": lambda: store.fleet_component_agents(
                "model", "p/model-2", "1", offset=4900
            ),
            "fleet_component_agents(skill-4)": lambda: store.fleet_component_agents(
                "skill", "skill-4", "sha256:" + hashlib.sha256(b"skill-4").hexdigest()
            ),
            "fleet_components(severity=medium)": lambda: store.fleet_components(severity="medium"),
            "fleet_components(host=cursor)": lambda: store.fleet_components(host="cursor"),
            "fleet_charts() (Overview)": lambda: store.fleet_charts(),
            # issue 45 item 2: the Agents page, an agent's components and its timeline
            "fleet_agents() first page": lambda: store.fleet_agents(),
            "fleet_agents(unapproved=True)": lambda: store.fleet_agents(unapproved=True),
            "fleet_agents(host=cursor)": lambda: store.fleet_agents(host="cursor"),
            "fleet_agent_components(agent 7)": lambda: store.fleet_agent_components(agent_id(7)),
            "fleet_agent_versions(agent 7)": lambda: store.fleet_agent_versions(agent_id(7)),
            # issue 45 item 4: the MCP server queue (the page and /v1/servers/queue)
            "server_queue(pending)": lambda: server_queue(store),
            "server_queue(all)": lambda: server_queue(store, pending_only=False),
        }
        print(f"{'list_agents() (anchor)':40} {anchor:9.1f} ms   1.00x")
        for name, call in cases.items():
            ms = timed(call, args.repeat)
            print(f"{name:40} {ms:9.1f} ms {ms / anchor:6.2f}x")
        if args.scan:
            ms = scan_first_page(store)
            print(f"{'scan first page (before the summary)':40} {ms:9.1f} ms {ms / anchor:6.2f}x")
        if args.rebuild:
            ms = rebuild_summary(store)
            print(f"{'rebuild of the summary':40} {ms:9.1f} ms {ms / anchor:6.2f}x")


def scan_first_page(store: Store) -> float:
    """The first page as the store read it before the summary, timed once."""
    from agbom.store import _fleet_logic as fleet

    sql = statements(store)
    start = time.perf_counter()
    fleet.list_components(
        store._fleet_rows,  # type: ignore[attr-defined]
        dataclasses.replace(sql, components=sql.scan_components),
        datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        type=None, status=None, search=None, limit=None, offset=None,
    )  # fmt: skip
    return (time.perf_counter() - start) * 1000


def rebuild_summary(store: Store) -> float:
    """The summary rebuilt from the stored versions in one transaction, timed once."""
    from agbom.store import _fleet_summary as fleet

    start = time.perf_counter()
    if type(store).__name__ == "SqliteStore":
        with store._write() as conn:  # type: ignore[attr-defined]
            fleet.rebuild(conn.execute, statements(store))
    else:
        from agbom.store.postgres.inventory import refresh_fleet

        with store._write() as conn:  # type: ignore[attr-defined]
            refresh_fleet(conn, None)
    return (time.perf_counter() - start) * 1000


def statements(store: Store) -> Any:
    if type(store).__name__ == "SqliteStore":
        from agbom.store.sqlite.fleet import FLEET

        return FLEET
    from agbom.store.postgres.fleet import FLEET as POSTGRES

    return POSTGRES


if __name__ == "__main__":
    main()
