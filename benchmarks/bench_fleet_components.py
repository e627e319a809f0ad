"""What does a page of components across the fleet cost as the fleet grows?

Fills a store (SQLite by default, or ``--db postgresql://...``) through ``save_agbom_version``,
as the Guardian does: ``--agents`` agents, each with ``--history`` sessions (only the last is
its latest AgBOM), each AgBOM ``--per-agent`` components drawn from a pool of ``--pool``
distinct skills, MCP servers, models and peers, a third of the skills approved. Then times,
in the same run, ``fleet_components`` (the first page, a status filter, a search, a late
page), ``fleet_component_agents``, and the agents' calls (``fleet_agents``,
``fleet_agent_components``, ``fleet_agent_versions``) against the anchor ``list_agents``
(the Fleet page's own query): the figure to watch is the ratio, not the milliseconds.

Run: ``python benchmarks/bench_fleet_components.py [--agents N] [--per-agent N] [--pool N]
[--history N] [--repeat N] [--db LOCATION | --postgres]``; ``--postgres`` starts a throwaway
cluster (tests/pgcluster.py) for the run.
"""

from __future__ import annotations

import argparse
import contextlib
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


def fill(store: Store, agents: int, per_agent: int, pool: int, history: int) -> float:
    rng = random.Random(7)
    start = time.perf_counter()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for a in range(agents):
        for h in range(history):
            picked = sorted(rng.sample(range(pool), per_agent))
            document = {"agent": {"id": f"agent-{a}"}, "components": [component(i) for i in picked]}
            at += timedelta(seconds=1)
            store.save_agbom_version(
                f"s-{a}-{h}",
                agent_id=f"agent-{a}",
                document=document,
                agbom_hash=f"sha256:{a}-{h}",
                now=at,
            )
    for i in range(0, pool, 12):  # a third of the skills approved
        value = hashlib.sha256(f"skill-{i}".encode()).hexdigest()
        store.set_status(f"skill-{i}", Digest("sha256", value), "approved", actor="bench")
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
    parser.add_argument("--db", default=None, help="a store location (default: a new SQLite file)")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL cluster")
    args = parser.parse_args()
    with where(args.db, args.postgres) as location, open_store(location) as store:
        seconds = fill(store, args.agents, args.per_agent, args.pool, args.history)
        total = store.fleet_components(limit=1)["total"]
        print(
            f"store {store.location}: {args.agents} agents x {args.history} sessions x "
            f"{args.per_agent} components, {total} distinct in use; filled in {seconds:.1f} s"
        )
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
            # issue 45 item 2: the Agents page, an agent's components and its timeline
            "fleet_agents() first page": lambda: store.fleet_agents(),
            "fleet_agents(unapproved=True)": lambda: store.fleet_agents(unapproved=True),
            "fleet_agent_components(agent-7)": lambda: store.fleet_agent_components("agent-7"),
            "fleet_agent_versions(agent-7)": lambda: store.fleet_agent_versions("agent-7"),
        }
        print(f"{'list_agents() (anchor)':40} {anchor:9.1f} ms   1.00x")
        for name, call in cases.items():
            ms = timed(call, args.repeat)
            print(f"{name:40} {ms:9.1f} ms {ms / anchor:6.2f}x")


if __name__ == "__main__":
    main()
