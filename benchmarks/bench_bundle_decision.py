"""What a skill-load decision costs another Guardian: in-process Rego over agbom's OPA bundle
(``data.agbom``), against one call of the read API.

Run: ``python benchmarks/bench_bundle_decision.py [--pairs 1000] [--decisions 500]
[--fresh 10]``.

A SQLite store gets ``--pairs`` approved (skill_id, digest) pairs (a tenth scoped to agents
matching ``bot-*``), then:

- the anchor: ``GET /v1/skills/ID/approvals/DIGEST?agent_id=...`` on a real ``agbom serve``
  on 127.0.0.1, one keep-alive httpx client, one call per decision;
- the bundle: that store's bundle (``agbom bundle build``'s bytes) loaded once into rego-cpp
  (``regopy``, the engine tests/bundle uses), then one ``data.agbom.skill_load.allow``
  query per decision with that decision's input. Two ways: a new interpreter per decision
  holding the modules and data (what a naive embedding does; only the first ``--fresh``
  decisions, it is slow: rego-cpp compiles policy and data for every query), and the policy
  and data compiled once into a rego-cpp bundle (``Interpreter.build``, as OPA's
  ``PrepareForEval``), then one entrypoint query per decision.

Both answer the same pairs; the script checks that they agree on every decision. Prints the
median and p99 per decision and the ratios to the anchor.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import orjson  # noqa: E402
from regopy import Interpreter  # noqa: E402

from agbom.export.opa_bundle import build_store_bundle  # noqa: E402
from agbom.store import Digest, SkillStatus, open_store  # noqa: E402
from tests.bundle.rego import BundleEngine  # noqa: E402
from tests.transports.served import Served  # noqa: E402


def seed(db: Path, pairs: int) -> list[tuple[str, str]]:
    made = []
    with open_store(db) as store:
        for i in range(pairs):
            skill, digest = f"team-{i % 37}/skill-{i}", "sha256:" + f"{i:064x}"
            store.set_status(
                skill,
                Digest.parse(digest),
                SkillStatus.APPROVED,
                actor="bench",
                scope_agents=["bot-*"] if i % 10 == 0 else [],
            )
            made.append((skill, digest))
    return made


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--decisions", type=int, default=500)
    parser.add_argument("--fresh", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(32)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "s.db"
        pairs = seed(db, args.pairs)
        with open_store(db) as store:
            bundle = build_store_bundle(store)
        asks = []
        for _ in range(args.decisions):
            skill, digest = rng.choice(pairs)
            if rng.random() < 0.2:
                digest = "sha256:" + "f" * 64  # an unknown digest: denied
            asks.append(
                {"skill_id": skill, "digest": digest, "agent_id": rng.choice(["bot-1", "x"])}
            )

        server = Served(db=db, log=folder / "serve.log").start()
        try:
            http_times, http_answers = [], []
            with httpx.Client(base_url=server.url, timeout=30) as client:
                for ask in asks[:50]:  # warm-up
                    client.get(f"/v1/skills/{ask['skill_id']}/approvals/{ask['digest']}")
                for ask in asks:
                    start = time.perf_counter()
                    answer = client.get(
                        f"/v1/skills/{ask['skill_id']}/approvals/{ask['digest']}",
                        params={"agent_id": ask["agent_id"]},
                    )
                    http_answers.append(orjson.loads(answer.content)["approved"])
                    http_times.append(time.perf_counter() - start)
        finally:
            server.stop()

        engine = BundleEngine(bundle.body)
        fresh_times, fresh_answers = [], []
        for ask in asks[: args.fresh]:
            start = time.perf_counter()
            fresh_answers.append(engine.query("data.agbom.skill_load.allow", ask))
            fresh_times.append(time.perf_counter() - start)

        # Prepared once, as OPA's PrepareForEval: the policy and data compiled into a
        # rego-cpp bundle, then one entrypoint query per decision with that input.
        prepared = Interpreter()
        for name, source in engine.modules.items():
            prepared.add_module(name, source)
        prepared.add_data(engine.data)
        entrypoint = "agbom/skill_load/allow"
        compiled = prepared.build(None, [entrypoint])
        assert compiled.ok()
        kept_times, kept_answers = [], []
        for ask in asks:
            start = time.perf_counter()
            prepared.set_input(ask)
            out = prepared.query_bundle_entrypoint(compiled, entrypoint)
            kept_answers.append(bool(out.results and out.results[0].expressions[0] is True))
            kept_times.append(time.perf_counter() - start)

    assert http_answers == kept_answers, "the engines disagree"
    assert fresh_answers == kept_answers[: args.fresh], "the engines disagree"
    anchor = statistics.median(http_times)
    print(
        f"{args.pairs} approved pairs, bundle {len(bundle.body):,} bytes "
        f"(data.json {bundle.data_bytes:,}); {args.decisions} decisions, "
        f"{sum(http_answers)} allowed; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'way':<44} {'median':>10} {'p99':>10} {'x anchor':>9}")
    for name, times in (
        ("GET /v1/.../approvals/DIGEST (anchor)", http_times),
        ("rego-cpp, new interpreter per decision", fresh_times),
        ("rego-cpp, compiled once, entrypoint query", kept_times),
    ):
        median = statistics.median(times)
        print(
            f"{name:<44} {median * 1e6:>8.0f}us {percentile(times, 0.99) * 1e6:>8.0f}us "
            f"{median / anchor:>9.2f}"
        )


if __name__ == "__main__":
    main()
