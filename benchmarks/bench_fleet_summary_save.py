"""What does keeping the fleet summary cost a save of an AgBOM?

Fills a store with ``--agents`` agents (one AgBOM of ``--per-agent`` components each, drawn
from ``--pool``, one model in every AgBOM, as bench_fleet_components.py builds them), then
saves each agent's AgBOM again in a new session, in rounds of ``--agents`` // 4 saves,
alternately with the summary's refresh turned off and on (the same process, the same
store, the same load): the figure is the ratio of the two per-save medians. With the
refresh off the summary goes stale; the next round with it on brings every agent it saves
back, so both rounds write what a save writes. Each save draws new components (the worst
case: about 80 components change holders), or with ``--same`` sends the agent's components
of the fill again (the common case: a new session of the same agent).

Run: ``python benchmarks/bench_fleet_summary_save.py [--agents N] [--per-agent N]
[--pool N] [--rounds N] [--same] [--db LOCATION]`` (a new SQLite file by default; a
``postgresql://`` location for PostgreSQL).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_fleet_components import component  # noqa: E402

from agbom.store import Store, open_store  # noqa: E402
from agbom.store import _fleet_summary as fleet  # noqa: E402

_REFRESH = fleet.refresh_agent


def _off(*_: Any, **__: Any) -> None:
    """The refresh turned off."""


def saves(store: Store, args: argparse.Namespace, rng: random.Random, tag: str, at: datetime,
          count: int, refresh: bool) -> float:  # fmt: skip
    """Milliseconds per save of ``count`` agents' AgBOMs, each in a new session."""
    fleet.refresh_agent = _REFRESH if refresh else _off  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        for a in range(count):
            draw = random.Random(a) if args.same else rng
            picked = sorted(set(draw.sample(range(args.pool), args.per_agent - 1)) | {2})
            document = {"agent": {"id": f"agent-{a}"}, "components": [component(i) for i in picked]}
            store.save_agbom_version(
                f"s-{tag}-{a}", agent_id=f"agent-{a}", document=document,
                agbom_hash=f"sha256:{tag}-{a}", now=at + timedelta(milliseconds=a),
            )  # fmt: skip
        return (time.perf_counter() - start) / count * 1000
    finally:
        fleet.refresh_agent = _REFRESH


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--per-agent", type=int, default=40)
    parser.add_argument("--pool", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--same", action="store_true", help="each agent sends its components again")
    parser.add_argument("--db", default=None, help="a store location (default: a new SQLite file)")
    args = parser.parse_args()
    location = args.db
    if location is None:
        folder = Path(tempfile.mkdtemp(prefix="agbom-fleet-save-"))
        location = str(folder / "fleet.db")
    rng = random.Random(3)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with open_store(location) as store:
        saves(store, args, rng, "fill", at, args.agents, True)
        runs: dict[bool, list[float]] = {False: [], True: []}
        count = max(1, args.agents // 4)
        for n in range(args.rounds):
            for refresh in (False, True):
                at += timedelta(hours=1)
                runs[refresh].append(saves(store, args, rng, f"{n}-{refresh}", at, count, refresh))
        off, on = statistics.median(runs[False]), statistics.median(runs[True])
        kind = "the same components again" if args.same else "new components"
        print(f"store {store.location}: {args.agents} agents x {args.per_agent} components, {kind}")
        print(f"save without the refresh (anchor)  {off:8.1f} ms   1.00x   {runs[False]}")
        print(f"save with the refresh              {on:8.1f} ms {on / off:6.2f}x   {runs[True]}")


if __name__ == "__main__":
    main()
